package allgroups_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/segment"
)

// accessEntry is one action of an `_access` object, with its deciding statement.
type accessEntry struct {
	Action string `json:"action"`
	Reason *struct {
		Effect    string   `json:"effect"`
		Resources []string `json:"resources"`
		RoleName  string   `json:"role_name"`
	} `json:"reason"`
}

type accessDoc struct {
	Allowed []accessEntry `json:"allowed"`
	Denied  []accessEntry `json:"denied"`
}

func (a *accessDoc) allowed() []string { return entryActions(a.Allowed) }
func (a *accessDoc) denied() []string  { return entryActions(a.Denied) }

// entry is the entry of action in either list, nil when absent.
func (a *accessDoc) entry(action string) (e *accessEntry, allowed bool) {
	for i := range a.Allowed {
		if a.Allowed[i].Action == action {
			return &a.Allowed[i], true
		}
	}
	for i := range a.Denied {
		if a.Denied[i].Action == action {
			return &a.Denied[i], false
		}
	}
	return nil, false
}

func entryActions(es []accessEntry) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.Action)
	}
	return out
}

// withAccess is anything that carries `_access`, and a flag's environments.
type withAccess struct {
	Key          string                `json:"key"`
	Access       *accessDoc            `json:"_access"`
	Environments map[string]withAccess `json:"environments"`
}

// accessSetup is a project shop (tagged team-a) with a plain flag and a
// flag tagged beta, a segment in each environment, and tokens of a reader,
// of a role that may only turn flags on in production, and of a role that
// may do anything to flags but those tagged beta.
type accessSetup struct {
	srv                     *apptest.Server
	reader, prodOn, notBeta string
}

func newAccessSetup(t *testing.T) accessSetup {
	t.Helper()
	srv := apptest.New(t)
	apptest.WantStatus(t, srv.Do(t, http.MethodPost, api+"/projects", map[string]any{"key": "shop", "name": "Shop", "tags": []string{"team-a"}}), http.StatusCreated)
	apptest.CreateFlag(t, srv, "shop", map[string]any{"key": "checkout", "name": "Checkout"})
	apptest.CreateFlag(t, srv, "shop", map[string]any{"key": "banner", "name": "Banner", "tags": []string{"beta"}})
	for _, e := range []string{"test", "production"} {
		apptest.WantStatus(t, srv.Do(t, http.MethodPost, api+"/segments/shop/"+e, map[string]any{"key": "vip", "name": "VIP"}), http.StatusCreated)
	}
	s := accessSetup{srv: srv}
	_, s.reader = srv.MustCreateToken(t, map[string]any{"name": "reader", "role": "reader"})
	apptest.CreateRole(t, srv, "prod-on", "", apptest.Statement("allow", []string{"proj/*:env/production:flag/*"}, []string{"updateOn"}))
	_, s.prodOn = srv.MustCreateToken(t, map[string]any{"name": "prod on", "customRoleIds": []string{"prod-on"}})
	apptest.CreateRole(t, srv, "not-beta", "",
		apptest.Statement("allow", []string{"proj/*:env/*:flag/*"}, []string{"*"}),
		apptest.Statement("deny", []string{"proj/*:env/*:flag/*;beta"}, []string{"*"}))
	_, s.notBeta = srv.MustCreateToken(t, map[string]any{"name": "not beta", "customRoleIds": []string{"not-beta"}})
	return s
}

// get reads path as the caller of tok ("" for the admin) into out.
func (s accessSetup) get(t *testing.T, tok, path string, out any) {
	t.Helper()
	var headers []string
	if tok != "" {
		headers = []string{"Authorization", tok}
	}
	res := s.srv.Do(t, http.MethodGet, path, nil, headers...)
	apptest.WantStatus(t, res, http.StatusOK)
	res.JSON(t, out)
}

// items reads the items of the list at path as the caller of tok.
func (s accessSetup) items(t *testing.T, tok, path string) []withAccess {
	t.Helper()
	var list struct{ Items []withAccess }
	s.get(t, tok, path, &list)
	return list.Items
}

// item finds the item keyed key of a list answer.
func item(t *testing.T, items []withAccess, key string) withAccess {
	t.Helper()
	for _, it := range items {
		if it.Key == key {
			return it
		}
	}
	t.Fatalf("no item %q in %+v", key, items)
	return withAccess{}
}

// accessShown is every `_access` a caller reads on shop, by where it is shown.
func (s accessSetup) accessShown(t *testing.T, tok string) map[string]*accessDoc {
	t.Helper()
	out := map[string]*accessDoc{}
	var one withAccess
	s.get(t, tok, projectPath("shop"), &one)
	out["project"] = one.Access
	out["project in the list"] = item(t, s.items(t, tok, api+"/projects"), "shop").Access

	one = withAccess{}
	s.get(t, tok, envPath("shop", "production"), &one)
	out["environment"] = one.Access
	out["environment in the list"] = item(t, s.items(t, tok, envsPath("shop")), "production").Access
	var expanded struct {
		Environments struct{ Items []withAccess } `json:"environments"`
	}
	s.get(t, tok, projectPath("shop")+"?expand=environments", &expanded)
	out["environment in the expanded project"] = item(t, expanded.Environments.Items, "production").Access

	one = withAccess{}
	s.get(t, tok, api+"/flags/shop/checkout?expand=access", &one)
	out["flag"] = one.Access
	out["flag in production"] = one.Environments["production"].Access
	listed := item(t, s.items(t, tok, api+"/flags/shop?expand=access&env=production&env=test"), "checkout")
	out["flag in the list"] = listed.Access
	out["flag in production in the list"] = listed.Environments["production"].Access

	one = withAccess{}
	s.get(t, tok, api+"/segments/shop/production/vip", &one)
	out["segment"] = one.Access
	out["segment in the list"] = item(t, s.items(t, tok, api+"/segments/shop/production"), "vip").Access
	return out
}

// reported are the actions each resource's `_access` reports, in order.
func reported(where string) []string {
	switch {
	case strings.HasPrefix(where, "project"):
		return append(slices.Clone(project.Actions), project.CreateEnvironment, project.CreateFlag)
	case strings.HasPrefix(where, "environment"):
		return append(slices.Clone(environment.Actions), environment.CreateSegment)
	case strings.HasPrefix(where, "flag in production"):
		return flag.EnvActions
	case strings.HasPrefix(where, "flag"):
		return flag.Actions
	default:
		return segment.Actions
	}
}

func TestAccessInAnswers(t *testing.T) {
	s := newAccessSetup(t)

	t.Run("an admin sees every action allowed on projects, environments, flags and segments", func(t *testing.T) {
		for where, a := range s.accessShown(t, "") {
			if a == nil {
				t.Errorf("%s: no _access", where)
				continue
			}
			if !slices.Equal(a.allowed(), reported(where)) || len(a.Denied) != 0 {
				t.Errorf("%s: allowed %v denied %v, want allowed %v", where, a.allowed(), a.denied(), reported(where))
			}
		}
	})

	t.Run("a reader sees every write action denied", func(t *testing.T) {
		for where, a := range s.accessShown(t, s.reader) {
			if a == nil {
				t.Errorf("%s: no _access", where)
				continue
			}
			if !slices.Equal(a.denied(), reported(where)) || len(a.Allowed) != 0 {
				t.Errorf("%s: denied %v allowed %v, want denied %v", where, a.denied(), a.allowed(), reported(where))
			}
		}
	})

	t.Run("a role allowing updateOn in production allows it there, with its statement as reason, and not in test", func(t *testing.T) {
		var got withAccess
		s.get(t, s.prodOn, api+"/flags/shop/checkout?expand=access", &got)
		prod, test := got.Environments["production"].Access, got.Environments["test"].Access
		if prod == nil || test == nil || got.Access == nil {
			t.Fatalf("_access missing: %+v", got)
		}
		if !slices.Equal(prod.allowed(), []string{"updateOn"}) {
			t.Errorf("production allows %v, want updateOn only", prod.allowed())
		}
		e, _ := prod.entry("updateOn")
		if e.Reason == nil || e.Reason.Effect != "allow" || e.Reason.RoleName == "" ||
			!slices.Equal(e.Reason.Resources, []string{"proj/*:env/production:flag/*"}) {
			t.Errorf("production updateOn reason %+v, want the role's allow statement", e.Reason)
		}
		if e, allowed := test.entry("updateOn"); e == nil || allowed || e.Reason != nil {
			t.Errorf("test updateOn %+v allowed %v, want an implicit deny (no statement applies)", e, allowed)
		}
		if len(got.Access.Allowed) != 0 {
			t.Errorf("the flag's own settings allow %v, want none", got.Access.allowed())
		}
		// What `_access` says is what the API does.
		on := func(env string) int {
			return apptest.SemanticPatchFlag(t, s.srv, "shop", "checkout", apptest.SemanticBody(env, apptest.Instr("turnFlagOn")), "Authorization", s.prodOn).Status
		}
		if p, te := on("production"), on("test"); p != http.StatusOK || te != http.StatusForbidden {
			t.Errorf("turning the flag on answered %d in production, %d in test; want 200 and 403", p, te)
		}
	})

	t.Run("a deny statement on a tag decides by the flag's tags", func(t *testing.T) {
		listed := s.items(t, s.notBeta, api+"/flags/shop?expand=access&env=production&env=test")
		for _, c := range []struct {
			flag    string
			allowed bool
		}{{"checkout", true}, {"banner", false}} {
			var one withAccess
			s.get(t, s.notBeta, api+"/flags/shop/"+c.flag+"?expand=access", &one)
			for where, f := range map[string]withAccess{"read": one, "list": item(t, listed, c.flag)} {
				for _, a := range []struct {
					doc    *accessDoc
					action string
				}{{f.Access, "updateName"}, {f.Environments["production"].Access, "updateOn"}, {f.Environments["test"].Access, "updateRules"}} {
					if a.doc == nil {
						t.Fatalf("%s %s: no _access", where, c.flag)
					}
					e, allowed := a.doc.entry(a.action)
					if e == nil || allowed != c.allowed {
						t.Errorf("%s %s: %s allowed %v, want %v", where, c.flag, a.action, allowed, c.allowed)
						continue
					}
					if !c.allowed && (e.Reason == nil || e.Reason.Effect != "deny" || !slices.Equal(e.Reason.Resources, []string{"proj/*:env/*:flag/*;beta"})) {
						t.Errorf("%s %s: %s reason %+v, want the deny statement on beta", where, c.flag, a.action, e.Reason)
					}
				}
			}
		}
	})

	t.Run("expand=access adds _access to list items and its absence leaves it out", func(t *testing.T) {
		// Alternating, so that neither answer comes from the other's cache.
		for i, query := range []string{"?env=production", "?env=production&expand=access", "?env=production&summary=0", "?env=production&expand=evaluation,access", "?env=production", "?env=production&summary=0&expand=access"} {
			want := strings.Contains(query, "access")
			for _, f := range s.items(t, "", api+"/flags/shop"+query) {
				if (f.Access != nil) != want {
					t.Errorf("%d %q: %s carries _access %v, want %v", i, query, f.Key, f.Access != nil, want)
				}
				for env, c := range f.Environments {
					if (c.Access != nil) != want {
						t.Errorf("%d %q: %s in %s carries _access %v, want %v", i, query, f.Key, env, c.Access != nil, want)
					}
				}
			}
		}
		apptest.WantError(t, s.srv.Do(t, http.MethodGet, api+"/flags/shop?expand=acess", nil), http.StatusBadRequest, "invalid_request", "acess")
	})

	t.Run("creates are decided where their operations check them", func(t *testing.T) {
		apptest.CreateRole(t, s.srv, "flag-maker", "",
			apptest.Statement("allow", []string{"proj/*:env/*:flag/*"}, []string{"createFlag"}),
			apptest.Statement("allow", []string{"proj/*:env/production:segment/*"}, []string{"createSegment"}))
		_, maker := s.srv.MustCreateToken(t, map[string]any{"name": "maker", "customRoleIds": []string{"flag-maker"}})
		var proj withAccess
		s.get(t, maker, projectPath("shop"), &proj)
		if !slices.Equal(proj.Access.allowed(), []string{"createFlag"}) {
			t.Errorf("project allows %v, want createFlag only", proj.Access.allowed())
		}
		for _, c := range []struct {
			env     string
			allowed bool
			status  int
		}{{"production", true, http.StatusCreated}, {"test", false, http.StatusForbidden}} {
			var env withAccess
			s.get(t, maker, envPath("shop", c.env), &env)
			if _, allowed := env.Access.entry("createSegment"); allowed != c.allowed {
				t.Errorf("%s: createSegment allowed %v, want %v", c.env, allowed, c.allowed)
			}
			res := s.srv.Do(t, http.MethodPost, api+"/segments/shop/"+c.env, map[string]any{"key": "made", "name": "Made"}, "Authorization", maker)
			apptest.WantStatus(t, res, c.status)
		}
		apptest.WantStatus(t, s.srv.Do(t, http.MethodPost, api+"/flags/shop", map[string]any{"key": "made", "name": "Made"}, "Authorization", maker), http.StatusCreated)
		apptest.WantStatus(t, s.srv.Do(t, http.MethodPost, envsPath("shop"), map[string]any{"key": "made", "name": "Made", "color": "417505"}, "Authorization", maker), http.StatusForbidden)
	})

	t.Run("an environment's _access decides with its project's tags, as the API does", func(t *testing.T) {
		apptest.CreateRole(t, s.srv, "not-team-a", "",
			apptest.Statement("allow", []string{"proj/*:env/*"}, []string{"*"}),
			apptest.Statement("deny", []string{"proj/*;team-a:env/*"}, []string{"updateColor"}))
		_, tok := s.srv.MustCreateToken(t, map[string]any{"name": "not team a", "customRoleIds": []string{"not-team-a"}})
		var env withAccess
		s.get(t, tok, envPath("shop", "test"), &env)
		if e, allowed := env.Access.entry("updateColor"); e == nil || allowed || e.Reason == nil || e.Reason.Effect != "deny" {
			t.Errorf("updateColor %+v allowed %v, want denied by the statement on team-a", e, allowed)
		}
		if _, allowed := env.Access.entry("updateName"); !allowed {
			t.Error("updateName is denied, want allowed")
		}
		res := s.srv.Do(t, http.MethodPatch, envPath("shop", "test"), []apptest.PatchOp{apptest.Replace("/color", "000000")}, "Authorization", tok)
		apptest.WantStatus(t, res, http.StatusForbidden)
	})
}
