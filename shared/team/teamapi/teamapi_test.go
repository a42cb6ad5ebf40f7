package teamapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/token"
)

func TestTeams(t *testing.T) {
	srv := apptest.New(t)
	apptest.EmptyProject(t, srv, "a")
	apptest.EmptyProject(t, srv, "b")
	apptest.WantStatus(t, srv.Do(t, http.MethodPost, "/api/v2/roles", map[string]any{
		"key": "envs-in-a", "name": "Environments in A",
		"policy": []map[string]any{{"effect": "allow", "resources": []string{"proj/a:env/*"}, "actions": []string{"createEnvironment"}}},
	}), http.StatusCreated)
	invited := srv.Do(t, http.MethodPost, "/api/v2/members", []map[string]any{{"email": "dev@example.com", "role": "reader"}})
	apptest.WantStatus(t, invited, http.StatusCreated)
	var members struct {
		Items []struct {
			ID string `json:"_id"`
		} `json:"items"`
	}
	invited.JSON(t, &members)
	memberID := members.Items[0].ID

	// An admin token of the reader member: the member caps it.
	_, value, writes, err := token.Issue(token.Spec{Name: "dev", Role: identity.RoleAdmin, MemberID: memberID}, srv.AccountID, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Table.Transact(t.Context(), writes); err != nil {
		t.Fatal(err)
	}
	create := func(project, key string) *apptest.Response {
		return srv.Do(t, http.MethodPost, apptest.EnvsPath(project), map[string]any{"key": key, "name": key, "color": "00AA00"}, "Authorization", value)
	}

	t.Run("a team is created, read and listed", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, "/api/v2/teams", map[string]any{"key": "devs", "name": "Developers"})
		apptest.WantStatus(t, res, http.StatusCreated)
		if got := res.Map(t); got["key"] != "devs" || got["_access"] == nil {
			t.Fatalf("team %v", got)
		}
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, "/api/v2/teams/devs", nil), http.StatusOK)
		apptest.WantStatus(t, srv.Do(t, http.MethodPost, "/api/v2/teams", map[string]any{"key": "devs", "name": "Again"}), http.StatusConflict)
	})
	t.Run("a reader member's token may not create environments", func(t *testing.T) {
		apptest.WantError(t, create("a", "before"), http.StatusForbidden, "forbidden")
	})
	t.Run("joining a team with a role lets the member do what the role allows, and no more", func(t *testing.T) {
		res := srv.Do(t, http.MethodPatch, "/api/v2/teams/devs", []map[string]any{
			{"op": "replace", "path": "/customRoleKeys", "value": []string{"envs-in-a"}},
			{"op": "replace", "path": "/memberIds", "value": []string{memberID}},
		})
		apptest.WantStatus(t, res, http.StatusOK)
		// The token's rights were cached before the team changed; a fresh
		// harness process would see it at once, this one within the cache TTL.
		srv2 := srv.Reopen(t)
		apptest.WantStatus(t, srv2.Do(t, http.MethodPost, apptest.EnvsPath("a"), map[string]any{"key": "x", "name": "x", "color": "00AA00"}, "Authorization", value), http.StatusCreated)
		apptest.WantError(t, srv2.Do(t, http.MethodPost, apptest.EnvsPath("b"), map[string]any{"key": "x", "name": "x", "color": "00AA00"}, "Authorization", value), http.StatusForbidden, "forbidden")
	})
	t.Run("a patch of a read-only field is refused", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPatch, "/api/v2/teams/devs", []map[string]any{{"op": "replace", "path": "/key", "value": "x"}}), http.StatusBadRequest, "invalid_request")
	})
	t.Run("a deleted team is gone", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, "/api/v2/teams/devs", nil), http.StatusNoContent)
		apptest.WantError(t, srv.Do(t, http.MethodGet, "/api/v2/teams/devs", nil), http.StatusNotFound, "not_found")
	})
}
