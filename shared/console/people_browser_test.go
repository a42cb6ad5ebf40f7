package console_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/flagplane/flagplane/shared/console/consoletest"
)

// p3Confirm clicks the confirm button of the open dialog (ui.ask).
func p3Confirm(tb testing.TB, c *consoletest.Console) {
	tb.Helper()
	c.Page.Wait(tb, `!!document.querySelector("dialog[open] button[type=submit]")`, 10*time.Second, nil)
	c.Page.Do(tb, chromedp.Click(chromedp.CSS("dialog[open] button[type=submit]")))
	c.Page.Wait(tb, `!document.querySelector("dialog[open]")`, 10*time.Second, nil)
}

// p3Wait waits until a JavaScript condition holds on the page.
func p3Wait(tb testing.TB, c *consoletest.Console, expr string) {
	tb.Helper()
	c.Page.Wait(tb, expr, 10*time.Second, nil)
}

// p3Status answers the status of a request with token, without failing.
func p3Status(tb testing.TB, c *consoletest.Console, token, path string) int {
	tb.Helper()
	req, err := http.NewRequest("GET", c.Base+path, nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

func TestConsolePeople(t *testing.T) {
	t.Parallel() // each test has its own server and browser
	c := consoletest.Start(t)
	c.SignIn(t, c.Token)

	t.Run("a policy that is not JSON is refused before anything is sent", func(t *testing.T) {
		c.Go(t, "/roles")
		c.Page.Do(t,
			chromedp.SetValue(chromedp.CSS("#role-key"), "flag-toggler"),
			chromedp.SetValue(chromedp.CSS("#role-name"), "Flag toggler"),
			chromedp.SetValue(chromedp.CSS("#role-policy"), `[{"effect": "allow",`),
			chromedp.Click(chromedp.CSS("#create-role button[type=submit]")))
		p3Wait(t, c, `document.getElementById("role-error").textContent.includes("The policy is not JSON")`)
	})

	t.Run("a statement the API refuses shows the API's 400 naming it", func(t *testing.T) {
		c.Page.Do(t,
			chromedp.SetValue(chromedp.CSS("#role-policy"), `[{"effect": "allow", "actions": ["updateOn"], "resources": ["proj/a:env"]}]`),
			chromedp.Click(chromedp.CSS("#create-role button[type=submit]")))
		p3Wait(t, c, `document.getElementById("role-error").textContent.includes("400")`)
		if got := c.Text(t, "#role-error"); !strings.Contains(got, "statement 0") {
			t.Errorf("the error does not name the statement: %q", got)
		}
	})

	t.Run("a valid role is created and its statements read as sentences", func(t *testing.T) {
		c.Page.Do(t,
			chromedp.SetValue(chromedp.CSS("#role-policy"), `[{"effect": "allow", "actions": ["updateOn"], "resources": ["proj/*:env/production:flag/*"]}]`),
			chromedp.Click(chromedp.CSS("#create-role button[type=submit]")))
		p3Wait(t, c, `!!document.querySelector('#roles tr[data-key="flag-toggler"]')`)
		if got := c.Text(t, `#roles tr[data-key="flag-toggler"] ul.policy`); got != "allow updateOn on proj/*:env/production:flag/*" {
			t.Errorf("policy shown as %q", got)
		}
	})

	var annID string
	t.Run("an invited member is listed as invited with the role given", func(t *testing.T) {
		c.Go(t, "/members")
		c.Page.Do(t,
			chromedp.SetValue(chromedp.CSS("#invite-email"), "ann@example.com"),
			chromedp.SetValue(chromedp.CSS("#invite-first"), "Ann"),
			chromedp.SetValue(chromedp.CSS("#invite-role"), "writer"),
			chromedp.Click(chromedp.CSS("#invite button[type=submit]")))
		p3Wait(t, c, `[...document.querySelectorAll("#members tbody tr")].some((r) => r.textContent.includes("ann@example.com") && r.querySelector(".role").textContent === "writer" && r.textContent.includes("invited"))`)
		c.Page.Eval(t, `[...document.querySelectorAll("#members tbody tr")].find((r) => r.textContent.includes("ann@example.com")).dataset.id`, &annID)
	})

	t.Run("changing a member's role in the dialog saves it through the API", func(t *testing.T) {
		c.Page.Do(t, chromedp.Click(chromedp.CSS(`button[aria-label="Change role of ann@example.com"]`)))
		p3Wait(t, c, `!!document.querySelector("dialog[open] #member-role")`)
		c.Page.Do(t, chromedp.SetValue(chromedp.CSS("#member-role"), "reader"),
			chromedp.Click(chromedp.CSS(`dialog[open] input[type=checkbox][value="flag-toggler"]`)))
		p3Confirm(t, c)
		p3Wait(t, c, fmt.Sprintf(`(document.querySelector('#members tr[data-id=%q] .role') || {}).textContent === "readerflag-toggler"`, annID))
		var m struct {
			Role        string   `json:"role"`
			CustomRoles []string `json:"customRoles"`
		}
		if err := json.Unmarshal(c.API(t, "GET", "/api/v2/members/"+annID, nil, 200), &m); err != nil {
			t.Fatal(err)
		}
		if m.Role != "reader" || len(m.CustomRoles) != 1 || m.CustomRoles[0] != "flag-toggler" {
			t.Errorf("member after the change: %+v", m)
		}
	})

	t.Run("the owner cannot be given another role or removed, and says why", func(t *testing.T) {
		var why string
		c.Page.Eval(t, `(document.querySelector('button[aria-label="Remove owner@flagplane.local"]') || {}).disabled && document.querySelector('button[aria-label="Remove owner@flagplane.local"]').title`, &why)
		if !strings.Contains(why, "owner") {
			t.Errorf("the owner's Remove button: disabled with %q", why)
		}
	})

	t.Run("a created team gets a member and a custom role", func(t *testing.T) {
		c.Go(t, "/teams")
		c.Page.Do(t,
			chromedp.SetValue(chromedp.CSS("#team-key"), "ops"),
			chromedp.SetValue(chromedp.CSS("#team-name"), "Operations"),
			chromedp.Click(chromedp.CSS("#create-team button[type=submit]")))
		p3Wait(t, c, `document.body.dataset.page === "/teams/ops" && document.getElementById("main").textContent.includes("No member yet.")`)
		c.Page.Do(t, chromedp.SetValue(chromedp.CSS("#team-add-member"), annID),
			chromedp.Click(chromedp.CSS(`#team-add-member + button[type=submit]`)))
		p3Wait(t, c, `(document.getElementById("team-members") || {textContent: ""}).textContent.includes("ann@example.com")`)
		c.Page.Do(t, chromedp.SetValue(chromedp.CSS("#team-add-role"), "flag-toggler"),
			chromedp.Click(chromedp.CSS(`#team-add-role + button[type=submit]`)))
		p3Wait(t, c, `(document.getElementById("team-roles") || {textContent: ""}).textContent.includes("allow updateOn on proj/*:env/production:flag/*")`)
		var tm struct {
			MemberIDs      []string `json:"memberIds"`
			CustomRoleKeys []string `json:"customRoleKeys"`
		}
		if err := json.Unmarshal(c.API(t, "GET", "/api/v2/teams/ops", nil, 200), &tm); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(tm.MemberIDs) != "["+annID+"]" || fmt.Sprint(tm.CustomRoleKeys) != "[flag-toggler]" {
			t.Errorf("team after the changes: %+v", tm)
		}
		c.Go(t, "/members")
		if got := c.Text(t, fmt.Sprintf(`#members tr[data-id=%q] td:nth-of-type(3)`, annID)); got != "Operations" {
			t.Errorf("the member's teams read %q", got)
		}
	})

	var secret string
	t.Run("a created token's value is shown once, with a copy button, and works", func(t *testing.T) {
		c.Go(t, "/tokens")
		c.Page.Do(t,
			chromedp.SetValue(chromedp.CSS("#token-name"), "ci"),
			chromedp.SetValue(chromedp.CSS("#token-role"), "writer"),
			chromedp.Click(chromedp.CSS("#create-token button[type=submit]")))
		p3Wait(t, c, `!!document.getElementById("token-value") && (document.getElementById("tokens") || {textContent: ""}).textContent.includes("ci")`)
		c.Page.Eval(t, `document.getElementById("token-value").value`, &secret)
		if !strings.HasPrefix(secret, "api-") {
			t.Fatalf("token value shown: %q", secret)
		}
		if note := c.Text(t, "#token-secret"); !strings.Contains(note, "will not be shown again") {
			t.Errorf("the note reads %q", note)
		}
		if c.Text(t, "#token-value-copy") != "Copy" {
			t.Error("no copy button")
		}
		if got := p3Status(t, c, secret, "/api/v2/projects"); got != 200 {
			t.Errorf("the new token: status %d", got)
		}
	})

	t.Run("leaving the tokens page and coming back does not show the value again", func(t *testing.T) {
		c.Go(t, "/members")
		c.Go(t, "/tokens")
		var shown bool
		c.Page.Eval(t, fmt.Sprintf(`document.body.textContent.includes(%[1]q) || [...document.querySelectorAll("input")].some((i) => i.value === %[1]q) || JSON.stringify(sessionStorage).includes(%[1]q) || location.href.includes(%[1]q)`, secret), &shown)
		if shown {
			t.Error("the token's value is on the page again")
		}
		if got := c.Text(t, "#tokens"); !strings.Contains(got, "…"+secret[len(secret)-4:]) {
			t.Errorf("the list does not show the value's last four characters: %q", got)
		}
	})

	t.Run("resetting a token shows the new value once and the old one stops working", func(t *testing.T) {
		c.Page.Do(t, chromedp.Click(chromedp.CSS(`button[aria-label="Reset ci"]`)))
		p3Confirm(t, c)
		p3Wait(t, c, `!!document.getElementById("token-value")`)
		var fresh string
		c.Page.Eval(t, `document.getElementById("token-value").value`, &fresh)
		if fresh == secret || !strings.HasPrefix(fresh, "api-") {
			t.Fatalf("value after the reset: %q", fresh)
		}
		if old, now := p3Status(t, c, secret, "/api/v2/projects"), p3Status(t, c, fresh, "/api/v2/projects"); old != 401 || now != 200 {
			t.Errorf("after the reset: old value %d, new value %d", old, now)
		}
		secret = fresh
	})

	t.Run("deleting a token after confirming revokes it", func(t *testing.T) {
		c.Page.Do(t, chromedp.Click(chromedp.CSS(`button[aria-label="Delete ci"]`)))
		p3Confirm(t, c)
		p3Wait(t, c, `!document.getElementById("token-value") && !document.getElementById("tokens").textContent.includes("ci")`)
		if got := p3Status(t, c, secret, "/api/v2/projects"); got != 401 {
			t.Errorf("the deleted token: status %d", got)
		}
	})

	t.Run("removing a member after confirming takes them off the list", func(t *testing.T) {
		c.API(t, "POST", "/api/v2/members", []map[string]any{{"email": "bob@example.com", "role": "writer"}}, 201)
		c.Go(t, "/members")
		c.Page.Do(t, chromedp.Click(chromedp.CSS(`button[aria-label="Remove ann@example.com"]`)))
		p3Confirm(t, c)
		p3Wait(t, c, `!document.getElementById("members").textContent.includes("ann@example.com")`)
		c.API(t, "GET", "/api/v2/members/"+annID, nil, 404)
	})

	t.Run("a reader sees removing a member disabled with the reason, and an invite refused with the API's 403", func(t *testing.T) {
		var tok struct {
			Token string `json:"token"`
		}
		if err := json.Unmarshal(c.API(t, "POST", "/api/v2/tokens", map[string]any{"name": "reader", "role": "reader"}, 201), &tok); err != nil {
			t.Fatal(err)
		}
		c.Page.Do(t, chromedp.Click(chromedp.CSS("#sign-out")))
		c.SignIn(t, tok.Token)
		c.Go(t, "/members")
		var denied struct {
			Disabled bool   `json:"disabled"`
			Denied   string `json:"denied"`
			Why      string `json:"why"`
		}
		c.Page.Eval(t, `(() => { const b = document.querySelector('button[aria-label="Remove bob@example.com"]'); return {disabled: b.disabled, denied: b.dataset.denied || "", why: b.getAttribute("aria-description") || ""}; })()`, &denied)
		if !denied.Disabled || denied.Denied != "deleteMember" || denied.Why == "" {
			t.Errorf("bob's Remove button for a reader: %+v", denied)
		}
		c.Page.Do(t,
			chromedp.SetValue(chromedp.CSS("#invite-email"), "eve@example.com"),
			chromedp.Click(chromedp.CSS("#invite button[type=submit]")))
		p3Wait(t, c, `!!document.querySelector("#invite .error") && document.querySelector("#invite .error").textContent.includes("403")`)
	})
}
