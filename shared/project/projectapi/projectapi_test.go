package projectapi_test

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// defaultEnvs are the environments of a project created without any,
// sorted: they are created in one write, with one createdOn, so lists order
// them by key while the create answer keeps the order they were made in.
var defaultEnvs = []string{"production", "test"}

// sdkKeyPattern matches an environment's SDK key.
var sdkKeyPattern = regexp.MustCompile(`^sdk-` + apptest.UUIDv4 + `$`)

// sorted returns a sorted copy of keys.
func sorted(keys []string) []string {
	out := slices.Clone(keys)
	slices.Sort(out)
	return out
}

// createdEnvKeys returns the keys of the environments of a create or
// update answer, which lists them as an array (the reference's ProjectRep).
func createdEnvKeys(t testing.TB, p map[string]any) []string {
	t.Helper()
	envs, ok := p["environments"].([]any)
	if !ok {
		t.Fatalf("the project's environments are not an array: %v", p["environments"])
	}
	var keys []string
	for _, e := range envs {
		keys = append(keys, e.(map[string]any)["key"].(string))
	}
	return keys
}

// projectEnvKeys returns the keys of the environments a read with
// expand=environments embeds, as a collection object (the reference's Project).
func projectEnvKeys(t testing.TB, p map[string]any) []string {
	t.Helper()
	envs, ok := p["environments"].(map[string]any)
	if !ok {
		t.Fatalf("project has no environments: %v", p)
	}
	var keys []string
	for _, e := range envs["items"].([]any) {
		keys = append(keys, e.(map[string]any)["key"].(string))
	}
	if n := envs["totalCount"]; n != float64(len(keys)) {
		t.Errorf("environments.totalCount %v, want %d", n, len(keys))
	}
	return keys
}

func TestCreateProject(t *testing.T) {
	srv := apptest.New(t)

	t.Run("a project without environments given gets test and production", func(t *testing.T) {
		p := srv.MustCreateProject(t, "defaults")
		if p["key"] != "defaults" || p["name"] != "Project defaults" {
			t.Errorf("got %v", p)
		}
		if id, _ := p["_id"].(string); id == "" {
			t.Errorf("no _id")
		}
		if keys := createdEnvKeys(t, p); !slices.Equal(sorted(keys), defaultEnvs) {
			t.Errorf("environments %v", keys)
		}
		for _, e := range []string{"test", "production"} {
			env := apptest.GetEnv(t, srv, "defaults", e)
			if !sdkKeyPattern.MatchString(env["apiKey"].(string)) {
				t.Errorf("%s apiKey %v", e, env["apiKey"])
			}
		}
	})

	t.Run("a project with environments given gets exactly those", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, apptest.API+"/projects", map[string]any{
			"key": "given", "name": "Given", "tags": []string{"team-a"},
			"environments": []map[string]any{
				{"key": "alpha", "name": "Alpha", "color": "111111", "tags": []string{"x"}},
				{"key": "beta", "name": "Beta", "color": "222222", "critical": true},
			},
		})
		apptest.WantStatus(t, res, http.StatusCreated)
		p := res.Map(t)
		if keys := createdEnvKeys(t, p); !slices.Equal(keys, []string{"alpha", "beta"}) {
			t.Errorf("environments %v", keys)
		}
		if got := apptest.ItemKeys(t, srv.Do(t, http.MethodGet, apptest.EnvsPath("given"), nil)); !slices.Equal(got, []string{"alpha", "beta"}) {
			t.Errorf("listed environments %v", got)
		}
		if env := apptest.GetEnv(t, srv, "given", "beta"); env["critical"] != true || env["color"] != "222222" {
			t.Errorf("beta %v", env)
		}
		if !slices.Equal(apptest.Strs(p["tags"]), []string{"team-a"}) {
			t.Errorf("tags %v", p["tags"])
		}
	})

	t.Run("a project with an empty environment list gets none", func(t *testing.T) {
		apptest.EmptyProject(t, srv, "bare")
		if got := apptest.ItemKeys(t, srv.Do(t, http.MethodGet, apptest.EnvsPath("bare"), nil)); len(got) != 0 {
			t.Errorf("environments %v", got)
		}
	})

	env := func(key, color string) map[string]any {
		return map[string]any{"key": key, "name": "N " + key, "color": color}
	}
	invalid := []struct {
		name  string
		body  map[string]any
		parts []string
	}{
		{"a project without a key is refused naming key", map[string]any{"name": "N"}, []string{`"key"`}},
		{"a project without a name is refused naming name", map[string]any{"key": "bad"}, []string{`"name"`}},
		{"a project key with a slash is refused", map[string]any{"key": "a/b", "name": "N"}, []string{`"key"`}},
		{"a project name of the wrong type is refused naming name", map[string]any{"key": "bad", "name": 3}, []string{`"name"`}},
		{"a bad colour of the second environment names environments[1].color",
			map[string]any{"key": "bad", "name": "N", "environments": []any{env("a", "ffffff"), env("b", "#fff")}},
			[]string{`"environments[1].color"`}},
		{"a missing name of the first environment names environments[0].name",
			map[string]any{"key": "bad", "name": "N", "environments": []any{map[string]any{"key": "a", "color": "ffffff"}}},
			[]string{`"environments[0].name"`}},
		{"a bad environment key names environments[0].key",
			map[string]any{"key": "bad", "name": "N", "environments": []any{env("a b", "ffffff")}},
			[]string{`"environments[0].key"`}},
		{"an environment key used twice names environments[1].key",
			map[string]any{"key": "bad", "name": "N", "environments": []any{env("a", "ffffff"), env("a", "000000")}},
			[]string{`"environments[1].key"`}},
		{"approval settings of a nested environment are refused naming it",
			map[string]any{"key": "bad", "name": "N", "environments": []any{env("a", "ffffff"), map[string]any{"key": "b", "name": "B", "color": "ffffff", "approvalSettings": map[string]any{"required": true}}}},
			[]string{`"environments[1].approvalSettings"`, "update operation"}},
		{"a nested environment field of the wrong type names environments[1].color",
			map[string]any{"key": "bad", "name": "N", "environments": []any{env("a", "ffffff"), map[string]any{"key": "b", "name": "B", "color": 5}}},
			[]string{`"environments[1].color"`}},
		{"a source in a nested environment, which has nothing to clone from, is refused naming environments[0].source",
			map[string]any{"key": "bad-source", "name": "N", "environments": []any{map[string]any{"key": "a", "name": "A", "color": "ffffff", "source": map[string]any{"key": "missing"}}}},
			[]string{`"environments[0].source"`}},
		{"more than 20 environments are refused", map[string]any{"key": "bad", "name": "N", "environments": func() []any {
			var out []any
			for i := range 21 {
				out = append(out, env(fmt.Sprintf("e%d", i), "ffffff"))
			}
			return out
		}()}, []string{"environments"}},
	}
	for _, c := range invalid {
		t.Run(c.name+" and nothing is stored", func(t *testing.T) {
			apptest.WantError(t, srv.Do(t, http.MethodPost, apptest.API+"/projects", c.body), http.StatusBadRequest, "invalid_request", c.parts...)
			key, _ := c.body["key"].(string)
			if key == "" {
				key = "bad"
			}
			apptest.WantStatus(t, srv.Do(t, http.MethodGet, apptest.ProjectPath(key), nil), http.StatusNotFound)
		})
	}

	t.Run("a second project with the same key is a conflict and changes nothing", func(t *testing.T) {
		srv.MustCreateProject(t, "dup")
		res := srv.Do(t, http.MethodPost, apptest.API+"/projects", map[string]any{"key": "dup", "name": "Other", "environments": []any{env("other", "ffffff")}})
		apptest.WantError(t, res, http.StatusConflict, "conflict", "dup")
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, apptest.EnvPath("dup", "other"), nil), http.StatusNotFound)
		if got := srv.Do(t, http.MethodGet, apptest.ProjectPath("dup"), nil).Map(t); got["name"] != "Project dup" {
			t.Errorf("project overwritten: %v", got)
		}
	})
}

func TestListProjects(t *testing.T) {
	srv := apptest.New(t)
	var all []string
	for i := range 7 {
		key := fmt.Sprintf("proj-%d", i)
		tags := []string{"all"}
		if i%2 == 0 {
			tags = append(tags, "even")
		}
		res := srv.Do(t, http.MethodPost, apptest.API+"/projects", map[string]any{"key": key, "name": fmt.Sprintf("Project %d", i), "tags": tags, "environments": []any{}})
		apptest.WantStatus(t, res, http.StatusCreated)
		all = append(all, key)
	}
	srv.MustCreateProject(t, "zeta")
	all = append(all, "zeta")

	list := func(t *testing.T, q string) *apptest.Response {
		t.Helper()
		res := srv.Do(t, http.MethodGet, apptest.API+"/projects"+q, nil)
		apptest.WantStatus(t, res, http.StatusOK)
		return res
	}

	t.Run("a list answers every project and counts them", func(t *testing.T) {
		res := list(t, "")
		if got := apptest.ItemKeys(t, res); !slices.Equal(got, all) {
			t.Errorf("items %v, want %v", got, all)
		}
		if n := res.Map(t)["totalCount"]; n != float64(len(all)) {
			t.Errorf("totalCount %v", n)
		}
	})

	t.Run("limit and offset cut the window and the links follow", func(t *testing.T) {
		res := list(t, "?limit=3&offset=3")
		if got := apptest.ItemKeys(t, res); !slices.Equal(got, all[3:6]) {
			t.Errorf("items %v", got)
		}
		links := apptest.LinkHrefs(t, res)
		for name, off := range map[string]string{"first": "0", "prev": "0", "next": "6", "last": "6"} {
			if q := apptest.Query(t, links[name]); q.Get("offset") != off {
				t.Errorf("%s link %q, want offset %s", name, links[name], off)
			}
		}
		first := apptest.LinkHrefs(t, list(t, "?limit=3"))
		if _, ok := first["prev"]; ok {
			t.Errorf("first page has prev")
		}
		last := apptest.LinkHrefs(t, list(t, "?limit=3&offset=6"))
		if _, ok := last["next"]; ok {
			t.Errorf("last page has next")
		}
	})

	t.Run("a query filter matches names and keys case-insensitively", func(t *testing.T) {
		if got := apptest.ItemKeys(t, list(t, "?filter=query:ZETA")); !slices.Equal(got, []string{"zeta"}) {
			t.Errorf("items %v", got)
		}
		if got := apptest.ItemKeys(t, list(t, "?filter=query:project%203")); !slices.Equal(got, []string{"proj-3"}) {
			t.Errorf("items %v", got)
		}
	})

	t.Run("a tags filter keeps projects with every tag", func(t *testing.T) {
		if got := apptest.ItemKeys(t, list(t, "?filter=tags:all%2Beven")); !slices.Equal(got, []string{"proj-0", "proj-2", "proj-4", "proj-6"}) {
			t.Errorf("items %v", got)
		}
	})

	t.Run("the links of a filtered list keep the filter", func(t *testing.T) {
		links := apptest.LinkHrefs(t, list(t, "?filter=tags:even&limit=2"))
		if q := apptest.Query(t, links["next"]); q.Get("filter") != "tags:even" || q.Get("offset") != "2" {
			t.Errorf("next %q", links["next"])
		}
	})

	t.Run("expand=environments embeds every environment", func(t *testing.T) {
		res := list(t, "?filter=query:zeta&expand=environments")
		items := res.Map(t)["items"].([]any)
		if keys := projectEnvKeys(t, items[0].(map[string]any)); !slices.Equal(sorted(keys), defaultEnvs) {
			t.Errorf("environments %v", keys)
		}
	})

	for _, q := range []string{"?filter=color:red", "?sort=color", "?limit=0", "?expand=flags"} {
		t.Run("the query "+q+" is refused", func(t *testing.T) {
			apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.API+"/projects"+q, nil), http.StatusBadRequest, "invalid_request")
		})
	}
}

func TestGetProject(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")

	t.Run("a get answers the project without its environments", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, apptest.ProjectPath("p"), nil)
		apptest.WantStatus(t, res, http.StatusOK)
		got := res.Map(t)
		if got["key"] != "p" {
			t.Errorf("got %v", got)
		}
		if _, ok := got["environments"]; ok {
			t.Errorf("environments shown without expand")
		}
	})

	t.Run("a get with expand=environments embeds the environments", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, apptest.ProjectPath("p")+"?expand=environments", nil)
		apptest.WantStatus(t, res, http.StatusOK)
		if keys := projectEnvKeys(t, res.Map(t)); !slices.Equal(sorted(keys), defaultEnvs) {
			t.Errorf("environments %v", keys)
		}
	})

	t.Run("an unknown project is not found", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.ProjectPath("nope"), nil), http.StatusNotFound, "not_found", "nope")
	})
}

func TestPatchProject(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")

	t.Run("name and tags can be patched", func(t *testing.T) {
		res := srv.Do(t, http.MethodPatch, apptest.ProjectPath("p"), []apptest.PatchOp{apptest.Replace("/name", "Renamed"), apptest.Add("/tags/-", "new")})
		apptest.WantStatus(t, res, http.StatusOK)
		got := res.Map(t)
		if got["name"] != "Renamed" || !slices.Equal(apptest.Strs(got["tags"]), []string{"new"}) {
			t.Errorf("got %v", got)
		}
		if keys := createdEnvKeys(t, got); !slices.Equal(sorted(keys), defaultEnvs) {
			t.Errorf("the update answer's environments %v, want every environment of the project", keys)
		}
		if stored := srv.Do(t, http.MethodGet, apptest.ProjectPath("p"), nil).Map(t); stored["name"] != "Renamed" {
			t.Errorf("stored %v", stored)
		}
	})

	t.Run("the default release pipeline key can be added and then replaced by existing pipelines", func(t *testing.T) {
		for _, key := range []string{"standard", "fast"} {
			apptest.WantStatus(t, srv.Do(t, http.MethodPost, apptest.PipelinesPath("p"), apptest.PipelineBody(key, "production"), apptest.BetaHeader...), http.StatusCreated)
		}
		res := srv.Do(t, http.MethodPatch, apptest.ProjectPath("p"), []apptest.PatchOp{apptest.Add("/defaultReleasePipelineKey", "standard")})
		apptest.WantStatus(t, res, http.StatusOK)
		if got := res.Map(t)["defaultReleasePipelineKey"]; got != "standard" {
			t.Errorf("defaultReleasePipelineKey %v", got)
		}
		res = srv.Do(t, http.MethodPatch, apptest.ProjectPath("p"), []apptest.PatchOp{apptest.Replace("/defaultReleasePipelineKey", "fast")})
		apptest.WantStatus(t, res, http.StatusOK)
		if got := res.Map(t)["defaultReleasePipelineKey"]; got != "fast" {
			t.Errorf("defaultReleasePipelineKey %v", got)
		}
	})

	t.Run("the comment form applies its patch", func(t *testing.T) {
		res := srv.Do(t, http.MethodPatch, apptest.ProjectPath("p"), map[string]any{"comment": "why", "patch": []apptest.PatchOp{apptest.Replace("/name", "With comment")}})
		apptest.WantStatus(t, res, http.StatusOK)
	})

	for _, path := range []string{"/key", "/_id", "/createdOn", "/deleting", "/environments"} {
		t.Run("the field "+path+" cannot be patched", func(t *testing.T) {
			apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.ProjectPath("p"), []apptest.PatchOp{apptest.Replace(path, "x")}), http.StatusBadRequest, "invalid_request", path)
		})
	}

	t.Run("an empty name is refused and nothing is stored", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.ProjectPath("p"), []apptest.PatchOp{apptest.Replace("/name", "")}), http.StatusBadRequest, "invalid_request", "name")
		if got := srv.Do(t, http.MethodGet, apptest.ProjectPath("p"), nil).Map(t); got["name"] != "With comment" {
			t.Errorf("name %v", got["name"])
		}
	})

	t.Run("a patch of an unknown project is not found", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.ProjectPath("nope"), []apptest.PatchOp{apptest.Replace("/name", "x")}), http.StatusNotFound, "not_found")
	})
}

func TestDeleteProject(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	old := srv.MustCreateEnvironment(t, "p", "extra", nil)
	srv.MustCreateProject(t, "other")

	t.Run("a delete answers 204", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, apptest.ProjectPath("p"), nil), http.StatusNoContent)
	})

	t.Run("the deleted project, its environments and their list are not found", func(t *testing.T) {
		for _, path := range []string{apptest.ProjectPath("p"), apptest.EnvPath("p", "extra"), apptest.EnvPath("p", "test"), apptest.EnvsPath("p")} {
			apptest.WantError(t, srv.Do(t, http.MethodGet, path, nil), http.StatusNotFound, "not_found")
		}
	})

	t.Run("the deleted project is gone from the list and the others stay", func(t *testing.T) {
		if got := apptest.ItemKeys(t, srv.Do(t, http.MethodGet, apptest.API+"/projects", nil)); !slices.Equal(got, []string{"other"}) {
			t.Errorf("projects %v", got)
		}
		if got := apptest.ItemKeys(t, srv.Do(t, http.MethodGet, apptest.EnvsPath("other"), nil)); !slices.Equal(sorted(got), defaultEnvs) {
			t.Errorf("environments of other %v", got)
		}
	})

	t.Run("deleting it again is not found", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodDelete, apptest.ProjectPath("p"), nil), http.StatusNotFound, "not_found")
	})

	t.Run("an environment cannot be created in the deleted project", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, apptest.EnvsPath("p"), map[string]any{"key": "late", "name": "Late", "color": "ffffff"})
		apptest.WantError(t, res, http.StatusNotFound, "not_found")
	})

	t.Run("the key can be created again, fresh, without the old environments", func(t *testing.T) {
		p := srv.MustCreateProject(t, "p")
		if keys := createdEnvKeys(t, p); !slices.Equal(sorted(keys), defaultEnvs) {
			t.Errorf("environments %v", keys)
		}
		if got := apptest.ItemKeys(t, srv.Do(t, http.MethodGet, apptest.EnvsPath("p"), nil)); !slices.Equal(sorted(got), defaultEnvs) {
			t.Errorf("listed environments %v", got)
		}
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, apptest.EnvPath("p", "extra"), nil), http.StatusNotFound)
		again := srv.MustCreateEnvironment(t, "p", "extra", nil)
		if again["apiKey"] == old["apiKey"] || again["_id"] == old["_id"] {
			t.Errorf("the old environment came back: %v", again)
		}
	})
}

func TestKeysThatCannotExist(t *testing.T) {
	srv := apptest.New(t)
	apptest.EmptyProject(t, srv, "p")
	long := strings.Repeat("k", 3000)
	for _, path := range []string{
		"/api/v2/projects/" + long,
		"/api/v2/projects/" + long + "/environments",
		"/api/v2/projects/p/environments/" + long,
		"/api/v2/projects/a%00b/environments/e",
		"/api/v2/projects/p/environments/a%23b",
	} {
		t.Run("GET "+path[:min(len(path), 60)]+" is 404, not a store error", func(t *testing.T) {
			apptest.WantError(t, srv.Do(t, http.MethodGet, path, nil), http.StatusNotFound, "not_found")
		})
	}
}
