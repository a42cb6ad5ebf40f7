package localserver_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/environment/credtest"
	"github.com/flagplane/flagplane/shared/localserver"
	"github.com/flagplane/flagplane/shared/logtest"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

// oldDataFile makes a data file with a project whose environments lack
// their credential items, as one written before the credential index.
func oldDataFile(tb testing.TB) (string, []credtest.Env) {
	tb.Helper()
	data := filepath.Join(tb.TempDir(), "flagplane.db")
	base, token, stop := startLocal(tb, data)
	c := &http.Client{Timeout: 5 * time.Second}
	if r := call(tb, c, http.MethodPost, base+"/api/v2/projects", token, `{"key":"old","name":"Old"}`); r.StatusCode != http.StatusCreated {
		stop()
		tb.Fatalf("create project: %d", r.StatusCode)
	}
	stop()
	bt, err := bolt.Open(data)
	if err != nil {
		tb.Fatalf("open data file: %v", err)
	}
	defer bt.Close()
	return data, credtest.Drop(tb, bt)
}

// serveLogged runs the local server on data until the test ends and
// returns its base URL and its log.
func serveLogged(tb testing.TB, data string) (string, *logtest.Buffer) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs := &logtest.Buffer{}
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- localserver.RunLocal(ctx, localserver.LocalConfig{
			Addr: "127.0.0.1:0", DataFile: data, Out: &bytes.Buffer{},
			Settings: app.Settings{Approvals: true}, Ready: func(a string) { ready <- a },
		}, slog.New(slog.NewTextHandler(logs, nil)))
	}()
	select {
	case addr := <-ready:
		tb.Cleanup(func() { cancel(); <-done })
		return "http://" + addr, logs
	case err := <-done:
		cancel()
		tb.Fatalf("local server: %v\n%s", err, logs)
	case <-time.After(10 * time.Second):
		cancel()
		tb.Fatal("local server did not start")
	}
	return "", nil
}

func sdkStatus(tb testing.TB, base, sdkKey string) int {
	tb.Helper()
	return call(tb, &http.Client{Timeout: 5 * time.Second}, http.MethodGet, base+"/sdk/latest-all", sdkKey, "").StatusCode
}

func TestCredentialBackfill(t *testing.T) {
	const wrote = "flagplane wrote missing SDK credential items"
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"the local server writes the missing credential items before it serves", func(t *testing.T) {
			data, envs := oldDataFile(t)
			base, logs := serveLogged(t, data)
			for _, e := range envs {
				if got := sdkStatus(t, base, e.SDKKey); got != http.StatusOK {
					t.Errorf("%s/%s: status %d, want 200", e.ProjectKey, e.Key, got)
				}
			}
			if want := `msg="` + wrote + `" items=6`; !strings.Contains(logs.String(), want) {
				t.Errorf("log lacks %q:\n%s", want, logs)
			}
		}},
		{"the command fills a data file, a second run writes nothing and the server then has nothing to backfill", func(t *testing.T) {
			data, envs := oldDataFile(t)
			for i, want := range []string{"wrote 6 missing credential items\n", "wrote 0 missing credential items\n"} {
				var out bytes.Buffer
				if err := localserver.BackfillCredentials(t.Context(), localserver.BackfillConfig{DataFile: data}, &out); err != nil {
					t.Fatalf("run %d: %v", i+1, err)
				}
				if out.String() != want {
					t.Errorf("run %d printed %q, want %q", i+1, out.String(), want)
				}
			}
			base, logs := serveLogged(t, data)
			for _, e := range envs {
				if got := sdkStatus(t, base, e.SDKKey); got != http.StatusOK {
					t.Errorf("%s/%s: status %d, want 200", e.ProjectKey, e.Key, got)
				}
			}
			if strings.Contains(logs.String(), wrote) {
				t.Errorf("the server backfilled again after the command:\n%s", logs)
			}
		}},
		{"the command refuses a data file that does not exist", func(t *testing.T) {
			missing := filepath.Join(t.TempDir(), "none.db")
			err := localserver.BackfillCredentials(t.Context(), localserver.BackfillConfig{DataFile: missing}, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), "none.db") {
				t.Errorf("error %v, want one naming the file", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}
