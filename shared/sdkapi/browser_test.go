package sdkapi_test

// The browser tier's proof (make test-browser): LaunchDarkly's browser SDK,
// the npm package @launchdarkly/js-client-sdk pinned in
// localstack/browser, in headless Chromium, on a page served from another
// origin than flagplane's (so CORS is real), against the local server
// (flagplane serve) with streaming on. It evaluates a flag from the
// stream's put; changes made through the API reach the page (the time
// from the API call to the SDK's change event is measured); a flag made
// unavailable to client-side SDKs disappears; the SDK's events arrive at
// /events/bulk/{clientSideId} and are applied. Without the tier the test
// skips (see browsertest).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/browsertest"
	"github.com/flagplane/flagplane/shared/localserver"
)

// localAPI calls a local server's API with its admin token.
type localAPI struct {
	base, token string
}

// startServe runs the local server (what flagplane serve runs) on a free
// port of 127.0.0.1, allowing the browser origin, until the test ends.
func startServe(tb testing.TB, origin string) localAPI {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- localserver.RunLocal(ctx, localserver.LocalConfig{
			Addr: "127.0.0.1:0", DataFile: filepath.Join(tb.TempDir(), "flagplane.db"), Out: &out,
			Settings: app.Settings{CORSOrigins: []string{origin}}, Ready: func(a string) { ready <- a },
			ShutdownGrace: time.Second,
		}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	select {
	case addr := <-ready:
		tb.Cleanup(func() { cancel(); <-done })
		return localAPI{base: "http://" + addr, token: regexp.MustCompile(`api-[0-9a-f-]{36}`).FindString(out.String())}
	case err := <-done:
		cancel()
		tb.Fatalf("local server: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		tb.Fatal("the local server did not start within 30 s")
	}
	return localAPI{}
}

// do sends a JSON request and fails the test unless it gets want.
func (a localAPI) do(tb testing.TB, method, path string, body any, want int) []byte {
	tb.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			tb.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", a.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		tb.Fatalf("%s %s: status %d, want %d: %s", method, path, res.StatusCode, want, b)
	}
	return b
}

// proofPage is the page: it loads the bundled SDK and starts a client
// with streaming on against the server, recording every change event
// with the time it came (performance.timeOrigin + performance.now(), in
// milliseconds since the epoch).
// With useReport the SDK, which cannot send a REPORT from an EventSource,
// follows the ping stream and polls its evaluations with REPORT.
func proofPage(server, clientSideID string, useReport bool) []byte {
	cfg, _ := json.Marshal(map[string]any{
		"server": server, "clientSideId": clientSideID, "useReport": useReport,
		"context": map[string]any{"kind": "user", "key": "browser-user", "name": "Ann"},
	})
	return []byte(`<!doctype html>
<meta charset="utf-8">
<title>flagplane: LaunchDarkly's browser SDK</title>
<script src="/launchdarkly.js"></script>
<script>
const cfg = ` + string(cfg) + `;
window.proof = { changes: [], status: null, errors: [] };
const client = LaunchDarkly.createClient(cfg.clientSideId, cfg.context, {
  baseUri: cfg.server, streamUri: cfg.server, eventsUri: cfg.server,
  streaming: true, useReport: cfg.useReport, diagnosticOptOut: true,
  logger: LaunchDarkly.basicLogger({ level: 'info' }),
});
client.on('change', (context, keys) => {
  const at = performance.timeOrigin + performance.now();
  for (const key of keys) {
    proof.changes.push({ key, value: client.variation(key, null), at });
  }
});
client.on('error', (context, err) => proof.errors.push(String(err && err.message || err)));
client.start().then((r) => { proof.status = r.status; });
window.client = client;
</script>
`)
}

type change struct {
	Key   string
	Value any
	At    float64
}

func TestBrowserSDKStreaming(t *testing.T) {
	b := browsertest.Start(t)
	// The page's origin is known before the server starts, which must allow it.
	files := map[string][]byte{"/launchdarkly.js": browsertest.Bundle(t, "launchdarkly")}
	origin := browsertest.Serve(t, files)
	api := startServe(t, origin)
	if strings.TrimPrefix(origin, "http://") == strings.TrimPrefix(api.base, "http://") {
		t.Fatalf("the page and the server share an origin (%s): CORS would not be tested", origin)
	}
	api.do(t, http.MethodPost, "/api/v2/projects", map[string]any{"key": "web", "name": "Web"}, http.StatusCreated)
	var env struct {
		ID string `json:"_id"`
	}
	if err := json.Unmarshal(api.do(t, http.MethodGet, "/api/v2/projects/web/environments/test", nil, http.StatusOK), &env); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"banner", "hidden"} {
		api.do(t, http.MethodPost, "/api/v2/flags/web", map[string]any{"key": key, "name": key,
			"clientSideAvailability": map[string]any{"usingEnvironmentId": key == "banner", "usingMobileKey": false}}, http.StatusCreated)
	}
	setOn := func(t *testing.T, key string, v bool) {
		api.do(t, http.MethodPatch, "/api/v2/flags/web/"+key, []map[string]any{{"op": "replace", "path": "/environments/test/on", "value": v}}, http.StatusOK)
	}
	setOn(t, "banner", true)
	files["/index.html"] = proofPage(api.base, env.ID, false)
	files["/report.html"] = proofPage(api.base, env.ID, true)

	page := b.Open(t, origin+"/")
	var changes []change
	// waitChange waits for the n-th change event and returns it.
	waitChange := func(t *testing.T, n int) change {
		t.Helper()
		var c change
		page.Wait(t, fmt.Sprintf(`proof.changes.length > %d && proof.changes[%d]`, n, n), 5*time.Second, &c)
		return c
	}

	t.Run("the SDK starts (a poll, then the stream) and evaluates the flag flagplane serves", func(t *testing.T) {
		var status string
		page.Wait(t, `proof.status`, 15*time.Second, &status)
		if status != "complete" {
			t.Fatalf("start: %q", status)
		}
		var got struct {
			Banner any
			Hidden bool
		}
		page.Eval(t, `({banner: client.variation('banner', 'default'), hidden: 'hidden' in client.allFlags()})`, &got)
		if got.Banner != true || got.Hidden {
			t.Fatalf("banner %v (want true: on, fallthrough to variation 0), hidden flag seen: %v", got.Banner, got.Hidden)
		}
		// The browser reports the stream's answer once its first bytes came.
		var stream []browsertest.Request
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			stream = stream[:0]
			for _, r := range page.Requests() {
				if strings.HasPrefix(r.URL, api.base+"/eval/"+env.ID+"/") {
					stream = append(stream, r)
				}
			}
			if len(stream) > 0 && stream[0].Status != 0 || time.Now().After(deadline) {
				break
			}
		}
		if len(stream) != 1 || stream[0].Method != http.MethodGet || stream[0].Status != http.StatusOK || stream[0].Failure != "" {
			t.Fatalf("the stream requests (one GET /eval/{clientSideId}/{context}, 200, from another origin): %+v", stream)
		}
		// Its start is a change (every flag, from none) the steps below do not count.
		page.Eval(t, `proof.changes`, &changes)
	})

	t.Run("changes made through the API reach the page in under a second", func(t *testing.T) {
		const n = 20
		var lat []float64
		for i := 0; i < n; i++ {
			want := i%2 == 1 // off, then on again
			start := float64(time.Now().UnixMicro()) / 1000
			setOn(t, "banner", want)
			c := waitChange(t, len(changes))
			changes = append(changes, c)
			if c.Key != "banner" || c.Value != want {
				t.Fatalf("change %d: %+v, want banner = %v", i, c, want)
			}
			lat = append(lat, c.At-start)
		}
		sort.Float64s(lat)
		p50, p95, worst := lat[n/2], lat[n*95/100-1], lat[n-1]
		t.Logf("API change to the browser SDK's change event over %d changes: p50 %.1f ms, p95 %.1f ms, max %.1f ms", n, p50, p95, worst)
		if worst >= 1000 {
			t.Fatalf("the slowest change took %.1f ms, want under 1 s", worst)
		}
	})

	t.Run("a flag made unavailable to client-side SDKs disappears from the page", func(t *testing.T) {
		api.do(t, http.MethodPatch, "/api/v2/flags/web/banner", []map[string]any{{"op": "replace", "path": "/clientSideAvailability",
			"value": map[string]any{"usingEnvironmentId": false, "usingMobileKey": false}}}, http.StatusOK)
		page.Wait(t, `!('banner' in client.allFlags())`, 5*time.Second, nil)
		var v string
		page.Eval(t, `client.variation('banner', 'default')`, &v)
		if v != "default" {
			t.Fatalf("variation %q, want the default", v)
		}
	})

	t.Run("made available again, it comes back", func(t *testing.T) {
		api.do(t, http.MethodPatch, "/api/v2/flags/web/banner", []map[string]any{{"op": "replace", "path": "/clientSideAvailability",
			"value": map[string]any{"usingEnvironmentId": true, "usingMobileKey": false}}}, http.StatusOK)
		var v bool
		page.Wait(t, `'banner' in client.allFlags()`, 5*time.Second, nil)
		page.Eval(t, `client.variation('banner', 'default')`, &v)
		if !v {
			t.Fatal("banner is false, want true (on)")
		}
	})

	t.Run("with useReport, the SDK follows the ping stream, polls with REPORT, and sees a change", func(t *testing.T) {
		report := b.Open(t, origin+"/report.html")
		var status string
		report.Wait(t, `proof.status`, 15*time.Second, &status)
		var before bool
		report.Eval(t, `client.variation('banner', 'default')`, &before)
		if status != "complete" || !before {
			t.Fatalf("start %q, banner %v", status, before)
		}
		report.Eval(t, `proof.changes = []`, nil)
		setOn(t, "banner", false)
		var c change
		report.Wait(t, `proof.changes.length > 0 && proof.changes[0]`, 5*time.Second, &c)
		if c.Key != "banner" || c.Value != false {
			t.Fatalf("change %+v, want banner = false", c)
		}
		var ping, polls int
		for _, r := range report.Requests() {
			switch {
			case r.Method == http.MethodGet && r.URL == api.base+"/ping/"+env.ID && r.Failure == "":
				ping++
			case r.Method == "REPORT" && r.URL == api.base+"/sdk/evalx/"+env.ID+"/context" && r.Status == http.StatusOK:
				polls++
			}
		}
		if ping != 1 || polls < 2 {
			t.Fatalf("%d ping streams (want 1) and %d REPORT polls (want one at the start and one per ping)", ping, polls)
		}
		setOn(t, "banner", true) // as the steps below expect it
		page.Wait(t, `client.variation('banner', 'default') === true`, 5*time.Second, nil)
	})

	t.Run("the SDK's events arrive at /events/bulk/{clientSideId} from the page's origin and are applied", func(t *testing.T) {
		page.Eval(t, `client.flush()`, nil)
		var posted *browsertest.Request
		deadline := time.Now().Add(5 * time.Second)
		for posted == nil && time.Now().Before(deadline) {
			for _, r := range page.Requests() {
				if r.Method == http.MethodPost && r.URL == api.base+"/events/bulk/"+env.ID && (r.Status != 0 || r.Failure != "") {
					r := r
					posted = &r
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		if posted == nil || posted.Status != http.StatusAccepted || posted.Failure != "" {
			t.Fatalf("the events post, as the browser saw it: %+v", posted)
		}
		// The inbox applies them: the page's context is then known.
		deadline = time.Now().Add(10 * time.Second)
		for {
			req, _ := http.NewRequest(http.MethodGet, api.base+"/api/v2/projects/web/environments/test/contexts/user/browser-user", nil)
			req.Header.Set("Authorization", api.token)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			var found struct{ TotalCount int }
			if res.StatusCode == http.StatusOK && json.Unmarshal(body, &found) == nil && found.TotalCount == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the page's context was not recorded within 10 s: %d %s", res.StatusCode, body)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})

	t.Run("the SDK reported no error", func(t *testing.T) {
		var errs []string
		page.Eval(t, `proof.errors`, &errs)
		if len(errs) > 0 {
			t.Fatalf("errors: %v", errs)
		}
		for _, r := range page.Requests() {
			if strings.HasPrefix(r.URL, api.base) && r.Failure != "" {
				t.Errorf("%s %s failed: %s", r.Method, r.URL, r.Failure)
			}
		}
	})
}
