package flagapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// How semantic patches are recognised: the Content-Type's domain-model
// under flagplane's name or LaunchDarkly's, and, for operations that take
// nothing but a semantic patch, a body with "instructions" whatever the
// Content-Type says (LaunchDarkly's Go client sends plain application/json).

const ldSemanticType = "application/json; domain-model=launchdarkly.semanticpatch"

func TestSemanticPatchMediaTypes(t *testing.T) {
	hour := later(time.Hour)
	type request struct {
		path        string
		contentType string
		body        any
	}
	userPatch := func(fx expFixture, contentType string) request {
		return request{apptest.UserExpiringPath("p", "u", "production"), contentType, map[string]any{"instructions": []any{
			apptest.Instr("addExpireUserTargetDate", "flagKey", "f1", "variationId", fx.f1.VID(1), "value", hour)}}}
	}
	flagPatch := func(fx expFixture, contentType string) request {
		return request{apptest.FlagExpiringPath("p", "f1", "production"), contentType, map[string]any{"instructions": []any{
			apptest.Instr("addExpireUserTargetDate", "userKey", "u", "variationId", fx.f1.VID(1), "value", hour)}}}
	}
	for _, c := range []struct {
		name    string
		request func(expFixture) request
		status  int
		parts   []string
	}{
		{"an expiring-targets patch per user with plain application/json is a semantic patch", func(fx expFixture) request { return userPatch(fx, "application/json") }, http.StatusOK, nil},
		{"an expiring-targets patch per flag with plain application/json is a semantic patch", func(fx expFixture) request { return flagPatch(fx, "application/json") }, http.StatusOK, nil},
		{"an expiring-targets patch with LaunchDarkly's domain-model is a semantic patch", func(fx expFixture) request { return userPatch(fx, ldSemanticType) }, http.StatusOK, nil},
		{"an expiring-targets patch with flagplane's domain-model is a semantic patch", func(fx expFixture) request { return flagPatch(fx, apptest.SemanticType) }, http.StatusOK, nil},
		{"a JSON patch of expiring targets is refused with 400 asking for instructions", func(fx expFixture) request {
			return request{apptest.UserExpiringPath("p", "u", "production"), "application/json", []apptest.PatchOp{apptest.Replace("/x", 1)}}
		}, http.StatusBadRequest, []string{"semantic patch only", "instructions"}},
		{"an object without instructions is refused with 400 asking for them", func(fx expFixture) request {
			return request{apptest.FlagExpiringPath("p", "f1", "production"), "application/json", map[string]any{"comment": "no instructions"}}
		}, http.StatusBadRequest, []string{"instructions"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fx := newExpFixture(t)
			rq := c.request(fx)
			res := fx.srv.Do(t, http.MethodPatch, rq.path, rq.body, "Content-Type", rq.contentType)
			if c.status != http.StatusOK {
				apptest.WantError(t, res, c.status, "invalid_request", c.parts...)
				wantNoExpiringTargets(t, fx.srv)
				return
			}
			l := expDecode(t, res)
			if len(l.Items) != 1 || l.Items[0].ExpirationDate != hour {
				t.Errorf("answer %s", res.Body)
			}
		})
	}

	t.Run("a flag patch with LaunchDarkly's domain-model is a semantic patch", func(t *testing.T) {
		fx := newExpFixture(t)
		res := fx.srv.Do(t, http.MethodPatch, apptest.FlagPath("p", "f2"), apptest.SemanticBody("production", apptest.Instr("turnFlagOn")), "Content-Type", ldSemanticType)
		apptest.WantStatus(t, res, http.StatusOK)
		if on := res.Map(t)["environments"].(map[string]any)["production"].(map[string]any)["on"]; on != true {
			t.Errorf("the flag is not on after turnFlagOn: %s", res.Body)
		}
	})
	t.Run("a JSON-patch-only resource refuses LaunchDarkly's domain-model as a semantic patch", func(t *testing.T) {
		fx := newExpFixture(t)
		apptest.WantError(t, fx.srv.Do(t, http.MethodPatch, apptest.EnvPath("p", "production"), []apptest.PatchOp{apptest.Replace("/name", "x")}, "Content-Type", ldSemanticType),
			http.StatusBadRequest, "invalid_request", "JSON patch")
		if got := apptest.GetEnv(t, fx.srv, "p", "production")["name"]; got == "x" {
			t.Errorf("a refused patch renamed the environment")
		}
	})
}

// wantNoExpiringTargets fails unless no user has an expiring target on f1 in production.
func wantNoExpiringTargets(tb testing.TB, srv *apptest.Server) {
	tb.Helper()
	if l := expDecode(tb, srv.Do(tb, http.MethodGet, apptest.FlagExpiringPath("p", "f1", "production"), nil)); len(l.Items) != 0 {
		tb.Errorf("a refused patch left expiring targets: %+v", l.Items)
	}
}
