package browsertest_test

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/browsertest"
)

// api serves /open, which allows any origin, and /closed, which allows
// none, on a port of its own: another origin than the page's.
func api(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/open" {
			w.Header().Set("Access-Control-Allow-Origin", "*")
		}
		_, _ = w.Write([]byte(`{"answer":42}`))
	})}
	go func() { _ = srv.Serve(ln) }()
	tb.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

func TestBrowserHarness(t *testing.T) {
	b := browsertest.Start(t)
	apiURL := api(t)
	page := browsertest.Serve(t, map[string][]byte{
		"/index.html": []byte(`<!doctype html><script src="/app.js"></script>`),
		"/app.js": []byte(`
console.log("page", "loaded");
window.results = {};
fetch("` + apiURL + `/open").then(r => r.json()).then(j => { window.results.open = j.answer; });
fetch("` + apiURL + `/closed").then(() => { window.results.closed = "read"; }, () => { window.results.closed = "refused"; });
setTimeout(() => { window.late = "here"; }, 50);
`),
	})
	p := b.Open(t, page+"/")
	t.Run("a value the page sets later is waited for", func(t *testing.T) {
		var late string
		p.Wait(t, `window.late`, 5*time.Second, &late)
		if late != "here" {
			t.Fatalf("late %q", late)
		}
	})
	t.Run("a request to another origin that allows it is read; one that does not is refused by CORS", func(t *testing.T) {
		var results struct {
			Open   int
			Closed string
		}
		p.Wait(t, `window.results.open && window.results.closed && window.results`, 5*time.Second, &results)
		if results.Open != 42 || results.Closed != "refused" {
			t.Fatalf("results %+v", results)
		}
		var open, closed *browsertest.Request
		for _, r := range p.Requests() {
			switch {
			case strings.HasSuffix(r.URL, "/open"):
				open = &r
			case strings.HasSuffix(r.URL, "/closed"):
				closed = &r
			}
		}
		if open == nil || open.Method != http.MethodGet || open.Status != http.StatusOK || open.Failure != "" {
			t.Fatalf("the open request: %+v", open)
		}
		if closed == nil || !strings.Contains(closed.Failure, "CORS") {
			t.Fatalf("the closed request, refused by CORS: %+v", closed)
		}
	})
	t.Run("Eval returns a value and the console is kept", func(t *testing.T) {
		var sum int
		p.Eval(t, `Promise.resolve(40 + 2)`, &sum)
		if sum != 42 {
			t.Fatalf("sum %d", sum)
		}
		if logs := strings.Join(p.Logs(), "\n"); !strings.Contains(logs, `console.log: "page" "loaded"`) {
			t.Fatalf("logs %q", logs)
		}
	})
	t.Run("a wait that is never satisfied times out", func(t *testing.T) {
		if err := p.WaitErr(`window.never`, 100*time.Millisecond, nil); err == nil || !strings.Contains(err.Error(), "timed out") {
			t.Fatalf("err %v", err)
		}
	})
}
