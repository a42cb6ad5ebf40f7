package approvalapi_test

import (
	"net/http"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

func aiResID(p, e, c string) string { return "proj/" + p + ":env/" + e + ":aiconfig/" + c }

// aiUpdate is an updateAIConfigVariation instruction on variation v with the given fields.
func aiUpdate(v string, fields map[string]any) map[string]any {
	out := map[string]any{"kind": "updateAIConfigVariation", "variationKey": v}
	for k, x := range fields {
		out[k] = x
	}
	return out
}

func aiRequest(p, e, c string, ins ...map[string]any) map[string]any {
	return map[string]any{"resourceId": aiResID(p, e, c), "description": "review this prompt", "instructions": ins}
}

// aiVersions is how many versions variation v of AI Config c has, and the latest's name.
func aiVersions(t testing.TB, srv *apptest.Server, p, c, v string) (int, string) {
	t.Helper()
	m := srv.Do(t, http.MethodGet, apptest.AIVariationPath(p, c, v), nil).Map(t)
	items := m["items"].([]any)
	return len(items), items[0].(map[string]any)["name"].(string)
}

func aiRequestCount(t testing.TB, srv *apptest.Server) float64 {
	t.Helper()
	return srv.Do(t, http.MethodGet, apptest.ApprovalsPath+"?filter=resourceKind%20equals%20aiConfig", nil).Map(t)["totalCount"].(float64)
}

func TestAIConfigApprovalSettings(t *testing.T) {
	srv := apptest.New(t)
	apptest.AIProject(t, srv, "ai")
	apptest.WantStatus(t, srv.Do(t, http.MethodPost, apptest.EnvsPath("ai"), map[string]any{"key": "production", "name": "Production", "color": "336699"}), http.StatusCreated)
	cases := []struct {
		name   string
		ops    []apptest.PatchOp
		status int
		parts  []string
	}{
		{"a setting the environment does not have yet is added with the defaults", []apptest.PatchOp{apptest.Replace("/resourceApprovalSettings/aiconfig/minNumApprovals", 2)}, http.StatusOK, nil},
		{"required is set by its path", []apptest.PatchOp{apptest.Replace("/resourceApprovalSettings/aiconfig/required", true)}, http.StatusOK, nil},
		{"a minimum outside 1 to 5 is refused naming the field", []apptest.PatchOp{apptest.Replace("/resourceApprovalSettings/aiconfig/minNumApprovals", 6)}, http.StatusBadRequest, []string{"resourceApprovalSettings.aiconfig.minNumApprovals"}},
		{"a setting that is not editable is refused naming the path", []apptest.PatchOp{apptest.Replace("/resourceApprovalSettings/aiconfig/serviceKind", "x")}, http.StatusBadRequest, []string{"/resourceApprovalSettings/aiconfig/serviceKind"}},
		{"a kind other than aiconfig and segment is refused", []apptest.PatchOp{apptest.Add("/resourceApprovalSettings/experiment/required", true)}, http.StatusBadRequest, []string{"aiconfig", "segment"}},
		{"required with requiredApprovalTags in one request is refused", []apptest.PatchOp{apptest.Replace("/resourceApprovalSettings/aiconfig/required", false), apptest.Replace("/resourceApprovalSettings/aiconfig/requiredApprovalTags", []string{"x"})}, http.StatusBadRequest, []string{"requiredApprovalTags"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := srv.Do(t, http.MethodPatch, apptest.EnvPath("ai", "production"), tc.ops)
			if tc.status != http.StatusOK {
				apptest.WantError(t, res, tc.status, "invalid_request", tc.parts...)
				return
			}
			apptest.WantStatus(t, res, http.StatusOK)
		})
	}
	t.Run("the environment shows the settings, with the defaults it was given", func(t *testing.T) {
		m := srv.Do(t, http.MethodGet, apptest.EnvPath("ai", "production"), nil).Map(t)
		a, _ := m["resourceApprovalSettings"].(map[string]any)["aiconfig"].(map[string]any)
		if a["required"] != true || a["minNumApprovals"] != float64(2) || a["canApplyDeclinedChanges"] != true {
			t.Errorf("want aiconfig required with 2 approvals: %v", m["resourceApprovalSettings"])
		}
	})
	t.Run("the audit entry records updateApprovalSettings", func(t *testing.T) {
		m := srv.Do(t, http.MethodGet, apptest.API+"/auditlog?limit=1", nil).Map(t)
		entry := m["items"].([]any)[0].(map[string]any)
		if entry["kind"] != "environment" {
			t.Errorf("want the environment's entry first: %v", entry)
		}
	})
}

func TestAIConfigApprovalRequests(t *testing.T) {
	srv := apptest.New(t)
	apptest.AIProject(t, srv, "ai")
	for _, e := range []string{"production", "staging"} {
		apptest.WantStatus(t, srv.Do(t, http.MethodPost, apptest.EnvsPath("ai"), map[string]any{"key": e, "name": e, "color": "336699"}), http.StatusCreated)
	}
	apptest.SetApprovals(t, srv, "ai", "production", apptest.Replace("/resourceApprovalSettings/aiconfig/required", true))
	_, bob := apptest.Reviewer(t, srv, "bob@example.com")

	t.Run("a variation edit in a project whose environment requires review answers 403 and stores nothing", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.AIVariationPath("ai", "chat", "short"), map[string]any{"name": "Shorter"}),
			http.StatusForbidden, "forbidden", "production", "/api/v2/approval-requests", "aiconfig/chat")
		if n, _ := aiVersions(t, srv, "ai", "chat", "short"); n != 1 {
			t.Errorf("%d versions, want 1", n)
		}
	})

	bad := []struct {
		name  string
		body  map[string]any
		parts []string
	}{
		{"an unknown variation is refused naming the instruction", aiRequest("ai", "production", "chat", aiUpdate("nope", map[string]any{"name": "x"})), []string{"instructions[0]", "nope"}},
		{"an unknown AI Config is refused naming the instruction", aiRequest("ai", "production", "gone", aiUpdate("short", map[string]any{"name": "x"})), []string{"instructions[0]", "gone"}},
		{"a model config that does not exist is refused naming the field", aiRequest("ai", "production", "chat", aiUpdate("short", map[string]any{"modelConfigKey": "nope"})), []string{"instructions[0]", "modelConfigKey"}},
		{"a state that is not archived or published is refused", aiRequest("ai", "production", "chat", aiUpdate("short", map[string]any{"state": "gone"})), []string{"instructions[0]", "state"}},
		{"an instruction of another kind is refused naming its kind", aiRequest("ai", "production", "chat", apptest.Instr("turnFlagOn")), []string{"instructions[0].kind", "updateAIConfigVariation"}},
		{"an instruction without variationKey is refused", aiRequest("ai", "production", "chat", map[string]any{"kind": "updateAIConfigVariation", "name": "x"}), []string{"instructions[0].variationKey"}},
		{"a field a variation does not have is refused", aiRequest("ai", "production", "chat", aiUpdate("short", map[string]any{"colour": "red"})), []string{"instructions[0]", "colour"}},
		{"two instructions are refused", aiRequest("ai", "production", "chat", aiUpdate("short", nil), aiUpdate("short", nil)), []string{"instructions", "exactly one"}},
		{"an environment that does not exist is not found", aiRequest("ai", "nowhere", "chat", aiUpdate("short", nil)), nil},
	}
	for _, tc := range bad {
		t.Run(tc.name+" and stores nothing", func(t *testing.T) {
			res := srv.Do(t, http.MethodPost, apptest.ApprovalsPath, tc.body)
			if tc.parts == nil {
				apptest.WantStatus(t, res, http.StatusNotFound)
			} else {
				apptest.WantError(t, res, http.StatusBadRequest, "invalid_request", tc.parts...)
			}
			if n := aiRequestCount(t, srv); n != 0 {
				t.Errorf("%v AI Config requests stored, want 0", n)
			}
		})
	}

	var id string
	t.Run("a request for the AI Config is created with its resourceId and the environment's AI Config settings", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, apptest.ApprovalsPath, aiRequest("ai", "production", "chat",
			aiUpdate("short", map[string]any{"name": "Shorter", "messages": []map[string]any{{"role": "system", "content": "Be very brief."}}})))
		apptest.WantStatus(t, res, http.StatusCreated)
		d := apptest.DecodeApproval(t, res)
		id = d.ID
		if d.ResourceID != aiResID("ai", "production", "chat") || d.Status != "pending" || d.Links["aiConfig"].Href == "" || d.Links["flag"].Href != "" || len(d.Conflicts) != 0 {
			t.Errorf("want a pending aiconfig request linking the AI Config and no flag: %s", res.Body)
		}
		if d.ApprovalSettings["required"] != true {
			t.Errorf("want the environment's aiconfig settings: %v", d.ApprovalSettings)
		}
	})
	t.Run("the list and get show it, and expand=flag adds nothing to it", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, apptest.ApprovalsPath+"?expand=flag&filter=resourceKind%20equals%20aiConfig", nil)
		apptest.WantStatus(t, res, http.StatusOK)
		var list struct {
			Items []apptest.ApprovalDoc `json:"items"`
		}
		res.JSON(t, &list)
		if len(list.Items) != 1 || list.Items[0].ID != id || list.Items[0].Flag != nil {
			t.Errorf("want the one AI Config request without a flag: %s", res.Body)
		}
		if n := srv.Do(t, http.MethodGet, apptest.ApprovalsPath+"?filter=resourceKind%20equals%20flag", nil).Map(t)["totalCount"]; n != float64(0) {
			t.Errorf("%v flag requests, want 0", n)
		}
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, apptest.ApprovalPath(id)+"?expand=flag", nil), http.StatusOK)
	})
	t.Run("the requester may not approve their own request", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPost, apptest.ApprovalPath(id)+"/reviews", map[string]any{"kind": "approve"}), http.StatusForbidden, "forbidden", "production")
	})
	t.Run("an unapproved request is not applied", func(t *testing.T) {
		apptest.WantStatus(t, apptest.ApplyApproval(t, srv, id), http.StatusBadRequest)
		if n, _ := aiVersions(t, srv, "ai", "chat", "short"); n != 1 {
			t.Errorf("%d versions, want 1", n)
		}
	})
	t.Run("another member approves it and the apply stores a new version with the change", func(t *testing.T) {
		res := apptest.ReviewApproval(t, srv, id, "approve", bob)
		apptest.WantStatus(t, res, http.StatusOK)
		if d := apptest.DecodeApproval(t, res); d.ReviewStatus != "approved" {
			t.Fatalf("review status %q, want approved", d.ReviewStatus)
		}
		res = apptest.ApplyApproval(t, srv, id)
		apptest.WantStatus(t, res, http.StatusOK)
		if d := apptest.DecodeApproval(t, res); d.Status != "completed" || d.AppliedDate == "" {
			t.Errorf("want completed with an appliedDate: %s", res.Body)
		}
		m := srv.Do(t, http.MethodGet, apptest.AIVariationPath("ai", "chat", "short"), nil).Map(t)
		items := m["items"].([]any)
		latest := items[0].(map[string]any)
		msgs, _ := latest["messages"].([]any)
		if len(items) != 2 || latest["name"] != "Shorter" || latest["version"] != float64(2) || len(msgs) != 1 || msgs[0].(map[string]any)["content"] != "Be very brief." {
			t.Errorf("want version 2 named Shorter with the new message: %v", latest)
		}
	})
	t.Run("the review check still holds for direct edits after an apply", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.AIVariationPath("ai", "chat", "short"), map[string]any{"name": "Direct"}), http.StatusForbidden)
	})
	t.Run("an applied request is not applied again", func(t *testing.T) {
		apptest.WantStatus(t, apptest.ApplyApproval(t, srv, id), http.StatusBadRequest)
		if n, _ := aiVersions(t, srv, "ai", "chat", "short"); n != 2 {
			t.Errorf("%d versions, want 2", n)
		}
	})
	t.Run("two applies at once apply the request once", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, apptest.ApprovalsPath, aiRequest("ai", "production", "chat", aiUpdate("short", map[string]any{"name": "Once"})))
		apptest.WantStatus(t, res, http.StatusCreated)
		rid := apptest.DecodeApproval(t, res).ID
		apptest.WantStatus(t, apptest.ReviewApproval(t, srv, rid, "approve", bob), http.StatusOK)
		ok, statuses := racingApplies(t, srv, rid, 2)
		n, name := aiVersions(t, srv, "ai", "chat", "short")
		if ok != 1 || n != 3 || name != "Once" {
			t.Errorf("statuses %v, %d versions, latest %q: want one apply and version 3 named Once", statuses, n, name)
		}
	})
	t.Run("a request whose change no longer applies fails with the reason", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, apptest.ApprovalsPath, aiRequest("ai", "production", "chat", aiUpdate("short", map[string]any{"modelConfigKey": "claude"})))
		apptest.WantStatus(t, res, http.StatusCreated)
		rid := apptest.DecodeApproval(t, res).ID
		apptest.WantStatus(t, apptest.ReviewApproval(t, srv, rid, "approve", bob), http.StatusOK)
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, apptest.AIModelsPath("ai")+"/claude", nil), http.StatusNoContent)
		if d := apptest.DecodeApproval(t, srv.Do(t, http.MethodGet, apptest.ApprovalPath(rid), nil)); len(d.Conflicts) != 1 {
			t.Errorf("want one conflict: %+v", d.Conflicts)
		}
		res = apptest.ApplyApproval(t, srv, rid)
		apptest.WantStatus(t, res, http.StatusOK)
		if d := apptest.DecodeApproval(t, res); d.Status != "failed" || d.FailureReason == "" {
			t.Errorf("want failed with a reason: %s", res.Body)
		}
		if n, _ := aiVersions(t, srv, "ai", "chat", "short"); n != 3 {
			t.Errorf("%d versions, want 3", n)
		}
	})
}

func TestAIConfigApprovalRights(t *testing.T) {
	srv := apptest.New(t)
	apptest.AIProject(t, srv, "ai")
	for _, e := range []string{"production", "staging"} {
		apptest.WantStatus(t, srv.Do(t, http.MethodPost, apptest.EnvsPath("ai"), map[string]any{"key": e, "name": e, "color": "336699"}), http.StatusCreated)
	}
	prod := srv.Do(t, http.MethodPost, apptest.ApprovalsPath, aiRequest("ai", "production", "chat", aiUpdate("short", map[string]any{"name": "P"})))
	apptest.WantStatus(t, prod, http.StatusCreated)
	prodID := apptest.DecodeApproval(t, prod).ID
	role := func(name string, resources ...string) string { return approverToken(t, srv, name, resources...) }
	staging := role("staging AI Configs", "proj/*:env/staging:aiconfig/*")
	flags := role("production flags", "proj/*:env/production:flag/*")
	prodAI := role("production AI Configs", "proj/ai:env/production:aiconfig/chat")
	cases := []struct {
		name   string
		method string
		path   string
		body   map[string]any
		tok    string
		status int
	}{
		{"a role on staging's AI Configs creates a request in staging", http.MethodPost, apptest.ApprovalsPath, aiRequest("ai", "staging", "chat", aiUpdate("short", nil)), staging, http.StatusCreated},
		{"a role on staging's AI Configs may not create one in production", http.MethodPost, apptest.ApprovalsPath, aiRequest("ai", "production", "chat", aiUpdate("short", nil)), staging, http.StatusForbidden},
		{"a role on production's flags may not create one for an AI Config", http.MethodPost, apptest.ApprovalsPath, aiRequest("ai", "production", "chat", aiUpdate("short", nil)), flags, http.StatusForbidden},
		{"a role on staging's AI Configs may not review production's request", http.MethodPost, apptest.ApprovalPath(prodID) + "/reviews", map[string]any{"kind": "comment"}, staging, http.StatusForbidden},
		{"a role on production's flags may not apply production's AI Config request", http.MethodPost, apptest.ApprovalPath(prodID) + "/apply", map[string]any{}, flags, http.StatusForbidden},
		{"a role on that AI Config in production reviews its request", http.MethodPost, apptest.ApprovalPath(prodID) + "/reviews", map[string]any{"kind": "comment"}, prodAI, http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			apptest.WantStatus(t, srv.Do(t, tc.method, tc.path, tc.body, "Authorization", tc.tok), tc.status)
		})
	}
}
