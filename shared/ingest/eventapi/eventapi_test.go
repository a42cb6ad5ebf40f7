package eventapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/store"
)

func TestEventIngestion(t *testing.T) {
	srv := apptest.New(t)
	e := apptest.NewSDKEnv(t, srv, "ingest")
	now := time.Now()
	ctxPath := apptest.EnvPath(e.Project, e.Env)

	t.Run("a payload from a server SDK is accepted with 202", func(t *testing.T) {
		res := apptest.PostEvents(t, srv, "/bulk", e.SDKKey, apptest.GoSDKPayload(now, "u1", "u2"), "X-LaunchDarkly-Payload-ID", "p-1")
		apptest.WantStatus(t, res, http.StatusAccepted)
	})
	t.Run("its contexts read back as context instances of their kind and key", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, ctxPath+"/contexts/user/u1", nil)
		apptest.WantStatus(t, res, http.StatusOK)
		var got struct {
			Items []struct {
				LastSeen           string                       `json:"lastSeen"`
				ApplicationID      string                       `json:"applicationId"`
				Context            string                       `json:"context"`
				AssociatedContexts int                          `json:"associatedContexts"`
				Links              map[string]map[string]string `json:"_links"`
				Access             map[string]any               `json:"_access"`
			} `json:"items"`
			TotalCount int    `json:"totalCount"`
			EnvID      string `json:"_environmentId"`
		}
		res.JSON(t, &got)
		// u1 appears alone (index event) and in a multi-kind context with org acme (feature event).
		if got.TotalCount != 2 || len(got.Items) != 2 || got.EnvID != e.ClientID {
			t.Fatalf("want 2 instances of user u1 in environment %s: %s", e.ClientID, res.Body)
		}
		kinds := map[int]bool{}
		for _, it := range got.Items {
			var c map[string]any
			if err := json.Unmarshal([]byte(it.Context), &c); err != nil {
				t.Fatalf("context is not a JSON-encoded string: %q", it.Context)
			}
			kinds[it.AssociatedContexts] = true
			if _, err := time.Parse("2006-01-02T15:04:05.000Z", it.LastSeen); err != nil {
				t.Errorf("lastSeen %q is not ISO 8601 with fractional seconds", it.LastSeen)
			}
			if it.ApplicationID != "shop-api" {
				t.Errorf("applicationId %q, want shop-api", it.ApplicationID)
			}
			if it.Links["site"]["type"] != "text/html" || it.Access == nil {
				t.Errorf("want a text/html site link and _access: %s", res.Body)
			}
		}
		if !kinds[1] || !kinds[2] {
			t.Errorf("want one single and one two-kind instance: %s", res.Body)
		}
	})
	t.Run("a retried payload with the same payload id counts once", func(t *testing.T) {
		res := apptest.PostEvents(t, srv, "/bulk", e.SDKKey, apptest.GoSDKPayload(now, "u1", "u2"), "X-LaunchDarkly-Payload-ID", "p-1")
		apptest.WantStatus(t, res, http.StatusAccepted)
		counts := evalCounts(t, srv, e, "checkout", now)
		if counts["1"] != 5 || counts["0"] != 2 {
			t.Errorf("checkout counted %v, want 5 of variation 1 and 2 of variation 0 (once)", counts)
		}
	})
	t.Run("a second payload adds to the evaluation counters", func(t *testing.T) {
		res := apptest.PostEvents(t, srv, "/bulk", e.SDKKey, apptest.GoSDKPayload(now, "u3"), "X-LaunchDarkly-Payload-ID", "p-2")
		apptest.WantStatus(t, res, http.StatusAccepted)
		counts := evalCounts(t, srv, e, "checkout", now)
		if counts["1"] != 10 || counts["0"] != 4 {
			t.Errorf("checkout counted %v, want 10 and 4", counts)
		}
		if c := evalCounts(t, srv, e, "missing", now); c["unknown"] != 2 {
			t.Errorf("unknown flag counted %v, want 2", c)
		}
	})
	t.Run("context kinds seen are created automatically", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, apptest.ProjectPath(e.Project)+"/context-kinds", nil)
		apptest.WantStatus(t, res, http.StatusOK)
		var got struct {
			Items []struct {
				Key         string `json:"key"`
				CreatedFrom string `json:"createdFrom"`
			} `json:"items"`
		}
		res.JSON(t, &got)
		from := map[string]string{}
		for _, k := range got.Items {
			from[k.Key] = k.CreatedFrom
		}
		if from["user"] != "auto-add" || from["org"] != "auto-add" {
			t.Errorf("kinds %v, want user and org auto-added: %s", from, res.Body)
		}
	})
	t.Run("putContextKind names a kind and a second put updates it", func(t *testing.T) {
		res := srv.Do(t, http.MethodPut, apptest.ProjectPath(e.Project)+"/context-kinds/org", map[string]any{"name": "Organization", "description": "Paying customers"})
		apptest.WantStatus(t, res, http.StatusOK)
		if res.Map(t)["status"] != "updated" {
			t.Errorf("want status updated: %s", res.Body)
		}
		res = srv.Do(t, http.MethodPut, apptest.ProjectPath(e.Project)+"/context-kinds/device", map[string]any{"name": "Device"})
		apptest.WantStatus(t, res, http.StatusOK)
		if res.Map(t)["status"] != "created" {
			t.Errorf("want status created: %s", res.Body)
		}
		res = srv.Do(t, http.MethodGet, apptest.ProjectPath(e.Project)+"/context-kinds", nil)
		if !strings.Contains(res.String(), `"name":"Organization"`) || !strings.Contains(res.String(), `"key":"device"`) {
			t.Errorf("kinds do not show the edits: %s", res.Body)
		}
		apptest.WantError(t, srv.Do(t, http.MethodPut, apptest.ProjectPath(e.Project)+"/context-kinds/org", map[string]any{"description": "x"}), http.StatusBadRequest, "invalid_request", "name")
	})
	t.Run("attribute names and values are indexed by kind", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, ctxPath+"/context-attributes?filter=kind:user", nil)
		apptest.WantStatus(t, res, http.StatusOK)
		if !strings.Contains(res.String(), `"name":"country","weight":3`) {
			t.Errorf("want country seen on 3 users: %s", res.Body)
		}
		res = srv.Do(t, http.MethodGet, ctxPath+"/context-attributes/plan", nil)
		apptest.WantStatus(t, res, http.StatusOK)
		if !strings.Contains(res.String(), `{"kind":"org","values":[{"name":"gold","weight":2}]}`) {
			t.Errorf("want plan gold on org, in the two instances holding org acme: %s", res.Body)
		}
	})
	t.Run("searching pages through every instance with continuation tokens", func(t *testing.T) {
		seen := map[string]bool{}
		path := ctxPath + "/contexts/search?limit=2"
		for pages := 0; path != ""; pages++ {
			if pages > 5 {
				t.Fatal("too many pages")
			}
			res := srv.Do(t, http.MethodPost, path, map[string]any{})
			apptest.WantStatus(t, res, http.StatusOK)
			var got struct {
				Items []struct {
					Context string `json:"context"`
				} `json:"items"`
				TotalCount int                          `json:"totalCount"`
				Links      map[string]map[string]string `json:"_links"`
			}
			res.JSON(t, &got)
			if got.TotalCount != 5 {
				t.Errorf("totalCount %d, want 5 (u1, u2, u3 and two multi-kind)", got.TotalCount)
			}
			for _, it := range got.Items {
				seen[it.Context] = true
			}
			path = strings.TrimPrefix(got.Links["next"]["href"], "")
		}
		if len(seen) != 5 {
			t.Errorf("saw %d instances, want 5", len(seen))
		}
	})
	t.Run("an instance reads by id and deletes with an audit entry", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, ctxPath+"/context-instances/search?filter=applicationId:shop-api&limit=1", nil)
		apptest.WantStatus(t, res, http.StatusOK)
		var got struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
		}
		res.JSON(t, &got)
		if len(got.Items) != 1 || got.Items[0].ID == "" {
			t.Fatalf("want one instance with an id: %s", res.Body)
		}
		id := got.Items[0].ID
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, ctxPath+"/context-instances/"+id, nil), http.StatusOK)
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, ctxPath+"/context-instances/"+id, nil), http.StatusNoContent)
		apptest.WantError(t, srv.Do(t, http.MethodGet, ctxPath+"/context-instances/"+id, nil), http.StatusNotFound, "not_found", id)
		apptest.WantError(t, srv.Do(t, http.MethodDelete, ctxPath+"/context-instances/"+id, nil), http.StatusNotFound, "not_found")
		res = srv.Do(t, http.MethodGet, apptest.API+"/auditlog?limit=1", nil)
		if !strings.Contains(res.String(), "deleted the context instance") {
			t.Errorf("want an audit entry of the delete: %s", res.Body)
		}
	})
	t.Run("totalCount follows creations and deletes, in all and by application", func(t *testing.T) {
		for _, q := range []string{"", "?filter=applicationId:shop-api"} {
			res := srv.Do(t, http.MethodPost, ctxPath+"/contexts/search"+q, nil)
			if got := res.Map(t)["totalCount"]; got != float64(4) {
				t.Errorf("search%s: totalCount %v, want 4 after one of 5 was deleted", q, got)
			}
		}
		res := srv.Do(t, http.MethodPost, ctxPath+"/contexts/search?filter=applicationId:other", nil)
		if got := res.Map(t)["totalCount"]; got != float64(0) {
			t.Errorf("totalCount %v for an application that sent nothing, want 0", got)
		}
	})
}

// evalCounts reads a flag's evaluation counters of this hour from the table.
func evalCounts(t testing.TB, srv *apptest.Server, e apptest.SDKEnv, flagKey string, now time.Time) map[string]int64 {
	t.Helper()
	it, err := srv.Table.Get(t.Context(), store.FlagEvalKey(e.Project, e.Env, flagKey, now.UTC().Format("2006010215")))
	if err != nil {
		t.Fatalf("read counters of %s: %v", flagKey, err)
	}
	var doc ingest.FlagEvals
	if err := json.Unmarshal(it.Data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Counts
}

func TestEventIngestionRefuses(t *testing.T) {
	srv := apptest.New(t)
	e := apptest.NewSDKEnv(t, srv, "refuse")
	now := time.Now()
	good := apptest.GoSDKPayload(now, "u1")
	tests := []struct {
		name, path, auth, body string
		status                 int
		code                   string
	}{
		{"a wrong SDK key gets 401", "/bulk", "sdk-00000000-0000-0000-0000-000000000000", good, http.StatusUnauthorized, "unauthorized"},
		{"a missing SDK key gets 401", "/bulk", "", good, http.StatusUnauthorized, "unauthorized"},
		{"a mobile key on the server route gets 401", "/bulk", e.MobileKey, good, http.StatusUnauthorized, "unauthorized"},
		{"an unknown client-side id gets 401", "/events/bulk/0123456789abcdef", "", good, http.StatusUnauthorized, "unauthorized"},
		{"a body that is not JSON gets 400", "/bulk", e.SDKKey, "[{", http.StatusBadRequest, "invalid_request"},
		{"a body that is not an array gets 400", "/bulk", e.SDKKey, `{"kind":"index"}`, http.StatusBadRequest, "invalid_request"},
		{"a body over 5 MiB gets 413", "/bulk", e.SDKKey, "[" + strings.Repeat(" ", ingest.MaxBody) + "]", http.StatusRequestEntityTooLarge, "request_entity_too_large"},
		{"the mobile route takes the mobile key", "/mobile/events/bulk", "api_key " + e.MobileKey, good, http.StatusAccepted, ""},
		{"the client-side route takes the client-side id", "/events/bulk/" + e.ClientID, "", good, http.StatusAccepted, ""},
		{"a mobile diagnostic event is accepted with the mobile key", "/mobile/events/diagnostic", "api_key " + e.MobileKey, `{"kind":"diagnostic-init","sdk":{"name":"ios-client-sdk","version":"9.0.0"}}`, http.StatusAccepted, ""},
		{"a client-side diagnostic event is accepted with the client-side id", "/events/diagnostic/" + e.ClientID, "", `{"kind":"diagnostic-init","sdk":{"name":"js-client-sdk","version":"3.0.0"}}`, http.StatusAccepted, ""},
		{"a diagnostic event with the SDK key on the mobile route gets 401", "/mobile/events/diagnostic", e.SDKKey, `{"kind":"diagnostic"}`, http.StatusUnauthorized, "unauthorized"},
		{"a diagnostic event is accepted", "/diagnostic", e.SDKKey, `{"kind":"diagnostic-init","id":{"diagnosticId":"d1"},"sdk":{"name":"go-server-sdk","version":"7.14.6"},"configuration":{"streamingDisabled":true}}`, http.StatusAccepted, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := apptest.PostEvents(t, srv, tc.path, tc.auth, tc.body)
			if tc.code == "" {
				apptest.WantStatus(t, res, tc.status)
				return
			}
			apptest.WantError(t, res, tc.status, tc.code)
		})
	}
	t.Run("diagnostic events record each SDK under its type", func(t *testing.T) {
		for _, want := range []string{"#mobile#ios-client-sdk#9.0.0", "#browser#js-client-sdk#3.0.0"} {
			if _, err := srv.Table.Get(t.Context(), store.Key{PK: store.SDKSeenPK, SK: e.ClientID + want}); err != nil {
				t.Errorf("SDK %s not recorded: %v", want, err)
			}
		}
	})
	t.Run("malformed events are skipped and the good ones of the same payload kept", func(t *testing.T) {
		body := `[{"kind":"index"},"nonsense",{"kind":"identify","creationDate":1,"context":{"kind":"user","key":""}},{"kind":"warp"},` +
			`{"kind":"identify","creationDate":1,"context":{"kind":"user","key":"kept"}}]`
		apptest.WantStatus(t, apptest.PostEvents(t, srv, "/bulk", e.SDKKey, body), http.StatusAccepted)
		res := srv.Do(t, http.MethodGet, apptest.EnvPath(e.Project, e.Env)+"/contexts/user/kept", nil)
		apptest.WantStatus(t, res, http.StatusOK)
		if res.Map(t)["totalCount"] != float64(1) {
			t.Errorf("want the good event kept: %s", res.Body)
		}
	})
	t.Run("a reset SDK key stops working at once", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodPost, apptest.EnvPath(e.Project, e.Env)+"/apiKey", nil), http.StatusOK)
		apptest.WantError(t, apptest.PostEvents(t, srv, "/bulk", e.SDKKey, good), http.StatusUnauthorized, "unauthorized")
		fresh := apptest.GetEnv(t, srv, e.Project, e.Env)["apiKey"].(string)
		apptest.WantStatus(t, apptest.PostEvents(t, srv, "/bulk", fresh, good), http.StatusAccepted)
	})
}
