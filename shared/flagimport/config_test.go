package flagimport

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/patch"
)

func configOf(tb testing.TB, s string) Config {
	tb.Helper()
	var c Config
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		tb.Fatal(err)
	}
	return c
}

func TestValidateKeepsEachSourcesSettings(t *testing.T) {
	t.Run("values are trimmed, a base URL loses its trailing slash and empty optional settings are dropped", func(t *testing.T) {
		got, err := validate(Unleash, configOf(t, `{"baseUrl":" http://u.example/ ","apiToken":"t","unleashProject":"","ldTag":null}`))
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(got); string(b) != `{"apiToken":"t","baseUrl":"http://u.example"}` {
			t.Errorf("config %s", b)
		}
	})
	t.Run("an environment map is kept as an object of strings", func(t *testing.T) {
		got, err := validate(LaunchDarkly, configOf(t, `{"baseUrl":"https://x","apiKey":"k","sourceProjectKey":"p","environmentMap":{"dev":"test"}}`))
		if err != nil {
			t.Fatal(err)
		}
		if m := got.EnvironmentMap(); m["dev"] != "test" || len(m) != 1 {
			t.Errorf("map %v", m)
		}
	})
	for _, tc := range []struct {
		name, integration, config, want string
	}{
		{"an environment map to an invalid key is refused", LaunchDarkly, `{"baseUrl":"https://x","apiKey":"k","sourceProjectKey":"p","environmentMap":{"dev":"no way"}}`, "config.environmentMap.dev"},
		{"a source project key that is no key is refused", LaunchDarkly, `{"baseUrl":"https://x","apiKey":"k","sourceProjectKey":"a b"}`, "config.sourceProjectKey"},
		{"an empty required setting is refused", Unleash, `{"baseUrl":"https://x","apiToken":"  "}`, "config.apiToken"},
		{"an overlong value is refused", Split, `{"workspaceApiKey":"` + strings.Repeat("k", MaxConfigValueLength+1) + `","workspaceId":"w","environmentId":"e"}`, "at most"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := validate(tc.integration, configOf(t, tc.config)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming %q", err, tc.want)
			}
		})
	}
}

func TestSecretsAreMaskedAndKept(t *testing.T) {
	stored := configOf(t, `{"workspaceApiKey":"wk-secret","workspaceId":"w","environmentId":"e","ldApiKey":"api-secret"}`)
	t.Run("every secret of the source system is masked, the rest shown", func(t *testing.T) {
		m := stored.Masked(Split)
		if m.String("workspaceApiKey") != Mask || m.String("ldApiKey") != Mask || m.String("workspaceId") != "w" {
			t.Errorf("masked %v", m)
		}
		if stored.String("workspaceApiKey") != "wk-secret" {
			t.Error("masking changed the stored config")
		}
	})
	t.Run("a secret left at the mask keeps the stored one; a new value replaces it", func(t *testing.T) {
		next := configOf(t, `{"workspaceApiKey":"`+Mask+`","workspaceId":"w2","environmentId":"e","ldApiKey":"api-new"}`)
		keepSecrets(Split, stored, next)
		if next.String("workspaceApiKey") != "wk-secret" || next.String("ldApiKey") != "api-new" {
			t.Errorf("kept %v", next)
		}
	})
	t.Run("a patch's delta shows secrets masked, whether set one by one or with the whole config", func(t *testing.T) {
		p, err := patch.Parse([]byte(`[{"op":"replace","path":"/config/ldApiKey","value":"api-new"},` +
			`{"op":"replace","path":"/config","value":{"workspaceApiKey":"wk-new","workspaceId":"w"}},{"op":"replace","path":"/name","value":"n"}]`))
		if err != nil {
			t.Fatal(err)
		}
		delta := string(maskDelta(Split, p))
		if strings.Contains(delta, "api-new") || strings.Contains(delta, "wk-new") || !strings.Contains(delta, `"workspaceId":"w"`) || !strings.Contains(delta, `"n"`) {
			t.Errorf("delta %s", delta)
		}
	})
}
