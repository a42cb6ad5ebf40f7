package allgroups_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/app/apptest/reference"
)

// The timestamp field types: every built resource read over HTTP, each
// Unix-ms field checked for the JSON type the spec's part 2 gives it (a
// string or an integer), or the reference's type (an integer) for
// resources part 2 does not list. A timestamp-like field a row does not
// list fails too, so the table stays complete. A new resource gets a row.

// timestampField is one field of a row: a path in the resource, with
// "[]" for every element of an array and "*" for any key of an object.
type timestampField struct {
	path string
	typ  string // "string" (Unix ms as a decimal string) or "integer"
	// optional fields are checked when present; the others must appear in
	// at least one of the row's reads.
	optional bool
}

// timestampRead is one request that answers the resource: the resource
// itself, or a collection of it (items).
type timestampRead struct {
	method string
	path   func(w *apptest.World) string
	body   func(w *apptest.World) any
	items  bool
}

type timestampRow struct {
	resource string // plural, as a sentence subject
	source   string // where the types come from
	reads    []timestampRead
	fields   []timestampField
	// skip are subtrees that are not the resource's own fields (the
	// stored versions an audit entry quotes).
	skip []string
}

func tsGet(path func(w *apptest.World) string) timestampRead {
	return timestampRead{method: http.MethodGet, path: path}
}

func tsList(path func(w *apptest.World) string) timestampRead {
	return timestampRead{method: http.MethodGet, path: path, items: true}
}

func tsString(path string) timestampField  { return timestampField{path: path, typ: "string"} }
func tsInteger(path string) timestampField { return timestampField{path: path, typ: "integer"} }
func tsWhenSet(f timestampField) timestampField {
	f.optional = true
	return f
}

var timestampTable = []timestampRow{
	{resource: "projects", source: "the reference's Project (no timestamps)",
		reads: []timestampRead{
			tsGet(func(w *apptest.World) string { return projectPath(w.Project) }),
			tsGet(func(w *apptest.World) string { return projectPath(w.Project) + "?expand=environments" }),
			tsList(func(*apptest.World) string { return api + "/projects?expand=environments" }),
		}},
	{resource: "environments", source: "spec 2.4 (no timestamps)",
		reads: []timestampRead{
			tsGet(func(w *apptest.World) string { return envPath(w.Project, "production") }),
			tsList(func(w *apptest.World) string { return envsPath(w.Project) }),
		}},
	{resource: "flags", source: "the reference's FeatureFlag and FeatureFlagConfig",
		reads: []timestampRead{
			tsGet(func(w *apptest.World) string { return apptest.FlagPath(w.Project, w.Flag) }),
			tsList(func(w *apptest.World) string { return apptest.FlagsPath(w.Project) }),
			tsList(func(w *apptest.World) string { return apptest.FlagsPath(w.Project) + "?summary=0" }),
		},
		fields: []timestampField{tsInteger("creationDate"), tsInteger("environments.*.lastModified"),
			tsWhenSet(tsInteger("archivedDate")), tsWhenSet(tsInteger("deprecatedDate")), tsWhenSet(tsInteger("environments.*._debugEventsUntilDate"))}},
	{resource: "approval requests", source: "spec 2.7",
		reads: []timestampRead{
			tsGet(func(w *apptest.World) string { return apptest.ApprovalPath(w.AppliedID) }),
			tsGet(func(w *apptest.World) string { return apptest.ApprovalPath(w.ScheduledID) }),
			tsList(func(*apptest.World) string { return apptest.ApprovalsPath }),
		},
		fields: []timestampField{tsString("creationDate"), tsString("allReviews[].creationDate"), tsString("appliedDate"), tsString("executionDate"),
			tsWhenSet(tsInteger("integrationMetadata.lastChecked"))}},
	{resource: "audit log entries", source: "spec 2.19",
		reads: []timestampRead{
			tsGet(func(w *apptest.World) string { return auditEntryPath(w.AuditID) }),
			tsList(func(*apptest.World) string { return api + "/auditlog" }),
		},
		fields: []timestampField{tsString("date")},
		skip:   []string{"previousVersion", "currentVersion"}},
	{resource: "access tokens", source: "spec 2.10",
		reads: []timestampRead{
			tsGet(func(w *apptest.World) string { return api + "/tokens/" + w.UsedTokenID }),
			tsList(func(*apptest.World) string { return api + "/tokens" }),
		},
		fields: []timestampField{tsString("creationDate"), tsString("lastModified"), tsString("lastUsed"), tsString("expiry")}},
	{resource: "members", source: "the reference's Member",
		reads: []timestampRead{
			tsGet(func(w *apptest.World) string { return api + "/members/" + w.MemberID }),
			tsList(func(*apptest.World) string { return api + "/members" }),
		},
		fields: []timestampField{tsInteger("creationDate"), tsInteger("_lastSeen"), tsWhenSet(tsInteger("mfaGracePeriodExpiresAt"))}},
	{resource: "teams", source: "the reference's Team",
		reads: []timestampRead{
			tsGet(func(w *apptest.World) string { return api + "/teams/" + w.TeamKey }),
			tsList(func(*apptest.World) string { return api + "/teams" }),
		},
		fields: []timestampField{tsInteger("_creationDate"), tsInteger("_lastModified")}},
	{resource: "custom roles", source: "the reference's CustomRole (no timestamps)",
		reads: []timestampRead{
			tsGet(func(w *apptest.World) string { return api + "/roles/" + w.RoleKey }),
			tsList(func(*apptest.World) string { return api + "/roles" }),
		}},
	{resource: "AI Configs", source: "spec 2.13 (variation createdAt) and the reference's AIConfig",
		reads: []timestampRead{
			tsGet(func(w *apptest.World) string { return apptest.AIConfigPath(w.Project, "world") }),
			tsList(func(w *apptest.World) string { return apptest.AIConfigsPath(w.Project) }),
		},
		fields: []timestampField{tsInteger("createdAt"), tsInteger("updatedAt"), tsInteger("variations[].createdAt"),
			tsWhenSet(tsInteger("variations[]._publishedAt")), tsWhenSet(tsInteger("variations[]._archivedAt"))}},
	{resource: "AI Config variations", source: "spec 2.13",
		reads:  []timestampRead{tsList(func(w *apptest.World) string { return apptest.AIVariationPath(w.Project, "world", "v") })},
		fields: []timestampField{tsInteger("createdAt"), tsInteger("_publishedAt"), tsInteger("_archivedAt")}},
	{resource: "AI model configs", source: "the reference's ModelConfig (no timestamps)",
		reads: []timestampRead{tsGet(func(w *apptest.World) string { return apptest.AIModelsPath(w.Project) + "/world" })}},
	{resource: "OAuth clients", source: "spec 2.3",
		reads: []timestampRead{
			tsGet(func(w *apptest.World) string { return api + "/oauth/clients/" + w.ClientID }),
			tsList(func(*apptest.World) string { return api + "/oauth/clients" }),
		},
		fields: []timestampField{tsString("_creationDate")}},
	{resource: "release pipelines", source: "spec 2.8",
		reads: []timestampRead{
			tsGet(func(w *apptest.World) string { return apptest.PipelinesPath(w.Project) + "/world" }),
			tsList(func(w *apptest.World) string { return apptest.PipelinesPath(w.Project) }),
		},
		fields: []timestampField{tsString("createdAt")}},
	{resource: "release progressions", source: "the reference's ReleaseProgression",
		reads:  []timestampRead{tsList(func(w *apptest.World) string { return apptest.PipelinesPath(w.Project) + "/world/releases" })},
		fields: []timestampField{tsInteger("_createdAt"), tsWhenSet(tsInteger("_completedAt"))}},
	{resource: "flag releases", source: "the reference's Release",
		reads:  []timestampRead{tsGet(func(w *apptest.World) string { return api + "/flags/" + w.Project + "/" + w.Flag + "/release" })},
		fields: []timestampField{tsInteger("phases[]._creationDate"), tsWhenSet(tsInteger("phases[]._completionDate")), tsWhenSet(tsInteger("_canceledAt"))}},
	{resource: "webhooks", source: "spec 2.21 (no timestamps)",
		reads: []timestampRead{
			tsGet(func(w *apptest.World) string { return api + "/webhooks/" + w.WebhookID }),
			tsList(func(*apptest.World) string { return api + "/webhooks" }),
		}},
	{resource: "release policies", source: "spec 2.2 (no timestamps)",
		reads: []timestampRead{
			tsGet(func(w *apptest.World) string { return apptest.ProjectPath(w.Project) + "/release-policies" + "/world" }),
			tsList(func(w *apptest.World) string { return apptest.ProjectPath(w.Project) + "/release-policies" }),
		}},
	{resource: "adaptive triggers", source: "spec 2.14",
		reads: []timestampRead{
			tsGet(func(w *apptest.World) string {
				return envPath(w.Project, "production") + "/adaptive-triggers/" + w.TriggerID
			}),
			tsList(func(w *apptest.World) string { return envPath(w.Project, "production") + "/adaptive-triggers" }),
		},
		fields: []timestampField{tsInteger("createdAt"), tsInteger("updatedAt"), tsWhenSet(tsInteger("_lastFiring.at"))}},
	{resource: "segments", source: "the reference's UserSegment and SegmentMetadata",
		reads: []timestampRead{
			tsGet(func(w *apptest.World) string { return api + "/segments/" + w.Project + "/production/world" }),
			tsGet(func(w *apptest.World) string { return api + "/segments/" + w.Project + "/production/world-big" }),
			tsList(func(w *apptest.World) string { return api + "/segments/" + w.Project + "/production" }),
		},
		fields: []timestampField{tsInteger("creationDate"), tsInteger("lastModifiedDate"), tsInteger("_unboundedMetadata.lastModified")}},
	{resource: "expiring user targets", source: "the reference's ExpiringUserTargetItem",
		reads: []timestampRead{
			tsList(func(w *apptest.World) string { return apptest.UserExpiringPath(w.Project, w.User, "production") }),
			tsList(func(w *apptest.World) string { return apptest.FlagExpiringPath(w.Project, w.Flag, "production") }),
		},
		fields: []timestampField{tsInteger("expirationDate")}},
	{resource: "evaluation answers", source: "the reference's ContextInstanceEvaluation (no timestamps)",
		reads: []timestampRead{{method: http.MethodPost, items: true,
			path: func(w *apptest.World) string { return envPath(w.Project, "production") + "/flags/evaluate" },
			body: func(w *apptest.World) any { return map[string]any{"kind": "user", "key": w.User} }}}},
}

// timestampName matches field names that carry a time.
var timestampName = regexp.MustCompile(`(?i)(date|modified|lastused|expiry|seen|at|checked|time|lastimport|lasterror|timestamp)$`)

// looksLikeMillis reports whether a value could be Unix ms: an integer, or
// a string of digits.
func looksLikeMillis(v any) bool {
	switch x := v.(type) {
	case float64:
		return true
	case string:
		_, err := strconv.ParseInt(x, 10, 64)
		return err == nil
	}
	return false
}

// tsFound is one timestamp-like value of an answer, at its path pattern.
type tsFound struct {
	path  string // "[]" for array elements, object keys as they are
	value any
}

// tsCollect walks v and returns its timestamp-like fields, outside skip.
func tsCollect(v any, at []string, skip []string, out *[]tsFound) {
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			if len(at) == 0 && slices.Contains(skip, k) || k == "_access" {
				continue
			}
			next := append(append([]string(nil), at...), k)
			if timestampName.MatchString(k) && looksLikeMillis(child) {
				*out = append(*out, tsFound{path: strings.Join(next, "."), value: child})
				continue
			}
			tsCollect(child, next, skip, out)
		}
	case []any:
		for _, child := range x {
			tsCollect(child, append(append([]string(nil), at...), "[]"), skip, out)
		}
	}
}

// tsShow prints a decoded value as it was in the answer.
func tsShow(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// tsMatches reports whether a found path fits a field's pattern.
func tsMatches(pattern, path string) bool {
	p := strings.Split(strings.ReplaceAll(pattern, "[]", ".[]"), ".")
	a := strings.Split(path, ".")
	if len(p) != len(a) {
		return false
	}
	for i := range p {
		if p[i] != "*" && p[i] != a[i] {
			return false
		}
	}
	return true
}

// tsDescribe is a row's fields as a sentence.
func tsDescribe(fields []timestampField) string {
	if len(fields) == 0 {
		return "no timestamp"
	}
	var parts []string
	for _, f := range fields {
		s := f.path + " as " + map[string]string{"string": "a string", "integer": "an integer"}[f.typ]
		if f.optional {
			s += " when set"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

func TestTimestampFieldTypes(t *testing.T) {
	w := apptest.NewWorld(t)
	// The world holds no segment: the segments row reads these.
	w.Must(t, http.StatusCreated, http.MethodPost, api+"/segments/"+w.Project+"/production", map[string]any{"key": "world", "name": "World"})
	w.Must(t, http.StatusCreated, http.MethodPost, api+"/segments/"+w.Project+"/production", map[string]any{"key": "world-big", "name": "World big", "unbounded": true})
	for _, row := range timestampTable {
		t.Run(fmt.Sprintf("%s carry %s (%s)", row.resource, tsDescribe(row.fields), row.source), func(t *testing.T) {
			seen := map[string]bool{}
			for _, rd := range row.reads {
				path := rd.path(w)
				var body any
				if rd.body != nil {
					body = rd.body(w)
				}
				res := w.Srv.Do(t, rd.method, path, body, apptest.BetaHeader...) // opens beta reads; the others ignore it
				apptest.WantStatus(t, res, http.StatusOK)
				var doc any
				if err := json.Unmarshal(res.Body, &doc); err != nil {
					t.Fatalf("%s: not JSON: %s", path, res.Body)
				}
				resources := []any{doc}
				if rd.items {
					items, ok := doc.(map[string]any)["items"].([]any)
					if !ok || len(items) == 0 {
						t.Fatalf("%s: no items to check: %s", path, res.Body)
					}
					resources = items
				}
				for _, r := range resources {
					var all []tsFound
					tsCollect(r, nil, row.skip, &all)
					for _, fv := range all {
						var field *timestampField
						for i := range row.fields {
							if tsMatches(row.fields[i].path, fv.path) {
								field = &row.fields[i]
							}
						}
						if field == nil {
							t.Errorf("%s: %s holds a timestamp (%s) the table does not list; add it with the type %s sets", path, fv.path, tsShow(fv.value), row.source)
							continue
						}
						seen[field.path] = true
						switch got := reference.JSONType(fv.value); {
						case got != field.typ:
							t.Errorf("%s: %s is a JSON %s (%s), want %s", path, fv.path, got, tsShow(fv.value), field.typ)
						case field.typ == "string" && fv.value.(string) == "0":
							t.Errorf("%s: %s is \"0\": an unset time is left out, not zero", path, fv.path)
						}
					}
				}
			}
			for _, f := range row.fields {
				if !f.optional && !seen[f.path] {
					t.Errorf("no read of %s shows %s", row.resource, f.path)
				}
			}
		})
	}
}

// Inputs that carry a timestamp take it as an integer or as a string of
// digits (the form answers show), and refuse anything else with a 400
// naming the field, storing nothing.
func TestTimestampInputsTakeBothForms(t *testing.T) {
	w := apptest.NewWorld(t)
	soon := time.Now().Add(time.Hour).UnixMilli()
	resource := "proj/" + w.Project + ":env/test:flag/" + w.Flag
	approval := func(date any) map[string]any {
		return map[string]any{"resourceId": resource, "description": "scheduled", "executionDate": date, "instructions": []any{apptest.Instr("turnFlagOn")}}
	}
	expire := func(value any) map[string]any {
		return map[string]any{"instructions": []any{apptest.Instr("updateExpireUserTargetDate", "flagKey", w.Flag, "variationId", w.Variations[1], "value", value)}}
	}
	expiringPath := apptest.UserExpiringPath(w.Project, w.User, "production")
	semantic := []string{"Content-Type", apptest.SemanticType}

	accepted := []struct {
		name         string
		method, path string
		body         any
		status       int
		want         func(tb testing.TB, res *apptest.Response, n int64)
	}{
		{"an approval request's executionDate as an integer", http.MethodPost, apptest.ApprovalsPath, approval(soon), http.StatusCreated,
			func(tb testing.TB, res *apptest.Response, n int64) {
				wantField(tb, res.Map(tb), "executionDate", strconv.FormatInt(n, 10))
			}},
		{"an approval request's executionDate as a string", http.MethodPost, apptest.ApprovalsPath, approval(strconv.FormatInt(soon+1, 10)), http.StatusCreated,
			func(tb testing.TB, res *apptest.Response, n int64) {
				wantField(tb, res.Map(tb), "executionDate", strconv.FormatInt(n, 10))
			}},
		{"an expiring target's value as an integer", http.MethodPatch, expiringPath, expire(soon + 2), http.StatusOK,
			func(tb testing.TB, res *apptest.Response, n int64) {
				wantField(tb, res.Map(tb)["items"].([]any)[0].(map[string]any), "expirationDate", float64(n))
			}},
		{"an expiring target's value as a string", http.MethodPatch, expiringPath, expire(strconv.FormatInt(soon+3, 10)), http.StatusOK,
			func(tb testing.TB, res *apptest.Response, n int64) {
				wantField(tb, res.Map(tb)["items"].([]any)[0].(map[string]any), "expirationDate", float64(n))
			}},
	}
	for i, c := range accepted {
		t.Run(c.name+" is taken", func(t *testing.T) {
			var headers []string
			if c.method == http.MethodPatch {
				headers = semantic
			}
			res := w.Srv.Do(t, c.method, c.path, c.body, headers...)
			apptest.WantStatus(t, res, c.status)
			c.want(t, res, soon+int64(i))
		})
	}

	refused := []struct {
		name  string
		value any
	}{
		{"text", "tomorrow"},
		{"a fraction", 1.5},
		{"a negative number", -1},
		{"a boolean", true},
		{"an object", map[string]any{"ms": soon}},
		{"a string with a fraction", "1700000000000.5"},
	}
	for _, r := range refused {
		t.Run("an approval request's executionDate as "+r.name+" is refused with a 400 naming it", func(t *testing.T) {
			before := w.Must(t, http.StatusOK, http.MethodGet, apptest.ApprovalsPath+"?limit=100", nil)["totalCount"]
			apptest.WantError(t, w.Srv.Do(t, http.MethodPost, apptest.ApprovalsPath, approval(r.value)), http.StatusBadRequest, "invalid_request", "executionDate", "Unix milliseconds")
			if after := w.Must(t, http.StatusOK, http.MethodGet, apptest.ApprovalsPath+"?limit=100", nil)["totalCount"]; after != before {
				t.Errorf("approval requests %v, then %v", before, after)
			}
		})
		t.Run("an expiring target's value as "+r.name+" is refused with a 400 naming it", func(t *testing.T) {
			before := w.Srv.Do(t, http.MethodGet, expiringPath, nil).Body
			apptest.WantError(t, w.Srv.Do(t, http.MethodPatch, expiringPath, expire(r.value), semantic...), http.StatusBadRequest, "invalid_request", "instructions[0].value")
			if after := w.Srv.Do(t, http.MethodGet, expiringPath, nil).Body; !apptest.SameJSON(t, before, after) {
				t.Errorf("the expiring targets changed:\n%s\n%s", before, after)
			}
		})
	}
}

// wantField checks one field of a decoded answer.
func wantField(tb testing.TB, m map[string]any, field string, want any) {
	tb.Helper()
	if m[field] != want {
		tb.Errorf("%s is %v (%T), want %v (%T)", field, m[field], m[field], want, want)
	}
}
