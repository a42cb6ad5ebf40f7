package console_test

import (
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
