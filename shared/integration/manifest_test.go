package integration

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/webhook"
)

func mustManifest(tb testing.TB, key string) *Manifest {
	tb.Helper()
	m, err := Lookup(key)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func TestEveryShippedManifestLoadsWithARenderer(t *testing.T) {
	want := []string{"datadog", "generic-webhook", "msteams", "newrelic", "slack"}
	if got := strings.Join(Keys(), ","); got != strings.Join(want, ",") {
		t.Fatalf("manifests %s, want %s", got, strings.Join(want, ","))
	}
	for _, k := range Keys() {
		t.Run(k+" offers the events hook, has a renderer and at least one secret", func(t *testing.T) {
			m := mustManifest(t, k)
			if _, ok := renderers[k]; !ok || !m.Offers(CapabilityEventsHook) {
				t.Errorf("renderer %v, offers %v", ok, m.Capabilities)
			}
			if len(m.secrets) == 0 {
				t.Errorf("no writeOnly (secret) field in %v", m.fields)
			}
		})
	}
}

func TestAManifestThatIsWrongIsRefusedAtLoad(t *testing.T) {
	tests := []struct{ name, raw, want string }{
		{"an unknown top-level field", `{"key":"x","name":"X","configSchema":{"type":"object","properties":{"a":{}}},"colour":1}`, "unknown field"},
		{"a capability flagplane does not run", `{"key":"x","name":"X","capabilities":["approvals"],"configSchema":{"type":"object","properties":{"a":{}}}}`, "approvals"},
		{"a schema that is not an object of properties", `{"key":"x","name":"X","configSchema":{"type":"objekt","properties":{"a":{}}}}`, "configSchema"},
		{"a schema open to fields no manifest names", `{"key":"x","name":"X","configSchema":{"type":"object","properties":{"a":{"type":"string"}}}}`, "additionalProperties"},
		{"a property of no JSON type", `{"key":"x","name":"X","configSchema":{"type":"object","additionalProperties":false,"properties":{"a":{"type":"text"}}}}`, "not a JSON type"},
		{"a keyword the validator would ignore", `{"key":"x","name":"X","configSchema":{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string","secret":true}}}}`, "secret"},
		{"a required field that is not a property", `{"key":"x","name":"X","configSchema":{"type":"object","additionalProperties":false,"required":["b"],"properties":{"a":{"type":"string"}}}}`, "requires \"b\""},
		{"a pattern that does not compile", `{"key":"x","name":"X","configSchema":{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string","pattern":"("}}}}`, "pattern"},
		{"a default its own schema refuses", `{"key":"x","name":"X","configSchema":{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string","enum":["x"],"default":"y"}}}}`, "does not equal any of"},
		{"a schema that is not an object", `{"key":"x","name":"X","configSchema":{"type":"string"}}`, "object schema"},
		{"an unknown setup", `{"key":"x","name":"X","setup":"later","configSchema":{"type":"object","properties":{"a":{}}}}`, "setup"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseManifest([]byte(tt.raw))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one naming %q", err, tt.want)
			}
		})
	}
}

func TestConfigValuesAreValidatedAgainstTheManifest(t *testing.T) {
	secretKey := "0123456789abcdef0123456789abcdef"
	tests := []struct {
		name   string
		key    string
		values map[string]any
		want   []string // parts of the 400; none: valid
	}{
		{"a Slack URL is enough", "slack", map[string]any{"url": "https://hooks.slack.com/services/T/B/x"}, nil},
		{"Slack without its URL names the field", "slack", map[string]any{}, []string{`"configValues.url" is required`}},
		{"an unknown field is named with the fields there are", "slack", map[string]any{"url": "https://h.example/x", "channel": "#ops"}, []string{`"configValues.channel" is not a field`, "its fields: url"}},
		{"a Teams URL of the wrong type names the field", "msteams", map[string]any{"url": 42}, []string{`"configValues.url"`}},
		{"Datadog with a key and a site", "datadog", map[string]any{"apiKey": secretKey, "site": "datadoghq.eu"}, nil},
		{"a Datadog site outside the list names the field", "datadog", map[string]any{"apiKey": secretKey, "site": "example.com"}, []string{`"configValues.site"`}},
		{"a malformed Datadog key is named but never echoed", "datadog", map[string]any{"apiKey": "not-a-key-but-secret"}, []string{`"configValues.apiKey" is not a valid API key`}},
		{"New Relic needs its key and account", "newrelic", map[string]any{"region": "eu"}, []string{`"configValues.insertKey" is required`, `"configValues.accountId" is required`}},
		{"a generic webhook secret too short is refused", "generic-webhook", map[string]any{"url": "https://h.example/x", "secret": "short"}, []string{`"configValues.secret" is not a valid Signing secret`}},
		{"no configValues at all", "slack", nil, []string{`"configValues" is required`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := mustManifest(t, tt.key).Validate(tt.values)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !fault.Is(err, fault.Invalid) {
				t.Fatalf("error %v, want a 400", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "not-a-key-but-secret") {
				t.Errorf("the error echoes the secret: %s", err)
			}
		})
	}
}

func TestMaskedHidesEverySecretAndNothingElse(t *testing.T) {
	m := mustManifest(t, "newrelic")
	c := Config{ConfigValues: map[string]any{"insertKey": "NRII-secret-value-123", "accountId": "42", "region": "us"}}
	got := c.Masked(m).ConfigValues
	if got["insertKey"] != Mask || got["accountId"] != "42" || got["region"] != "us" {
		t.Errorf("masked %v", got)
	}
	if c.ConfigValues["insertKey"] != "NRII-secret-value-123" {
		t.Error("masking changed the stored configuration")
	}
}

func TestAPatchDeltaNeverCarriesASecret(t *testing.T) {
	m := mustManifest(t, "datadog")
	p, err := patch.Parse([]byte(`[{"op":"replace","path":"/configValues/apiKey","value":"abcdefabcdefabcdefabcdefabcdef12"},` +
		`{"op":"replace","path":"/configValues","value":{"apiKey":"abcdefabcdefabcdefabcdefabcdef34","site":"datadoghq.eu"}},` +
		`{"op":"replace","path":"/name","value":"DD"}]`))
	if err != nil {
		t.Fatal(err)
	}
	delta, err := maskedDelta(p, m)
	if err != nil {
		t.Fatal(err)
	}
	s := string(delta)
	if strings.Contains(s, "abcdefabcdef") || !strings.Contains(s, "datadoghq.eu") || !strings.Contains(s, `"DD"`) {
		t.Errorf("delta %s", s)
	}
}

// entry is an audit entry as the consumer gets it.
func entry() audit.Entry {
	return audit.Entry{ID: "0001-e", Date: 1_700_000_000_123, Kind: "flag", Name: "checkout", Title: "Ann turned on the flag checkout",
		Comment: "ship it", Subject: audit.Subject{Name: "Ann"}, Accesses: []audit.Access{{Action: "updateOn", Resource: "proj/p:env/production:flag/checkout"}}}
}

func TestEachIntegrationRendersItsServicesRequest(t *testing.T) {
	ev := event{Entry: entry(), JSON: []byte(`{"_id":"0001-e"}`), DeliveryID: "0001-e.c1"}
	tests := []struct {
		key      string
		values   map[string]any
		endpoint string
		header   map[string]string
		body     []string
	}{
		{"slack", map[string]any{"url": "https://hooks.slack.com/services/T/B/x"}, "https://hooks.slack.com/services/T/B/x", nil,
			[]string{`"text":"Ann turned on the flag checkout: ship it"`}},
		{"msteams", map[string]any{"url": "https://example.webhook.office.com/x"}, "https://example.webhook.office.com/x", nil,
			[]string{`"@type":"MessageCard"`, `"summary":"Ann turned on the flag checkout"`}},
		{"datadog", map[string]any{"apiKey": "k", "site": "datadoghq.eu"}, "https://api.datadoghq.eu/api/v1/events", map[string]string{"DD-API-KEY": "k"},
			[]string{`"date_happened":1700000000`, `"action:updateOn"`, `"title":"Ann turned on the flag checkout"`}},
		{"newrelic", map[string]any{"insertKey": "k", "accountId": "42", "region": "eu"}, "https://insights-collector.eu01.nr-data.net/v1/accounts/42/events", map[string]string{"Api-Key": "k"},
			[]string{`"eventType":"FlagplaneAuditEvent"`, `"timestamp":1700000000123`, `"resources":"proj/p:env/production:flag/checkout"`}},
		{"generic-webhook", map[string]any{"url": "https://h.example/in", "secret": "0123456789abcdef"}, "https://h.example/in",
			map[string]string{webhook.SignatureHeader: webhook.Sign(ev.JSON, "0123456789abcdef"), webhook.DeliveryHeader: "0001-e.c1"},
			[]string{`{"_id":"0001-e"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.key+" posts to its endpoint with its headers", func(t *testing.T) {
			m := mustManifest(t, tt.key)
			if err := m.Validate(tt.values); err != nil && tt.key != "datadog" && tt.key != "newrelic" {
				t.Fatalf("the test's values are invalid: %v", err)
			}
			r := renderers[tt.key]
			u, err := r.endpoint(m.Defaults(tt.values))
			if err != nil || u.String() != tt.endpoint {
				t.Fatalf("endpoint %v %v, want %s", u, err, tt.endpoint)
			}
			body, h, err := r.request(ev, tt.values)
			if err != nil {
				t.Fatal(err)
			}
			if h.Get("Content-Type") != "application/json" || !json.Valid(body) {
				t.Errorf("content type %q, valid JSON %v", h.Get("Content-Type"), json.Valid(body))
			}
			for k, v := range tt.header {
				if h.Get(k) != v {
					t.Errorf("header %s %q, want %q", k, h.Get(k), v)
				}
			}
			for _, b := range tt.body {
				if !strings.Contains(string(body), b) {
					t.Errorf("body %s lacks %s", body, b)
				}
			}
		})
	}
	t.Run("Datadog's site defaults to datadoghq.com", func(t *testing.T) {
		u, err := renderers["datadog"].endpoint(mustManifest(t, "datadog").Defaults(map[string]any{"apiKey": "k"}))
		if err != nil || u.Host != "api.datadoghq.com" {
			t.Errorf("endpoint %v %v", u, err)
		}
	})
}

// roundTripper answers every request with status and records them.
type roundTripper struct {
	status int
	seen   []*http.Request
	bodies []string
}

func (rt *roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	b, _ := io.ReadAll(r.Body)
	rt.seen, rt.bodies = append(rt.seen, r), append(rt.bodies, string(b))
	return &http.Response{StatusCode: rt.status, Body: io.NopCloser(strings.NewReader("")), Header: http.Header{}, Request: r}, nil
}

func TestAFailedSendNamesTheHostButNeverTheURL(t *testing.T) {
	s := &Service{client: &http.Client{Transport: &roundTripper{status: 500}}}
	u, _ := renderers["slack"].endpoint(map[string]any{"url": "https://hooks.slack.com/services/T/B/very-secret"})
	_, err := s.post(t.Context(), u, []byte(`{}`), jsonHeader())
	if err == nil || !strings.Contains(err.Error(), "hooks.slack.com") || !strings.Contains(err.Error(), "500") || strings.Contains(err.Error(), "very-secret") {
		t.Errorf("error %v", err)
	}
	s.client = &http.Client{Transport: failing{}}
	_, err = s.post(t.Context(), u, []byte(`{}`), jsonHeader())
	if err == nil || strings.Contains(err.Error(), "very-secret") {
		t.Errorf("a transport error %v quotes the URL", err)
	}
}

type failing struct{}

func (failing) RoundTrip(*http.Request) (*http.Response, error) { return nil, io.ErrUnexpectedEOF }
