package integration

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
	"github.com/flagplane/flagplane/shared/webhook"
)

// hookService is a service over an embedded store whose HTTP requests go
// to rt, logging into logs.
func hookService(tb testing.TB, rt http.RoundTripper, logs io.Writer) *Service {
	tb.Helper()
	table, err := bolt.Open(filepath.Join(tb.TempDir(), "t.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { table.Close() })
	if logs == nil {
		logs = io.Discard
	}
	s := NewService(table, nil, webhook.Guard{}, func(e audit.Entry) ([]byte, error) { return []byte(`{"_id":"` + e.ID + `"}`), nil },
		slog.New(slog.NewTextHandler(logs, nil)), time.Now)
	s.client = &http.Client{Transport: rt}
	return s
}

// storeConfig puts a configuration as Create would have.
func storeConfig(tb testing.TB, s *Service, c *Config) {
	tb.Helper()
	it, err := c.item()
	if err != nil {
		tb.Fatal(err)
	}
	k := store.IntegrationConfigKey(c.ID)
	it.PK, it.SK, it.Version = k.PK, k.SK, 1
	if err := s.table.Put(context.Background(), it, store.IfNotExists()); err != nil {
		tb.Fatal(err)
	}
}

func TestDeliverySendsEachServiceItsRequestAndLogsNoSecret(t *testing.T) {
	const ddSecret, nrSecret, slackSecret = "dd0123456789abcdef0123456789abcd", "NRAK-secret-insert-key", "slack-token-in-the-path"
	var logs bytes.Buffer
	rt := &roundTripper{status: http.StatusInternalServerError}
	s := hookService(t, rt, &logs)
	storeConfig(t, s, &Config{ID: "c-dd", IntegrationKey: "datadog", Name: "DD", Enabled: true, CreatedAt: 1,
		ConfigValues: map[string]any{"apiKey": ddSecret, "site": "datadoghq.eu"}})
	storeConfig(t, s, &Config{ID: "c-nr", IntegrationKey: "newrelic", Name: "NR", Enabled: true, CreatedAt: 2,
		ConfigValues: map[string]any{"insertKey": nrSecret, "accountId": "42", "region": "us"}})
	storeConfig(t, s, &Config{ID: "c-slack", IntegrationKey: "slack", Name: "S", Enabled: true, CreatedAt: 3,
		ConfigValues: map[string]any{"url": "https://hooks.slack.com/services/T/B/" + slackSecret}})
	storeConfig(t, s, &Config{ID: "c-off", IntegrationKey: "slack", Name: "Off", Enabled: false, CreatedAt: 4,
		ConfigValues: map[string]any{"url": "https://off.example/x"}})

	err := s.Deliver(context.Background(), entry(), 1)
	t.Run("every failure is returned, so the queue retries it", func(t *testing.T) {
		if err == nil || strings.Count(err.Error(), "status 500") != 3 {
			t.Fatalf("error %v, want three failures", err)
		}
	})
	t.Run("each service got its request with its credential in a header, the disabled one nothing", func(t *testing.T) {
		got := map[string]*http.Request{}
		for _, r := range rt.seen {
			got[r.URL.Host] = r
		}
		if len(rt.seen) != 3 || got["off.example"] != nil {
			t.Fatalf("requests to %v", got)
		}
		if r := got["api.datadoghq.eu"]; r == nil || r.Header.Get("DD-API-KEY") != ddSecret {
			t.Errorf("Datadog request %v", r)
		}
		if r := got["insights-collector.newrelic.com"]; r == nil || r.Header.Get("Api-Key") != nrSecret || r.URL.Path != "/v1/accounts/42/events" {
			t.Errorf("New Relic request %v", r)
		}
	})
	t.Run("neither the error nor the log lines carry a secret", func(t *testing.T) {
		for _, secret := range []string{ddSecret, nrSecret, slackSecret} {
			if strings.Contains(err.Error(), secret) || strings.Contains(logs.String(), secret) {
				t.Errorf("%q leaked: error %v; logs %s", secret, err, logs.String())
			}
		}
		if !strings.Contains(logs.String(), "integration event hook failed") {
			t.Errorf("the failures were not logged: %s", logs.String())
		}
	})
	t.Run("once the services answer, a retry sends each once more and then nothing", func(t *testing.T) {
		rt.status = http.StatusAccepted
		before := len(rt.seen)
		if err := s.Deliver(context.Background(), entry(), 2); err != nil {
			t.Fatal(err)
		}
		if err := s.Deliver(context.Background(), entry(), 3); err != nil {
			t.Fatal(err)
		}
		if n := len(rt.seen) - before; n != 3 {
			t.Errorf("%d requests after the retries, want 3", n)
		}
	})
}

// countingTable counts the reads made through it.
type countingTable struct {
	store.Table
	gets, queries int
}

func (c *countingTable) Get(ctx context.Context, k store.Key) (store.Item, error) {
	c.gets++
	return c.Table.Get(ctx, k)
}

func (c *countingTable) Query(ctx context.Context, q store.Query) (store.Page, error) {
	c.queries++
	return c.Table.Query(ctx, q)
}

func TestDeliveryReadsAsMuchForOneEntryWhateverTheConfigurations(t *testing.T) {
	rt := &roundTripper{status: http.StatusAccepted}
	s := hookService(t, rt, nil)
	for i, key := range []string{"slack", "slack", "msteams", "generic-webhook"} {
		values := map[string]any{"url": "https://hooks.example/" + key}
		if key == "generic-webhook" {
			values["secret"] = "0123456789abcdef"
		}
		storeConfig(t, s, &Config{ID: fmt.Sprintf("c%d", i), IntegrationKey: key, Name: "C", Enabled: true, CreatedAt: int64(i), ConfigValues: values})
	}
	reads := &countingTable{Table: s.table}
	s.table = reads
	for attempt := 1; attempt <= 2; attempt++ {
		reads.gets, reads.queries = 0, 0
		if err := s.Deliver(context.Background(), entry(), attempt); err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprintf("attempt %d reads the configurations with one Query and the entry's delivery marks with another", attempt), func(t *testing.T) {
			if reads.queries != 2 || reads.gets != 0 {
				t.Errorf("%d Queries and %d Gets; want 2 Queries and no Get", reads.queries, reads.gets)
			}
			if len(rt.seen) != 4 {
				t.Errorf("%d requests; want 4, one per configuration, all on the first attempt", len(rt.seen))
			}
		})
	}
}
