package approvalapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/store"
)

func resID(p, e, f string) string { return "proj/" + p + ":env/" + e + ":flag/" + f }

// apCreate makes a request on flag f in production of p.
func apCreate(t testing.TB, srv *apptest.Server, p, f string, extra map[string]any, ins ...map[string]any) apptest.ApprovalDoc {
	t.Helper()
	body := map[string]any{"resourceId": resID(p, "production", f), "description": "please", "instructions": ins}
	for k, v := range extra {
		body[k] = v
	}
	res := srv.Do(t, http.MethodPost, apptest.ApprovalsPath, body)
	apptest.WantStatus(t, res, http.StatusCreated)
	return apptest.DecodeApproval(t, res)
}

// autoApply sets autoApplyApprovedChanges, which the API does not let
// clients patch, straight in the store.
func autoApply(t testing.TB, srv *apptest.Server, p, e string, on bool) {
	t.Helper()
	ctx := context.Background()
	it, err := srv.Table.Get(ctx, store.EnvironmentKey(p, e))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(it.Data, &doc); err != nil {
		t.Fatal(err)
	}
	doc["approvalSettings"].(map[string]any)["autoApplyApprovedChanges"] = on
	it.Data, _ = json.Marshal(doc)
	if err := srv.Table.Put(ctx, it, store.IfVersion(it.Version)); err != nil {
		t.Fatal(err)
	}
}

func TestApprovalRequestCreateAndRead(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	d := apptest.ABCFlag(t, srv, "p", "f")
	m := apptest.InviteMembers(t, srv, map[string]any{"email": "n@example.com"})[0]
	apptest.WantStatus(t, srv.Do(t, http.MethodPost, apptest.API+"/teams", map[string]any{"key": "ops", "name": "Ops"}), http.StatusCreated)

	var created apptest.ApprovalDoc
	t.Run("a valid request is created pending with its fields", func(t *testing.T) {
		created = apCreate(t, srv, "p", "f", map[string]any{"notifyMemberIds": []string{m.ID}, "notifyTeamKeys": []string{"ops"},
			"integrationConfig": map[string]any{"x": 1}},
			apptest.Instr("turnFlagOn"), apptest.Instr("addUserTargets", "values", []string{"u1"}, "variationId", d.VID(1)))
		if created.Status != "pending" || created.ReviewStatus != "pending" || created.ServiceKind != "flagplane" || created.Version != 1 ||
			created.ResourceID != resID("p", "production", "f") || created.RequestorID == "" || len(created.Instructions) != 2 ||
			created.Instructions[0]["kind"] != "turnFlagOn" || created.Conflicts == nil || len(created.Conflicts) != 0 ||
			created.CreationDate == "" || created.AllReviews == nil || created.ApprovalSettings["serviceKind"] != "flagplane" ||
			created.Links["self"].Href != apptest.ApprovalPath(created.ID) {
			t.Errorf("created %+v", created)
		}
	})

	bad := []struct {
		name   string
		body   map[string]any
		status int
		parts  []string
	}{
		{"a malformed resource id is 400", map[string]any{"resourceId": "proj/p:flag/f", "description": "x", "instructions": []any{apptest.Instr("turnFlagOn")}}, 400, []string{"resourceId"}},
		{"a missing flag is 404", map[string]any{"resourceId": resID("p", "production", "nope"), "description": "x", "instructions": []any{apptest.Instr("turnFlagOn")}}, 404, nil},
		{"a missing environment is 404", map[string]any{"resourceId": resID("p", "nope", "f"), "description": "x", "instructions": []any{apptest.Instr("turnFlagOn")}}, 404, nil},
		{"a missing description is 400", map[string]any{"resourceId": resID("p", "production", "f"), "instructions": []any{apptest.Instr("turnFlagOn")}}, 400, []string{"description"}},
		{"an unknown instruction is 400 naming its index", map[string]any{"resourceId": resID("p", "production", "f"), "description": "x",
			"instructions": []any{apptest.Instr("turnFlagOn"), apptest.Instr("fly")}}, 400, []string{"instructions[1]"}},
		{"an instruction that does not apply now is 400 naming its index", map[string]any{"resourceId": resID("p", "production", "f"), "description": "x",
			"instructions": []any{apptest.Instr("turnFlagOn"), apptest.Instr("updateOffVariation", "variationId", "missing")}}, 400, []string{"instructions[1]"}},
		{"an unknown member to notify is 400", map[string]any{"resourceId": resID("p", "production", "f"), "description": "x",
			"instructions": []any{apptest.Instr("turnFlagOn")}, "notifyMemberIds": []string{"nobody"}}, 400, []string{"notifyMemberIds[0]"}},
		{"an unknown team to notify is 400", map[string]any{"resourceId": resID("p", "production", "f"), "description": "x",
			"instructions": []any{apptest.Instr("turnFlagOn")}, "notifyTeamKeys": []string{"nobody"}}, 400, []string{"notifyTeamKeys[0]"}},
		{"an execution date in the past is 400", map[string]any{"resourceId": resID("p", "production", "f"), "description": "x",
			"instructions": []any{apptest.Instr("turnFlagOn")}, "executionDate": 1}, 400, []string{"executionDate"}},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			code := "invalid_request"
			if c.status == 404 {
				code = "not_found"
			}
			apptest.WantError(t, srv.Do(t, http.MethodPost, apptest.ApprovalsPath, c.body), c.status, code, c.parts...)
		})
	}

	t.Run("get returns the request and expands flag, project, environments", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, apptest.ApprovalPath(created.ID)+"?expand=flag,project,environments", nil)
		apptest.WantStatus(t, res, http.StatusOK)
		got := apptest.DecodeApproval(t, res)
		if got.ID != created.ID || got.Flag == nil || got.Flag.Key != "f" || got.Project["key"] != "p" || len(got.Environments) != 1 || got.Environments[0]["key"] != "production" {
			t.Errorf("got %s", res.Body)
		}
		apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.ApprovalPath(created.ID)+"?expand=bogus", nil), 400, "invalid_request", "bogus")
		apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.ApprovalPath("nope"), nil), 404, "not_found")
	})

	t.Run("conflicts list an instruction that no longer applies", func(t *testing.T) {
		// Archiving the flag makes the request's first instruction fail.
		apptest.WantStatus(t, apptest.SemanticPatchFlag(t, srv, "p", "f", apptest.SemanticBody("", apptest.Instr("archiveFlag"))), http.StatusOK)
		got := apptest.DecodeApproval(t, srv.Do(t, http.MethodGet, apptest.ApprovalPath(created.ID), nil))
		if len(got.Conflicts) != 1 || got.Conflicts[0].Instruction["kind"] != "turnFlagOn" || !strings.Contains(got.Conflicts[0].Reason, "archived") {
			t.Errorf("conflicts %+v", got.Conflicts)
		}
		apptest.WantStatus(t, apptest.SemanticPatchFlag(t, srv, "p", "f", apptest.SemanticBody("", apptest.Instr("restoreFlag"))), http.StatusOK)
	})

	t.Run("delete removes a pending request", func(t *testing.T) {
		x := apCreate(t, srv, "p", "f", nil, apptest.Instr("turnFlagOn"))
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, apptest.ApprovalPath(x.ID), nil), http.StatusNoContent)
		apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.ApprovalPath(x.ID), nil), 404, "not_found")
	})
}

func TestApprovalRequestList(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	srv.MustCreateProject(t, "q")
	apptest.ABCFlag(t, srv, "p", "f")
	apptest.ABCFlag(t, srv, "q", "g")
	m := apptest.InviteMembers(t, srv, map[string]any{"email": "n@example.com"})[0]
	a := apCreate(t, srv, "p", "f", map[string]any{"notifyMemberIds": []string{m.ID}}, apptest.Instr("turnFlagOn"))
	b := apCreate(t, srv, "q", "g", nil, apptest.Instr("turnFlagOff"))
	_, tok := apptest.Reviewer(t, srv, "r@example.com")
	apptest.WantStatus(t, apptest.ReviewApproval(t, srv, b.ID, "approve", tok), http.StatusOK)
	owner := a.RequestorID

	ids := func(t *testing.T, res *apptest.Response) []string {
		t.Helper()
		apptest.WantStatus(t, res, http.StatusOK)
		var c struct {
			TotalCount int                   `json:"totalCount"`
			Items      []apptest.ApprovalDoc `json:"items"`
		}
		res.JSON(t, &c)
		out := []string{}
		for _, it := range c.Items {
			out = append(out, it.ID)
		}
		return out
	}
	cases := []struct {
		name   string
		filter string
		want   []string
	}{
		{"no filter lists every request, newest first", "", []string{b.ID, a.ID}},
		{"projectKey equals keeps one project", "projectKey equals p", []string{a.ID}},
		{"notifyMemberIds anyOf keeps requests notifying a member", `notifyMemberIds anyOf ["` + m.ID + `"]`, []string{a.ID}},
		{"requestorId equals keeps the requester's", "requestorId equals " + owner, []string{b.ID, a.ID}},
		{"resourceId equals keeps one flag", "resourceId equals " + resID("q", "production", "g"), []string{b.ID}},
		{"resourceKind equals segment keeps nothing", "resourceKind equals segment", []string{}},
		{"reviewStatus anyOf keeps approved ones", `reviewStatus anyOf ["approved"]`, []string{b.ID}},
		{"status anyOf with two values keeps both", `status anyOf ["pending","completed"]`, []string{b.ID, a.ID}},
		{"filters combine", `projectKey equals q, reviewStatus anyOf ["pending"]`, []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ids(t, srv.Do(t, http.MethodGet, apptest.ApprovalsPath+"?filter="+url.QueryEscape(c.filter), nil))
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
	t.Run("an unknown filter field is 400", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.ApprovalsPath+"?filter="+url.QueryEscape("color equals red"), nil), 400, "invalid_request", "color")
	})
	t.Run("limit and offset page the list", func(t *testing.T) {
		got := ids(t, srv.Do(t, http.MethodGet, apptest.ApprovalsPath+"?limit=1&offset=1", nil))
		if len(got) != 1 || got[0] != a.ID {
			t.Errorf("page %v", got)
		}
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, apptest.ApprovalsPath+"?limit=201", nil), http.StatusBadRequest)
	})
	t.Run("expand flag and project fill each item", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, apptest.ApprovalsPath+"?expand=flag,project", nil)
		apptest.WantStatus(t, res, http.StatusOK)
		var c struct{ Items []apptest.ApprovalDoc }
		res.JSON(t, &c)
		for _, it := range c.Items {
			if it.Flag == nil || it.Project == nil {
				t.Errorf("item not expanded: %+v", it)
			}
		}
	})
}

func TestApprovalRequestReviewAndApply(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	apptest.ABCFlag(t, srv, "p", "f")
	_, tok1 := apptest.Reviewer(t, srv, "r1@example.com")
	_, tok2 := apptest.Reviewer(t, srv, "r2@example.com")

	t.Run("the requester cannot approve their own request", func(t *testing.T) {
		a := apCreate(t, srv, "p", "f", nil, apptest.Instr("turnFlagOn"))
		apptest.WantError(t, apptest.ReviewApproval(t, srv, a.ID, "approve", srv.Token), 403, "forbidden", "own")
		got := apptest.DecodeApproval(t, apptest.ReviewApproval(t, srv, a.ID, "comment", srv.Token))
		if len(got.AllReviews) != 1 || got.AllReviews[0].Kind != "comment" || got.ReviewStatus != "pending" {
			t.Errorf("after a comment: %+v", got)
		}
	})
	t.Run("the requester may approve their own request when canReviewOwnRequest", func(t *testing.T) {
		apptest.SetApprovals(t, srv, "p", "production", apptest.Replace("/approvalSettings/canReviewOwnRequest", true))
		defer apptest.SetApprovals(t, srv, "p", "production", apptest.Replace("/approvalSettings/canReviewOwnRequest", false))
		a := apCreate(t, srv, "p", "f", nil, apptest.Instr("turnFlagOn"))
		res := apptest.ReviewApproval(t, srv, a.ID, "approve", srv.Token)
		apptest.WantStatus(t, res, http.StatusOK)
		if got := apptest.DecodeApproval(t, res); got.ReviewStatus != "approved" || got.AllReviews[0].MemberID != a.RequestorID {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("minNumApprovals 2 needs two distinct approvers", func(t *testing.T) {
		apptest.SetApprovals(t, srv, "p", "production", apptest.Replace("/approvalSettings/minNumApprovals", 2))
		defer apptest.SetApprovals(t, srv, "p", "production", apptest.Replace("/approvalSettings/minNumApprovals", 1))
		a := apCreate(t, srv, "p", "f", nil, apptest.Instr("turnFlagOn"))
		if got := apptest.DecodeApproval(t, apptest.ReviewApproval(t, srv, a.ID, "approve", tok1)); got.ReviewStatus != "pending" {
			t.Errorf("after one approval: %s", got.ReviewStatus)
		}
		apptest.WantError(t, apptest.ApplyApproval(t, srv, a.ID), 400, "invalid_request", "not approved")
		if got := apptest.DecodeApproval(t, apptest.ReviewApproval(t, srv, a.ID, "approve", tok1)); got.ReviewStatus != "pending" {
			t.Errorf("the same approver twice: %s", got.ReviewStatus)
		}
		if got := apptest.DecodeApproval(t, apptest.ReviewApproval(t, srv, a.ID, "approve", tok2)); got.ReviewStatus != "approved" || len(got.AllReviews) != 3 {
			t.Errorf("after two approvers: %+v", got)
		}
	})
	t.Run("a declined request cannot be applied unless canApplyDeclinedChanges", func(t *testing.T) {
		apptest.SetApprovals(t, srv, "p", "production", apptest.Replace("/approvalSettings/canApplyDeclinedChanges", false))
		a := apCreate(t, srv, "p", "f", nil, apptest.Instr("turnFlagOn"))
		if got := apptest.DecodeApproval(t, apptest.ReviewApproval(t, srv, a.ID, "decline", tok1)); got.ReviewStatus != "declined" {
			t.Errorf("after decline: %s", got.ReviewStatus)
		}
		apptest.WantError(t, apptest.ApplyApproval(t, srv, a.ID), 400, "invalid_request", "declined")
		apptest.SetApprovals(t, srv, "p", "production", apptest.Replace("/approvalSettings/canApplyDeclinedChanges", true))
		b := apCreate(t, srv, "p", "f", nil, apptest.Instr("turnFlagOn"))
		apptest.WantStatus(t, apptest.ReviewApproval(t, srv, b.ID, "decline", tok1), http.StatusOK)
		res := apptest.ApplyApproval(t, srv, b.ID)
		apptest.WantStatus(t, res, http.StatusOK)
		if got := apptest.DecodeApproval(t, res); got.Status != "completed" {
			t.Errorf("declined apply: %+v", got)
		}
		apptest.WantStatus(t, apptest.SemanticPatchFlag(t, srv, "p", "f", apptest.SemanticBody("production", apptest.Instr("turnFlagOff"))), http.StatusOK)
	})
	t.Run("apply changes the flag, writes the audit entry and cannot run twice", func(t *testing.T) {
		d := apptest.GetFlag(t, srv, "p", "f")
		a := apCreate(t, srv, "p", "f", nil, apptest.Instr("turnFlagOn"), apptest.Instr("addUserTargets", "values", []string{"u1"}, "variationId", d.VID(1)))
		apptest.WantStatus(t, apptest.ReviewApproval(t, srv, a.ID, "approve", tok1), http.StatusOK)
		res := apptest.ApplyApproval(t, srv, a.ID)
		apptest.WantStatus(t, res, http.StatusOK)
		got := apptest.DecodeApproval(t, res)
		if got.Status != "completed" || got.AppliedDate == "" || got.AppliedByMemberID != a.RequestorID {
			t.Errorf("applied %+v", got)
		}
		f := apptest.GetFlag(t, srv, "p", "f")
		if !f.Prod().On || apptest.TargetValues(f.Prod().Targets)["user/1"] != "u1" {
			t.Errorf("flag not changed: %+v", f.Prod())
		}
		e := apptest.LatestAuditEntry(t, srv)
		if e.Kind != "flag" || e.Comment != "ship" {
			t.Errorf("entry %+v", e)
		}
		apptest.WantError(t, apptest.ApplyApproval(t, srv, a.ID), 400, "invalid_request", "already applied")
	})
	t.Run("instructions that no longer apply fail the request with the reason", func(t *testing.T) {
		apptest.WantStatus(t, apptest.SemanticPatchFlag(t, srv, "p", "f", apptest.SemanticBody("production", apptest.Instr("addRule", "clauses", []any{map[string]any{"attribute": "k", "op": "in", "values": []any{"x"}}}, "variationId", apptest.GetFlag(t, srv, "p", "f").VID(0), "ref", "r1"))), http.StatusOK)
		rule := apptest.GetFlag(t, srv, "p", "f").Prod().Rules[0].ID
		a := apCreate(t, srv, "p", "f", nil, apptest.Instr("updateRuleVariationOrRollout", "ruleId", rule, "variationId", apptest.GetFlag(t, srv, "p", "f").VID(1)))
		apptest.WantStatus(t, apptest.SemanticPatchFlag(t, srv, "p", "f", apptest.SemanticBody("production", apptest.Instr("removeRule", "ruleId", rule))), http.StatusOK)
		apptest.WantStatus(t, apptest.ReviewApproval(t, srv, a.ID, "approve", tok1), http.StatusOK)
		res := apptest.ApplyApproval(t, srv, a.ID)
		apptest.WantStatus(t, res, http.StatusOK)
		if got := apptest.DecodeApproval(t, res); got.Status != "failed" || got.FailureReason == "" {
			t.Errorf("got %+v", got)
		}
		apptest.WantError(t, srv.Do(t, http.MethodDelete, apptest.ApprovalPath(a.ID), nil), 400, "invalid_request", "failed")
	})
	t.Run("autoApplyApprovedChanges applies on the approving review", func(t *testing.T) {
		autoApply(t, srv, "p", "production", true)
		defer autoApply(t, srv, "p", "production", false)
		a := apCreate(t, srv, "p", "f", nil, apptest.Instr("updateOffVariation", "variationId", apptest.GetFlag(t, srv, "p", "f").VID(1)))
		got := apptest.DecodeApproval(t, apptest.ReviewApproval(t, srv, a.ID, "approve", tok1))
		if got.Status != "completed" || apptest.IntOf(apptest.GetFlag(t, srv, "p", "f").Prod().OffVariation) != 1 {
			t.Errorf("not auto-applied: %+v", got)
		}
	})
	t.Run("ten concurrent applies: exactly one completes", func(t *testing.T) {
		a := apCreate(t, srv, "p", "f", nil, apptest.Instr("addTags", "values", []string{"once"}))
		apptest.WantStatus(t, apptest.ReviewApproval(t, srv, a.ID, "approve", tok1), http.StatusOK)
		before := apptest.GetFlag(t, srv, "p", "f").Version
		won := concurrentlyApply(t, 10, func(int) *apptest.Response { return apptest.ApplyApproval(t, srv, a.ID) })
		if len(won) != 1 {
			t.Errorf("%d applies succeeded", len(won))
		}
		if v := apptest.GetFlag(t, srv, "p", "f").Version; v != before+1 {
			t.Errorf("flag version %d, want %d", v, before+1)
		}
	})
}

// concurrentlyApply is concurrently, also accepting 400 (already applied).
func concurrentlyApply(t *testing.T, n int, call func(i int) *apptest.Response) []int {
	t.Helper()
	results := make(chan int, n)
	for i := range n {
		go func() { results <- call(i).Status }()
	}
	var won []int
	for i := range n {
		switch s := <-results; s {
		case http.StatusOK:
			won = append(won, i)
		case http.StatusConflict, http.StatusBadRequest:
		default:
			t.Errorf("status %d", s)
		}
	}
	return won
}

func TestApprovalRequestScheduled(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	apptest.ABCFlag(t, srv, "p", "f")
	_, tok := apptest.Reviewer(t, srv, "r@example.com")
	due := time.Now().Add(time.Hour).UnixMilli()
	a := apCreate(t, srv, "p", "f", map[string]any{"executionDate": due}, apptest.Instr("turnFlagOn"))
	got := apptest.DecodeApproval(t, apptest.ReviewApproval(t, srv, a.ID, "approve", tok))
	if got.Status != "scheduled" {
		t.Fatalf("after approval: %+v", got)
	}
	apptest.WantError(t, apptest.ApplyApproval(t, srv, a.ID), 400, "invalid_request", "scheduled")
	ctx := context.Background()
	svc := srv.App.Services.Approvals

	t.Run("the scheduler leaves a request not yet due", func(t *testing.T) {
		if n, err := svc.RunDue(ctx, time.Now()); n != 0 || err != nil {
			t.Errorf("ran %d: %v", n, err)
		}
		if apptest.GetFlag(t, srv, "p", "f").Prod().On {
			t.Errorf("applied early")
		}
	})
	t.Run("the scheduler applies a due request once", func(t *testing.T) {
		if n, err := svc.RunDue(ctx, time.Now().Add(2*time.Hour)); n != 1 || err != nil {
			t.Errorf("ran %d: %v", n, err)
		}
		if n, err := svc.RunDue(ctx, time.Now().Add(2*time.Hour)); n != 0 || err != nil {
			t.Errorf("second run ran %d: %v", n, err)
		}
		if !apptest.GetFlag(t, srv, "p", "f").Prod().On {
			t.Errorf("not applied")
		}
		if got := apptest.DecodeApproval(t, srv.Do(t, http.MethodGet, apptest.ApprovalPath(a.ID), nil)); got.Status != "completed" || got.AppliedDate == "" {
			t.Errorf("request %+v", got)
		}
	})
}

func TestApprovalEnforcement(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	d := apptest.ABCFlag(t, srv, "p", "f")
	apptest.CreateFlag(t, srv, "p", map[string]any{"key": "tagged", "name": "Tagged", "tags": []string{"sensitive"}})
	_, tok := apptest.Reviewer(t, srv, "r@example.com")
	apptest.SetApprovals(t, srv, "p", "test", apptest.Add("/approvalSettings/requiredApprovalTags/-", "sensitive"))
	apptest.SetApprovals(t, srv, "p", "production", apptest.Replace("/approvalSettings/required", true))

	cases := []struct {
		name   string
		do     func() *apptest.Response
		status int
	}{
		{"a semantic patch in a required environment is 405", func() *apptest.Response {
			return apptest.SemanticPatchFlag(t, srv, "p", "f", apptest.SemanticBody("production", apptest.Instr("turnFlagOn")))
		}, 405},
		{"a JSON patch of a required environment is 405", func() *apptest.Response {
			return srv.Do(t, http.MethodPatch, apptest.FlagPath("p", "f"), []apptest.PatchOp{apptest.Replace("/environments/production/on", true)})
		}, 405},
		{"a change in another environment is allowed", func() *apptest.Response {
			return apptest.SemanticPatchFlag(t, srv, "p", "f", apptest.SemanticBody("test", apptest.Instr("turnFlagOn")))
		}, 200},
		{"a flag-wide change is allowed", func() *apptest.Response {
			return apptest.SemanticPatchFlag(t, srv, "p", "f", apptest.SemanticBody("", apptest.Instr("updateName", "value", "New")))
		}, 200},
		{"a flag carrying a required tag is refused in that environment", func() *apptest.Response {
			return apptest.SemanticPatchFlag(t, srv, "p", "tagged", apptest.SemanticBody("test", apptest.Instr("turnFlagOn")))
		}, 405},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := c.do()
			if c.status == 405 {
				apptest.WantError(t, res, 405, "method_not_allowed", "approval request")
				return
			}
			apptest.WantStatus(t, res, c.status)
		})
	}
	t.Run("an approved request still applies", func(t *testing.T) {
		a := apCreate(t, srv, "p", "f", nil, apptest.Instr("turnFlagOn"), apptest.Instr("addUserTargets", "values", []string{"u"}, "variationId", d.VID(0)))
		apptest.WantStatus(t, apptest.ReviewApproval(t, srv, a.ID, "approve", tok), http.StatusOK)
		apptest.WantStatus(t, apptest.ApplyApproval(t, srv, a.ID), http.StatusOK)
		if !apptest.GetFlag(t, srv, "p", "f").Prod().On {
			t.Errorf("not applied")
		}
	})
}
