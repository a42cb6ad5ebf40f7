package flagimportapi_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// seedSource fills project "src" of a flagplane server, standing in for
// LaunchDarkly, with flags that have variations, per-environment on/off,
// individual and context targets, rules, a rollout and a prerequisite
// (banner needs dark-mode in test).
func seedSource(t *testing.T, src *apptest.Server) {
	t.Helper()
	src.MustCreateProject(t, "src")
	mustOK := func(method, path string, body any) {
		t.Helper()
		res := src.Do(t, method, path, body)
		if res.Status/100 != 2 {
			t.Fatalf("seed %s %s: %d %s", method, path, res.Status, res.Body)
		}
	}
	mustOK(http.MethodPost, "/api/v2/flags/src", map[string]any{"key": "dark-mode", "name": "Dark mode", "description": "The dark theme",
		"tags": []string{"ui"}, "temporary": false})
	mustOK(http.MethodPatch, "/api/v2/flags/src/dark-mode", []map[string]any{
		{"op": "replace", "path": "/environments/production/on", "value": true},
		{"op": "replace", "path": "/environments/production/targets", "value": []any{map[string]any{"values": []string{"alice", "bob"}, "variation": 0}}},
		{"op": "replace", "path": "/environments/production/contextTargets", "value": []any{
			map[string]any{"contextKind": "organization", "values": []string{"acme"}, "variation": 0}}},
		{"op": "replace", "path": "/environments/production/rules", "value": []any{
			map[string]any{"description": "Nordics", "clauses": []any{map[string]any{"attribute": "country", "op": "in", "values": []string{"NO", "SE"}}}, "variation": 0},
			map[string]any{"clauses": []any{map[string]any{"attribute": "plan", "op": "in", "values": []string{"pro"}, "negate": true}},
				"rollout": map[string]any{"bucketBy": "key", "variations": []any{
					map[string]any{"variation": 0, "weight": 30000}, map[string]any{"variation": 1, "weight": 70000}}}},
		}},
		{"op": "replace", "path": "/environments/production/fallthrough", "value": map[string]any{"variation": 1}},
	})
	mustOK(http.MethodPost, "/api/v2/flags/src", map[string]any{"key": "banner", "name": "Banner colour",
		"variations": []any{map[string]any{"value": "red", "name": "Red"}, map[string]any{"value": "green"}, map[string]any{"value": "blue"}},
		"defaults":   map[string]any{"onVariation": 0, "offVariation": 2}})
	mustOK(http.MethodPatch, "/api/v2/flags/src/banner", []map[string]any{
		{"op": "replace", "path": "/environments/test/on", "value": true},
		{"op": "replace", "path": "/environments/test/fallthrough", "value": map[string]any{"variation": 1}},
		{"op": "replace", "path": "/environments/test/prerequisites", "value": []any{map[string]any{"key": "dark-mode", "variation": 0}}},
	})
}

// sameTargeting checks that dst's flag has src's targeting in every environment.
func sameTargeting(t *testing.T, src, dst *apptest.Server, key string) {
	t.Helper()
	want, got := getFlag(t, src, "src", key), getFlag(t, dst, "dst", key)
	if want.Name != got.Name || want.Description != got.Description || want.Kind != got.Kind || want.Temporary != got.Temporary {
		t.Errorf("flag %s: name/description/kind/temporary %q %q %q %v, want %q %q %q %v", key, got.Name, got.Description, got.Kind, got.Temporary,
			want.Name, want.Description, want.Kind, want.Temporary)
	}
	if len(want.Variations) != len(got.Variations) {
		t.Fatalf("flag %s: %d variations, want %d", key, len(got.Variations), len(want.Variations))
	}
	for i := range want.Variations {
		if canon(t, want.Variations[i].Value) != canon(t, got.Variations[i].Value) || want.Variations[i].Name != got.Variations[i].Name {
			t.Errorf("flag %s: variation %d is %s %q, want %s %q", key, i, got.Variations[i].Value, got.Variations[i].Name, want.Variations[i].Value, want.Variations[i].Name)
		}
	}
	if want.Defaults["onVariation"] != got.Defaults["onVariation"] || want.Defaults["offVariation"] != got.Defaults["offVariation"] {
		t.Errorf("flag %s: defaults %v, want %v", key, got.Defaults, want.Defaults)
	}
	for env, w := range want.Environments {
		g := got.Environments[env]
		if w.On != g.On {
			t.Errorf("flag %s in %s: on %v, want %v", key, env, g.On, w.On)
		}
		for _, part := range []struct {
			name      string
			want, got any
		}{
			{"targets", w.Targets, g.Targets}, {"contextTargets", w.ContextTargets, g.ContextTargets}, {"rules", w.Rules, g.Rules},
			{"fallthrough", w.Fallthrough, g.Fallthrough}, {"offVariation", w.OffVariation, g.OffVariation},
			{"prerequisites", w.Prerequisites, g.Prerequisites},
		} {
			if a, b := jsonOf(t, part.want), jsonOf(t, part.got); a != b {
				t.Errorf("flag %s in %s: %s\n got %s\nwant %s", key, env, part.name, b, a)
			}
		}
	}
}

func TestImportFromALaunchDarklyCompatibleAPI(t *testing.T) {
	src := apptest.New(t)
	seedSource(t, src)
	// Webhook delivery allows loopback addresses: the source is on 127.0.0.1.
	dst := apptest.New(t, apptest.WithWebhookDelivery())
	dst.MustCreateProject(t, "dst")
	maintainer := ownerID(t, dst)
	c := createConfig(t, dst, "dst", "launchdarkly", map[string]any{"name": "From the old account", "tags": []string{"migration"},
		"config": map[string]any{"baseUrl": src.URL, "apiKey": src.Token, "sourceProjectKey": "src", "ldTag": "imported", "ldMaintainer": maintainer}})

	t.Run("a new configuration is pending, with its credential masked", func(t *testing.T) {
		if c.Status.Status != "pending" || c.Status.LastImport != "" || len(c.Status.Errors) != 0 {
			t.Errorf("_status %+v, want pending with nothing else", c.Status)
		}
		if c.Config["apiKey"] != "********" || c.Config["baseUrl"] != src.URL {
			t.Errorf("config %v: the apiKey must be masked and the rest shown", c.Config)
		}
	})

	first := trigger(t, dst, c)
	t.Run("the trigger imports every flag and reports complete", func(t *testing.T) {
		if first.Status.Status != "complete" || first.Status.LastImport == "" || len(first.Status.Errors) != 0 {
			t.Fatalf("_status %+v, want complete with a lastImport and no errors", first.Status)
		}
		keys := flagKeys(t, dst, "dst")
		slices.Sort(keys)
		if !slices.Equal(keys, []string{"banner", "dark-mode"}) {
			t.Fatalf("flags %v, want banner and dark-mode", keys)
		}
	})
	t.Run("imported flags have the source's variations, defaults, on/off and targeting in every environment", func(t *testing.T) {
		sameTargeting(t, src, dst, "dark-mode")
		sameTargeting(t, src, dst, "banner")
		prod := getFlag(t, dst, "dst", "dark-mode").Environments["production"]
		if !prod.On || len(prod.Rules) != 2 || len(prod.Targets) != 1 || len(prod.ContextTargets) != 1 {
			t.Errorf("dark-mode in production: %+v, want on with 2 rules, 1 target list and 1 context target list", prod)
		}
		if pre := getFlag(t, dst, "dst", "banner").Environments["test"].Prerequisites; len(pre) != 1 {
			t.Errorf("banner in test: prerequisites %s, want dark-mode's", pre)
		}
	})
	t.Run("imported flags carry the source's tags, the configuration's tag and maintainer", func(t *testing.T) {
		f := getFlag(t, dst, "dst", "dark-mode")
		if !slices.Equal(f.Tags, []string{"imported", "ui"}) || f.MaintainerID != maintainer {
			t.Errorf("tags %v maintainer %q, want [imported ui] and %q", f.Tags, f.MaintainerID, maintainer)
		}
	})

	versions := map[string]int{}
	for _, k := range []string{"dark-mode", "banner"} {
		versions[k] = getFlag(t, dst, "dst", k).Version
	}
	t.Run("a rerun with nothing changed at the source changes no flag", func(t *testing.T) {
		again := trigger(t, dst, c)
		if again.Status.Status != "complete" {
			t.Fatalf("_status %+v, want complete", again.Status)
		}
		for k, v := range versions {
			if got := getFlag(t, dst, "dst", k).Version; got != v {
				t.Errorf("flag %s is at version %d after the rerun, want %d", k, got, v)
			}
		}
		keys := flagKeys(t, dst, "dst")
		if len(keys) != 2 {
			t.Errorf("flags %v after the rerun, want the same two", keys)
		}
		// The rerun's two entries (started, finished) follow the first run's
		// finished entry: no flag entry in between.
		for i, e := range auditEntries(t, dst)[:3] {
			if e["kind"] != "integration" {
				t.Errorf("audit entry %d after the rerun is of kind %v (%v), want integration", i, e["kind"], e["title"])
			}
		}
	})
	t.Run("a rerun after a change at the source updates the flag in place", func(t *testing.T) {
		res := src.Do(t, http.MethodPatch, "/api/v2/flags/src/dark-mode", []map[string]any{
			{"op": "replace", "path": "/environments/production/on", "value": false},
			{"op": "replace", "path": "/environments/test/on", "value": true},
		})
		if res.Status != http.StatusOK {
			t.Fatalf("source patch: %d %s", res.Status, res.Body)
		}
		trigger(t, dst, c)
		sameTargeting(t, src, dst, "dark-mode")
		if got := getFlag(t, dst, "dst", "dark-mode").Version; got != versions["dark-mode"]+1 {
			t.Errorf("dark-mode is at version %d, want %d (one audited update)", got, versions["dark-mode"]+1)
		}
		if got := getFlag(t, dst, "dst", "banner").Version; got != versions["banner"] {
			t.Errorf("banner changed (version %d, want %d) though its source did not", got, versions["banner"])
		}
	})
	t.Run("the flag changes are audited with the configuration named in the comment", func(t *testing.T) {
		found := false
		for _, e := range auditEntries(t, dst) {
			if e["kind"] == "flag" && strings.Contains(e["comment"].(string), c.ID) {
				found = true
			}
		}
		if !found {
			t.Errorf("no flag audit entry names configuration %s", c.ID)
		}
	})
	t.Run("the source's API key appears in no audit entry", func(t *testing.T) {
		res := dst.Do(t, http.MethodGet, "/api/v2/auditlog?limit=20", nil)
		if strings.Contains(string(res.Body), src.Token) {
			t.Error("the audit log holds the source's API key")
		}
		for _, e := range auditEntries(t, dst) {
			id, _ := e["_id"].(string)
			if body := dst.Do(t, http.MethodGet, "/api/v2/auditlog/"+id, nil).Body; strings.Contains(string(body), src.Token) {
				t.Errorf("audit entry %s holds the source's API key", id)
			}
		}
	})
}

func TestImportReportsTheSourcesFailures(t *testing.T) {
	src := apptest.New(t)
	seedSource(t, src)
	dst := apptest.New(t, apptest.WithWebhookDelivery())
	dst.MustCreateProject(t, "dst")
	cases := []struct {
		name       string
		config     map[string]any
		wantStatus int
		wantText   string
	}{
		{"a wrong API key is the source's 401", map[string]any{"baseUrl": src.URL, "apiKey": "api-wrong", "sourceProjectKey": "src"}, 401, "credentials"},
		{"a project the source lacks is its 404", map[string]any{"baseUrl": src.URL, "apiKey": src.Token, "sourceProjectKey": "nope"}, 404, "project"},
		{"a source that does not answer is a 502", map[string]any{"baseUrl": "http://127.0.0.1:1", "apiKey": "x", "sourceProjectKey": "src"}, 502, "could not be reached"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := createConfig(t, dst, "dst", "launchdarkly", map[string]any{"config": tc.config})
			got := trigger(t, dst, c)
			if got.Status.Status != "failed" || got.Status.LastError == "" || len(got.Status.Errors) != 1 {
				t.Fatalf("_status %+v, want failed with one error", got.Status)
			}
			e := got.Status.Errors[0]
			if e.StatusCode != tc.wantStatus || !strings.Contains(e.Message, tc.wantText) || e.IntegrationID != c.ID || e.Timestamp == 0 {
				t.Errorf("error %+v, want status %d naming %q", e, tc.wantStatus, tc.wantText)
			}
			if strings.Contains(e.Message, src.Token) {
				t.Error("the error message holds the API key")
			}
		})
	}
}

func TestImportReadsEveryPageOfTheSource(t *testing.T) {
	src := apptest.New(t)
	src.MustCreateProject(t, "src")
	const n = 105 // past the source's page of 100
	for i := range n {
		if res := src.Do(t, http.MethodPost, "/api/v2/flags/src", map[string]any{"key": fmt.Sprintf("flag-%03d", i), "name": "F"}); res.Status != http.StatusCreated {
			t.Fatalf("seed: %d %s", res.Status, res.Body)
		}
	}
	dst := apptest.New(t, apptest.WithWebhookDelivery())
	dst.MustCreateProject(t, "dst")
	c := createConfig(t, dst, "dst", "launchdarkly", map[string]any{"config": map[string]any{"baseUrl": src.URL, "apiKey": src.Token, "sourceProjectKey": "src"}})
	if got := trigger(t, dst, c); got.Status.Status != "complete" {
		t.Fatalf("_status %+v", got.Status)
	}
	res := dst.Do(t, http.MethodGet, "/api/v2/flags/dst?limit=1", nil)
	var page struct {
		TotalCount int `json:"totalCount"`
	}
	res.JSON(t, &page)
	if page.TotalCount != n {
		t.Errorf("%d flags imported, want %d", page.TotalCount, n)
	}
}

func TestTriggeringNeedsTheRightsToChangeTheProjectsFlags(t *testing.T) {
	src := apptest.New(t)
	src.MustCreateProject(t, "src")
	dst := apptest.New(t, apptest.WithWebhookDelivery())
	dst.MustCreateProject(t, "dst")
	c := createConfig(t, dst, "dst", "launchdarkly", map[string]any{"config": map[string]any{"baseUrl": src.URL, "apiKey": src.Token, "sourceProjectKey": "src"}})
	role := func(key string, resources ...string) {
		res := dst.Do(t, http.MethodPost, "/api/v2/roles", map[string]any{"key": key, "name": key, "policy": []map[string]any{
			{"effect": "allow", "resources": resources, "actions": []string{"*"}}}})
		if res.Status != http.StatusCreated {
			t.Fatalf("role: %d %s", res.Status, res.Body)
		}
	}
	role("imports-only", "proj/dst:integration/*")
	role("imports-and-flags", "proj/dst:integration/*", "proj/dst:env/*:flag/*")
	_, importsOnly := dst.MustCreateToken(t, map[string]any{"name": "imports only", "customRoleIds": []string{"imports-only"}})
	_, importsAndFlags := dst.MustCreateToken(t, map[string]any{"name": "imports and flags", "customRoleIds": []string{"imports-and-flags"}})
	_, reader := dst.MustCreateToken(t, map[string]any{"name": "reader", "role": "reader"})
	t.Run("a reader may not trigger", func(t *testing.T) {
		wantError(t, do(t, dst, http.MethodPost, configPath(c)+"/trigger", nil, "Authorization", reader), http.StatusForbidden, "triggerFlagImport")
	})
	t.Run("a role on the configuration alone may not trigger: the import changes flags", func(t *testing.T) {
		wantError(t, do(t, dst, http.MethodPost, configPath(c)+"/trigger", nil, "Authorization", importsOnly), http.StatusForbidden, "createFlag", "proj/dst:env/*:flag/*")
	})
	t.Run("a role on the configuration and the project's flags may", func(t *testing.T) {
		must(t, dst, http.StatusCreated, http.MethodPost, configPath(c)+"/trigger", nil, "Authorization", importsAndFlags)
	})
}

func TestAnEnvironmentRequiringApprovalsRefusesTheImportsChange(t *testing.T) {
	src := apptest.New(t)
	seedSource(t, src)
	dst := apptest.New(t, apptest.WithWebhookDelivery())
	dst.MustCreateProject(t, "dst")
	if res := dst.Do(t, http.MethodPatch, "/api/v2/projects/dst/environments/production",
		[]map[string]any{{"op": "replace", "path": "/approvalSettings/required", "value": true}}); res.Status != http.StatusOK {
		t.Fatalf("require approvals: %d %s", res.Status, res.Body)
	}
	c := createConfig(t, dst, "dst", "launchdarkly", map[string]any{"config": map[string]any{"baseUrl": src.URL, "apiKey": src.Token, "sourceProjectKey": "src"}})
	got := trigger(t, dst, c)
	if got.Status.Status != "partial" {
		t.Fatalf("_status %+v, want partial", got.Status)
	}
	found := false
	for _, e := range got.Status.Errors {
		if strings.Contains(e.Message, `"dark-mode"`) && e.StatusCode == http.StatusMethodNotAllowed {
			found = true
		}
	}
	if !found {
		t.Errorf("errors %+v: want dark-mode's production change refused with a 405", got.Status.Errors)
	}
	if getFlag(t, dst, "dst", "dark-mode").Environments["production"].On {
		t.Error("dark-mode was turned on in production without an approval")
	}
}
