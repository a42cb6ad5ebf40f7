package aiconfigapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/store"
)

func TestAIConfigs(t *testing.T) {
	srv := apptest.New(t)
	apptest.AIProject(t, srv, "ai")

	t.Run("a created AI Config shows its default variation at version 1 with the model config's latest version", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, apptest.AIConfigPath("ai", "chat"), nil)
		apptest.WantStatus(t, res, http.StatusOK)
		m := res.Map(t)
		vars := m["variations"].([]any)
		if m["mode"] != "completion" || m["version"] != float64(1) || m["_access"] == nil || len(vars) != 1 {
			t.Fatalf("want mode completion, version 1, _access and one variation: %s", res.Body)
		}
		v := vars[0].(map[string]any)
		if v["key"] != "short" || v["version"] != float64(1) || v["modelConfigKey"] != "gpt" || v["modelConfigVersion"] != float64(1) || v["state"] != "published" {
			t.Errorf("want short at version 1 on gpt version 1, published: %v", v)
		}
	})
	t.Run("a second AI Config with the same key is a conflict", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPost, apptest.AIConfigsPath("ai"), map[string]any{"key": "chat", "name": "Again"}), http.StatusConflict, "conflict", "chat")
	})
	t.Run("bad input names the field and stores nothing", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPost, apptest.AIConfigsPath("ai"), map[string]any{"key": "x", "name": "X", "mode": "chatty"}), http.StatusBadRequest, "invalid_request", "mode")
		apptest.WantError(t, srv.Do(t, http.MethodPost, apptest.AIConfigsPath("ai"), map[string]any{"key": "y", "name": "Y", "defaultVariation": map[string]any{"key": "v", "name": "V", "modelConfigKey": "nope"}}),
			http.StatusBadRequest, "invalid_request", "defaultVariation.modelConfigKey")
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, apptest.AIConfigPath("ai", "y"), nil), http.StatusNotFound)
	})
	t.Run("the list holds the AI Configs of the project with their variations", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodPost, apptest.AIConfigsPath("ai"), map[string]any{"key": "agent", "name": "Agent", "mode": "agent"}), http.StatusCreated)
		res := srv.Do(t, http.MethodGet, apptest.AIConfigsPath("ai")+"?sort=-key&limit=1", nil)
		apptest.WantStatus(t, res, http.StatusOK)
		if got := apptest.ItemKeys(t, res); len(got) != 1 || got[0] != "chat" || res.Map(t)["totalCount"] != float64(2) {
			t.Errorf("want chat first of 2: %s", res.Body)
		}
	})
	t.Run("the list sorts by the fields given, by key without one, and refuses a field it does not have", func(t *testing.T) {
		for _, c := range []struct {
			query string
			want  []string
		}{{"", []string{"agent", "chat"}}, {"?sort=-name", []string{"chat", "agent"}}} {
			res := srv.Do(t, http.MethodGet, apptest.AIConfigsPath("ai")+c.query, nil)
			apptest.WantStatus(t, res, http.StatusOK)
			if got := apptest.ItemKeys(t, res); !slices.Equal(got, c.want) {
				t.Errorf("%q listed %v, want %v", c.query, got, c.want)
			}
		}
		apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.AIConfigsPath("ai")+"?sort=owner", nil), http.StatusBadRequest, "invalid_request", "owner")
	})
	t.Run("a patch of an AI Config replaces the fields given, audited", func(t *testing.T) {
		res := srv.Do(t, http.MethodPatch, apptest.AIConfigPath("ai", "chat"), map[string]any{"name": "Chat bot", "description": "talks"})
		apptest.WantStatus(t, res, http.StatusOK)
		if m := res.Map(t); m["name"] != "Chat bot" || m["description"] != "talks" || m["version"] != float64(2) || len(m["variations"].([]any)) != 1 {
			t.Errorf("want the new name at version 2 with its variation: %s", res.Body)
		}
		if log := srv.Do(t, http.MethodGet, apptest.API+"/auditlog?limit=1", nil); !strings.Contains(log.String(), "updated the AI Config") {
			t.Errorf("want an audit entry: %s", log.Body)
		}
		apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.AIConfigPath("ai", "chat"), map[string]any{"name": ""}), http.StatusBadRequest, "invalid_request", "name")
	})
	t.Run("an unknown project or AI Config is not found", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.AIConfigsPath("nope"), nil), http.StatusNotFound, "not_found")
		apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.AIConfigPath("ai", "nope"), nil), http.StatusNotFound, "not_found")
		apptest.WantError(t, srv.Do(t, http.MethodPost, apptest.AIConfigPath("ai", "nope")+"/variations", map[string]any{"key": "v", "name": "V"}), http.StatusNotFound, "not_found")
	})
}

func TestAIConfigVariations(t *testing.T) {
	srv := apptest.New(t)
	apptest.AIProject(t, srv, "ai")
	short := apptest.AIVariationPath("ai", "chat", "short")

	t.Run("a variation is created at version 1 and a second with the same key is a conflict", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, apptest.AIConfigPath("ai", "chat")+"/variations", map[string]any{"key": "long", "name": "Long", "model": map[string]any{"name": "x"}})
		apptest.WantStatus(t, res, http.StatusCreated)
		if m := res.Map(t); m["version"] != float64(1) || m["_id"] == "" || m["_links"] == nil {
			t.Errorf("want version 1 with _id and _links: %s", res.Body)
		}
		apptest.WantError(t, srv.Do(t, http.MethodPost, apptest.AIConfigPath("ai", "chat")+"/variations", map[string]any{"key": "long", "name": "Long"}), http.StatusConflict, "conflict", "long")
	})
	t.Run("each edit is a new version; the variation answer shows the latest first and keeps the older", func(t *testing.T) {
		res := srv.Do(t, http.MethodPatch, short, map[string]any{"name": "Shorter", "comment": "tighter"})
		apptest.WantStatus(t, res, http.StatusOK)
		if m := res.Map(t); m["version"] != float64(2) || m["name"] != "Shorter" || m["comment"] != "tighter" || m["modelConfigKey"] != "gpt" {
			t.Errorf("want version 2 named Shorter, still on gpt: %s", res.Body)
		}
		got := srv.Do(t, http.MethodGet, short, nil)
		apptest.WantStatus(t, got, http.StatusOK)
		var list struct {
			Items []struct {
				Version   int64  `json:"version"`
				Name      string `json:"name"`
				CreatedAt int64  `json:"createdAt"`
			} `json:"items"`
			TotalCount int `json:"totalCount"`
		}
		got.JSON(t, &list)
		if list.TotalCount != 2 || list.Items[0].Version != 2 || list.Items[0].Name != "Shorter" || list.Items[1].Name != "Short" || list.Items[0].CreatedAt == 0 {
			t.Errorf("want versions 2 (Shorter) then 1 (Short): %s", got.Body)
		}
		cfg := srv.Do(t, http.MethodGet, apptest.AIConfigPath("ai", "chat"), nil).String()
		if !strings.Contains(cfg, `"name":"Shorter"`) || strings.Contains(cfg, `"name":"Short"`) {
			t.Errorf("the AI Config should show only the latest version: %s", cfg)
		}
	})
	t.Run("state archives and publishes, with the time of each", func(t *testing.T) {
		m := srv.Do(t, http.MethodPatch, short, map[string]any{"state": "archived"}).Map(t)
		if m["state"] != "archived" || m["_archivedAt"] == nil {
			t.Errorf("want archived with _archivedAt: %v", m)
		}
		m = srv.Do(t, http.MethodPatch, short, map[string]any{"published": true}).Map(t)
		if m["state"] != "published" || m["_publishedAt"] == nil {
			t.Errorf("want published: %v", m)
		}
		apptest.WantError(t, srv.Do(t, http.MethodPatch, short, map[string]any{"state": "draft"}), http.StatusBadRequest, "invalid_request", "state")
		apptest.WantError(t, srv.Do(t, http.MethodPatch, short, map[string]any{"state": "archived", "published": true}), http.StatusBadRequest, "invalid_request", "published")
	})
	t.Run("a new model config key without a version takes that model config's latest", func(t *testing.T) {
		m := srv.Do(t, http.MethodPatch, short, map[string]any{"modelConfigKey": "claude"}).Map(t)
		if m["modelConfigKey"] != "claude" || m["modelConfigVersion"] != float64(1) {
			t.Errorf("want claude version 1: %v", m)
		}
	})
	t.Run("modelConfigVersion must exist and needs a model config key", func(t *testing.T) {
		before := srv.Do(t, http.MethodGet, short, nil).String()
		apptest.WantError(t, srv.Do(t, http.MethodPatch, short, map[string]any{"modelConfigVersion": 7}), http.StatusBadRequest, "invalid_request", "modelConfigVersion", "claude")
		apptest.WantError(t, srv.Do(t, http.MethodPatch, short, map[string]any{"modelConfigVersion": 0}), http.StatusBadRequest, "invalid_request", "modelConfigVersion")
		apptest.WantError(t, srv.Do(t, http.MethodPatch, short, map[string]any{"modelConfigKey": "nope"}), http.StatusBadRequest, "invalid_request", "modelConfigKey")
		long := apptest.AIVariationPath("ai", "chat", "long")
		apptest.WantError(t, srv.Do(t, http.MethodPatch, long, map[string]any{"modelConfigVersion": 1}), http.StatusBadRequest, "invalid_request", "modelConfigKey")
		m := srv.Do(t, http.MethodPatch, long, map[string]any{"modelConfigKey": "gpt", "modelConfigVersion": 1}).Map(t)
		if m["modelConfigKey"] != "gpt" || m["modelConfigVersion"] != float64(1) || m["version"] != float64(2) {
			t.Errorf("want gpt version 1 at variation version 2: %v", m)
		}
		if after := srv.Do(t, http.MethodGet, short, nil).String(); after != before {
			t.Errorf("refused patches changed the variation:\n%s\n%s", before, after)
		}
	})
	t.Run("a model config in use by a variation cannot be deleted; one no longer in use can", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodDelete, apptest.AIModelsPath("ai")+"/claude", nil), http.StatusBadRequest, "invalid_request", "short", "chat")
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, short, map[string]any{"modelConfigKey": "gpt"}), http.StatusOK)
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, apptest.AIModelsPath("ai")+"/claude", nil), http.StatusNoContent)
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, apptest.AIModelsPath("ai")+"/claude", nil), http.StatusNotFound)
	})
	t.Run("a deleted variation is gone with every version", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, apptest.AIVariationPath("ai", "chat", "long"), nil), http.StatusNoContent)
		apptest.WantError(t, srv.Do(t, http.MethodGet, apptest.AIVariationPath("ai", "chat", "long"), nil), http.StatusNotFound, "not_found")
		apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.AIVariationPath("ai", "chat", "long"), map[string]any{"name": "x"}), http.StatusNotFound, "not_found")
	})
	t.Run("a deleted AI Config takes its variations with it", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, apptest.AIConfigPath("ai", "chat"), nil), http.StatusNoContent)
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, apptest.AIConfigPath("ai", "chat"), nil), http.StatusNotFound)
		apptest.WantStatus(t, srv.Do(t, http.MethodPost, apptest.AIConfigsPath("ai"), map[string]any{"key": "chat", "name": "Chat again"}), http.StatusCreated)
		if m := srv.Do(t, http.MethodGet, apptest.AIConfigPath("ai", "chat"), nil).Map(t); len(m["variations"].([]any)) != 0 {
			t.Errorf("old variations came back: %v", m)
		}
	})
}

func TestAIConfigVariationReview(t *testing.T) {
	srv := apptest.New(t)
	apptest.AIProject(t, srv, "ai")
	apptest.WantStatus(t, srv.Do(t, http.MethodPost, apptest.EnvsPath("ai"), map[string]any{"key": "production", "name": "Production", "color": "336699"}), http.StatusCreated)
	// No API sets resource approval settings yet; the stored environment is edited directly.
	k := store.EnvironmentKey("ai", "production")
	it, err := srv.Table.Get(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	var e environment.Environment
	if err := json.Unmarshal(it.Data, &e); err != nil {
		t.Fatal(err)
	}
	e.ResourceApprovalSettings = map[string]environment.ApprovalSettings{"aiconfig": {Required: true}}
	if it.Data, err = json.Marshal(&e); err != nil {
		t.Fatal(err)
	}
	if err := srv.Table.Put(context.Background(), it, store.Cond{}); err != nil {
		t.Fatal(err)
	}

	t.Run("an environment requiring review of AI Configs refuses the variation edit rather than bypass it", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.AIVariationPath("ai", "chat", "short"), map[string]any{"name": "x"}), http.StatusForbidden, "forbidden", "production", "approval request")
		if m := srv.Do(t, http.MethodGet, apptest.AIVariationPath("ai", "chat", "short"), nil).Map(t); m["totalCount"] != float64(1) {
			t.Errorf("a new version was stored: %v", m)
		}
	})
}

func TestAIModelConfigs(t *testing.T) {
	srv := apptest.New(t)
	apptest.AIProject(t, srv, "ai")

	t.Run("the list holds the project's model configs with _access", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, apptest.AIModelsPath("ai"), nil)
		apptest.WantStatus(t, res, http.StatusOK)
		var got []map[string]any
		res.JSON(t, &got)
		if len(got) != 2 || got[0]["key"] != "claude" || got[1]["key"] != "gpt" || got[0]["_access"] == nil || got[0]["version"] != float64(1) {
			t.Errorf("want claude and gpt at version 1 with _access: %s", res.Body)
		}
	})
	t.Run("one model config is read by key", func(t *testing.T) {
		m := srv.Do(t, http.MethodGet, apptest.AIModelsPath("ai")+"/gpt", nil).Map(t)
		if m["id"] != "gpt-model" || m["global"] != false || m["isRestricted"] != false {
			t.Errorf("want gpt-model, not global, not restricted: %v", m)
		}
	})
	t.Run("a second model config with the same key is a conflict, a missing id is refused", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPost, apptest.AIModelsPath("ai"), map[string]any{"key": "gpt", "name": "again", "id": "x"}), http.StatusConflict, "conflict", "gpt")
		apptest.WantError(t, srv.Do(t, http.MethodPost, apptest.AIModelsPath("ai"), map[string]any{"key": "z", "name": "Z"}), http.StatusBadRequest, "invalid_request", "id")
		apptest.WantError(t, srv.Do(t, http.MethodPost, apptest.AIModelsPath("ai"), map[string]any{"key": "z", "name": "Z", "id": "z", "costPerInputToken": -1}), http.StatusBadRequest, "invalid_request", "costPerInputToken")
	})
}
