package relay_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/changefeed"
	"github.com/flagplane/flagplane/shared/relay"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestOperations(t *testing.T) {
	a := app.New(apptest.New(t).Table, audit.Discard{}, app.Settings{}, quiet, relay.Groups()...)
	handlers := a.Handlers()
	ops := relay.Operations()
	t.Run("every operation of the catalog's sdk and events groups has a handler in the relay", func(t *testing.T) {
		for _, g := range []string{"sdk", "events"} {
			group, err := catalog.Group(g)
			if err != nil {
				t.Fatal(err)
			}
			for _, op := range group {
				if !slices.ContainsFunc(ops, func(o catalog.Operation) bool { return o.ID == op.ID }) {
					t.Errorf("the relay does not route %s (%s)", op.ID, op.Pattern())
				}
				if handlers[op.ID] == nil {
					t.Errorf("the relay has no handler for %s (%s): it would answer 501", op.ID, op.Pattern())
				}
			}
		}
	})
	t.Run("the relay routes nothing of other groups but the health check", func(t *testing.T) {
		for _, op := range ops {
			if op.Group != "sdk" && op.Group != "events" && op.Path != "/healthz" {
				t.Errorf("the relay routes %s (%s) of group %s", op.ID, op.Pattern(), op.Group)
			}
		}
	})
}

// running is a relay serving a table that an API server (another process,
// as far as caches go) writes.
type running struct {
	api  *apptest.Server
	url  string
	stop context.CancelFunc
	done chan error
}

func startRelay(tb testing.TB) *running {
	tb.Helper()
	srv := apptest.New(tb)
	a := app.New(srv.Table, audit.Discard{}, app.Settings{AccountID: srv.AccountID, CORSOrigins: []string{"*"}}, quiet, relay.Groups()...)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	r := &running{api: srv, stop: cancel, done: make(chan error, 1)}
	go func() {
		r.done <- relay.Serve(ctx, a, relay.Config{
			Addr: "127.0.0.1:0", Feed: changefeed.Options{Poll: 20 * time.Millisecond},
			Ready: func(addr string) { ready <- addr },
		}, quiet)
	}()
	select {
	case addr := <-ready:
		r.url = "http://" + addr
	case err := <-r.done:
		tb.Fatalf("the relay did not start: %v", err)
	}
	tb.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

func TestRelay(t *testing.T) {
	r := startRelay(t)
	srv := r.api
	srv.MustCreateProject(t, "p")
	mustFlag(t, srv, "p", "f", nil)
	sdkKey := envSDKKey(t, srv, "p", "test")

	t.Run("GET /healthz answers ok", func(t *testing.T) {
		res, err := http.Get(r.url + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"ok"`) {
			t.Errorf("status %d: %s", res.StatusCode, body)
		}
	})
	t.Run("the polling payload is served with the flag", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, r.url+"/sdk/latest-all", nil)
		req.Header.Set("Authorization", sdkKey)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"f":{`) {
			t.Errorf("status %d: %s", res.StatusCode, body)
		}
	})

	events := openStream(t, r.url, sdkKey)
	steps := []struct {
		name   string
		act    func(t *testing.T)
		want   string
		inData []string
	}{
		{"the stream opens with a put of every live flag", func(*testing.T) {}, "put", []string{`"path":"/"`, `"f":{`}},
		{"a change made through the API arrives as a patch, learnt from the audit log", func(t *testing.T) { mustPatch(t, srv, "p", "f", on("test", true)) }, "patch",
			[]string{`"path":"/flags/f"`, `"on":true`}},
		{"a new flag arrives as a patch", func(t *testing.T) { mustFlag(t, srv, "p", "fresh", nil) }, "patch", []string{`"path":"/flags/fresh"`}},
		{"a deleted flag arrives as a delete", func(t *testing.T) {
			if res := srv.Do(t, http.MethodDelete, "/api/v2/flags/p/fresh", nil); res.Status != http.StatusNoContent {
				t.Fatalf("delete: %d %s", res.Status, res.Body)
			}
		}, "delete", []string{`"path":"/flags/fresh"`}},
		{"resetting the SDK key ends the stream", func(t *testing.T) {
			if res := srv.Do(t, http.MethodPost, "/api/v2/projects/p/environments/test/apiKey", nil); res.Status != http.StatusOK {
				t.Fatalf("reset: %d", res.Status)
			}
		}, "closed", nil},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			start := time.Now()
			st.act(t)
			ev := next(t, events)
			if ev.name != st.want {
				t.Fatalf("event %q, want %q: %s", ev.name, st.want, ev.data)
			}
			for _, s := range st.inData {
				if !strings.Contains(ev.data, s) {
					t.Errorf("data lacks %s: %s", s, ev.data)
				}
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestRelayClientStreams: the client-side streams of the sdk group are
// served by the relay too, woken by the same feed, with CORS for browsers.
func TestRelayClientStreams(t *testing.T) {
	r := startRelay(t)
	srv := r.api
	srv.MustCreateProject(t, "p")
	mustFlag(t, srv, "p", "web", map[string]any{"clientSideAvailability": map[string]any{"usingEnvironmentId": true, "usingMobileKey": false}})
	var env struct {
		ID string `json:"_id"`
	}
	srv.Do(t, http.MethodGet, "/api/v2/projects/p/environments/test", nil).JSON(t, &env)
	ctxPath := base64.RawURLEncoding.EncodeToString([]byte(`{"kind":"user","key":"u1"}`))
	t.Run("a browser's preflight of the stream is answered for any origin", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodOptions, r.url+"/eval/"+env.ID+"/"+ctxPath, nil)
		req.Header.Set("Origin", "https://shop.example.com")
		req.Header.Set("Access-Control-Request-Method", "GET")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if got := res.Header.Get("Access-Control-Allow-Origin"); got != "https://shop.example.com" && got != "*" {
			t.Errorf("status %d, Access-Control-Allow-Origin %q", res.StatusCode, got)
		}
	})
	events := openSSE(t, r.url+"/eval/"+env.ID+"/"+ctxPath, "")
	if ev := next(t, events); ev.name != "put" || !strings.Contains(ev.data, `"web":{`) {
		t.Fatalf("first event %q %s, want a put of the evaluations", ev.name, ev.data)
	}
	t.Run("a change made through the API reaches a client-side stream as a patch", func(t *testing.T) {
		mustPatch(t, srv, "p", "web", on("test", true))
		ev := next(t, events)
		if ev.name != "patch" || !strings.Contains(ev.data, `"key":"web"`) || !strings.Contains(ev.data, `"value":true`) {
			t.Errorf("event %q %s, want the flag's patch with its new value", ev.name, ev.data)
		}
	})
}

func TestStop(t *testing.T) {
	r := startRelay(t)
	r.api.MustCreateProject(t, "p")
	events := openStream(t, r.url, envSDKKey(t, r.api, "p", "test"))
	if ev := next(t, events); ev.name != "put" {
		t.Fatalf("first event %q", ev.name)
	}
	start := time.Now()
	r.stop()
	t.Run("stopping ends the open streams at once", func(t *testing.T) {
		if ev := next(t, events); ev.name != "closed" {
			t.Errorf("event %q, want the stream closed", ev.name)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("the stream ended %v after the stop", d)
		}
	})
	t.Run("the relay returns within a second, without error", func(t *testing.T) {
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
			r.done <- err // for the cleanup
		case <-time.After(time.Second):
			t.Fatal("the relay still runs a second after the stop")
		}
	})
	t.Run("a stopped relay accepts no connection", func(t *testing.T) {
		if res, err := http.Get(r.url + "/healthz"); err == nil {
			res.Body.Close()
			t.Errorf("status %d from a stopped relay", res.StatusCode)
		}
	})
}

func envSDKKey(tb testing.TB, srv *apptest.Server, project, key string) string {
	tb.Helper()
	var e struct {
		APIKey string `json:"apiKey"`
	}
	res := srv.Do(tb, http.MethodGet, "/api/v2/projects/"+project+"/environments/"+key, nil)
	if res.Status != http.StatusOK {
		tb.Fatalf("get environment: %d %s", res.Status, res.Body)
	}
	res.JSON(tb, &e)
	return e.APIKey
}

func mustFlag(tb testing.TB, srv *apptest.Server, project, key string, body map[string]any) {
	tb.Helper()
	b := map[string]any{"key": key, "name": "Flag " + key}
	for k, v := range body {
		b[k] = v
	}
	if res := srv.Do(tb, http.MethodPost, "/api/v2/flags/"+project, b); res.Status != http.StatusCreated {
		tb.Fatalf("create flag %q: %d %s", key, res.Status, res.Body)
	}
}

func mustPatch(tb testing.TB, srv *apptest.Server, project, key string, ops ...map[string]any) {
	tb.Helper()
	if res := srv.Do(tb, http.MethodPatch, "/api/v2/flags/"+project+"/"+key, ops); res.Status != http.StatusOK {
		tb.Fatalf("patch flag %q: %d %s", key, res.Status, res.Body)
	}
}

func on(envKey string, v bool) map[string]any {
	return map[string]any{"op": "replace", "path": "/environments/" + envKey + "/on", "value": v}
}

type sse struct{ name, data string }

// openStream connects to /all with the SDK key and reads its events.
func openStream(tb testing.TB, baseURL, sdkKey string) chan sse {
	tb.Helper()
	return openSSE(tb, baseURL+"/all", sdkKey)
}

// openSSE opens a stream (with the credential in Authorization, when
// given) and reads its events (comments left out); the channel closes
// with the connection, which closes when the test ends.
func openSSE(tb testing.TB, url, credential string) chan sse {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if credential != "" {
		req.Header.Set("Authorization", credential)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		tb.Fatalf("open stream: %v", err)
	}
	tb.Cleanup(func() { cancel(); res.Body.Close() })
	if res.StatusCode != http.StatusOK {
		tb.Fatalf("open stream: status %d", res.StatusCode)
	}
	events := make(chan sse, 64)
	go func() {
		defer close(events)
		br := bufio.NewReader(res.Body)
		var ev sse
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case line == "":
				if ev.name != "" {
					events <- ev
				}
				ev = sse{}
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return events
}

func next(tb testing.TB, events chan sse) sse {
	tb.Helper()
	select {
	case ev, ok := <-events:
		if !ok {
			return sse{name: "closed"}
		}
		return ev
	case <-time.After(2 * time.Second):
		tb.Fatal("no event within 2 s")
		return sse{}
	}
}
