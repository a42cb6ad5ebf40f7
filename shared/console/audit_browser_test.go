package console_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/flagplane/flagplane/shared/console/consoletest"
)

// p2Wait waits up to 10 s for a JavaScript condition of the page.
func p2Wait(tb testing.TB, c *consoletest.Console, expr string) {
	tb.Helper()
	c.Page.Wait(tb, expr, 10*time.Second, nil)
}

// p2Click clicks the first element a CSS selector finds.
func p2Click(tb testing.TB, c *consoletest.Console, selector string) {
	tb.Helper()
	c.Page.Do(tb, chromedp.Click(chromedp.CSS(selector)))
}

// p2Set sets the value of an input.
func p2Set(tb testing.TB, c *consoletest.Console, selector, value string) {
	tb.Helper()
	c.Page.Do(tb, chromedp.SetValue(chromedp.CSS(selector), value))
}

// p2Dialog waits for the open dialog, fills its comment when one is given,
// and confirms it (or cancels it when confirm is false).
func p2Dialog(tb testing.TB, c *consoletest.Console, comment string, confirm bool) {
	tb.Helper()
	p2Wait(tb, c, `!!document.querySelector("dialog[open]")`)
	if comment != "" {
		p2Set(tb, c, "dialog[open] #ask-comment", comment)
	}
	if confirm {
		p2Click(tb, c, `dialog[open] button[type=submit]`)
	} else {
		p2Click(tb, c, `dialog[open] button.secondary`)
	}
	p2Wait(tb, c, `!document.querySelector("dialog[open]")`)
}

// p2JSON sends a request with the admin token and decodes the answer.
func p2JSON(tb testing.TB, c *consoletest.Console, method, path string, body any, want int) map[string]any {
	tb.Helper()
	var out map[string]any
	if err := json.Unmarshal(c.API(tb, method, path, body, want), &out); err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	return out
}

// p2Strings answers the JSON array a page expression gives.
func p2Strings(tb testing.TB, c *consoletest.Console, expr string) []string {
	tb.Helper()
	var out []string
	c.Page.Eval(tb, expr, &out)
	return out
}

func TestConsoleAudit(t *testing.T) {
	t.Parallel() // each test has its own server and browser
	c := consoletest.Start(t)
	c.API(t, "POST", "/api/v2/projects", map[string]any{"key": "shop", "name": "Shop"}, 201)
	c.API(t, "POST", "/api/v2/flags/shop", map[string]any{"key": "dark-mode", "name": "Dark mode"}, 201)
	c.API(t, "PATCH", "/api/v2/flags/shop/dark-mode", map[string]any{
		"comment": "rename for the launch", "patch": []map[string]any{{"op": "replace", "path": "/name", "value": "Dark theme"}},
	}, 200)
	c.SignIn(t, c.Token)

	t.Run("the list shows each entry with its author and comment, newest first", func(t *testing.T) {
		c.Go(t, "/audit")
		p2Wait(t, c, `!!document.querySelector("#audit-list tbody tr")`)
		first := c.Text(t, "#audit-list tbody tr")
		for _, want := range []string{"rename for the launch", "owner@flagplane.local", "Dark theme"} {
			if !strings.Contains(first, want) {
				t.Errorf("the newest row %q does not hold %q", first, want)
			}
		}
	})

	t.Run("the text filter keeps only matching entries", func(t *testing.T) {
		c.Go(t, "/audit")
		p2Set(t, c, "#audit-q", "launch")
		p2Click(t, c, "#audit-filter button[type=submit]")
		p2Wait(t, c, `location.hash.includes("q=launch") && document.body.dataset.page === "/audit" && document.querySelectorAll("#audit-list tbody tr").length === 1`)
	})

	t.Run("a resource specifier of another project keeps no entry", func(t *testing.T) {
		c.Go(t, "/audit?spec="+url.QueryEscape("proj/other:env/*:flag/*"))
		p2Wait(t, c, `!!document.querySelector("#audit-empty")`)
		c.Go(t, "/audit?spec="+url.QueryEscape("proj/shop:env/*:flag/*"))
		p2Wait(t, c, `document.querySelectorAll("#audit-list tbody tr").length === 2`)
	})

	t.Run("an entry's diff shows exactly the field that changed, before and after", func(t *testing.T) {
		c.Go(t, "/audit?q=launch")
		p2Wait(t, c, `!!document.querySelector("#audit-list tbody tr a")`)
		p2Click(t, c, "#audit-list tbody tr a")
		p2Wait(t, c, `document.body.dataset.page.startsWith("/audit/") && !!document.querySelector("#audit-diff")`)
		paths := p2Strings(t, c, `[...document.querySelectorAll("#audit-diff tbody tr")].map(r => r.dataset.path)`)
		if fmt.Sprint(paths) != "[/name]" {
			t.Fatalf("the diff shows %v, want [/name]", paths)
		}
		before, after := c.Text(t, "#audit-diff .diff-del"), c.Text(t, "#audit-diff .diff-add")
		if before != `"Dark mode"` || after != `"Dark theme"` {
			t.Errorf("the diff shows %s -> %s, want \"Dark mode\" -> \"Dark theme\"", before, after)
		}
		if got := c.Text(t, "#audit-comment"); got != "rename for the launch" {
			t.Errorf("the entry's comment is %q", got)
		}
	})

	t.Run("a create lists every field as added", func(t *testing.T) {
		c.Go(t, "/audit?q="+url.QueryEscape("created the flag"))
		p2Wait(t, c, `!!document.querySelector("#audit-list tbody tr a")`)
		p2Click(t, c, "#audit-list tbody tr a")
		p2Wait(t, c, `document.body.dataset.page.startsWith("/audit/") && !!document.querySelector("#audit-diff")`)
		kinds := p2Strings(t, c, `[...new Set([...document.querySelectorAll("#audit-diff tbody tr")].map(r => r.dataset.kind))]`)
		if fmt.Sprint(kinds) != "[add]" {
			t.Errorf("a create's diff has kinds %v, want only add", kinds)
		}
	})
}
