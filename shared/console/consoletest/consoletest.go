// Package consoletest runs the console in a real browser for tests: the
// local server (what flagplane serve runs) on a free port of 127.0.0.1,
// headless Chromium on its page, an API client with the admin token, and
// helpers to sign in, go to a page and wait for it to be drawn. The
// browser tier sets what browsertest needs; without it the tests skip.
package consoletest

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
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/browsertest"
	"github.com/flagplane/flagplane/shared/localserver"
)

// Console is a local server with the console open in a browser tab.
type Console struct {
	// Base is the server's URL, http://127.0.0.1:port.
	Base string
	// Token is the admin access token the server created.
	Token string
	// Page is the browser tab.
	Page *browsertest.Page
}

// Start runs a local server on a fresh data file and opens its console
// (not signed in) in a new browser.
func Start(tb testing.TB) *Console {
	tb.Helper()
	browser := browsertest.Start(tb)
	base, tok := serve(tb)
	c := &Console{Base: base, Token: tok}
	c.Page = browser.Open(tb, base+"/")
	return c
}

func serve(tb testing.TB) (string, string) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- localserver.RunLocal(ctx, localserver.LocalConfig{
			Addr: "127.0.0.1:0", DataFile: filepath.Join(tb.TempDir(), "flagplane.db"), Out: &out,
			// Approvals on, as flagplane serve has them by default.
			Settings: app.Settings{Approvals: true}, Ready: func(a string) { ready <- a }, ShutdownGrace: time.Second,
		}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	select {
	case addr := <-ready:
		tb.Cleanup(func() { cancel(); <-done })
		return "http://" + addr, regexp.MustCompile(`api-[0-9a-f-]{36}`).FindString(out.String())
	case err := <-done:
		cancel()
		tb.Fatalf("local server: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		tb.Fatal("the local server did not start within 30 s")
	}
	return "", ""
}

// API sends a request with the admin token (a JSON body unless body is a
// string, sent as is with contentType) and fails the test unless the
// answer has status want; it answers the body.
func (c *Console) API(tb testing.TB, method, path string, body any, want int) []byte {
	tb.Helper()
	return c.APIAs(tb, c.Token, method, path, body, "", want)
}

// APIAs is API with another token and content type ("" for JSON).
func (c *Console) APIAs(tb testing.TB, token, method, path string, body any, contentType string, want int) []byte {
	tb.Helper()
	var rd io.Reader
	if body != nil {
		if s, ok := body.(string); ok {
			rd = strings.NewReader(s)
		} else {
			b, err := json.Marshal(body)
			if err != nil {
				tb.Fatal(err)
			}
			rd = bytes.NewReader(b)
		}
	}
	req, err := http.NewRequest(method, c.Base+path, rd)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", token)
	if body != nil {
		if contentType == "" {
			contentType = "application/json"
		}
		req.Header.Set("Content-Type", contentType)
	}
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

// SignIn signs the tab in with token through the sign-in form and waits
// for the projects page.
func (c *Console) SignIn(tb testing.TB, token string) {
	tb.Helper()
	c.Go(tb, "/sign-in")
	c.Page.Do(tb,
		chromedp.SetValue(chromedp.CSS("#token"), token),
		chromedp.Click(chromedp.CSS("#sign-in-token button[type=submit]")),
	)
	c.Page.Wait(tb, `document.body.dataset.page === "/" && document.querySelector("main h1") && document.querySelector("main h1").textContent === "Projects"`, 10*time.Second, nil)
}

// Go shows the console page at path (as after "#") and waits until it is
// drawn: the app marks <body data-page> once the page's render finished.
func (c *Console) Go(tb testing.TB, path string) {
	tb.Helper()
	var before string
	c.Page.Eval(tb, `document.body.dataset.ready || ""`, &before)
	// The same hash again fires no hashchange: send one, so the page is
	// drawn anew either way.
	c.Page.Eval(tb, fmt.Sprintf(`(location.hash === %[1]q ? window.dispatchEvent(new HashChangeEvent("hashchange")) : (location.hash = %[1]q)), true`, "#"+path), nil)
	p := path
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	c.Page.Wait(tb, fmt.Sprintf(`document.body.dataset.page === %q && document.body.dataset.ready !== %q`, p, before), 10*time.Second, nil)
}

// Text answers the text of the first element matching a CSS selector
// ("" when there is none).
func (c *Console) Text(tb testing.TB, selector string) string {
	tb.Helper()
	var s string
	c.Page.Eval(tb, fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ""`, selector), &s)
	return s
}

// WaitText waits until the page's main area contains text.
func (c *Console) WaitText(tb testing.TB, text string) {
	tb.Helper()
	c.Page.Wait(tb, fmt.Sprintf(`document.getElementById("main").textContent.includes(%q)`, text), 10*time.Second, nil)
}

// AxeViolation is one rule axe-core found broken, with the elements that
// break it (their CSS selectors).
type AxeViolation struct {
	ID      string   `json:"id"`
	Impact  string   `json:"impact"`
	Help    string   `json:"help"`
	Targets []string `json:"targets"`
}

func (v AxeViolation) String() string {
	return fmt.Sprintf("%s %s (%s): %s", v.Impact, v.ID, v.Help, strings.Join(v.Targets, ", "))
}

// Axe runs axe-core (the browser tier's bundle, injected into the page
// once) on the page as it is now, and fails the test on every serious or
// critical violation, naming the rule, its impact and help and the
// elements; minor and moderate ones are logged. It answers them all.
func (c *Console) Axe(tb testing.TB) []AxeViolation {
	tb.Helper()
	var loaded bool
	c.Page.Eval(tb, `typeof window.axe === "object"`, &loaded)
	if !loaded {
		c.Page.Eval(tb, string(browsertest.Bundle(tb, "axe"))+";true", nil)
	}
	var found []AxeViolation
	c.Page.Eval(tb, `axe.run(document, {resultTypes: ["violations"]}).then((r) => r.violations.map((v) => ({
		id: v.id, impact: v.impact || "", help: v.help,
		targets: v.nodes.map((n) => n.target.join(" ")),
	})))`, &found)
	var where string
	c.Page.Eval(tb, `location.hash`, &where)
	for _, v := range found {
		if v.Impact == "serious" || v.Impact == "critical" {
			tb.Errorf("axe-core on %s: %s", where, v)
		} else {
			tb.Logf("axe-core on %s (not failing): %s", where, v)
		}
	}
	return found
}
