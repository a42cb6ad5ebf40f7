package approvalapi_test

import (
	"net/http"
	"path"
	"slices"
	"sync"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/token"
)

// Approvals of segments over HTTP: environments whose
// resourceApprovalSettings require approval for segments refuse direct
// changes, and approval requests on segments are created, reviewed and
// applied through the segment's audited update.

func segResID(e, key string) string { return "proj/p:env/" + e + ":segment/" + key }

// segProject is project p whose production segment "beta" includes u1
// and holds rule r1, and whose segment "tagged" carries the tag gated.
func segProject(t testing.TB) *apptest.Server {
	t.Helper()
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	for _, s := range []map[string]any{{"key": "beta", "name": "Beta"}, {"key": "tagged", "name": "Tagged", "tags": []string{"gated"}}} {
		apptest.WantStatus(t, srv.Do(t, http.MethodPost, segment.CollectionHref("p", "production"), s), http.StatusCreated)
	}
	apptest.WantStatus(t, srv.Do(t, http.MethodPatch, segment.Href("p", "production", "beta"), []map[string]any{
		{"op": "replace", "path": "/included", "value": []string{"u1"}},
		{"op": "add", "path": "/rules/-", "value": map[string]any{"_id": "r1", "description": "staff",
			"clauses": []map[string]any{{"attribute": "email", "op": "endsWith", "values": []string{"@example.com"}}}}},
	}), http.StatusOK)
	return srv
}

func getSegment(t testing.TB, srv *apptest.Server, key string) segment.Segment {
	t.Helper()
	res := srv.Do(t, http.MethodGet, segment.Href("p", "production", key), nil)
	apptest.WantStatus(t, res, http.StatusOK)
	var s segment.Segment
	res.JSON(t, &s)
	return s
}

// segRequest creates a request on segment key of production.
func segRequest(t testing.TB, srv *apptest.Server, key string, ins ...map[string]any) apptest.ApprovalDoc {
	t.Helper()
	res := srv.Do(t, http.MethodPost, apptest.ApprovalsPath, map[string]any{"resourceId": segResID("production", key), "description": "please", "instructions": ins})
	apptest.WantStatus(t, res, http.StatusCreated)
	return apptest.DecodeApproval(t, res)
}

func TestSegmentChangesRequiringApproval(t *testing.T) {
	semantic := func(ins ...map[string]any) map[string]any { return map[string]any{"instructions": ins} }
	cases := []struct {
		name     string
		settings []apptest.PatchOp
		method   string
		path     string
		body     any
		headers  []string
		status   int
	}{
		{"a JSON patch of a segment is refused with a 403 naming the approval request to create",
			required(), http.MethodPatch, segment.Href("p", "production", "beta"),
			[]map[string]any{{"op": "replace", "path": "/name", "value": "B"}}, nil, http.StatusForbidden},
		{"a semantic patch of a segment is refused the same way",
			required(), http.MethodPatch, segment.Href("p", "production", "beta"),
			semantic(apptest.Instr("addIncludedUsers", "values", []string{"u2"})), []string{"Content-Type", apptest.SemanticType}, http.StatusForbidden},
		{"a delete of a segment is refused the same way",
			required(), http.MethodDelete, segment.Href("p", "production", "beta"), nil, nil, http.StatusForbidden},
		{"creating a segment needs no approval: a request acts on a segment that exists",
			required(), http.MethodPost, segment.CollectionHref("p", "production"), map[string]any{"key": "new", "name": "New"}, nil, http.StatusCreated},
		{"flags' approval settings do not hold segments",
			[]apptest.PatchOp{apptest.Replace("/approvalSettings/required", true)}, http.MethodPatch, segment.Href("p", "production", "beta"),
			[]map[string]any{{"op": "replace", "path": "/name", "value": "B"}}, nil, http.StatusOK},
		{"with requiredApprovalTags a segment carrying one is refused",
			[]apptest.PatchOp{apptest.Replace("/resourceApprovalSettings/segment/requiredApprovalTags", []string{"gated"})}, http.MethodPatch, segment.Href("p", "production", "tagged"),
			[]map[string]any{{"op": "replace", "path": "/name", "value": "T"}}, nil, http.StatusForbidden},
		{"with requiredApprovalTags a segment carrying none changes directly",
			[]apptest.PatchOp{apptest.Replace("/resourceApprovalSettings/segment/requiredApprovalTags", []string{"gated"})}, http.MethodPatch, segment.Href("p", "production", "beta"),
			[]map[string]any{{"op": "replace", "path": "/name", "value": "B"}}, nil, http.StatusOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := segProject(t)
			apptest.SetApprovals(t, srv, "p", "production", c.settings...)
			res := srv.Do(t, c.method, c.path, c.body, c.headers...)
			if c.status != http.StatusForbidden {
				apptest.WantStatus(t, res, c.status)
				return
			}
			apptest.WantError(t, res, http.StatusForbidden, "forbidden", "requires approval", "POST "+apptest.ApprovalsPath, segResID("production", path.Base(c.path)))
		})
	}
	t.Run("the same segment in an environment that requires none changes directly", func(t *testing.T) {
		srv := segProject(t)
		apptest.SetApprovals(t, srv, "p", "production", required()...)
		apptest.WantStatus(t, srv.Do(t, http.MethodPost, segment.CollectionHref("p", "test"), map[string]any{"key": "beta", "name": "Beta"}), http.StatusCreated)
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, segment.Href("p", "test", "beta"), []map[string]any{{"op": "replace", "path": "/name", "value": "B"}}), http.StatusOK)
	})
}

func required() []apptest.PatchOp {
	return []apptest.PatchOp{apptest.Replace("/resourceApprovalSettings/segment/required", true)}
}

func TestSegmentApprovalRequests(t *testing.T) {
	srv := segProject(t)
	apptest.SetApprovals(t, srv, "p", "production", required()...)
	_, reviewer := apptest.Reviewer(t, srv, "reviewer@example.com")
	approve := func(t *testing.T, id string) {
		t.Helper()
		apptest.WantStatus(t, apptest.ReviewApproval(t, srv, id, "approve", reviewer), http.StatusOK)
	}

	var created apptest.ApprovalDoc
	t.Run("a request on a segment is created pending with the segment's instructions", func(t *testing.T) {
		created = segRequest(t, srv, "beta", apptest.Instr("addIncludedUsers", "values", []string{"u9"}),
			apptest.Instr("updateRuleDescription", "ruleId", "r1", "description", "staff only"))
		if created.Status != "pending" || created.ResourceID != segResID("production", "beta") || created.OperatingOnID != "beta" ||
			len(created.Conflicts) != 0 || created.Links["segment"].Href != segment.Href("p", "production", "beta") || created.Links["flag"].Href != "" {
			t.Errorf("created %+v", created)
		}
		if created.ApprovalSettings["required"] != true {
			t.Errorf("the request carries the settings %v, not the environment's for segments", created.ApprovalSettings)
		}
	})
	t.Run("expand=resource shows the segment under its kind, and expand=flag adds nothing", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, apptest.ApprovalPath(created.ID)+"?expand=resource,flag", nil)
		apptest.WantStatus(t, res, http.StatusOK)
		var doc struct {
			Flag     map[string]any `json:"flag"`
			Resource struct {
				Kind    string         `json:"kind"`
				Flag    map[string]any `json:"flag"`
				Segment map[string]any `json:"segment"`
			} `json:"resource"`
		}
		res.JSON(t, &doc)
		if doc.Resource.Kind != "segment" || doc.Resource.Segment["key"] != "beta" || doc.Resource.Flag != nil || doc.Flag != nil {
			t.Errorf("expanded %s", res.Body)
		}
		if links, _ := doc.Resource.Segment["_links"].(map[string]any); links == nil || links["self"] == nil {
			t.Errorf("the expanded segment has no links: %v", doc.Resource.Segment)
		}
	})
	t.Run("the list filters by resourceKind segment", func(t *testing.T) {
		apptest.ABCFlag(t, srv, "p", "f")
		flagReq := apCreate(t, srv, "p", "f", nil, apptest.Instr("turnFlagOn"))
		for _, c := range []struct{ kind, want string }{{"segment", created.ID}, {"flag", flagReq.ID}} {
			res := srv.Do(t, http.MethodGet, apptest.ApprovalsPath+"?filter=resourceKind%20equals%20"+c.kind, nil)
			apptest.WantStatus(t, res, http.StatusOK)
			if ids := itemIDs(t, res); !slices.Equal(ids, []string{c.want}) {
				t.Errorf("resourceKind %s lists %v, want %v", c.kind, ids, c.want)
			}
		}
	})

	bad := []struct {
		name   string
		key    string
		ins    []any
		status int
		parts  []string
	}{
		{"an instruction that is not a segment's is 400 naming its index", "beta", []any{apptest.Instr("addIncludedUsers", "values", []string{"u2"}), apptest.Instr("turnFlagOn")}, 400, []string{"instructions[1]"}},
		{"an instruction that does not apply to the segment now is 400 naming its index", "beta", []any{apptest.Instr("updateRuleDescription", "ruleId", "nope", "description", "x")}, 400, []string{"instructions[0]"}},
		{"a missing segment is 404", "nope", []any{apptest.Instr("addIncludedUsers", "values", []string{"u2"})}, 404, []string{`segment "nope"`}},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			code := "invalid_request"
			if c.status == 404 {
				code = "not_found"
			}
			apptest.WantError(t, srv.Do(t, http.MethodPost, apptest.ApprovalsPath, map[string]any{"resourceId": segResID("production", c.key), "description": "x", "instructions": c.ins}),
				c.status, code, c.parts...)
		})
	}

	t.Run("an approved request applies through the segment's audited update", func(t *testing.T) {
		before := getSegment(t, srv, "beta")
		approve(t, created.ID)
		res := apptest.ApplyApproval(t, srv, created.ID)
		apptest.WantStatus(t, res, http.StatusOK)
		if d := apptest.DecodeApproval(t, res); d.Status != "completed" {
			t.Fatalf("applied request %+v", d)
		}
		after := getSegment(t, srv, "beta")
		if !slices.Equal(after.Included, []string{"u1", "u9"}) || after.Rules[0].Description != "staff only" || after.Version != before.Version+1 {
			t.Errorf("segment after: included %v, rule %q, version %d -> %d", after.Included, after.Rules[0].Description, before.Version, after.Version)
		}
		e := apptest.LatestAuditEntry(t, srv)
		if e.Kind != "segment" || e.Comment != "ship" || !slices.Contains(e.Actions(), "updateIncluded") || !slices.Contains(e.Actions(), "updateRules") {
			t.Errorf("audit entry %s %v %q", e.Kind, e.Actions(), e.Comment)
		}
	})
	t.Run("applies racing each other change the segment once", func(t *testing.T) {
		r := segRequest(t, srv, "beta", apptest.Instr("addTags", "values", []string{"raced"}))
		approve(t, r.ID)
		before := getSegment(t, srv, "beta")
		won, statuses := racingApplies(t, srv, r.ID, 4)
		after := getSegment(t, srv, "beta")
		if won != 1 || after.Version != before.Version+1 {
			t.Errorf("%d applies won (%v), version %d -> %d", won, statuses, before.Version, after.Version)
		}
		apptest.WantError(t, apptest.ApplyApproval(t, srv, r.ID), http.StatusBadRequest, "invalid_request", "already applied")
	})
	t.Run("a request whose instructions no longer apply shows the conflict and fails when applied", func(t *testing.T) {
		removal := segRequest(t, srv, "beta", apptest.Instr("removeRule", "ruleId", "r1"))
		rename := segRequest(t, srv, "beta", apptest.Instr("updateRuleDescription", "ruleId", "r1", "description", "late"))
		approve(t, removal.ID)
		apptest.WantStatus(t, apptest.ApplyApproval(t, srv, removal.ID), http.StatusOK)
		res := srv.Do(t, http.MethodGet, apptest.ApprovalPath(rename.ID), nil)
		apptest.WantStatus(t, res, http.StatusOK)
		if d := apptest.DecodeApproval(t, res); len(d.Conflicts) != 1 || d.Conflicts[0].Reason == "" || d.Conflicts[0].Instruction["kind"] != "updateRuleDescription" {
			t.Errorf("conflicts %+v", d.Conflicts)
		}
		approve(t, rename.ID)
		before := getSegment(t, srv, "beta")
		res = apptest.ApplyApproval(t, srv, rename.ID)
		apptest.WantStatus(t, res, http.StatusOK)
		if d := apptest.DecodeApproval(t, res); d.Status != "failed" || d.FailureReason == "" {
			t.Errorf("applied %+v", d)
		}
		if after := getSegment(t, srv, "beta"); after.Version != before.Version {
			t.Errorf("a failed request changed the segment: version %d -> %d", before.Version, after.Version)
		}
	})
}

// racingApplies applies request id n times at once and returns how many
// succeeded, and every status. A loser that read the request before the
// winner wrote gets a 409; one that read it after, a 400 saying it was
// applied; anything else fails t.
func racingApplies(t *testing.T, srv *apptest.Server, id string, n int) (int, []int) {
	t.Helper()
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = apptest.ApplyApproval(t, srv, id).Status
		}()
	}
	wg.Wait()
	won := 0
	for _, st := range statuses {
		switch st {
		case http.StatusOK:
			won++
		case http.StatusConflict, http.StatusBadRequest:
		default:
			t.Errorf("an apply answered %d", st)
		}
	}
	return won, statuses
}

// approverToken is a token whose role may create, review and apply
// approval requests on resources only.
func approverToken(t testing.TB, srv *apptest.Server, name string, resources ...string) string {
	t.Helper()
	_, tok := srv.MustIssueToken(t, token.Spec{Name: name, InlineRole: []policy.Statement{
		{Effect: "allow", Actions: []string{"createApprovalRequest", "reviewApprovalRequest", "applyApprovalRequest"}, Resources: resources},
	}})
	return tok
}

func itemIDs(t testing.TB, res *apptest.Response) []string {
	t.Helper()
	var page struct {
		Items []struct {
			ID string `json:"_id"`
		} `json:"items"`
	}
	res.JSON(t, &page)
	var out []string
	for _, it := range page.Items {
		out = append(out, it.ID)
	}
	return out
}

func TestSegmentApprovalRights(t *testing.T) {
	srv := segProject(t)
	prod := segRequest(t, srv, "beta", apptest.Instr("addIncludedUsers", "values", []string{"u2"}))
	role := func(name string, resources ...string) string { return approverToken(t, srv, name, resources...) }
	staging := role("test segments", "proj/*:env/test:segment/*")
	flags := role("production flags", "proj/*:env/production:flag/*")
	prodSeg := role("production segment beta", "proj/p:env/production:segment/beta")
	body := map[string]any{"resourceId": segResID("production", "beta"), "description": "x", "instructions": []any{apptest.Instr("addIncludedUsers", "values", []string{"u3"})}}
	cases := []struct {
		name   string
		method string
		path   string
		body   map[string]any
		tok    string
		status int
	}{
		{"a role on test's segments may not create a request on a production segment", http.MethodPost, apptest.ApprovalsPath, body, staging, http.StatusForbidden},
		{"a role on production's flags may not create one for a segment", http.MethodPost, apptest.ApprovalsPath, body, flags, http.StatusForbidden},
		{"a role on production's flags may not review a segment's request", http.MethodPost, apptest.ApprovalPath(prod.ID) + "/reviews", map[string]any{"kind": "comment"}, flags, http.StatusForbidden},
		{"a role on that segment creates a request on it", http.MethodPost, apptest.ApprovalsPath, body, prodSeg, http.StatusCreated},
		{"a role on that segment reviews its request", http.MethodPost, apptest.ApprovalPath(prod.ID) + "/reviews", map[string]any{"kind": "comment"}, prodSeg, http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			apptest.WantStatus(t, srv.Do(t, tc.method, tc.path, tc.body, "Authorization", tc.tok), tc.status)
		})
	}
}
