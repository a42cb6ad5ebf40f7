package applicationapi_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

func TestApplicationsFromEvents(t *testing.T) {
	srv := apptest.New(t)
	e := apptest.NewSDKEnv(t, srv, "apps")
	srv.Do(t, http.MethodPost, apptest.FlagsPath(e.Project), map[string]any{"key": "checkout", "name": "New checkout"})
	apptest.WantStatus(t, apptest.PostEvents(t, srv, "/bulk", e.SDKKey, apptest.GoSDKPayload(time.Now(), "u1")), http.StatusAccepted)
	beta := apptest.BetaHeader
	app := apptest.API + "/applications/shop-api"

	t.Run("the application the SDK's tags name is added automatically", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, apptest.API+"/applications", nil, beta...)
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
		apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.API+"/applications", nil), http.StatusForbidden, "forbidden", "beta")
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
		if log := srv.Do(t, http.MethodGet, apptest.API+"/auditlog?limit=1", nil); !strings.Contains(log.String(), "updated the application") {
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

// postEventsOf posts a Go SDK payload for the application the tags name.
func postEventsOf(tb testing.TB, srv *apptest.Server, sdkKey, tags string) {
	tb.Helper()
	res := srv.Do(tb, http.MethodPost, "/bulk", apptest.GoSDKPayload(time.Now(), "u1"), "Authorization", sdkKey,
		"User-Agent", "GoClient/7.14.6", "X-LaunchDarkly-Event-Schema", "4", "X-LaunchDarkly-Tags", tags)
	apptest.WantStatus(tb, res, http.StatusAccepted)
}

func TestApplicationListFilterAndSort(t *testing.T) {
	srv := apptest.New(t)
	e := apptest.NewSDKEnv(t, srv, "apps")
	for _, app := range []struct{ key, name, kind string }{
		{"shop-api", "Shop API", "server"},
		{"cart-web", "Cart", "browser"},
		{"admin-app", "Admin Shop", "mobile"},
	} {
		postEventsOf(t, srv, e.SDKKey, "application-id/"+app.key+" application-version/1.0")
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.API+"/applications/"+app.key,
			[]apptest.PatchOp{apptest.Replace("/name", app.name), apptest.Replace("/kind", app.kind)}, apptest.BetaHeader...), http.StatusOK)
	}
	keys := func(t *testing.T, query string) []string {
		t.Helper()
		res := srv.Do(t, http.MethodGet, apptest.API+"/applications"+query, nil, apptest.BetaHeader...)
		apptest.WantStatus(t, res, http.StatusOK)
		return apptest.ItemKeys(t, res)
	}
	for _, c := range []struct {
		name, query string
		want        []string
	}{
		{"without a sort the list is by key", "", []string{"admin-app", "cart-web", "shop-api"}},
		{"a minus sorts by key descending", "?sort=-key", []string{"shop-api", "cart-web", "admin-app"}},
		{"sort=name sorts by name", "?sort=name", []string{"admin-app", "cart-web", "shop-api"}},
		{"filter key: keeps that application", "?filter=key:cart-web", []string{"cart-web"}},
		{"filter name: keeps names holding the text, ignoring case", "?filter=name:shop", []string{"admin-app", "shop-api"}},
		{"filter kind: keeps that kind", "?filter=kind:browser", []string{"cart-web"}},
		{"filter terms all apply", "?filter=name:shop,kind:server", []string{"shop-api"}},
		{"filter autoAdded: keeps the applications events added", "?filter=autoAdded:true", []string{"admin-app", "cart-web", "shop-api"}},
		{"the window is cut after the filter and sort", "?sort=-name&limit=1&offset=1", []string{"cart-web"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := keys(t, c.query); !slices.Equal(got, c.want) {
				t.Errorf("listed %v, want %v", got, c.want)
			}
		})
	}
	t.Run("a filter or sort field the list does not have is refused with 400 naming it", func(t *testing.T) {
		for query, field := range map[string]string{"?filter=owner:me": "owner", "?sort=version": "version"} {
			apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.API+"/applications"+query, nil, apptest.BetaHeader...), http.StatusBadRequest, "invalid_request", field)
		}
	})
}
