package allgroups_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// Segment rights are decided by environment, on
// proj/<p>:env/<e>:segment/<key> with the segment's tags: the matrix
// covers every caller kind; these cover what only segments have.
func TestSegmentRightsByEnvironment(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	for _, e := range []string{"production", "test"} {
		for _, s := range []map[string]any{{"key": "plain", "name": "Plain"}, {"key": "tagged", "name": "Tagged", "tags": []string{"vip"}}} {
			apptest.WantStatus(t, srv.Do(t, http.MethodPost, api+"/segments/p/"+e, s), http.StatusCreated)
		}
	}
	_, reader := srv.MustCreateToken(t, map[string]any{"name": "reader", "role": "reader"})
	_, writer := srv.MustCreateToken(t, map[string]any{"name": "writer", "role": "writer"})
	apptest.CreateRole(t, srv, "prod-segments", "", apptest.Statement("allow", []string{"proj/*:env/production:segment/*"}, []string{"*"}))
	_, prod := srv.MustCreateToken(t, map[string]any{"name": "production segments", "customRoleIds": []string{"prod-segments"}})
	apptest.CreateRole(t, srv, "included-only", "", apptest.Statement("allow", []string{"proj/*:env/*:segment/*"}, []string{"updateIncluded"}))
	_, included := srv.MustCreateToken(t, map[string]any{"name": "included only", "customRoleIds": []string{"included-only"}})
	apptest.CreateRole(t, srv, "vip-segments", "", apptest.Statement("allow", []string{"proj/*:env/*:segment/*;vip"}, []string{"*"}))
	_, vip := srv.MustCreateToken(t, map[string]any{"name": "vip segments", "customRoleIds": []string{"vip-segments"}})
	apptest.CreateRole(t, srv, "no-vip", "",
		apptest.Statement("allow", []string{"proj/*:env/*:segment/*"}, []string{"*"}),
		apptest.Statement("deny", []string{"proj/*:env/*:segment/*;vip"}, []string{"*"}))
	_, noVIP := srv.MustCreateToken(t, map[string]any{"name": "no vip", "customRoleIds": []string{"no-vip"}})

	t.Run("_access shows a role's rights on the segment's own environment", func(t *testing.T) {
		for _, c := range []struct {
			env     string
			allowed bool
		}{{"production", true}, {"test", false}} {
			res := srv.Do(t, http.MethodGet, api+"/segments/p/"+c.env+"/plain", nil, "Authorization", prod)
			apptest.WantStatus(t, res, http.StatusOK)
			var doc struct {
				Access struct {
					Allowed, Denied []struct{ Action string }
				} `json:"_access"`
			}
			res.JSON(t, &doc)
			list := doc.Access.Denied
			if c.allowed {
				list = doc.Access.Allowed
			}
			if !slices.ContainsFunc(list, func(a struct{ Action string }) bool { return a.Action == "updateRules" }) {
				t.Errorf("%s: _access %+v, want updateRules allowed %v", c.env, doc.Access, c.allowed)
			}
		}
	})

	rename := []apptest.PatchOp{apptest.Replace("/name", "Renamed")}
	include := []apptest.PatchOp{apptest.Add("/included/-", "u-added")}
	semantic := func(kind string, kv ...any) map[string]any {
		return map[string]any{"instructions": []map[string]any{apptest.Instr(kind, kv...)}}
	}
	seg := func(e, key string) string { return api + "/segments/p/" + e + "/" + key }
	n := 0
	fresh := func(t *testing.T, e string, tags ...string) string {
		t.Helper()
		n++
		key := fmt.Sprintf("doomed-%d", n)
		apptest.WantStatus(t, srv.Do(t, http.MethodPost, api+"/segments/p/"+e, map[string]any{"key": key, "name": "Doomed", "tags": tags}), http.StatusCreated)
		return key
	}
	for _, c := range []struct {
		name         string
		token        string
		method       string
		path         func(t *testing.T) string
		body         any
		headers      []string
		status       int
		refusalNames []string
	}{
		{"a reader lists segments", reader, http.MethodGet, func(*testing.T) string { return api + "/segments/p/test" }, nil, nil, http.StatusOK, nil},
		{"a reader reads a segment", reader, http.MethodGet, func(*testing.T) string { return seg("test", "plain") }, nil, nil, http.StatusOK, nil},
		{"a reader may not create a segment", reader, http.MethodPost, func(*testing.T) string { return api + "/segments/p/test" },
			map[string]any{"key": "by-reader", "name": "R"}, nil, http.StatusForbidden, []string{"createSegment", "proj/p:env/test:segment/by-reader"}},
		{"a reader may not patch a segment", reader, http.MethodPatch, func(*testing.T) string { return seg("test", "plain") }, rename, nil,
			http.StatusForbidden, []string{"updateName", "proj/p:env/test:segment/plain"}},
		{"a reader may not delete a segment", reader, http.MethodDelete, func(t *testing.T) string { return seg("test", fresh(t, "test")) }, nil, nil,
			http.StatusForbidden, []string{"deleteSegment"}},
		{"a writer creates a segment", writer, http.MethodPost, func(*testing.T) string { return api + "/segments/p/test" },
			map[string]any{"key": "by-writer", "name": "W"}, nil, http.StatusCreated, nil},
		{"a writer patches a segment", writer, http.MethodPatch, func(*testing.T) string { return seg("test", "plain") }, rename, nil, http.StatusOK, nil},
		{"a writer deletes a segment", writer, http.MethodDelete, func(t *testing.T) string { return seg("test", fresh(t, "test")) }, nil, nil, http.StatusNoContent, nil},

		{"a role on production segments creates one in production", prod, http.MethodPost, func(*testing.T) string { return api + "/segments/p/production" },
			map[string]any{"key": "by-prod", "name": "P"}, nil, http.StatusCreated, nil},
		{"a role on production segments may not create one in test", prod, http.MethodPost, func(*testing.T) string { return api + "/segments/p/test" },
			map[string]any{"key": "by-prod", "name": "P"}, nil, http.StatusForbidden, []string{"createSegment", "proj/p:env/test:segment/by-prod"}},
		{"a role on production segments patches one in production", prod, http.MethodPatch, func(*testing.T) string { return seg("production", "plain") }, rename, nil, http.StatusOK, nil},
		{"a role on production segments may not patch one in test", prod, http.MethodPatch, func(*testing.T) string { return seg("test", "plain") }, rename, nil,
			http.StatusForbidden, []string{"updateName", "proj/p:env/test:segment/plain"}},
		{"a role on production segments deletes one in production", prod, http.MethodDelete, func(t *testing.T) string { return seg("production", fresh(t, "production")) }, nil, nil, http.StatusNoContent, nil},
		{"a role on production segments may not delete one in test", prod, http.MethodDelete, func(t *testing.T) string { return seg("test", fresh(t, "test")) }, nil, nil,
			http.StatusForbidden, []string{"deleteSegment", "proj/p:env/test:segment/doomed"}},
		{"a role on production segments still reads test's", prod, http.MethodGet, func(*testing.T) string { return seg("test", "plain") }, nil, nil, http.StatusOK, nil},

		{"a role allowed updateIncluded adds a key by JSON patch", included, http.MethodPatch, func(*testing.T) string { return seg("test", "plain") }, include, nil, http.StatusOK, nil},
		{"a role allowed updateIncluded may not rename by JSON patch", included, http.MethodPatch, func(*testing.T) string { return seg("test", "plain") }, rename, nil,
			http.StatusForbidden, []string{"updateName"}},
		{"a role allowed updateIncluded adds a key by semantic patch", included, http.MethodPatch, func(*testing.T) string { return seg("test", "plain") },
			semantic("addIncludedUsers", "values", []string{"u-semantic"}), []string{"Content-Type", "application/json; domain-model=launchdarkly.semanticpatch"}, http.StatusOK, nil},
		{"a role allowed updateIncluded may not rename by semantic patch", included, http.MethodPatch, func(*testing.T) string { return seg("test", "plain") },
			semantic("updateName", "value", "Renamed"), []string{"Content-Type", apptest.SemanticType}, http.StatusForbidden, []string{"updateName", "proj/p:env/test:segment/plain"}},

		{"a role on vip segments patches a segment tagged vip", vip, http.MethodPatch, func(*testing.T) string { return seg("test", "tagged") }, rename, nil, http.StatusOK, nil},
		{"a role on vip segments may not patch an untagged one", vip, http.MethodPatch, func(*testing.T) string { return seg("test", "plain") }, rename, nil,
			http.StatusForbidden, []string{"updateName"}},
		{"a role on vip segments creates one with the tag", vip, http.MethodPost, func(*testing.T) string { return api + "/segments/p/test" },
			map[string]any{"key": "vip-made", "name": "V", "tags": []string{"vip"}}, nil, http.StatusCreated, nil},
		{"a role on vip segments may not create one without it", vip, http.MethodPost, func(*testing.T) string { return api + "/segments/p/test" },
			map[string]any{"key": "untagged-made", "name": "V"}, nil, http.StatusForbidden, []string{"createSegment"}},
		{"a deny on vip segments refuses a patch of one, naming the deny", noVIP, http.MethodPatch, func(*testing.T) string { return seg("production", "tagged") }, rename, nil,
			http.StatusForbidden, []string{"deny", `"no-vip"`}},
		{"a deny on vip segments refuses the delete of one", noVIP, http.MethodDelete, func(t *testing.T) string { return seg("production", fresh(t, "production", "vip")) }, nil, nil,
			http.StatusForbidden, []string{"deny"}},
		{"a deny on vip segments leaves the others to patch", noVIP, http.MethodPatch, func(*testing.T) string { return seg("production", "plain") }, rename, nil, http.StatusOK, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := c.path(t)
			before := srv.Do(t, http.MethodGet, path, nil)
			res := srv.Do(t, c.method, path, c.body, append([]string{"Authorization", c.token}, c.headers...)...)
			if c.status != http.StatusForbidden {
				apptest.WantStatus(t, res, c.status)
				return
			}
			apptest.WantError(t, res, http.StatusForbidden, "forbidden", c.refusalNames...)
			if after := srv.Do(t, http.MethodGet, path, nil); after.Status != before.Status || !apptest.SameJSON(t, before.Body, after.Body) {
				t.Errorf("the refused request changed something:\n%s\n%s", before.Body, after.Body)
			}
		})
	}
}
