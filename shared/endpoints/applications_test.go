package endpoints_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// betaHeader opens the beta operations.
var betaHeader = []string{"SVC-API-Version", "beta"}

func TestApplicationsFromEvents(t *testing.T) {
	srv := apptest.New(t)
	e := apptest.NewSDKEnv(t, srv, "apps")
	srv.Do(t, http.MethodPost, apptest.FlagsPath(e.Project), map[string]any{"key": "checkout", "name": "New checkout"})
	apptest.WantStatus(t, apptest.PostEvents(t, srv, "/bulk", e.SDKKey, apptest.GoSDKPayload(time.Now(), "u1")), http.StatusAccepted)
	beta := betaHeader
	app := api + "/applications/shop-api"

	t.Run("the application the SDK's tags name is added automatically", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, api+"/applications", nil, beta...)
		apptest.WantStatus(t, res, http.StatusOK)
		var got struct {
			Items []struct {
				Key       string         `json:"key"`
				Name      string         `json:"name"`
				Kind      string         `json:"kind"`
				AutoAdded bool           `json:"autoAdded"`
				Version   int            `json:"_version"`
				Access    map[string]any `json:"_access"`
			} `json:"items"`
			TotalCount int `json:"totalCount"`
		}
		res.JSON(t, &got)
		if got.TotalCount != 1 || got.Items[0].Key != "shop-api" || !got.Items[0].AutoAdded || got.Items[0].Kind != "server" || got.Items[0].Access == nil {
			t.Errorf("want shop-api, auto-added, server, with _access: %s", res.Body)
		}
	})
	t.Run("applications are beta: without the header they are refused", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodGet, api+"/applications", nil), http.StatusForbidden, "forbidden", "beta")
	})
	t.Run("expand=flags lists the flags the application evaluated", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, app+"?expand=flags", nil, beta...)
		apptest.WantStatus(t, res, http.StatusOK)
		body := res.String()
		if !strings.Contains(body, `"totalCount":2`) || !strings.Contains(body, `"name":"New checkout"`) || !strings.Contains(body, `"key":"missing"`) {
			t.Errorf("want checkout (with its name) and missing: %s", body)
		}
		if strings.Contains(srv.Do(t, http.MethodGet, app, nil, beta...).String(), `"flags"`) {
			t.Error("flags appear without expand=flags")
		}
		apptest.WantError(t, srv.Do(t, http.MethodGet, app+"?expand=nope", nil, beta...), http.StatusBadRequest, "invalid_request", "nope")
	})
	t.Run("the version the tags name is listed", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, app+"/versions", nil, beta...)
		apptest.WantStatus(t, res, http.StatusOK)
		if !strings.Contains(res.String(), `"key":"1.4.2"`) || !strings.Contains(res.String(), `"autoAdded":true`) {
			t.Errorf("want version 1.4.2 auto-added: %s", res.Body)
		}
	})
	t.Run("a patch renames the application, audited", func(t *testing.T) {
		res := srv.Do(t, http.MethodPatch, app, []apptest.PatchOp{apptest.Replace("/name", "Shop API"), apptest.Replace("/kind", "mobile")}, beta...)
		apptest.WantStatus(t, res, http.StatusOK)
		if m := res.Map(t); m["name"] != "Shop API" || m["kind"] != "mobile" || m["_version"] != float64(2) {
			t.Errorf("want the new name and kind at version 2: %s", res.Body)
		}
		apptest.WantError(t, srv.Do(t, http.MethodPatch, app, []apptest.PatchOp{apptest.Replace("/kind", "toaster")}, beta...), http.StatusBadRequest, "invalid_request", "kind")
		apptest.WantError(t, srv.Do(t, http.MethodPatch, app, []apptest.PatchOp{apptest.Replace("/key", "other")}, beta...), http.StatusBadRequest, "invalid_request")
		if log := srv.Do(t, http.MethodGet, api+"/auditlog?limit=1", nil); !strings.Contains(log.String(), "updated the application") {
			t.Errorf("want an audit entry: %s", log.Body)
		}
	})
	t.Run("another event keeps the edited application as it is", func(t *testing.T) {
		apptest.WantStatus(t, apptest.PostEvents(t, srv, "/bulk", e.SDKKey, apptest.GoSDKPayload(time.Now(), "u9")), http.StatusAccepted)
		if m := srv.Do(t, http.MethodGet, app, nil, beta...).Map(t); m["name"] != "Shop API" {
			t.Errorf("name %v, want Shop API", m["name"])
		}
	})
	t.Run("a version is patched and deleted", func(t *testing.T) {
		res := srv.Do(t, http.MethodPatch, app+"/versions/1.4.2", []apptest.PatchOp{apptest.Replace("/supported", false)}, beta...)
		apptest.WantStatus(t, res, http.StatusOK)
		if res.Map(t)["supported"] != false {
			t.Errorf("want supported false: %s", res.Body)
		}
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, app+"/versions/1.4.2", nil, beta...), http.StatusNoContent)
		apptest.WantError(t, srv.Do(t, http.MethodDelete, app+"/versions/1.4.2", nil, beta...), http.StatusNotFound, "not_found", "1.4.2")
	})
	t.Run("deleting the application removes it", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, app, nil, beta...), http.StatusNoContent)
		apptest.WantError(t, srv.Do(t, http.MethodGet, app, nil, beta...), http.StatusNotFound, "not_found", "shop-api")
		apptest.WantError(t, srv.Do(t, http.MethodGet, app+"/versions", nil, beta...), http.StatusNotFound, "not_found")
	})
}
