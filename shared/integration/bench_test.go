package integration

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkValidateConfigValues is the schema check every create and
// patch runs: go test -bench ValidateConfigValues -benchmem ./shared/integration/
func BenchmarkValidateConfigValues(b *testing.B) {
	m := mustManifest(b, "newrelic")
	values := map[string]any{"insertKey": "NRAK-0123456789abcdef", "accountId": "42", "region": "eu"}
	b.ReportAllocs()
	for b.Loop() {
		if err := m.Validate(values); err != nil {
			b.Fatal(err)
		}
	}
}

// okTransport answers every request 202 without a network.
type okTransport struct{}

func (okTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	_, _ = io.Copy(io.Discard, r.Body)
	return &http.Response{StatusCode: http.StatusAccepted, Body: io.NopCloser(strings.NewReader("")), Header: http.Header{}, Request: r}, nil
}

// BenchmarkDeliverToTenConfigurations is the consumer's work for one
// audit entry with ten enabled Slack configurations, each already served
// (the marker read), which is what every retry and duplicate costs:
// go test -bench DeliverToTen -benchmem ./shared/integration/
func BenchmarkDeliverToTenConfigurations(b *testing.B) {
	s := hookService(b, okTransport{}, nil)
	for i := range 10 {
		storeConfig(b, s, &Config{ID: "c" + string(rune('a'+i)), IntegrationKey: "slack", Name: "S", Enabled: true, CreatedAt: int64(i),
			ConfigValues: map[string]any{"url": "https://hooks.slack.example/x"}})
	}
	e := entry()
	if err := s.Deliver(context.Background(), e, 1); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Deliver(context.Background(), e, 2); err != nil {
			b.Fatal(err)
		}
	}
}
