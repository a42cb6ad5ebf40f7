package flagapi_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// The flag fields LaunchDarkly's clients rely on: customProperties (made,
// read and patched, as the Terraform provider does right after creating a
// flag), experiments, and per environment sel and trackEventsFallthrough.

// flagJSON reads a flag as a decoded map.
func flagJSON(tb testing.TB, srv *apptest.Server, p, f string) map[string]any {
	tb.Helper()
	res := srv.Do(tb, http.MethodGet, apptest.FlagPath(p, f), nil)
	apptest.WantStatus(tb, res, http.StatusOK)
	return res.Map(tb)
}

// envOf is the targeting of env in a decoded flag.
func envOf(tb testing.TB, f map[string]any, env string) map[string]any {
	tb.Helper()
	e, ok := f["environments"].(map[string]any)[env].(map[string]any)
	if !ok {
		tb.Fatalf("the flag has no environment %q: %v", env, f["environments"])
	}
	return e
}

// asJSON encodes a decoded value again, for comparing it as text.
func asJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("encode %v: %v", v, err)
	}
	return string(b)
}

// jira is a custom property as clients send it.
func jira(values ...string) map[string]any {
	return map[string]any{"name": "Jira issues", "value": values}
}

func TestFlagCustomProperties(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	props := func(tb testing.TB, f string) string {
		tb.Helper()
		return asJSON(tb, flagJSON(tb, srv, "p", f)["customProperties"])
	}

	t.Run("a flag made with custom properties shows them on its read, its list and its create answer", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, apptest.FlagsPath("p"), map[string]any{"key": "tracked", "name": "Tracked",
			"customProperties": map[string]any{"jira": jira("SHOP-1", "SHOP-2")}})
		apptest.WantStatus(t, res, http.StatusCreated)
		want := `{"jira":{"name":"Jira issues","value":["SHOP-1","SHOP-2"]}}`
		if got := asJSON(t, res.Map(t)["customProperties"]); got != want {
			t.Errorf("create answer %s, want %s", got, want)
		}
		if got := props(t, "tracked"); got != want {
			t.Errorf("read %s, want %s", got, want)
		}
		list := srv.Do(t, http.MethodGet, apptest.FlagsPath("p")+"?filter=query:tracked", nil)
		apptest.WantStatus(t, list, http.StatusOK)
		if got := asJSON(t, list.Map(t)["items"].([]any)[0].(map[string]any)["customProperties"]); got != want {
			t.Errorf("list %s, want %s", got, want)
		}
	})

	t.Run("a flag made without custom properties shows an empty object", func(t *testing.T) {
		apptest.ABCFlag(t, srv, "p", "plain")
		if got := props(t, "plain"); got != "{}" {
			t.Errorf("customProperties %s, want {}", got)
		}
	})

	edits := []struct {
		name  string
		patch []apptest.PatchOp
		want  string
	}{
		{"replacing the whole object, as the Terraform provider does after a create, stores it",
			[]apptest.PatchOp{apptest.Replace("/customProperties", map[string]any{"jira": jira("SHOP-9")})},
			`{"jira":{"name":"Jira issues","value":["SHOP-9"]}}`},
		{"adding a property keeps the others",
			[]apptest.PatchOp{apptest.Add("/customProperties/owner", map[string]any{"name": "Owner", "value": []string{"team-a"}})},
			`{"jira":{"name":"Jira issues","value":["SHOP-9"]},"owner":{"name":"Owner","value":["team-a"]}}`},
		{"appending a value changes only that property",
			[]apptest.PatchOp{apptest.Add("/customProperties/jira/value/-", "SHOP-10")},
			`{"jira":{"name":"Jira issues","value":["SHOP-9","SHOP-10"]},"owner":{"name":"Owner","value":["team-a"]}}`},
		{"removing a property drops it",
			[]apptest.PatchOp{{Op: "remove", Path: "/customProperties/owner"}},
			`{"jira":{"name":"Jira issues","value":["SHOP-9","SHOP-10"]}}`},
	}
	apptest.ABCFlag(t, srv, "p", "edited")
	for _, e := range edits {
		t.Run(e.name, func(t *testing.T) {
			res := srv.Do(t, http.MethodPatch, apptest.FlagPath("p", "edited"), e.patch)
			apptest.WantStatus(t, res, http.StatusOK)
			if got := asJSON(t, res.Map(t)["customProperties"]); got != e.want {
				t.Errorf("answer %s, want %s", got, e.want)
			}
			if got := props(t, "edited"); got != e.want {
				t.Errorf("stored %s, want %s", got, e.want)
			}
		})
	}

	t.Run("a custom-property patch is audited as updateFlagCustomProperties", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", "edited"), map[string]any{"comment": "link the epic",
			"patch": []apptest.PatchOp{apptest.Add("/customProperties/epic", jira("SHOP-100"))}}), http.StatusOK)
		var log struct {
			Items []struct {
				Comment  string `json:"comment"`
				Accesses []struct {
					Action   string `json:"action"`
					Resource string `json:"resource"`
				} `json:"accesses"`
			} `json:"items"`
		}
		res := srv.Do(t, http.MethodGet, apptest.API+"/auditlog?limit=1", nil)
		apptest.WantStatus(t, res, http.StatusOK)
		res.JSON(t, &log)
		if len(log.Items) != 1 || log.Items[0].Comment != "link the epic" || len(log.Items[0].Accesses) != 1 ||
			log.Items[0].Accesses[0].Action != "updateFlagCustomProperties" || log.Items[0].Accesses[0].Resource != "proj/p:env/*:flag/edited" {
			t.Errorf("newest audit entry %s", res.Body)
		}
	})

	t.Run("a token without updateFlagCustomProperties may not patch them, one with only that right may", func(t *testing.T) {
		_, reader := srv.MustCreateToken(t, map[string]any{"name": "reader", "role": "reader"})
		var f struct {
			Access struct {
				Denied []struct{ Action string } `json:"denied"`
			} `json:"_access"`
		}
		srv.Do(t, http.MethodGet, apptest.FlagPath("p", "edited")+"?expand=access", nil, "Authorization", reader).JSON(t, &f)
		if !slices.ContainsFunc(f.Access.Denied, func(d struct{ Action string }) bool { return d.Action == "updateFlagCustomProperties" }) {
			t.Errorf("the reader's _access does not deny updateFlagCustomProperties: %v", f.Access.Denied)
		}
		apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", "edited"), []apptest.PatchOp{apptest.Add("/customProperties/x", jira("X-1"))}, "Authorization", reader),
			http.StatusForbidden, "forbidden", "updateFlagCustomProperties")
		apptest.CreateRole(t, srv, "custom-props", "", map[string]any{"effect": "allow", "resources": []string{"proj/p:env/*:flag/*"}, "actions": []string{"updateFlagCustomProperties"}})
		_, tagger := srv.MustCreateToken(t, map[string]any{"name": "tagger", "customRoleIds": []string{"custom-props"}})
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", "edited"), []apptest.PatchOp{apptest.Add("/customProperties/x", jira("X-1"))}, "Authorization", tagger), http.StatusOK)
		apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", "edited"), []apptest.PatchOp{apptest.Replace("/name", "no")}, "Authorization", tagger),
			http.StatusForbidden, "forbidden", "updateName")
	})
}

func TestFlagCustomPropertiesRefused(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	apptest.ABCFlag(t, srv, "p", "f")
	apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", "f"), []apptest.PatchOp{apptest.Replace("/customProperties", map[string]any{"jira": jira("SHOP-1")})}), http.StatusOK)
	before := srv.Do(t, http.MethodGet, apptest.FlagPath("p", "f"), nil).Body
	long := strings.Repeat("x", 1025)
	many := map[string]any{}
	for i := range 65 {
		many["k"+strings.Repeat("0", i%3)+string(rune('a'+i%26))+string(rune('a'+i/26))] = jira("v")
	}

	bad := []struct {
		name  string
		props any
		parts []string // what the 400's message names
	}{
		{"a key with a space", map[string]any{"bad key": jira("v")}, []string{"customProperties", "bad key"}},
		{"a key starting with a dot", map[string]any{".hidden": jira("v")}, []string{"customProperties", ".hidden"}},
		{"a property without a name", map[string]any{"jira": map[string]any{"value": []string{"v"}}}, []string{"customProperties.jira.name"}},
		{"a property without values", map[string]any{"jira": map[string]any{"name": "Jira"}}, []string{"customProperties.jira.value"}},
		{"a property whose value is a string, not a list", map[string]any{"jira": map[string]any{"name": "Jira", "value": "SHOP-1"}}, []string{"customProperties.jira.value", "array"}},
		{"a property whose values hold a number", map[string]any{"jira": map[string]any{"name": "Jira", "value": []any{"SHOP-1", 2}}}, []string{"customProperties.jira.value", "string"}},
		{"a name that is a number", map[string]any{"jira": map[string]any{"name": 7, "value": []string{"v"}}}, []string{"customProperties.jira.name", "string"}},
		{"an empty value", map[string]any{"jira": jira("")}, []string{"customProperties.jira.value[0]"}},
		{"a value over 1024 characters", map[string]any{"jira": jira(long)}, []string{"customProperties.jira.value[0]"}},
		{"a null property", map[string]any{"jira": nil}, []string{"customProperties.jira.name"}},
		{"properties that are a list", []any{jira("v")}, []string{"customProperties", "object"}},
		{"65 properties", many, []string{"customProperties", "64"}},
	}
	for _, b := range bad {
		t.Run("a create with "+b.name+" is refused with a 400 naming the field", func(t *testing.T) {
			apptest.WantError(t, srv.Do(t, http.MethodPost, apptest.FlagsPath("p"), map[string]any{"key": "new", "name": "New", "customProperties": b.props}),
				http.StatusBadRequest, "invalid_request", b.parts...)
			apptest.WantStatus(t, srv.Do(t, http.MethodGet, apptest.FlagPath("p", "new"), nil), http.StatusNotFound)
		})
		t.Run("a patch to "+b.name+" is refused with a 400 naming the field and changes nothing", func(t *testing.T) {
			apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", "f"), []apptest.PatchOp{apptest.Replace("/customProperties", b.props)}),
				http.StatusBadRequest, "invalid_request", b.parts...)
			if after := srv.Do(t, http.MethodGet, apptest.FlagPath("p", "f"), nil).Body; !apptest.SameJSON(t, before, after) {
				t.Errorf("the flag changed:\n%s\n%s", before, after)
			}
		})
	}

	t.Run("a patch that adds one bad value to a stored property is refused and changes nothing", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", "f"), []apptest.PatchOp{apptest.Add("/customProperties/jira/value/-", 7)}),
			http.StatusBadRequest, "invalid_request", "customProperties.jira.value")
		if after := srv.Do(t, http.MethodGet, apptest.FlagPath("p", "f"), nil).Body; !apptest.SameJSON(t, before, after) {
			t.Errorf("the flag changed:\n%s\n%s", before, after)
		}
	})
}

var selPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

func TestFlagReferenceFields(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	apptest.ABCFlag(t, srv, "p", "f")

	t.Run("a flag lists no experiments, with the baseline at the first variation", func(t *testing.T) {
		if got := asJSON(t, flagJSON(t, srv, "p", "f")["experiments"]); got != `{"baselineIdx":0,"items":[]}` {
			t.Errorf("experiments %s", got)
		}
	})

	sels := func(tb testing.TB) map[string]string {
		tb.Helper()
		f := flagJSON(tb, srv, "p", "f")
		out := map[string]string{}
		for _, env := range []string{"test", "production"} {
			s, _ := envOf(tb, f, env)["sel"].(string)
			if !selPattern.MatchString(s) {
				tb.Errorf("%s sel %q is not 32 hex digits", env, s)
			}
			out[env] = s
		}
		return out
	}

	t.Run("sel changes with the targeting of its environment and only there", func(t *testing.T) {
		before := sels(t)
		apptest.WantStatus(t, apptest.SemanticPatchFlag(t, srv, "p", "f", apptest.SemanticBody("production", apptest.Instr("turnFlagOn"))), http.StatusOK)
		after := sels(t)
		if after["production"] == before["production"] {
			t.Errorf("production sel %s did not change when the flag was turned on there", after["production"])
		}
		if after["test"] != before["test"] {
			t.Errorf("test sel changed from %s to %s though its targeting did not", before["test"], after["test"])
		}
	})

	t.Run("sel does not change with the flag's name, and comes back with the same targeting", func(t *testing.T) {
		before := sels(t)
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", "f"), []apptest.PatchOp{apptest.Replace("/name", "Renamed")}), http.StatusOK)
		if after := sels(t); after["production"] != before["production"] {
			t.Errorf("production sel changed with the name")
		}
		apptest.WantStatus(t, apptest.SemanticPatchFlag(t, srv, "p", "f", apptest.SemanticBody("production", apptest.Instr("turnFlagOff"))), http.StatusOK)
		apptest.WantStatus(t, apptest.SemanticPatchFlag(t, srv, "p", "f", apptest.SemanticBody("production", apptest.Instr("turnFlagOn"))), http.StatusOK)
		if after := sels(t); after["production"] != before["production"] {
			t.Errorf("production sel %s after off and on again, want %s", after["production"], before["production"])
		}
	})

	t.Run("the list summary carries the same sel as the read", func(t *testing.T) {
		want := sels(t)
		res := srv.Do(t, http.MethodGet, apptest.FlagsPath("p")+"?env=production&env=test", nil)
		apptest.WantStatus(t, res, http.StatusOK)
		item := res.Map(t)["items"].([]any)[0].(map[string]any)
		for env, s := range want {
			if got := envOf(t, item, env)["sel"]; got != s {
				t.Errorf("%s sel in the list %v, in the read %s", env, got, s)
			}
		}
	})

	t.Run("trackEventsFallthrough is false until patched, then true in that environment only", func(t *testing.T) {
		f := flagJSON(t, srv, "p", "f")
		for _, env := range []string{"test", "production"} {
			if v, ok := envOf(t, f, env)["trackEventsFallthrough"]; !ok || v != false {
				t.Errorf("%s trackEventsFallthrough %v (present %t), want false", env, v, ok)
			}
		}
		res := srv.Do(t, http.MethodPatch, apptest.FlagPath("p", "f"), []apptest.PatchOp{apptest.Replace("/environments/production/trackEventsFallthrough", true)})
		apptest.WantStatus(t, res, http.StatusOK)
		f = flagJSON(t, srv, "p", "f")
		if envOf(t, f, "production")["trackEventsFallthrough"] != true || envOf(t, f, "test")["trackEventsFallthrough"] != false {
			t.Errorf("after the patch: production %v, test %v", envOf(t, f, "production")["trackEventsFallthrough"], envOf(t, f, "test")["trackEventsFallthrough"])
		}
		if envOf(t, f, "production")["trackEvents"] != false {
			t.Errorf("trackEvents changed with trackEventsFallthrough")
		}
	})

	t.Run("a non-boolean trackEventsFallthrough is refused and changes nothing", func(t *testing.T) {
		before := srv.Do(t, http.MethodGet, apptest.FlagPath("p", "f"), nil).Body
		apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", "f"), []apptest.PatchOp{apptest.Replace("/environments/production/trackEventsFallthrough", "yes")}),
			http.StatusBadRequest, "invalid_request", "trackEventsFallthrough")
		if after := srv.Do(t, http.MethodGet, apptest.FlagPath("p", "f"), nil).Body; !apptest.SameJSON(t, before, after) {
			t.Errorf("the flag changed")
		}
	})

	t.Run("a reader is refused trackEventsFallthrough as updateTrackEvents", func(t *testing.T) {
		_, reader := srv.MustCreateToken(t, map[string]any{"name": "reader", "role": "reader"})
		body := apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", "f"), []apptest.PatchOp{apptest.Replace("/environments/test/trackEventsFallthrough", true)}, "Authorization", reader),
			http.StatusForbidden, "forbidden", "updateTrackEvents")
		if msg, _ := body["message"].(string); !slices.ContainsFunc([]string{"test", "env/test"}, func(s string) bool { return strings.Contains(msg, s) }) {
			t.Errorf("message %q does not name the environment", msg)
		}
	})
}
