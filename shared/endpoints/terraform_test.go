package endpoints_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	ldapi "github.com/launchdarkly/api-client-go/v17"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// LaunchDarkly's Terraform provider (v2.26.2) through a whole lifecycle:
// each request as the provider sends it (its headers, its patch bodies,
// read back from its source), with what is stored checked after.

// terraformHeaders are the headers the provider sends on every request:
// a dated API version, and its user agent.
var terraformHeaders = []string{"LD-API-Version", "20240415", "User-Agent", "terraform-provider-launchdarkly/v2.26.2"}

// terraform sends one request as the provider does; extra headers follow its own.
func terraform(tb testing.TB, srv *apptest.Server, method, path string, body any, extra ...string) *apptest.Response {
	tb.Helper()
	return srv.Do(tb, method, path, body, append(append([]string{}, terraformHeaders...), extra...)...)
}

// jsonTypes names the JSON type of each of fields in an answer ("absent" when missing).
func jsonTypes(tb testing.TB, res *apptest.Response, fields ...string) map[string]string {
	tb.Helper()
	m := res.Map(tb)
	out := map[string]string{}
	for _, f := range fields {
		v, ok := m[f]
		switch {
		case !ok:
			out[f] = "absent"
		default:
			out[f] = refJSONType(v)
		}
	}
	return out
}

func TestTerraformAccessTokenTimestamps(t *testing.T) {
	srv := apptest.New(t)
	fields := []string{"creationDate", "lastModified"}
	cases := []struct {
		name    string
		headers []string
		want    string
	}{
		{"the provider's dated LD-API-Version answers the timestamps as integers", terraformHeaders, "integer"},
		{"without LD-API-Version the timestamps are the spec's strings", nil, "string"},
		{"LD-API-Version beta alone keeps the spec's strings", []string{"LD-API-Version", "beta"}, "string"},
		{"SVC-API-Version with a date is not LaunchDarkly's header and keeps the strings", []string{"SVC-API-Version", "20240415"}, "string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The provider's launchdarkly_access_token create: a service token with a built-in role.
			created := srv.Do(t, http.MethodPost, api+"/tokens", map[string]any{"name": "terraform", "role": "reader", "serviceToken": true, "defaultApiVersion": 20240415}, tc.headers...)
			wantStatus(t, created, http.StatusCreated)
			var tok struct {
				ID           string          `json:"_id"`
				CreationDate json.RawMessage `json:"creationDate"`
			}
			created.JSON(t, &tok)
			read := srv.Do(t, http.MethodGet, api+"/tokens/"+tok.ID, nil, tc.headers...)
			wantStatus(t, read, http.StatusOK)
			for what, res := range map[string]*apptest.Response{"create": created, "read": read} {
				for f, got := range jsonTypes(t, res, fields...) {
					if got != tc.want {
						t.Errorf("the %s answers %s as a JSON %s, want %s: %s", what, f, got, tc.want, res.Body)
					}
				}
			}
			var again struct {
				CreationDate json.RawMessage `json:"creationDate"`
			}
			read.JSON(t, &again)
			if string(again.CreationDate) != string(tok.CreationDate) {
				t.Errorf("creationDate %s on create, %s on read", tok.CreationDate, again.CreationDate)
			}
		})
	}
}

// TestTerraformTokenDecodesInLaunchDarklysClient creates and reads a token
// with LaunchDarkly's Go API client, which the provider is built on, set up
// as the provider sets it: a dated version on every request. The client
// decodes creationDate as an int64, so a string fails the call.
func TestTerraformTokenDecodesInLaunchDarklysClient(t *testing.T) {
	srv := apptest.New(t)
	cfg := ldapi.NewConfiguration()
	cfg.Servers = ldapi.ServerConfigurations{{URL: srv.URL}}
	cfg.AddDefaultHeader("LD-API-Version", "20240415")
	cfg.UserAgent = "terraform-provider-launchdarkly/v2.26.2"
	ld := ldapi.NewAPIClient(cfg)
	ctx := context.WithValue(context.Background(), ldapi.ContextAPIKeys, map[string]ldapi.APIKey{"ApiKey": {Key: srv.Token}})

	name, role, service := "terraform", "reader", true
	created, _, err := ld.AccessTokensApi.PostToken(ctx).AccessTokenPost(ldapi.AccessTokenPost{Name: &name, Role: &role, ServiceToken: &service}).Execute()
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.CreationDate == 0 || created.LastModified == 0 {
		t.Errorf("creationDate %d, lastModified %d: want the time it was made", created.CreationDate, created.LastModified)
	}
	read, _, err := ld.AccessTokensApi.GetToken(ctx, created.Id).Execute()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if read.CreationDate != created.CreationDate {
		t.Errorf("creationDate %d on read, %d on create", read.CreationDate, created.CreationDate)
	}
	list, _, err := ld.AccessTokensApi.GetTokens(ctx).Execute()
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(list.Items) == 0 {
		t.Errorf("the token list is empty")
	}
}

// datedTypes are specTypes with every timestamp the spec has as a string
// (Unix ms) where the reference has an integer typed as the reference's
// integer: what a dated LD-API-Version answers. Other differences (the
// audit entry's target) stay.
func datedTypes() map[string]map[string]string {
	out := map[string]map[string]string{}
	for schema, fields := range specTypes {
		out[schema] = map[string]string{}
		for f, typ := range fields {
			if datedTimestamp[schema][f] {
				typ = "integer"
			}
			out[schema][f] = typ
		}
	}
	return out
}

// datedTimestamp are the fields a dated LD-API-Version turns from strings
// into integers, by reference schema: the spec's part 2 types them as
// strings of Unix ms, the reference as integers (int64). The README's
// table and jsondoc.MillisString's answers list the same fields.
var datedTimestamp = map[string]map[string]bool{
	"Client":                            {"_creationDate": true},
	"ApprovalRequestResponse":           {"creationDate": true, "appliedDate": true, "executionDate": true},
	"ExpandableApprovalRequestResponse": {"creationDate": true, "appliedDate": true, "executionDate": true},
	"FlagConfigApprovalRequestResponse": {"creationDate": true, "appliedDate": true, "executionDate": true},
	"ReviewResponse":                    {"creationDate": true},
	"Token":                             {"creationDate": true, "lastModified": true, "lastUsed": true, "expiry": true},
	"AuditLogEntryRep":                  {"date": true},
	"AuditLogEntryListingRep":           {"date": true},
	"InsightGroup":                      {"createdAt": true},
	"InsightPeriod":                     {"startTime": true, "endTime": true},
	"FlagEventRep":                      {"eventTime": true},
	"Destination":                       {"createdAt": true},
	"FlagImportStatus":                  {"lastImport": true, "lastError": true},
	"BigSegmentStoreStatus":             {"lastSync": true, "lastError": true},
}

func TestTerraformDatedVersionAnswersEveryTimestampAsAnInteger(t *testing.T) {
	ref := loadReference(t)
	types := datedTypes()
	for schema, fields := range datedTimestamp {
		for f := range fields {
			if _, ok := specTypes[schema][f]; !ok {
				t.Errorf("%s.%s is listed as a dated timestamp but specTypes does not set it apart", schema, f)
			}
		}
	}
	w := newWorld(t)
	for _, op := range builtOperations(w) {
		t.Run(op.ID+" answers no listed timestamp as a string", func(t *testing.T) {
			rop, ok := ref.ops[op.ID]
			if !ok {
				t.Skipf("%s is flagplane's own (not in the reference)", op.ID)
			}
			mk, ok := answerRequests[op.ID]
			if !ok {
				t.Fatalf("no request for %s in answerRequests", op.ID)
			}
			req := mk(t, w)
			headers := append(append([]string{}, req.headers...), terraformHeaders...)
			checkAnswerTyped(t, ref, rop, w.srv.Do(t, op.Method, req.path, req.body, headers...), types)
			for _, q := range answerQueries[op.ID] {
				t.Run("with "+q, func(t *testing.T) {
					checkAnswerTyped(t, ref, rop, w.srv.Do(t, op.Method, req.path+q, req.body, headers...), types)
				})
			}
		})
	}
}
