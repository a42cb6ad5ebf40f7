package flagapi_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// listedFlag is a flag as a list summary shows it.
type listedFlag struct {
	Key          string `json:"key"`
	Name         string `json:"name"`
	Environments map[string]struct {
		On              bool   `json:"on"`
		EnvironmentName string `json:"_environmentName"`
	} `json:"environments"`
	Access struct {
		Allowed []struct{ Action string } `json:"allowed"`
	} `json:"_access"`
}

func listFlags(t testing.TB, srv *apptest.Server, p string, headers ...string) map[string]listedFlag {
	t.Helper()
	// expand=access: the cases check that a change of rights shows in
	// `_access`; env: that a change of targeting shows.
	res := srv.Do(t, http.MethodGet, apptest.FlagsPath(p)+"?expand=access&env=production&env=test", nil, headers...)
	apptest.WantStatus(t, res, http.StatusOK)
	var page struct {
		Items []listedFlag `json:"items"`
	}
	res.JSON(t, &page)
	out := map[string]listedFlag{}
	for _, f := range page.Items {
		out[f.Key] = f
	}
	return out
}

func allowedActions(f listedFlag) []string {
	var out []string
	for _, a := range f.Access.Allowed {
		out = append(out, a.Action)
	}
	return out
}

// Lists keep decoded flags and their encoded summaries between requests;
// every change a summary depends on must show in the next list.
func TestFlagListShowsEveryChange(t *testing.T) {
	for _, sole := range []bool{false, true} {
		name := "in a process that shares its table"
		if sole {
			// As the local server runs: whole list answers are kept until the next commit.
			name = "in a process that is its table's only writer"
		}
		t.Run(name, func(t *testing.T) { testFlagListShowsEveryChange(t, sole) })
	}
}

func testFlagListShowsEveryChange(t *testing.T, sole bool) {
	srv := apptest.New(t)
	srv.App.Services.Audit.SetSoleWriter(sole)
	srv.MustCreateProject(t, "p")
	apptest.CreateRole(t, srv, "renamer", "", map[string]any{"effect": "allow", "resources": []string{"proj/p:env/*:flag/*"}, "actions": []string{"updateName"}})
	apptest.CreateRole(t, srv, "describer", "", map[string]any{"effect": "allow", "resources": []string{"proj/p:env/*:flag/*"}, "actions": []string{"updateDescription"}})
	tokenID, tok := srv.MustCreateToken(t, map[string]any{"name": "r", "customRoleIds": []string{"renamer"}})
	for _, k := range []string{"a", "b"} {
		apptest.WantStatus(t, srv.Do(t, http.MethodPost, apptest.FlagsPath("p"), map[string]any{"key": k, "name": "Flag " + k}), http.StatusCreated)
	}
	listFlags(t, srv, "p")                       // fill the caches as the admin
	listFlags(t, srv, "p", "Authorization", tok) // and as the role's token

	cases := []struct {
		name   string
		change func(t *testing.T)
		check  func(t *testing.T)
	}{
		{"a renamed flag shows its new name",
			func(t *testing.T) {
				apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", "a"), []apptest.PatchOp{apptest.Replace("/name", "Renamed")}), http.StatusOK)
			},
			func(t *testing.T) {
				if got := listFlags(t, srv, "p")["a"].Name; got != "Renamed" {
					t.Errorf("name %q", got)
				}
			}},
		{"a flag turned on in an environment shows on",
			func(t *testing.T) {
				apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.FlagPath("p", "b"), []apptest.PatchOp{apptest.Replace("/environments/production/on", true)}), http.StatusOK)
			},
			func(t *testing.T) {
				if !listFlags(t, srv, "p")["b"].Environments["production"].On {
					t.Error("b is not on in production")
				}
			}},
		{"a flag deleted and created again with the same key shows the new one",
			func(t *testing.T) {
				apptest.WantStatus(t, srv.Do(t, http.MethodDelete, apptest.FlagPath("p", "b"), nil), http.StatusNoContent)
				apptest.WantStatus(t, srv.Do(t, http.MethodPost, apptest.FlagsPath("p"), map[string]any{"key": "b", "name": "Second b"}), http.StatusCreated)
			},
			func(t *testing.T) {
				got := listFlags(t, srv, "p")["b"]
				if got.Name != "Second b" || got.Environments["production"].On {
					t.Errorf("b is %+v, want the new flag, off", got)
				}
			}},
		{"a renamed environment shows its new name in every flag",
			func(t *testing.T) {
				apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.EnvPath("p", "production"), []apptest.PatchOp{apptest.Replace("/name", "Prod")}), http.StatusOK)
			},
			func(t *testing.T) {
				for k, f := range listFlags(t, srv, "p") {
					if f.Environments["production"].EnvironmentName != "Prod" {
						t.Errorf("flag %s shows production as %q", k, f.Environments["production"].EnvironmentName)
					}
				}
			}},
		{"a token given another role shows that role's actions",
			func(t *testing.T) {
				if !slices.Contains(allowedActions(listFlags(t, srv, "p", "Authorization", tok)["a"]), "updateName") {
					t.Fatal("updateName is not allowed before the change")
				}
				apptest.WantStatus(t, srv.Do(t, http.MethodPatch, "/api/v2/tokens/"+tokenID,
					[]apptest.PatchOp{apptest.Replace("/customRoleIds", []string{"describer"})}), http.StatusOK)
			},
			func(t *testing.T) {
				got := allowedActions(listFlags(t, srv, "p", "Authorization", tok)["a"])
				if slices.Contains(got, "updateName") || !slices.Contains(got, "updateDescription") {
					t.Errorf("allowed %v after the role changed", got)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.change(t)
			tc.check(t)
		})
	}
}
