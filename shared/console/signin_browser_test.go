package console_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/flagplane/flagplane/shared/console/consoletest"
)

func TestConsoleSignIn(t *testing.T) {
	t.Parallel() // each test has its own server and browser
	c := consoletest.Start(t)
	c.API(t, "POST", "/api/v2/projects", map[string]any{"key": "shop", "name": "Shop"}, 201)

	t.Run("an unknown token is refused with the API's answer and not kept", func(t *testing.T) {
		c.Go(t, "/sign-in")
		c.Page.Do(t,
			chromedp.SetValue(chromedp.CSS("#token"), "api-00000000-0000-0000-0000-000000000000"),
			chromedp.Click(chromedp.CSS("#sign-in-token button[type=submit]")))
		c.Page.Wait(t, `document.querySelector("main .error") && document.querySelector("main .error").textContent.includes("401")`, 10*time.Second, nil)
		var kept bool
		c.Page.Eval(t, `sessionStorage.getItem("flagplane.token") !== null`, &kept)
		if kept {
			t.Error("a refused token was kept in sessionStorage")
		}
	})

	t.Run("the admin token signs in and lists the projects", func(t *testing.T) {
		c.SignIn(t, c.Token)
		c.WaitText(t, "Shop")
	})

	t.Run("signing out forgets the token and shows the sign-in page", func(t *testing.T) {
		c.Page.Do(t, chromedp.Click(chromedp.CSS("#sign-out")))
		c.Page.Wait(t, `document.body.dataset.page === "/sign-in"`, 10*time.Second, nil)
		var kept bool
		c.Page.Eval(t, `sessionStorage.getItem("flagplane.token") !== null`, &kept)
		if kept {
			t.Error("the token is still in sessionStorage after signing out")
		}
	})
}

func TestConsoleSignInWithOAuthClient(t *testing.T) {
	t.Parallel() // each test has its own server and browser
	c := consoletest.Start(t)
	c.API(t, "POST", "/api/v2/projects", map[string]any{"key": "shop", "name": "Shop"}, 201)
	var client struct {
		ID     string `json:"_clientId"`
		Secret string `json:"_clientSecret"`
	}
	if err := json.Unmarshal(c.API(t, "POST", "/api/v2/oauth/clients", map[string]any{"name": "console", "redirectUri": "https://example.com/callback"}, 201), &client); err != nil {
		t.Fatal(err)
	}
	signIn := func(t *testing.T, secret string) {
		t.Helper()
		c.Go(t, "/sign-in")
		c.Page.Do(t,
			chromedp.SetValue(chromedp.CSS("#client-id"), client.ID),
			chromedp.SetValue(chromedp.CSS("#client-secret"), secret),
			chromedp.Click(chromedp.CSS("#sign-in-oauth button[type=submit]")))
	}

	t.Run("a wrong secret shows the token endpoint's invalid_client and keeps nothing", func(t *testing.T) {
		signIn(t, "not-the-secret")
		c.Page.Wait(t, `document.querySelector("main .error") && document.querySelector("main .error").textContent.includes("invalid_client")`, 10*time.Second, nil)
		var kept bool
		c.Page.Eval(t, `sessionStorage.getItem("flagplane.token") !== null`, &kept)
		if kept {
			t.Error("a refused client's token was kept")
		}
	})

	t.Run("the client's id and secret sign in with a bearer token of the grant", func(t *testing.T) {
		signIn(t, client.Secret)
		c.Page.Wait(t, `document.body.dataset.page === "/" && document.getElementById("main").textContent.includes("Shop")`, 10*time.Second, nil)
		var tok string
		c.Page.Eval(t, `sessionStorage.getItem("flagplane.token")`, &tok)
		if !strings.HasPrefix(tok, "Bearer ") {
			t.Errorf("the session holds %q, want the grant's bearer token", tok)
		}
		if got := c.Text(t, "#who"); !strings.Contains(got, client.ID) {
			t.Errorf("the header says %q, want the client's id", got)
		}
	})
}
