package console_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/console/consoletest"
)

// p2Segment reads a segment of shop/production through the API.
func p2Segment(tb testing.TB, c *consoletest.Console, key string) map[string]any {
	tb.Helper()
	return p2JSON(tb, c, "GET", "/api/v2/segments/shop/production/"+key, nil, 200)
}

func TestConsoleSegments(t *testing.T) {
	t.Parallel() // each test has its own server and browser
	c := consoletest.Start(t)
	c.API(t, "POST", "/api/v2/projects", map[string]any{"key": "shop", "name": "Shop"}, 201)
	c.API(t, "POST", "/api/v2/segments/shop/production", map[string]any{"key": "beta", "name": "Beta testers"}, 201)
	c.API(t, "POST", "/api/v2/segments/shop/production", map[string]any{"key": "staff", "name": "Staff"}, 201)
	c.APIAs(t, c.Token, "PATCH", "/api/v2/segments/shop/production/beta", map[string]any{"instructions": []map[string]any{
		{"kind": "addIncludedTargets", "contextKind": "user", "values": []string{"u0"}},
		{"kind": "addRule", "clauses": []map[string]any{{"contextKind": "user", "attribute": "email", "op": "endsWith", "values": []string{"@example.com"}, "negate": false}}},
	}}, "application/json; domain-model=flagplane.semanticpatch", 200)
	c.SignIn(t, c.Token)
	const page = "/projects/shop/segments/production/beta"

	t.Run("the list shows the environment's segments and finds one by text", func(t *testing.T) {
		c.Go(t, "/projects/shop/segments?env=production")
		names := p2Strings(t, c, `[...document.querySelectorAll("#segments-list tbody tr")].map(r => r.dataset.key)`)
		if fmt.Sprint(names) != "[beta staff]" {
			t.Errorf("the list shows %v", names)
		}
		c.Go(t, "/projects/shop/segments?env=production&q=staff")
		names = p2Strings(t, c, `[...document.querySelectorAll("#segments-list tbody tr")].map(r => r.dataset.key)`)
		if fmt.Sprint(names) != "[staff]" {
			t.Errorf("searching staff shows %v", names)
		}
	})

	t.Run("a segment's page shows its targets by kind and its rules", func(t *testing.T) {
		c.Go(t, page)
		c.WaitText(t, "Beta testers")
		if got := c.Text(t, `.targets[data-which="included"][data-kind="user"]`); !strings.Contains(got, "u0") {
			t.Errorf("included user targets: %q", got)
		}
		if got := c.Text(t, "#segment-rules"); !strings.Contains(got, `user.email endsWith "@example.com"`) {
			t.Errorf("rules: %q", got)
		}
	})

	t.Run("adding included targets previews them, then the API has them", func(t *testing.T) {
		c.Go(t, page)
		p2Set(t, c, "#seg-included-keys", "u1, u2")
		p2Click(t, c, "#seg-included-add")
		p2Wait(t, c, `!!document.querySelector("dialog[open] #segment-preview") && document.querySelector("dialog[open] #segment-preview").textContent.includes("u2")`)
		p2Dialog(t, c, "beta wave 2", true)
		p2Wait(t, c, `!!document.querySelector('.targets[data-which="included"] li[data-key="u2"]')`)
		inc := fmt.Sprint(p2Segment(t, c, "beta")["included"])
		if inc != "[u0 u1 u2]" {
			t.Errorf("the API shows included %s", inc)
		}
	})

	t.Run("excluding a key of another context kind goes to excludedContexts", func(t *testing.T) {
		c.Go(t, page)
		p2Set(t, c, "#seg-excluded-kind", "org")
		p2Set(t, c, "#seg-excluded-keys", "acme")
		p2Click(t, c, "#seg-excluded-add")
		p2Dialog(t, c, "", true)
		p2Wait(t, c, `!!document.querySelector('.targets[data-which="excluded"][data-kind="org"] li[data-key="acme"]')`)
		if got := fmt.Sprint(p2Segment(t, c, "beta")["excludedContexts"]); !strings.Contains(got, "acme") || !strings.Contains(got, "org") {
			t.Errorf("the API shows excludedContexts %s", got)
		}
	})

	t.Run("removing a target asks, and cancelling keeps it", func(t *testing.T) {
		c.Go(t, page)
		p2Click(t, c, `.targets[data-which="included"] li[data-key="u0"] button`)
		p2Dialog(t, c, "", false)
		if inc := fmt.Sprint(p2Segment(t, c, "beta")["included"]); inc != "[u0 u1 u2]" {
			t.Errorf("after a cancel the API shows %s", inc)
		}
		p2Click(t, c, `.targets[data-which="included"] li[data-key="u0"] button`)
		p2Dialog(t, c, "", true)
		p2Wait(t, c, `!document.querySelector('.targets[data-which="included"] li[data-key="u0"]') && !!document.querySelector('.targets[data-which="included"] li[data-key="u1"]')`)
		if inc := fmt.Sprint(p2Segment(t, c, "beta")["included"]); inc != "[u1 u2]" {
			t.Errorf("after the removal the API shows %s", inc)
		}
	})

	t.Run("a reader sees the edits disabled with the reason", func(t *testing.T) {
		tok := p2JSON(t, c, "POST", "/api/v2/tokens", map[string]any{"name": "looker", "role": "reader"}, 201)["token"].(string)
		p2Click(t, c, "#sign-out")
		c.SignIn(t, tok)
		c.Go(t, page)
		var state []string
		c.Page.Eval(t, `["#seg-included-add", "#seg-excluded-add", "#segment-delete"].map(s => { const b = document.querySelector(s); return b.disabled + ":" + (b.dataset.denied || ""); })`, &state)
		if fmt.Sprint(state) != "[true:updateIncluded true:updateExcluded true:deleteSegment]" {
			t.Errorf("the reader's buttons: %v", state)
		}
		p2Click(t, c, "#sign-out")
		c.SignIn(t, c.Token)
	})

	t.Run("delete asks; cancelling keeps the segment, confirming deletes it", func(t *testing.T) {
		c.Go(t, "/projects/shop/segments/production/staff")
		p2Click(t, c, "#segment-delete")
		p2Dialog(t, c, "", false)
		c.API(t, "GET", "/api/v2/segments/shop/production/staff", nil, 200)
		p2Click(t, c, "#segment-delete")
		p2Dialog(t, c, "", true)
		p2Wait(t, c, `document.body.dataset.page === "/projects/shop/segments"`)
		c.API(t, "GET", "/api/v2/segments/shop/production/staff", nil, 404)
	})
}
