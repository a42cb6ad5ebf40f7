package endpoints_test

import (
	"net/http"
	"testing"

	"github.com/flagplane/flagplane/shared/example"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/catalog"
)

// Every built operation's success answer against the reference's response
// schema: each field the reference marks required is present, at every
// depth (resolving $ref and allOf), and each field has the reference's
// JSON type, or the type the spec's part 2 gives it where the two differ
// (specTypes). LaunchDarkly's generated clients decode a missing
// required field as a zero value or refuse the answer; this finds them.

// answerRequests are, by operation id, a successful call of each built
// operation. A new operation gets its row here: the test fails for a built
// operation without one.
var answerRequests = map[string]example.Example{
}

// answerQueries are further reads of an operation, by the query options
// that change the answer's shape (expansions, full targeting): each is
// checked like the operation's own row.
var answerQueries = map[string][]string{}

// TestAnswersCarryTheFieldsTheReferenceRequires checks the examples of
// each group whose rows are still here, as the group's own tests will.
func TestAnswersCarryTheFieldsTheReferenceRequires(t *testing.T) {
	dated := map[string][]string{}
	for schema, fields := range datedTimestamp {
		for f := range fields {
			if _, ok := specTypes[schema][f]; ok { // the others' groups have moved with their examples
				dated[schema] = append(dated[schema], f)
			}
		}
	}
	byGroup := map[string]map[string]example.Example{}
	for _, op := range catalog.All() {
		if ex, ok := answerRequests[op.ID]; ok {
			if byGroup[op.Group] == nil {
				byGroup[op.Group] = map[string]example.Example{}
			}
			byGroup[op.Group][op.ID] = ex
		}
	}
	for group, calls := range byGroup {
		t.Run(group, func(t *testing.T) {
			apptest.CheckExamples(t, group, example.Set{Calls: calls, Queries: answerQueries, SpecTypes: specTypes, Dated: dated})
		})
	}
}

// specTypes are the fields whose JSON type the spec's part 2 sets apart
// from the reference's (mostly Unix ms as strings), by the reference schema
// that holds them and the field's name.
var specTypes = map[string]map[string]string{
	// 2.3 OAuth 2.0 client
	"Client": {"_creationDate": "string"},
	// 2.7 Approval request, and its reviews
	"ApprovalRequestResponse":           {"creationDate": "string", "appliedDate": "string", "executionDate": "string"},
	"ExpandableApprovalRequestResponse": {"creationDate": "string", "appliedDate": "string", "executionDate": "string"},
	"FlagConfigApprovalRequestResponse": {"creationDate": "string", "appliedDate": "string", "executionDate": "string"},
	"ReviewResponse":                    {"creationDate": "string"},
	// 2.10 Access token
	"Token": {"creationDate": "string", "lastModified": "string", "lastUsed": "string", "expiry": "string"},
	// 2.19 Audit log entry, both forms
	// (and its target, a Markdown sentence rather than the reference's object)
	"AuditLogEntryRep":        {"date": "string", "target": "string"},
	"AuditLogEntryListingRep": {"date": "string", "target": "string"},
}

// throwawayProject is a new project without environments, for a delete.
func throwawayProject(w *example.World) string {
	key := w.Unique("doomed")
	w.Must(http.StatusCreated, http.MethodPost, "/api/v2/projects", map[string]any{"key": key, "name": "Doomed", "environments": []any{}})
	return key
}

// throwawayEnvironment is a new environment of the world's project.
func throwawayEnvironment(w *example.World) string {
	key := w.Unique("doomed")
	w.Must(http.StatusCreated, http.MethodPost, "/api/v2/projects/"+w.Project+"/environments", map[string]any{"key": key, "name": key, "color": "336699"})
	return key
}

// pendingApproval is a new pending approval request on the flag in test.
func pendingApproval(w *example.World) string {
	return example.Str(w.Must(http.StatusCreated, http.MethodPost, "/api/v2/approval-requests", map[string]any{
		"resourceId": "proj/" + w.Project + ":env/test:flag/" + w.Flag, "description": "pending",
		"instructions": []any{example.Instr("addUserTargets", "values", []string{w.Unique("user")}, "variationId", w.Variations[0])}}), "_id")
}
