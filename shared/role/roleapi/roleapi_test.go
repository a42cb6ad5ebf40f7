package roleapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

const rolesPath = apptest.API + "/roles"

func rolePath(key string) string { return rolesPath + "/" + key }

func TestCustomRoles(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "a")
	envWriter := apptest.Statement("allow", []string{"proj/a:env/*"}, []string{"createEnvironment", "updateName"})

	t.Run("a create answers 201 with the role and reader base permissions by default", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, rolesPath, map[string]any{"key": "env-writer", "name": "Env writer", "description": "writes envs of a", "policy": []any{envWriter}})
		apptest.WantStatus(t, res, http.StatusCreated)
		got := res.Map(t)
		if got["key"] != "env-writer" || got["name"] != "Env writer" || got["description"] != "writes envs of a" || got["basePermissions"] != "reader" {
			t.Errorf("created role %v", got)
		}
		if id, _ := got["_id"].(string); id == "" {
			t.Errorf("no _id: %s", res.Body)
		}
		if _, ok := got["_access"].(map[string]any); !ok {
			t.Errorf("no _access: %s", res.Body)
		}
		policy, _ := got["policy"].([]any)
		if len(policy) != 1 || !apptest.SameJSON(t, mustJSON(t, policy[0]), mustJSON(t, envWriter)) {
			t.Errorf("policy %v, want [%v]", got["policy"], envWriter)
		}
		if !apptest.SameJSON(t, srv.Do(t, http.MethodGet, rolePath("env-writer"), nil).Body, res.Body) {
			t.Errorf("a following GET differs from the create answer")
		}
	})
	t.Run("the list holds the role", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, rolesPath, nil)
		apptest.WantStatus(t, res, http.StatusOK)
		if keys := apptest.ItemKeys(t, res); len(keys) != 1 || keys[0] != "env-writer" {
			t.Errorf("listed %v", keys)
		}
	})
	t.Run("a second role with the same key is refused with 409", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, rolesPath, map[string]any{"key": "env-writer", "name": "Again", "policy": []any{envWriter}})
		apptest.WantError(t, res, http.StatusConflict, "conflict", "env-writer")
	})

	t.Run("statement parse errors are refused with 400 naming the statement and the field", func(t *testing.T) {
		for _, c := range []struct {
			name   string
			policy []any
			parts  []string
		}{
			{"a specifier without a name", []any{envWriter, apptest.Statement("allow", []string{"proj/a:env"}, []string{"*"})}, []string{"statement 1", `"resources"[0]`, "proj/a:env"}},
			{"an unknown effect", []any{apptest.Statement("permit", []string{"proj/*"}, []string{"*"})}, []string{"statement 0", `"effect"`, "permit"}},
			{"an action with a bad character", []any{envWriter, envWriter, apptest.Statement("deny", []string{"proj/*"}, []string{"update-name"})}, []string{"statement 2", `"actions"[0]`}},
			{"both resources and notResources", []any{map[string]any{"effect": "allow", "resources": []string{"proj/*"}, "notResources": []string{"proj/b"}, "actions": []string{"*"}}}, []string{"statement 0", "resources", "notResources"}},
			{"no actions", []any{map[string]any{"effect": "allow", "resources": []string{"proj/*"}}}, []string{"statement 0", "actions"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				res := srv.Do(t, http.MethodPost, rolesPath, map[string]any{"key": "broken", "name": "Broken", "policy": c.policy})
				apptest.WantError(t, res, http.StatusBadRequest, "invalid_request", c.parts...)
			})
		}
		apptest.WantError(t, srv.Do(t, http.MethodGet, rolePath("broken"), nil), http.StatusNotFound, "not_found")
	})
	t.Run("a create without key, name or statements, or with bad base permissions, is refused with 400", func(t *testing.T) {
		for field, body := range map[string]map[string]any{
			"key":             {"name": "No key", "policy": []any{envWriter}},
			"name":            {"key": "no-name", "policy": []any{envWriter}},
			"policy":          {"key": "no-policy", "name": "No policy", "policy": []any{}},
			"basePermissions": {"key": "bad-base", "name": "Bad base", "policy": []any{envWriter}, "basePermissions": "writer"},
		} {
			apptest.WantError(t, srv.Do(t, http.MethodPost, rolesPath, body), http.StatusBadRequest, "invalid_request", field)
		}
		apptest.WantError(t, srv.Do(t, http.MethodPost, rolesPath, map[string]any{"key": "Bad Key!", "name": "Bad", "policy": []any{envWriter}}), http.StatusBadRequest, "invalid_request", "key")
	})

	t.Run("a patch changes name, description, policy and base permissions", func(t *testing.T) {
		newPolicy := []any{envWriter, apptest.Statement("deny", []string{"proj/a:env/production"}, []string{"*"})}
		res := srv.Do(t, http.MethodPatch, rolePath("env-writer"), []apptest.PatchOp{
			apptest.Replace("/name", "Environment writer"), apptest.Replace("/description", "changed"), apptest.Replace("/policy", newPolicy), apptest.Replace("/basePermissions", "no_access"),
		})
		apptest.WantStatus(t, res, http.StatusOK)
		got := srv.Do(t, http.MethodGet, rolePath("env-writer"), nil).Map(t)
		if got["name"] != "Environment writer" || got["description"] != "changed" || got["basePermissions"] != "no_access" || len(got["policy"].([]any)) != 2 {
			t.Errorf("patched role %v", got)
		}
	})
	t.Run("a patch with a statement that does not parse is refused with 400 naming it", func(t *testing.T) {
		res := srv.Do(t, http.MethodPatch, rolePath("env-writer"), []apptest.PatchOp{apptest.Add("/policy/-", apptest.Statement("allow", []string{"proj/a:"}, []string{"*"}))})
		apptest.WantError(t, res, http.StatusBadRequest, "invalid_request", "statement 2", `"resources"[0]`)
		if got := srv.Do(t, http.MethodGet, rolePath("env-writer"), nil).Map(t); len(got["policy"].([]any)) != 2 {
			t.Errorf("a refused patch changed the policy: %v", got["policy"])
		}
	})
	t.Run("a patch of the key, the id or an unknown field is refused with 400", func(t *testing.T) {
		for _, path := range []string{"/key", "/_id", "/createdOn", "/owner"} {
			apptest.WantError(t, srv.Do(t, http.MethodPatch, rolePath("env-writer"), []apptest.PatchOp{apptest.Replace(path, "x")}), http.StatusBadRequest, "invalid_request", path)
		}
	})
	t.Run("a patch or delete of a missing role answers 404", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPatch, rolePath("missing"), []apptest.PatchOp{apptest.Replace("/name", "x")}), http.StatusNotFound, "not_found")
		apptest.WantError(t, srv.Do(t, http.MethodDelete, rolePath("missing"), nil), http.StatusNotFound, "not_found")
	})

	t.Run("a token's custom role grants what its statements allow", func(t *testing.T) {
		apptest.CreateRole(t, srv, "grant-envs", "", envWriter)
		_, v := srv.MustCreateToken(t, map[string]any{"name": "envs", "customRoleIds": []string{"grant-envs"}})
		apptest.WantStatus(t, srv.Do(t, http.MethodPost, apptest.EnvsPath("a"), map[string]any{"key": "by-role", "name": "By role", "color": "000000"}, "Authorization", v), http.StatusCreated)
		apptest.WantError(t, srv.Do(t, http.MethodDelete, apptest.EnvPath("a", "by-role"), nil, "Authorization", v), http.StatusForbidden, "forbidden", "deleteEnvironment")
	})
	t.Run("a patched policy applies to tokens resolved after the patch", func(t *testing.T) {
		apptest.CreateRole(t, srv, "grows", "", envWriter)
		_, v := srv.MustCreateToken(t, map[string]any{"name": "grows", "customRoleIds": []string{"grows"}})
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, rolePath("grows"), []apptest.PatchOp{apptest.Add("/policy/-", apptest.Statement("allow", []string{"proj/a:env/*"}, []string{"deleteEnvironment"}))}), http.StatusOK)
		srv.MustCreateEnvironment(t, "a", "to-delete", nil)
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, apptest.EnvPath("a", "to-delete"), nil, "Authorization", v), http.StatusNoContent)
	})
	t.Run("a delete answers 204 and the role is gone, with the rights it gave", func(t *testing.T) {
		apptest.CreateRole(t, srv, "short-lived", "", envWriter)
		_, v := srv.MustCreateToken(t, map[string]any{"name": "short", "customRoleIds": []string{"short-lived"}})
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, rolePath("short-lived"), nil), http.StatusNoContent)
		apptest.WantError(t, srv.Do(t, http.MethodGet, rolePath("short-lived"), nil), http.StatusNotFound, "not_found")
		apptest.WantError(t, srv.Do(t, http.MethodDelete, rolePath("short-lived"), nil), http.StatusNotFound, "not_found")
		// The token was never used, so nothing is cached: it is resolved now.
		apptest.WantError(t, srv.Do(t, http.MethodPost, apptest.EnvsPath("a"), map[string]any{"key": "after-delete", "name": "x", "color": "000000"}, "Authorization", v), http.StatusForbidden, "forbidden")
		apptest.WantError(t, srv.Do(t, http.MethodPost, apptest.API+"/tokens", map[string]any{"name": "x", "customRoleIds": []string{"short-lived"}}), http.StatusBadRequest, "invalid_request", "short-lived")
	})
	t.Run("a writer may not create, patch or delete roles; a reader may read them", func(t *testing.T) {
		_, writer := srv.MustCreateToken(t, map[string]any{"name": "writer", "role": "writer"})
		_, reader := srv.MustCreateToken(t, map[string]any{"name": "reader", "role": "reader"})
		apptest.WantError(t, srv.Do(t, http.MethodPost, rolesPath, map[string]any{"key": "mine", "name": "Mine", "policy": []any{envWriter}}, "Authorization", writer), http.StatusForbidden, "forbidden", "createRole")
		apptest.WantError(t, srv.Do(t, http.MethodPatch, rolePath("env-writer"), []apptest.PatchOp{apptest.Replace("/name", "x")}, "Authorization", writer), http.StatusForbidden, "forbidden")
		apptest.WantError(t, srv.Do(t, http.MethodDelete, rolePath("env-writer"), nil, "Authorization", writer), http.StatusForbidden, "forbidden", "deleteRole")
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, rolePath("env-writer"), nil, "Authorization", reader), http.StatusOK)
	})
}

// mustJSON encodes v.
func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCustomRolesAreReadByKeyOrID(t *testing.T) {
	srv := apptest.New(t)
	apptest.CreateRole(t, srv, "env-maker", "", apptest.Statement("allow", []string{"proj/a:env/*"}, []string{"createEnvironment"}))
	id := apptest.RoleID(t, srv, "env-maker")
	for _, c := range []struct {
		name, ref string
		status    int
	}{
		{"a role is read by its key", "env-maker", http.StatusOK},
		{"a role is read by its _id", id, http.StatusOK},
		{"an _id no role has is not found", "0123456789abcdef01234567", http.StatusNotFound},
		{"a key no role has is not found", "nobody", http.StatusNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := srv.Do(t, http.MethodGet, apptest.API+"/roles/"+c.ref, nil)
			apptest.WantStatus(t, res, c.status)
			if c.status == http.StatusOK {
				if got := res.Map(t); got["key"] != "env-maker" || got["_id"] != id {
					t.Errorf("read %v", got)
				}
			}
		})
	}
	t.Run("a key with the form of an _id is refused with 400, so a reference is never ambiguous", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPost, apptest.API+"/roles", map[string]any{"key": "0123456789abcdef01234567", "name": "x",
			"policy": []map[string]any{{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"*"}}}}),
			http.StatusBadRequest, "invalid_request", `"key"`, "_id")
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, apptest.API+"/roles/0123456789abcdef01234567", nil), http.StatusNotFound)
	})
}
