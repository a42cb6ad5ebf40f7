package contextapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

func TestContextListRules(t *testing.T) {
	srv := apptest.New(t)
	e := apptest.NewSDKEnv(t, srv, "rules")
	apptest.WantStatus(t, apptest.PostEvents(t, srv, "/bulk", e.SDKKey, apptest.GoSDKPayload(time.Now(), "u1")), http.StatusAccepted)
	base := apptest.EnvPath(e.Project, e.Env)
	tests := []struct {
		name, method, path string
		body               any
		status             int
	}{
		{"sort on a contexts GET is refused", http.MethodGet, base + "/contexts/user/u1?sort=ts", nil, http.StatusBadRequest},
		{"a limit over 50 is refused", http.MethodGet, base + "/contexts/user/u1?limit=51", nil, http.StatusBadRequest},
		{"a filter other than applicationId is refused", http.MethodGet, base + "/contexts/user/u1?filter=kind:user", nil, http.StatusBadRequest},
		{"the applicationId filter is accepted", http.MethodGet, base + "/contexts/user/u1?filter=applicationId:shop-api", nil, http.StatusOK},
		{"a search with a filter both in the query and the body is refused", http.MethodPost, base + "/contexts/search?filter=applicationId:a", map[string]any{"filter": "applicationId:b"}, http.StatusBadRequest},
		{"a search with sort in the body is refused", http.MethodPost, base + "/contexts/search", map[string]any{"sort": "ts"}, http.StatusBadRequest},
		{"a forged continuation token is refused", http.MethodPost, base + "/contexts/search?continuationToken=forged", nil, http.StatusBadRequest},
		{"an unknown environment is not found", http.MethodGet, apptest.EnvPath(e.Project, "nope") + "/contexts/user/u1", nil, http.StatusNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			apptest.WantStatus(t, srv.Do(t, tc.method, tc.path, tc.body), tc.status)
		})
	}
	t.Run("includeTotalCount=false leaves totalCount out", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, base+"/contexts/user/u1?includeTotalCount=false", nil)
		apptest.WantStatus(t, res, http.StatusOK)
		if _, ok := res.Map(t)["totalCount"]; ok {
			t.Errorf("want no totalCount: %s", res.Body)
		}
	})
}

func TestContextKindVersions(t *testing.T) {
	srv := apptest.New(t)
	e := apptest.NewSDKEnv(t, srv, "kinds")
	kinds := func(t *testing.T) map[string]map[string]any {
		t.Helper()
		res := srv.Do(t, http.MethodGet, apptest.ProjectPath(e.Project)+"/context-kinds", nil)
		apptest.WantStatus(t, res, http.StatusOK)
		var got struct {
			Items []map[string]any `json:"items"`
		}
		res.JSON(t, &got)
		out := map[string]map[string]any{}
		for _, k := range got.Items {
			out[k["key"].(string)] = k
		}
		return out
	}
	apptest.WantStatus(t, apptest.PostEvents(t, srv, "/bulk", e.SDKKey, apptest.GoSDKPayload(time.Now(), "u1")), http.StatusAccepted)
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"an auto-added kind is at version 1 with a lastSeen", func(t *testing.T) {
			org := kinds(t)["org"]
			if org["version"] != float64(1) || org["lastSeen"] == nil || org["createdFrom"] != "auto-add" {
				t.Errorf("org kind %v", org)
			}
		}},
		{"each edit adds one to the version; events do not", func(t *testing.T) {
			apptest.WantStatus(t, srv.Do(t, http.MethodPut, apptest.ProjectPath(e.Project)+"/context-kinds/org", map[string]any{"name": "Org"}), http.StatusOK)
			apptest.WantStatus(t, apptest.PostEvents(t, srv, "/bulk", e.SDKKey, apptest.GoSDKPayload(time.Now(), "u2")), http.StatusAccepted)
			apptest.WantStatus(t, srv.Do(t, http.MethodPut, apptest.ProjectPath(e.Project)+"/context-kinds/org", map[string]any{"name": "Organization", "hideInTargeting": true}), http.StatusOK)
			org := kinds(t)["org"]
			if org["version"] != float64(3) || org["name"] != "Organization" || org["hideInTargeting"] != true || org["createdFrom"] != "auto-add" {
				t.Errorf("org kind %v, want version 3 with the last edit", org)
			}
		}},
		{"a kind key that is not valid is refused", func(t *testing.T) {
			apptest.WantError(t, srv.Do(t, http.MethodPut, apptest.ProjectPath(e.Project)+"/context-kinds/multi", map[string]any{"name": "M"}), http.StatusBadRequest, "invalid_request", "multi")
		}},
		{"an unknown project is not found", func(t *testing.T) {
			apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.ProjectPath("nope")+"/context-kinds", nil), http.StatusNotFound, "not_found")
			apptest.WantError(t, srv.Do(t, http.MethodPut, apptest.ProjectPath("nope")+"/context-kinds/org", map[string]any{"name": "O"}), http.StatusNotFound, "not_found")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.run)
	}
}
