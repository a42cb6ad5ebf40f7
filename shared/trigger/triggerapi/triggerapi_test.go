package triggerapi_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/token"
)

func triggersPath(p, e string) string    { return apptest.EnvPath(p, e) + "/adaptive-triggers" }
func triggerPath(p, e, id string) string { return triggersPath(p, e) + "/" + id }
func firePath(id string) string          { return apptest.API + "/adaptive-triggers/" + id + "/fire" }

type trgDoc struct {
	ID            string                                  `json:"id"`
	Name          string                                  `json:"name"`
	ResourceKind  string                                  `json:"resourceKind"`
	ResourceKey   string                                  `json:"resourceKey"`
	Enabled       bool                                    `json:"enabled"`
	CreatedAt     int64                                   `json:"createdAt"`
	UpdatedAt     int64                                   `json:"updatedAt"`
	Task          struct{ Instructions []map[string]any } `json:"task"`
	TriggerSource map[string]any                          `json:"triggerSource"`
	TriggerToken  string                                  `json:"triggerToken"`
	LastFiring    *struct {
		EventID, Status, Error, Code string
	} `json:"_lastFiring"`
	Access map[string]any `json:"_access"`
}

func trgBody(flagKey string, ins ...map[string]any) map[string]any {
	return map[string]any{"name": "errors spike", "resourceKind": "flag", "resourceKey": flagKey,
		"task": map[string]any{"instructions": ins}, "triggerSource": map[string]any{"type": "observabilityAlert", "alertId": 7}}
}

// trgCreate creates a trigger in p's production environment.
func trgCreate(t testing.TB, srv *apptest.Server, p string, body map[string]any) trgDoc {
	t.Helper()
	res := srv.Do(t, http.MethodPost, triggersPath(p, "production"), body)
	apptest.WantStatus(t, res, http.StatusCreated)
	var d trgDoc
	res.JSON(t, &d)
	return d
}

func fire(t testing.TB, srv *apptest.Server, id, tok, event string) *apptest.Response {
	t.Helper()
	return srv.Do(t, http.MethodPost, firePath(id), map[string]any{"eventId": event}, "Authorization", tok)
}

func flagOn(t testing.TB, srv *apptest.Server, p, f, e string) bool {
	t.Helper()
	res := srv.Do(t, http.MethodGet, apptest.FlagPath(p, f), nil)
	apptest.WantStatus(t, res, http.StatusOK)
	envs, _ := res.Map(t)["environments"].(map[string]any)
	env, _ := envs[e].(map[string]any)
	on, _ := env["on"].(bool)
	return on
}

func TestAdaptiveTriggerCRUD(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	d := apptest.ABCFlag(t, srv, "p", "f")

	var created trgDoc
	t.Run("a valid trigger is created enabled, with its token shown once", func(t *testing.T) {
		created = trgCreate(t, srv, "p", trgBody("f", apptest.Instr("turnFlagOn"), apptest.Instr("updateFallthroughVariationOrRollout", "variationId", d.VID(1))))
		if created.ID == "" || !created.Enabled || created.ResourceKind != "flag" || created.ResourceKey != "f" || created.CreatedAt == 0 ||
			created.UpdatedAt != created.CreatedAt || len(created.Task.Instructions) != 2 || created.TriggerSource["type"] != "observabilityAlert" ||
			!strings.HasPrefix(created.TriggerToken, "trg-") || created.Access == nil {
			t.Errorf("created %+v", created)
		}
	})
	t.Run("reads and lists never show the token", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, triggerPath("p", "production", created.ID), nil)
		apptest.WantStatus(t, res, http.StatusOK)
		if strings.Contains(res.String(), created.TriggerToken) || strings.Contains(res.String(), "tokenHash") {
			t.Errorf("read shows the token: %s", res.Body)
		}
		list := srv.Do(t, http.MethodGet, triggersPath("p", "production"), nil)
		apptest.WantStatus(t, list, http.StatusOK)
		if got := list.Map(t)["totalCount"]; got != float64(1) || strings.Contains(list.String(), created.TriggerToken) {
			t.Errorf("list %s", list.Body)
		}
		other := srv.Do(t, http.MethodGet, triggersPath("p", "test"), nil)
		if other.Map(t)["totalCount"] != float64(0) {
			t.Errorf("another environment lists %s", other.Body)
		}
	})
	t.Run("a trigger read through another environment is not found", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodGet, triggerPath("p", "test", created.ID), nil), 404, "not_found")
	})

	bad := []struct {
		name  string
		body  map[string]any
		parts []string
	}{
		{"an unknown instruction kind is 400 naming its index", trgBody("f", apptest.Instr("turnFlagOn"), apptest.Instr("fly")), []string{"instructions[1]"}},
		{"an instruction that does not apply to the flag is 400 naming its index", trgBody("f", apptest.Instr("turnFlagOn"), apptest.Instr("updateOffVariation", "variationId", "missing")), []string{"instructions[1]"}},
		{"a missing flag is 400 naming resourceKey", trgBody("nope", apptest.Instr("turnFlagOn")), []string{"resourceKey"}},
		{"no instructions is 400 naming task.instructions", trgBody("f"), []string{"task.instructions"}},
		{"a kind other than flag is 400 naming resourceKind", func() map[string]any {
			b := trgBody("f", apptest.Instr("turnFlagOn"))
			b["resourceKind"] = "segment"
			return b
		}(), []string{"resourceKind"}},
		{"a missing name is 400 naming name", func() map[string]any {
			b := trgBody("f", apptest.Instr("turnFlagOn"))
			delete(b, "name")
			return b
		}(), []string{"name"}},
		{"a missing trigger source is 400 naming triggerSource", func() map[string]any {
			b := trgBody("f", apptest.Instr("turnFlagOn"))
			delete(b, "triggerSource")
			return b
		}(), []string{"triggerSource"}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			apptest.WantError(t, srv.Do(t, http.MethodPost, triggersPath("p", "production"), tc.body), 400, "invalid_request", tc.parts...)
		})
	}
	t.Run("bad creates store nothing", func(t *testing.T) {
		if n := srv.Do(t, http.MethodGet, triggersPath("p", "production"), nil).Map(t)["totalCount"]; n != float64(1) {
			t.Errorf("totalCount %v", n)
		}
	})
	t.Run("a missing environment is 404", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPost, triggersPath("p", "nope"), trgBody("f", apptest.Instr("turnFlagOn"))), 404, "not_found")
	})

	t.Run("a patch changes name and enabled and bumps updatedAt", func(t *testing.T) {
		res := srv.Do(t, http.MethodPatch, triggerPath("p", "production", created.ID), []apptest.PatchOp{apptest.Replace("/name", "renamed"), apptest.Replace("/enabled", false)})
		apptest.WantStatus(t, res, http.StatusOK)
		var got trgDoc
		res.JSON(t, &got)
		if got.Name != "renamed" || got.Enabled || got.CreatedAt != created.CreatedAt || got.UpdatedAt < created.UpdatedAt {
			t.Errorf("patched %+v", got)
		}
	})
	t.Run("a patch with instructions that do not apply is 400 and changes nothing", func(t *testing.T) {
		res := srv.Do(t, http.MethodPatch, triggerPath("p", "production", created.ID),
			[]apptest.PatchOp{apptest.Replace("/task/instructions", []any{apptest.Instr("updateOffVariation", "variationId", "missing")})})
		apptest.WantError(t, res, 400, "invalid_request", "instructions[0]")
		var got trgDoc
		srv.Do(t, http.MethodGet, triggerPath("p", "production", created.ID), nil).JSON(t, &got)
		if len(got.Task.Instructions) != 2 {
			t.Errorf("instructions %v", got.Task.Instructions)
		}
	})
	t.Run("a patch of resourceKey is 400", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPatch, triggerPath("p", "production", created.ID), []apptest.PatchOp{apptest.Replace("/resourceKey", "g")}), 400, "invalid_request", "resourceKey")
	})
	t.Run("a delete removes it", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, triggerPath("p", "production", created.ID), nil), http.StatusNoContent)
		apptest.WantError(t, srv.Do(t, http.MethodGet, triggerPath("p", "production", created.ID), nil), 404, "not_found")
	})
}

func TestAdaptiveTriggerFire(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	apptest.ABCFlag(t, srv, "p", "f")
	tr := trgCreate(t, srv, "p", trgBody("f", apptest.Instr("turnFlagOn")))

	t.Run("a wrong or missing token is 401 and runs nothing", func(t *testing.T) {
		apptest.WantError(t, fire(t, srv, tr.ID, "trg-wrong", "e0"), 401, "unauthorized")
		apptest.WantError(t, fire(t, srv, tr.ID, "", "e0"), 401, "unauthorized")
		apptest.WantError(t, fire(t, srv, "00000000-0000-0000-0000-000000000000", tr.TriggerToken, "e0"), 401, "unauthorized")
		if flagOn(t, srv, "p", "f", "production") {
			t.Error("the flag was turned on")
		}
	})
	t.Run("a firing without an event id is 400 naming eventId", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPost, firePath(tr.ID), map[string]any{}, "Authorization", tr.TriggerToken), 400, "invalid_request", "eventId")
	})
	t.Run("a firing runs the instructions, with an audit entry naming the trigger", func(t *testing.T) {
		res := fire(t, srv, tr.ID, tr.TriggerToken, "e1")
		apptest.WantStatus(t, res, http.StatusOK)
		if res.Map(t)["status"] != "applied" {
			t.Errorf("answer %s", res.Body)
		}
		if !flagOn(t, srv, "p", "f", "production") || flagOn(t, srv, "p", "f", "test") {
			t.Error("the flag is not on in production only")
		}
		log := srv.Do(t, http.MethodGet, apptest.API+"/auditlog", nil)
		apptest.WantStatus(t, log, http.StatusOK)
		var entries struct {
			Items []struct{ Kind, Comment string }
		}
		log.JSON(t, &entries)
		named := false
		for _, e := range entries.Items {
			named = named || e.Kind == "flag" && strings.Contains(e.Comment, tr.ID) && strings.Contains(e.Comment, "e1")
		}
		if !named {
			t.Errorf("no flag audit entry names trigger %s and event e1: %s", tr.ID, log.Body)
		}
	})
	t.Run("a repeated event id runs once", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", "f"), map[string]any{"environmentKey": "production", "instructions": []any{apptest.Instr("turnFlagOff")}},
			"Content-Type", apptest.SemanticType), http.StatusOK)
		res := fire(t, srv, tr.ID, tr.TriggerToken, "e1")
		apptest.WantStatus(t, res, http.StatusOK)
		if res.Map(t)["status"] != "duplicate" || flagOn(t, srv, "p", "f", "production") {
			t.Errorf("a repeat ran again: %s", res.Body)
		}
	})
	t.Run("a body without eventId may name the event in the X-Trigger-Event-Id header, and the same id in a body is a repeat", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, firePath(tr.ID), map[string]any{}, "Authorization", tr.TriggerToken, "X-Trigger-Event-Id", "h1")
		apptest.WantStatus(t, res, http.StatusOK)
		if m := res.Map(t); m["status"] != "applied" || m["eventId"] != "h1" || !flagOn(t, srv, "p", "f", "production") {
			t.Errorf("a firing with the header: %s", res.Body)
		}
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", "f"), map[string]any{"environmentKey": "production", "instructions": []any{apptest.Instr("turnFlagOff")}},
			"Content-Type", apptest.SemanticType), http.StatusOK)
		if res := fire(t, srv, tr.ID, tr.TriggerToken, "h1"); res.Map(t)["status"] != "duplicate" || flagOn(t, srv, "p", "f", "production") {
			t.Errorf("the same event id in a body ran again: %s", res.Body)
		}
	})
	t.Run("concurrent deliveries of one event run once", func(t *testing.T) {
		var wg sync.WaitGroup
		statuses := make([]string, 4)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res := fire(t, srv, tr.ID, tr.TriggerToken, "e2")
				if res.Status == http.StatusOK {
					statuses[i], _ = res.Map(t)["status"].(string)
				}
			}()
		}
		wg.Wait()
		applied := 0
		for _, s := range statuses {
			if s == "applied" {
				applied++
			}
		}
		if applied != 1 {
			t.Errorf("statuses %v, want exactly one applied", statuses)
		}
	})
	t.Run("a disabled trigger does not fire", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, triggerPath("p", "production", tr.ID), []apptest.PatchOp{apptest.Replace("/enabled", false)}), http.StatusOK)
		apptest.WantError(t, fire(t, srv, tr.ID, tr.TriggerToken, "e3"), 409, "conflict", "disabled")
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, triggerPath("p", "production", tr.ID), []apptest.PatchOp{apptest.Replace("/enabled", true)}), http.StatusOK)
	})
	t.Run("a required approval makes the firing fail with 405, recorded on the trigger", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", "f"), map[string]any{"environmentKey": "production", "instructions": []any{apptest.Instr("turnFlagOff")}},
			"Content-Type", apptest.SemanticType), http.StatusOK)
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.EnvPath("p", "production"), []apptest.PatchOp{apptest.Replace("/approvalSettings/required", true)}), http.StatusOK)
		apptest.WantError(t, fire(t, srv, tr.ID, tr.TriggerToken, "e4"), 405, "method_not_allowed")
		var got trgDoc
		srv.Do(t, http.MethodGet, triggerPath("p", "production", tr.ID), nil).JSON(t, &got)
		if got.LastFiring == nil || got.LastFiring.Status != "failed" || got.LastFiring.EventID != "e4" || got.LastFiring.Code != "method_not_allowed" {
			t.Errorf("last firing %+v", got.LastFiring)
		}
		if flagOn(t, srv, "p", "f", "production") {
			t.Error("the flag was turned on without approval")
		}
	})
}

func TestAdaptiveTriggerCreatorRights(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	apptest.ABCFlag(t, srv, "p", "f")
	// The token may manage triggers anywhere, but toggle flags in test only.
	_, tok := srv.MustIssueToken(t, token.Spec{Name: "ops", Role: identity.Role("reader"), InlineRole: []policy.Statement{
		{Effect: "allow", Actions: []string{"*"}, Resources: []string{"proj/*:env/*:adaptive-trigger/*"}},
		{Effect: "allow", Actions: []string{"updateOn"}, Resources: []string{"proj/*:env/test:flag/*"}},
	}})
	cases := []struct {
		name   string
		env    string
		status int
	}{
		{"a trigger whose instructions the creator may run in the environment is created", "test", http.StatusCreated},
		{"a trigger whose instructions the creator may not run in the environment is 403", "production", http.StatusForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := srv.Do(t, http.MethodPost, triggersPath("p", tc.env), trgBody("f", apptest.Instr("turnFlagOn")), "Authorization", tok)
			apptest.WantStatus(t, res, tc.status)
		})
	}
	t.Run("a patch adding instructions the editor may not run is 403", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, triggersPath("p", "test"), trgBody("f", apptest.Instr("turnFlagOn")), "Authorization", tok)
		apptest.WantStatus(t, res, http.StatusCreated)
		var d trgDoc
		res.JSON(t, &d)
		patch := []apptest.PatchOp{apptest.Replace("/task/instructions", []any{apptest.Instr("turnFlagOn"), apptest.Instr("updateFallthroughVariationOrRollout", "variationId", "x")})}
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, triggerPath("p", "test", d.ID), patch, "Authorization", tok), http.StatusForbidden)
	})
}
