package approvalapi_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/token"
)

func patchApproval(t testing.TB, srv *apptest.Server, id string, ins ...map[string]any) *apptest.Response {
	t.Helper()
	return srv.Do(t, http.MethodPatch, apptest.ApprovalPath(id), map[string]any{"comment": "tidy", "instructions": ins}, "Content-Type", apptest.SemanticType, "SVC-API-Version", "beta")
}

func TestPatchApprovalRequest(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	apptest.ABCFlag(t, srv, "p", "f")
	members := apptest.InviteMembers(t, srv, map[string]any{"email": "a@example.com"}, map[string]any{"email": "b@example.com"})
	apptest.WantStatus(t, srv.Do(t, http.MethodPost, apptest.API+"/teams", map[string]any{"key": "ops", "name": "Ops"}), http.StatusCreated)
	req := apCreate(t, srv, "p", "f", map[string]any{"notifyMemberIds": []string{members[0].ID}}, apptest.Instr("turnFlagOn"))

	t.Run("addReviewers adds members and teams, each once", func(t *testing.T) {
		res := patchApproval(t, srv, req.ID, apptest.Instr("addReviewers", "notifyMemberIds", []string{members[0].ID, members[1].ID}, "notifyTeamKeys", []string{"ops"}))
		apptest.WantStatus(t, res, http.StatusOK)
		got := apptest.DecodeApproval(t, res)
		if strings.Join(got.NotifyMemberIDs, ",") != members[0].ID+","+members[1].ID || strings.Join(got.NotifyTeamKeys, ",") != "ops" || got.Version != req.Version+1 {
			t.Errorf("members %v teams %v version %d", got.NotifyMemberIDs, got.NotifyTeamKeys, got.Version)
		}
	})
	t.Run("updateDescription replaces the description, also sent as plain JSON", func(t *testing.T) {
		res := srv.Do(t, http.MethodPatch, apptest.ApprovalPath(req.ID), map[string]any{"instructions": []any{apptest.Instr("updateDescription", "value", "New description")}}, apptest.BetaHeader...)
		apptest.WantStatus(t, res, http.StatusOK)
		if got := apptest.DecodeApproval(t, res); got.Description != "New description" {
			t.Errorf("description %q", got.Description)
		}
	})
	t.Run("the change is audited", func(t *testing.T) {
		log := srv.Do(t, http.MethodGet, apptest.API+"/auditlog", nil)
		if !strings.Contains(log.String(), "updated the approval request") || !strings.Contains(log.String(), "updateApprovalRequest") {
			t.Errorf("no audit entry for the update: %s", log.Body)
		}
	})

	bad := []struct {
		name   string
		ins    []map[string]any
		status int
		parts  []string
	}{
		{"an unknown kind is 400 naming its index", []map[string]any{apptest.Instr("updateDescription", "value", "x"), apptest.Instr("fly")}, 400, []string{"instructions[1]", "addReviewers"}},
		{"an empty description is 400", []map[string]any{apptest.Instr("updateDescription", "value", "  ")}, 400, []string{"instructions[0]", "value"}},
		{"a description over 5000 characters is 400", []map[string]any{apptest.Instr("updateDescription", "value", strings.Repeat("x", 5001))}, 400, []string{"instructions[0]", "5000"}},
		{"addReviewers without members or teams is 400", []map[string]any{apptest.Instr("addReviewers")}, 400, []string{"instructions[0]", "notifyMemberIds"}},
		{"an unknown member is 400 naming it", []map[string]any{apptest.Instr("addReviewers", "notifyMemberIds", []string{"nobody"})}, 400, []string{"instructions[0]", "nobody"}},
		{"an unknown team is 400 naming it", []map[string]any{apptest.Instr("addReviewers", "notifyTeamKeys", []string{"nope"})}, 400, []string{"instructions[0]", "nope"}},
	}
	for _, tc := range bad {
		t.Run(tc.name+" and changes nothing", func(t *testing.T) {
			apptest.WantError(t, patchApproval(t, srv, req.ID, tc.ins...), tc.status, "invalid_request", tc.parts...)
			got := apptest.DecodeApproval(t, srv.Do(t, http.MethodGet, apptest.ApprovalPath(req.ID), nil))
			if got.Description != "New description" || len(got.NotifyMemberIDs) != 2 {
				t.Errorf("stored request changed: %+v", got)
			}
		})
	}
	t.Run("no instructions is 400", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.ApprovalPath(req.ID), map[string]any{"instructions": []any{}}, apptest.BetaHeader...), 400, "invalid_request", "instructions")
	})
	t.Run("a missing request is 404", func(t *testing.T) {
		apptest.WantError(t, patchApproval(t, srv, "nope", apptest.Instr("updateDescription", "value", "x")), 404, "not_found")
	})
	t.Run("concurrent updates all land", func(t *testing.T) {
		var wg sync.WaitGroup
		for _, id := range []string{members[0].ID, members[1].ID} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				apptest.WantStatus(t, patchApproval(t, srv, req.ID, apptest.Instr("updateDescription", "value", "by "+id)), http.StatusOK)
			}()
		}
		wg.Wait()
		got := apptest.DecodeApproval(t, srv.Do(t, http.MethodGet, apptest.ApprovalPath(req.ID), nil))
		if !strings.HasPrefix(got.Description, "by ") {
			t.Errorf("description %q", got.Description)
		}
	})
	t.Run("an applied request is 400", func(t *testing.T) {
		_, rev := apptest.Reviewer(t, srv, "rev@example.com")
		apptest.WantStatus(t, apptest.ReviewApproval(t, srv, req.ID, "approve", rev), http.StatusOK)
		apptest.WantStatus(t, apptest.ApplyApproval(t, srv, req.ID), http.StatusOK)
		apptest.WantError(t, patchApproval(t, srv, req.ID, apptest.Instr("updateDescription", "value", "late")), 400, "invalid_request", "completed", "pending or scheduled")
	})
}

func TestPatchApprovalRequestRights(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	apptest.ABCFlag(t, srv, "p", "f")
	prod := apCreate(t, srv, "p", "f", nil, apptest.Instr("turnFlagOn"))
	testReq := apCreate(t, srv, "p", "f", map[string]any{"resourceId": resID("p", "test", "f")}, apptest.Instr("turnFlagOn"))
	_, tok := srv.MustIssueToken(t, token.Spec{Name: "test only", InlineRole: []policy.Statement{
		{Effect: "allow", Actions: []string{"updateApprovalRequest"}, Resources: []string{"proj/*:env/test:flag/*"}},
	}})
	cases := []struct {
		name   string
		id     string
		status int
	}{
		{"a role limited to test updates test's request", testReq.ID, http.StatusOK},
		{"a role limited to test may not update production's request", prod.ID, http.StatusForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := srv.Do(t, http.MethodPatch, apptest.ApprovalPath(tc.id), map[string]any{"instructions": []any{apptest.Instr("updateDescription", "value", "x")}}, "Authorization", tok, "SVC-API-Version", "beta")
			apptest.WantStatus(t, res, tc.status)
		})
	}
}
