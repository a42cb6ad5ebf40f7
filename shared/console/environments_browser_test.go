package console_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/flagplane/flagplane/shared/console/consoletest"
)

// p2EnvKey reads one credential of an environment through the API.
func p2EnvKey(tb testing.TB, c *consoletest.Console, env, field string) string {
	tb.Helper()
	return p2JSON(tb, c, "GET", "/api/v2/projects/shop/environments/"+env, nil, 200)[field].(string)
}

// p2GrantClipboard lets the console's origin read and write the clipboard,
// as a person's click on Copy would be allowed to.
func p2GrantClipboard(tb testing.TB, c *consoletest.Console) {
	tb.Helper()
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		c.Page.Do(tb, func(ctx context.Context, _ *chromedp.Target) (chromedp.Void, error) {
			_, err := chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{
				Permission: &browser.PermissionDescriptor{Name: name}, Setting: browser.PermissionSettingGranted, Origin: c.Base,
			})
			return chromedp.Void{}, err
		})
	}
}

func TestConsoleEnvironments(t *testing.T) {
	t.Parallel() // each test has its own server and browser
	c := consoletest.Start(t)
	c.API(t, "POST", "/api/v2/projects", map[string]any{"key": "shop", "name": "Shop"}, 201)
	c.API(t, "PATCH", "/api/v2/projects/shop/environments/production", []map[string]any{
		{"op": "replace", "path": "/requireComments", "value": true},
		{"op": "replace", "path": "/approvalSettings/required", "value": true},
		{"op": "replace", "path": "/approvalSettings/minNumApprovals", "value": 2},
	}, 200)
	c.SignIn(t, c.Token)
	sdk, mobile := p2EnvKey(t, c, "production", "apiKey"), p2EnvKey(t, c, "production", "mobileKey")

	t.Run("each environment shows its settings and approval summary", func(t *testing.T) {
		c.Go(t, "/projects/shop/environments")
		row := c.Text(t, `#env-list tr[data-env="production"]`)
		for _, want := range []string{"Production", "Comments required: yes", "Confirm changes: no", "Flags: required, 2 approval(s)"} {
			if !strings.Contains(row, want) {
				t.Errorf("the production row %q does not say %q", row, want)
			}
		}
	})

	t.Run("keys are masked: only their last 4 characters are in the page", func(t *testing.T) {
		c.Go(t, "/projects/shop/environments")
		var html string
		c.Page.Eval(t, `document.documentElement.outerHTML`, &html)
		for _, k := range []string{sdk, mobile} {
			if strings.Contains(html, k) || strings.Contains(html, k[4:]) {
				t.Errorf("the page holds the full key %s", k)
			}
		}
		if got := c.Text(t, `tr[data-env="production"] [data-credential="sdk"]`); got != "••••"+sdk[len(sdk)-4:] {
			t.Errorf("the SDK key shows as %q", got)
		}
	})

	t.Run("Copy puts the full key on the clipboard and says so", func(t *testing.T) {
		c.Go(t, "/projects/shop/environments")
		p2GrantClipboard(t, c)
		p2Click(t, c, "#copy-sdk-production")
		p2Wait(t, c, `document.getElementById("status").textContent.includes("Copied the SDK key of Production")`)
		var got string
		c.Page.Eval(t, `navigator.clipboard.readText()`, &got)
		if got != sdk {
			t.Errorf("the clipboard holds %q, want the SDK key", got)
		}
	})

	t.Run("a reset asks first, and cancelling changes nothing", func(t *testing.T) {
		c.Go(t, "/projects/shop/environments")
		p2Click(t, c, "#reset-sdk-production")
		p2Dialog(t, c, "", false)
		p2Wait(t, c, `document.getElementById("status").textContent.includes("cancelled")`)
		if now := p2EnvKey(t, c, "production", "apiKey"); now != sdk {
			t.Errorf("cancelling changed the SDK key")
		}
	})

	t.Run("a confirmed reset changes the key and shows the new one masked", func(t *testing.T) {
		c.Go(t, "/projects/shop/environments")
		p2Click(t, c, "#reset-mobile-production")
		p2Dialog(t, c, "", true)
		p2Wait(t, c, `document.getElementById("status").textContent.includes("was reset")`)
		now := p2EnvKey(t, c, "production", "mobileKey")
		if now == mobile {
			t.Fatal("the mobile key did not change")
		}
		if got := c.Text(t, `tr[data-env="production"] [data-credential="mobile"]`); got != "••••"+now[len(now)-4:] {
			t.Errorf("after the reset the mobile key shows as %q, want the new key's ending %q", got, now[len(now)-4:])
		}
		var html string
		c.Page.Eval(t, `document.documentElement.outerHTML`, &html)
		if strings.Contains(html, now) || strings.Contains(html, mobile) {
			t.Error("the page holds a full mobile key after the reset")
		}
	})

	t.Run("a reader sees the resets disabled with the reason", func(t *testing.T) {
		tok := p2JSON(t, c, "POST", "/api/v2/tokens", map[string]any{"name": "looker", "role": "reader"}, 201)["token"].(string)
		c.Page.Do(t, chromedp.Click(chromedp.CSS("#sign-out")))
		c.SignIn(t, tok)
		c.Go(t, "/projects/shop/environments")
		var denied struct {
			Disabled bool   `json:"disabled"`
			Action   string `json:"action"`
			Why      string `json:"why"`
		}
		c.Page.Eval(t, `(() => { const b = document.querySelector("#reset-sdk-production"); return {disabled: b.disabled, action: b.dataset.denied || "", why: b.title}; })()`, &denied)
		if !denied.Disabled || denied.Action != "updateApiKey" || denied.Why == "" {
			t.Errorf("the reader's reset button: %+v, want disabled for updateApiKey with a reason", denied)
		}
		c.API(t, "GET", "/api/v2/projects/shop/environments/production", nil, 200)
		c.APIAs(t, tok, "POST", "/api/v2/projects/shop/environments/production/apiKey", nil, "", 403)
	})
}
