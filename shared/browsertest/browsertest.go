// Package browsertest drives headless Chromium from Go tests, with
// chromedp: start the browser, serve a page from 127.0.0.1, open it, read
// and wait for values of its JavaScript, and see what it logged and which
// requests it made (with their status, or why they failed: CORS, say).
//
// The browser tier (make test-browser) installs Debian's chromium
// (localstack/chromium.sh) and bundles the npm packages pages load
// (localstack/browser); it sets FLAGPLANE_REQUIRE_BROWSER=1, and then a
// test fails, never skips, when Chromium or a bundle is missing or the
// browser does not start. Without that variable the tests skip.
package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The environment the browser tier sets.
const (
	// EnvRequire set to 1 makes a missing browser or bundle a failure;
	// otherwise the tests skip.
	EnvRequire = "FLAGPLANE_REQUIRE_BROWSER"
	// EnvChromium is the browser binary; DefaultChromium when unset.
	EnvChromium = "FLAGPLANE_CHROMIUM"
	// EnvBundles is the directory of the bundled npm packages
	// (localstack/browser/dist).
	EnvBundles = "FLAGPLANE_BROWSER_BUNDLES"
)

// DefaultChromium is where Debian's chromium package puts the browser.
const DefaultChromium = "/usr/bin/chromium"

// Require skips the test unless the browser tier runs it.
func Require(tb testing.TB) {
	tb.Helper()
	if os.Getenv(EnvRequire) != "1" {
		tb.Skipf("%s is not 1: run make test-browser", EnvRequire)
	}
}

// Browser is one headless Chromium, stopped when the test ends.
type Browser struct {
	ctx context.Context
}

// Start starts headless Chromium (EnvChromium, or DefaultChromium) with a
// profile of its own, driven over a pipe (no DevTools port). It skips unless
// the browser tier runs the test (Require), and fails when the browser
// is missing or does not start.
func Start(tb testing.TB) *Browser {
	tb.Helper()
	Require(tb)
	bin := os.Getenv(EnvChromium)
	if bin == "" {
		bin = DefaultChromium
	}
	if _, err := os.Stat(bin); err != nil {
		tb.Fatalf("Chromium not found at %s (%s): localstack/chromium.sh installs Debian's chromium: %v", bin, EnvChromium, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(tb.TempDir()),
		chromedp.DisableGPU,
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	tb.Cleanup(func() {
		cancel()
		cancelAlloc() // waits for the browser to exit
	})
	// The first action starts the browser; a timeout here would stop it
	// later, so the wait is a separate goroutine's.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }()
	select {
	case err := <-started:
		if err != nil {
			tb.Fatalf("start Chromium (%s): %v", bin, err)
		}
	case <-time.After(60 * time.Second):
		tb.Fatalf("Chromium (%s) did not start within 60 s", bin)
	}
	return &Browser{ctx: ctx}
}

// Request is one request a page made, as the browser saw it.
type Request struct {
	Method, URL string
	// Status is the answer's status, 0 when there was none.
	Status int
	// Failure says why the request failed (a CORS refusal, a refused
	// connection), if it did.
	Failure string
}

// Page is one tab of the browser.
type Page struct {
	ctx context.Context

	mu       sync.Mutex
	logs     []string
	requests map[network.RequestID]*Request
	order    []network.RequestID
}

// Open opens url in a new tab, closed when the test ends, and waits for
// it to load. What the page logs and the requests it makes are kept; they
// are written to the test's log when the test fails.
func (b *Browser) Open(tb testing.TB, url string) *Page {
	tb.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	p := &Page{ctx: ctx, requests: map[network.RequestID]*Request{}}
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("the page's log:\n%s", strings.Join(p.Logs(), "\n"))
			for _, r := range p.Requests() {
				tb.Logf("request %s %s: %d %s", r.Method, r.URL, r.Status, r.Failure)
			}
		}
		cancel()
	})
	if err := chromedp.Listen(ctx, p.listen); err != nil {
		tb.Fatalf("listen to the tab: %v", err)
	}
	navCtx, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	if err := chromedp.Do(navCtx, chromedp.Navigate(url)); err != nil {
		tb.Fatalf("open %s: %v", url, err)
	}
	return p
}

// listen keeps the tab's console calls, exceptions and requests; it runs
// on chromedp's reading goroutine, so it only records.
func (p *Page) listen(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		var args []string
		for _, a := range e.Args {
			if len(a.Value) > 0 {
				args = append(args, string(a.Value))
			} else {
				args = append(args, a.Description)
			}
		}
		p.logs = append(p.logs, fmt.Sprintf("console.%s: %s", e.Type, strings.Join(args, " ")))
	case *runtime.EventExceptionThrown:
		p.logs = append(p.logs, "exception: "+(&chromedp.ExceptionError{ExceptionDetails: e.ExceptionDetails}).Error())
	case *network.EventRequestWillBeSent:
		if _, ok := p.requests[e.RequestID]; !ok {
			p.order = append(p.order, e.RequestID)
		}
		p.requests[e.RequestID] = &Request{Method: e.Request.Method, URL: e.Request.URL}
	case *network.EventResponseReceived:
		if r, ok := p.requests[e.RequestID]; ok {
			r.Status = int(e.Response.Status)
		}
	case *network.EventLoadingFailed:
		if r, ok := p.requests[e.RequestID]; ok && !e.Canceled {
			r.Failure = e.ErrorText
			if e.CorsErrorStatus != nil {
				r.Failure += " (CORS: " + string(e.CorsErrorStatus.CorsError) + ")"
			}
		}
	}
}

// Logs are the page's console calls and uncaught exceptions so far.
func (p *Page) Logs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.logs...)
}

// Requests are the requests the page made so far, in order.
func (p *Page) Requests() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Request, 0, len(p.order))
	for _, id := range p.order {
		out = append(out, *p.requests[id])
	}
	return out
}

// Eval evaluates a JavaScript expression in the page (awaiting it when it
// is a promise) and decodes its JSON value into out (nil to ignore it).
func (p *Page) Eval(tb testing.TB, expr string, out any) {
	tb.Helper()
	ctx, stop := context.WithTimeout(p.ctx, 30*time.Second)
	defer stop()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		tb.Fatalf("evaluate %s: %v", expr, err)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			tb.Fatalf("evaluate %s: the value %s does not decode into %T: %v", expr, raw, out, err)
		}
	}
}

// ErrTimeout is the error of a wait that ran out of time.
var ErrTimeout = errors.New("timed out")

// Wait polls a JavaScript expression (every 5 ms) until it is truthy and
// decodes that value into out (nil to ignore it); the test fails when it
// is not truthy within timeout.
func (p *Page) Wait(tb testing.TB, expr string, timeout time.Duration, out any) {
	tb.Helper()
	if err := p.WaitErr(expr, timeout, out); err != nil {
		tb.Fatalf("wait for %s: %v", expr, err)
	}
}

// WaitErr is Wait returning the error (ErrTimeout when it ran out of time).
func (p *Page) WaitErr(expr string, timeout time.Duration, out any) error {
	ctx, stop := context.WithTimeout(p.ctx, timeout+5*time.Second)
	defer stop()
	raw, err := chromedp.Run(ctx, chromedp.Poll[[]byte](expr,
		chromedp.WithPollingInterval(5*time.Millisecond), chromedp.WithPollingTimeout(timeout)))
	if errors.Is(err, chromedp.ErrPollingTimeout) {
		return fmt.Errorf("%w after %v", ErrTimeout, timeout)
	}
	if err != nil {
		return err
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// Bundle reads a bundled npm package, name.js, from EnvBundles (the
// browser tier's localstack/browser/dist); the test fails without it.
func Bundle(tb testing.TB, name string) []byte {
	tb.Helper()
	dir := os.Getenv(EnvBundles)
	if dir == "" {
		tb.Fatalf("%s is not set: make test-browser bundles the npm packages into localstack/browser/dist and sets it", EnvBundles)
	}
	b, err := os.ReadFile(filepath.Join(dir, name+".js"))
	if err != nil {
		tb.Fatalf("bundle %s: %v (make test-browser builds it)", name, err)
	}
	return b
}

// Serve serves files (by path, "/index.html"; "/" serves "/index.html")
// on a free port of 127.0.0.1 until the test ends, and returns its base
// URL, http://127.0.0.1:port: the page's origin.
func Serve(tb testing.TB, files map[string][]byte) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("listen for the page server: %v", err)
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		if path == "/" {
			path = "/index.html"
		}
		b, ok := files[path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		switch {
		case strings.HasSuffix(path, ".html"):
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		case strings.HasSuffix(path, ".js"):
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		}
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(b)
	})}
	go func() { _ = srv.Serve(ln) }()
	tb.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// Do runs chromedp steps in the tab (chromedp.Click, chromedp.SendKeys,
// chromedp.SetValue, ...), failing the test when one fails or all take
// longer than 30 s.
func (p *Page) Do(tb testing.TB, steps ...chromedp.Action[chromedp.Void]) {
	tb.Helper()
	ctx, stop := context.WithTimeout(p.ctx, 30*time.Second)
	defer stop()
	if err := chromedp.Do(ctx, steps...); err != nil {
		tb.Fatalf("run in the page: %v", err)
	}
}

// Screenshot answers a PNG of the whole page.
func (p *Page) Screenshot(tb testing.TB) []byte {
	tb.Helper()
	ctx, stop := context.WithTimeout(p.ctx, 30*time.Second)
	defer stop()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.Fatalf("screenshot: %v", err)
	}
	return png
}
