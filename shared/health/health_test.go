package health_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

// flakyTable is an embedded store whose reads can be made to fail, as a
// store that stopped answering does.
type flakyTable struct {
	store.Table
	down atomic.Bool
}

func (f *flakyTable) Get(ctx context.Context, k store.Key) (store.Item, error) {
	if f.down.Load() {
		return store.Item{}, errors.New("dial tcp 10.0.0.7:443: connection refused")
	}
	return f.Table.Get(ctx, k)
}

func newFlaky(tb testing.TB) *flakyTable {
	tb.Helper()
	t, err := bolt.Open(filepath.Join(tb.TempDir(), "flagplane.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { t.Close() })
	return &flakyTable{Table: t}
}

func TestHealthz(t *testing.T) {
	table := newFlaky(t)
	srv := apptest.New(t, apptest.WithTable(table))
	tests := []struct {
		name    string
		down    bool
		headers []string
		status  int
		check   func(t *testing.T, res *apptest.Response)
	}{
		{"it answers 200 ok without a token, and says nothing else", false, []string{"Authorization", ""}, http.StatusOK,
			func(t *testing.T, res *apptest.Response) {
				if got := strings.TrimSpace(string(res.Body)); got != `{"status":"ok"}` {
					t.Errorf("body %s", got)
				}
				if res.Header.Get("Cache-Control") != "no-store" {
					t.Errorf("Cache-Control %q", res.Header.Get("Cache-Control"))
				}
			}},
		{"a wrong token does not matter to it", false, []string{"Authorization", "api-not-a-token"}, http.StatusOK, nil},
		{"it answers 503 when the store does not answer, without the cause", true, []string{"Authorization", ""}, http.StatusServiceUnavailable,
			func(t *testing.T, res *apptest.Response) {
				var e struct{ Code, Message, ID string }
				if err := json.Unmarshal(res.Body, &e); err != nil {
					t.Fatalf("body %s", res.Body)
				}
				if e.Code != "service_unavailable" || e.ID == "" || e.ID != res.Header.Get("X-Request-Id") {
					t.Errorf("body %s, X-Request-Id %q", res.Body, res.Header.Get("X-Request-Id"))
				}
				if strings.Contains(string(res.Body), "10.0.0.7") || strings.Contains(string(res.Body), "refused") {
					t.Errorf("the body shows the cause: %s", res.Body)
				}
			}},
		{"it answers 200 again once the store is back", false, nil, http.StatusOK, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table.down.Store(tt.down)
			res := srv.Do(t, http.MethodGet, "/healthz", nil, tt.headers...)
			if res.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", res.Status, tt.status, res.Body)
			}
			if tt.check != nil {
				tt.check(t, res)
			}
		})
	}
}
