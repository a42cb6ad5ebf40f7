package flagimportapi_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// The Unleash tier: a real Unleash server (the npm package unleash-server
// on PostgreSQL), started by localstack/with-unleash.sh (make
// test-flagimports), which sets these variables.
const (
	envUnleashURL     = "FLAGPLANE_UNLEASH_URL"
	envUnleashToken   = "FLAGPLANE_UNLEASH_TOKEN"
	envRequireUnleash = "FLAGPLANE_REQUIRE_UNLEASH"
)

// unleash talks to the admin API of the tier's Unleash server.
type unleash struct {
	url, token string
}

func unleashServer(t *testing.T) unleash {
	t.Helper()
	u := unleash{url: os.Getenv(envUnleashURL), token: os.Getenv(envUnleashToken)}
	if u.url == "" || u.token == "" {
		if os.Getenv(envRequireUnleash) == "1" {
			t.Fatalf("%s=1 but %s or %s is not set: the Unleash server did not start", envRequireUnleash, envUnleashURL, envUnleashToken)
		}
		t.Skipf("no Unleash server (%s unset); make test-flagimports starts one", envUnleashURL)
	}
	return u
}

// call sends a request to Unleash's admin API and decodes a 2xx answer into out.
func (u unleash) call(t *testing.T, method, path string, body, out any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, u.url+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", u.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("Unleash %s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	if res.StatusCode/100 != 2 {
		t.Fatalf("Unleash %s %s: %d %s", method, path, res.StatusCode, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("Unleash %s %s: decode %s: %v", method, path, data, err)
		}
	}
}

func (u unleash) feature(t *testing.T, name, typ, description string) {
	t.Helper()
	u.call(t, http.MethodPost, "/api/admin/projects/default/features", map[string]any{"name": name, "type": typ, "description": description}, nil)
}

func (u unleash) strategy(t *testing.T, feature, env string, s map[string]any) {
	t.Helper()
	u.call(t, http.MethodPost, fmt.Sprintf("/api/admin/projects/default/features/%s/environments/%s/strategies", feature, env), s, nil)
}

func (u unleash) enable(t *testing.T, feature, env string) {
	t.Helper()
	u.call(t, http.MethodPost, fmt.Sprintf("/api/admin/projects/default/features/%s/environments/%s/on", feature, env), nil, nil)
}

// enabled asks Unleash's playground whether feature is enabled for a context.
func (u unleash) enabled(t *testing.T, feature, env string, ctx map[string]any) bool {
	t.Helper()
	var out struct {
		Features []struct {
			Name      string `json:"name"`
			IsEnabled bool   `json:"isEnabled"`
		} `json:"features"`
	}
	u.call(t, http.MethodPost, "/api/admin/playground", map[string]any{"environment": env, "projects": "*", "context": ctx}, &out)
	for _, f := range out.Features {
		if f.Name == feature {
			return f.IsEnabled
		}
	}
	t.Fatalf("the playground does not know feature %s", feature)
	return false
}

// evaluate asks flagplane what a flag serves a context.
func evaluate(t *testing.T, srv *apptest.Server, project, env, flagKey string, ctx map[string]any) bool {
	t.Helper()
	res := srv.Do(t, http.MethodPost, "/api/v2/projects/"+project+"/environments/"+env+"/flags/evaluate", ctx)
	if res.Status != http.StatusOK {
		t.Fatalf("evaluate: %d %s", res.Status, res.Body)
	}
	var out struct {
		Items []struct {
			Key   string          `json:"key"`
			Value json.RawMessage `json:"_value"`
		} `json:"items"`
	}
	res.JSON(t, &out)
	for _, it := range out.Items {
		if it.Key == flagKey {
			return string(it.Value) == "true"
		}
	}
	t.Fatalf("flagplane did not evaluate flag %s: %s", flagKey, res.Body)
	return false
}

func TestImportFromARealUnleashServer(t *testing.T) {
	u := unleashServer(t)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	sfx := hex.EncodeToString(b) // Unleash keeps its features across tests of one run
	checkout, rollout, kill, variants := "checkout-"+sfx, "rollout-"+sfx, "kill-"+sfx, "variants-"+sfx

	u.feature(t, checkout, "release", "The new checkout")
	u.strategy(t, checkout, "production", map[string]any{"name": "default", "constraints": []any{
		map[string]any{"contextName": "country", "operator": "IN", "values": []string{"NO", "SE"}},
		map[string]any{"contextName": "plan", "operator": "NOT_IN", "values": []string{"free"}},
	}})
	u.strategy(t, checkout, "production", map[string]any{"name": "default", "constraints": []any{
		map[string]any{"contextName": "userId", "operator": "IN", "values": []string{"alice"}},
	}})
	u.strategy(t, checkout, "production", map[string]any{"name": "flexibleRollout", "parameters": map[string]any{"rollout": "100", "stickiness": "default", "groupId": checkout},
		"constraints": []any{map[string]any{"contextName": "email", "operator": "STR_ENDS_WITH", "values": []string{"@example.com"}}}})
	u.enable(t, checkout, "production")
	u.strategy(t, checkout, "development", map[string]any{"name": "flexibleRollout", "parameters": map[string]any{"rollout": "100", "stickiness": "default", "groupId": checkout}})
	u.enable(t, checkout, "development")
	u.call(t, http.MethodPost, "/api/admin/features/"+checkout+"/tags", map[string]any{"type": "simple", "value": "checkout"}, nil)

	u.feature(t, rollout, "experiment", "")
	u.strategy(t, rollout, "production", map[string]any{"name": "flexibleRollout", "parameters": map[string]any{"rollout": "30", "stickiness": "sessionId", "groupId": rollout},
		"constraints": []any{map[string]any{"contextName": "country", "operator": "IN", "values": []string{"NO"}}}})
	u.enable(t, rollout, "production")

	u.feature(t, kill, "kill-switch", "Turns payments off")

	u.feature(t, variants, "release", "")
	u.strategy(t, variants, "production", map[string]any{"name": "flexibleRollout", "parameters": map[string]any{"rollout": "100", "stickiness": "default", "groupId": variants},
		"variants": []any{map[string]any{"name": "blue", "weight": 1000, "weightType": "variable", "stickiness": "default"}}})

	dst := apptest.New(t, apptest.WithWebhookDelivery())
	dst.MustCreateProject(t, "dst")
	c := createConfig(t, dst, "dst", "unleash", map[string]any{"name": "Unleash", "config": map[string]any{
		"baseUrl": u.url, "apiToken": u.token, "ldTag": "from-unleash",
		"environmentMap": map[string]string{"production": "production", "development": "test"}}})
	got := trigger(t, dst, c)

	t.Run("the run is partial: every feature imported but the one with variants, which is reported", func(t *testing.T) {
		if got.Status.Status != "partial" || got.Status.LastImport == "" || got.Status.LastError == "" {
			t.Fatalf("_status %+v, want partial with lastImport and lastError", got.Status)
		}
		var found bool
		for _, e := range got.Status.Errors {
			if strings.Contains(e.Message, variants) {
				found = e.StatusCode == http.StatusUnprocessableEntity && strings.Contains(e.Message, "variants")
			}
			if strings.Contains(e.Message, checkout) || strings.Contains(e.Message, rollout) || strings.Contains(e.Message, kill+"\"") {
				t.Errorf("unexpected error %+v", e)
			}
		}
		if !found {
			t.Errorf("errors %+v do not report %s's variants with a 422", got.Status.Errors, variants)
		}
		keys := flagKeys(t, dst, "dst")
		for _, k := range []string{checkout, rollout, kill} {
			if !slices.Contains(keys, k) {
				t.Errorf("flag %s was not imported (flags %v)", k, keys)
			}
		}
		if slices.Contains(keys, variants) {
			t.Errorf("flag %s was imported though its variants cannot be", variants)
		}
	})
	t.Run("an imported feature is a boolean flag with its description, type and tags", func(t *testing.T) {
		f := getFlag(t, dst, "dst", checkout)
		if f.Kind != "boolean" || f.Description != "The new checkout" || !f.Temporary || !slices.Equal(f.Tags, []string{"checkout", "from-unleash"}) {
			t.Errorf("flag %+v", f)
		}
		if k := getFlag(t, dst, "dst", kill); k.Temporary || k.Environments["production"].On || k.Environments["test"].On {
			t.Errorf("kill switch %+v: want permanent and off everywhere", k)
		}
	})
	t.Run("flagplane serves what Unleash's playground answers, context by context", func(t *testing.T) {
		contexts := []struct {
			unleash, flagplane map[string]any
		}{
			{map[string]any{"userId": "alice", "properties": map[string]any{"country": "DE"}}, map[string]any{"kind": "user", "key": "alice", "country": "DE"}},
			{map[string]any{"userId": "bob", "properties": map[string]any{"country": "NO", "plan": "pro"}}, map[string]any{"kind": "user", "key": "bob", "country": "NO", "plan": "pro"}},
			{map[string]any{"userId": "bob", "properties": map[string]any{"country": "NO", "plan": "free"}}, map[string]any{"kind": "user", "key": "bob", "country": "NO", "plan": "free"}},
			{map[string]any{"userId": "carol", "properties": map[string]any{"country": "DE", "email": "carol@example.com"}},
				map[string]any{"kind": "user", "key": "carol", "country": "DE", "email": "carol@example.com"}},
			{map[string]any{"userId": "dave", "properties": map[string]any{"country": "DE"}}, map[string]any{"kind": "user", "key": "dave", "country": "DE"}},
		}
		served := map[bool]int{}
		for _, env := range [][2]string{{"production", "production"}, {"development", "test"}} {
			for _, cx := range contexts {
				cx.unleash["appName"] = "flagplane-test"
				want := u.enabled(t, checkout, env[0], cx.unleash)
				served[want]++
				if got := evaluate(t, dst, "dst", env[1], checkout, cx.flagplane); got != want {
					t.Errorf("%s in %s for %v: flagplane serves %v, Unleash %v", checkout, env[1], cx.flagplane, got, want)
				}
				if want := u.enabled(t, kill, env[0], cx.unleash); evaluate(t, dst, "dst", env[1], kill, cx.flagplane) != want {
					t.Errorf("%s in %s for %v differs from Unleash (%v)", kill, env[1], cx.flagplane, want)
				}
			}
		}
		if served[true] == 0 || served[false] == 0 {
			t.Errorf("the contexts got %v from Unleash: the comparison needs both answers", served)
		}
	})
	t.Run("a gradual rollout becomes a percentage rollout of the same share, by the same stickiness", func(t *testing.T) {
		var rule struct {
			Clauses []struct {
				Attribute string   `json:"attribute"`
				Op        string   `json:"op"`
				Values    []string `json:"values"`
			} `json:"clauses"`
			Rollout struct {
				BucketBy   string `json:"bucketBy"`
				Variations []struct {
					Variation int `json:"variation"`
					Weight    int `json:"weight"`
				} `json:"variations"`
			} `json:"rollout"`
		}
		prod := getFlag(t, dst, "dst", rollout).Environments["production"]
		if len(prod.Rules) != 1 || !prod.On {
			t.Fatalf("production %+v, want on with one rule", prod)
		}
		if err := json.Unmarshal(prod.Rules[0], &rule); err != nil {
			t.Fatal(err)
		}
		if len(rule.Clauses) != 1 || rule.Clauses[0].Attribute != "country" || rule.Rollout.BucketBy != "sessionId" ||
			len(rule.Rollout.Variations) != 2 || rule.Rollout.Variations[0].Weight != 30000 || rule.Rollout.Variations[1].Weight != 70000 {
			t.Errorf("rule %s", prod.Rules[0])
		}
	})
	t.Run("a rerun changes no flag", func(t *testing.T) {
		before := map[string]int{}
		for _, k := range []string{checkout, rollout, kill} {
			before[k] = getFlag(t, dst, "dst", k).Version
		}
		trigger(t, dst, c)
		for k, v := range before {
			if got := getFlag(t, dst, "dst", k).Version; got != v {
				t.Errorf("flag %s at version %d after the rerun, want %d", k, got, v)
			}
		}
	})
	t.Run("a feature turned off in Unleash is turned off by the next run", func(t *testing.T) {
		u.call(t, http.MethodPost, fmt.Sprintf("/api/admin/projects/default/features/%s/environments/production/off", checkout), nil, nil)
		trigger(t, dst, c)
		if getFlag(t, dst, "dst", checkout).Environments["production"].On {
			t.Error("the flag is still on in production")
		}
	})
}
