package console_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/flagplane/flagplane/shared/console/consoletest"
)

func TestConsoleWebhooks(t *testing.T) {
	t.Parallel() // each test has its own server and browser
	// The receiver: a local endpoint (the local server on loopback may
	// deliver to private addresses) that counts what it got.
	var received atomic.Int64
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer recv.Close()

	c := consoletest.Start(t)
	c.API(t, "POST", "/api/v2/projects", map[string]any{"key": "shop", "name": "Shop"}, 201)
	c.SignIn(t, c.Token)

	var id, secret string
	t.Run("a created signing webhook is listed and its secret is shown once", func(t *testing.T) {
		c.Go(t, "/webhooks")
		c.Page.Do(t,
			chromedp.SetValue(chromedp.CSS("#webhook-name"), "Receiver"),
			chromedp.SetValue(chromedp.CSS("#webhook-url"), recv.URL+"/hook"),
			chromedp.Click(chromedp.CSS("#webhook-sign")),
			chromedp.SetValue(chromedp.CSS("#webhook-tags"), "ops, audit"),
			chromedp.Click(chromedp.CSS("#create-webhook button[type=submit]")))
		p3Wait(t, c, `!!document.querySelector("#webhooks tbody tr") && !!document.getElementById("webhook-secret-value")`)
		c.Page.Eval(t, `document.querySelector("#webhooks tbody tr").dataset.id`, &id)
		c.Page.Eval(t, `document.getElementById("webhook-secret-value").value`, &secret)
		if len(secret) != 64 {
			t.Errorf("secret shown: %q", secret)
		}
		row := c.Text(t, "#webhooks tbody tr")
		for _, want := range []string{"Receiver", recv.URL + "/hook", "On", "yes", "ops", "audit"} {
			if !strings.Contains(row, want) {
				t.Errorf("the row %q lacks %q", row, want)
			}
		}
	})

	t.Run("a flag change is delivered and the webhook's page shows the attempt with its status", func(t *testing.T) {
		c.API(t, "POST", "/api/v2/flags/shop", map[string]any{"key": "checkout", "name": "Checkout"}, 201)
		deadline := time.Now().Add(20 * time.Second)
		for {
			c.Go(t, "/webhooks/"+id)
			if c.Text(t, "#deliveries tbody") != "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no delivery attempt shown within 20 s (the receiver got %d)", received.Load())
			}
			time.Sleep(200 * time.Millisecond)
		}
		status := c.Text(t, "#deliveries tbody tr td.status")
		result := c.Text(t, "#deliveries tbody tr td:nth-of-type(1)")
		if status != "200" || result != "delivered" || received.Load() == 0 {
			t.Errorf("attempt shown: status %q, result %q; the receiver got %d", status, result, received.Load())
		}
	})

	t.Run("the webhook's page never shows the secret again", func(t *testing.T) {
		var shown bool
		c.Page.Eval(t, fmt.Sprintf(`document.body.textContent.includes(%[1]q) || [...document.querySelectorAll("input")].some((i) => i.value === %[1]q)`, secret), &shown)
		if shown {
			t.Error("the secret is on the webhook's page")
		}
	})

	t.Run("turning the webhook off is saved and shown", func(t *testing.T) {
		c.Page.Do(t, chromedp.Click(chromedp.CSS("button.switch")))
		p3Wait(t, c, `(document.querySelector("button.switch") || {}).getAttribute && document.querySelector("button.switch").getAttribute("aria-pressed") === "false"`)
		var w struct {
			On bool `json:"on"`
		}
		if err := json.Unmarshal(c.API(t, "GET", "/api/v2/webhooks/"+id, nil, 200), &w); err != nil {
			t.Fatal(err)
		}
		if w.On {
			t.Error("the webhook is still on")
		}
	})

	t.Run("a refused delivery is shown as failed with the receiver's status", func(t *testing.T) {
		failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		}))
		defer failing.Close()
		var w struct {
			ID string `json:"_id"`
		}
		if err := json.Unmarshal(c.API(t, "POST", "/api/v2/webhooks", map[string]any{"name": "Failing", "url": failing.URL, "sign": false, "on": true}, 200), &w); err != nil {
			t.Fatal(err)
		}
		c.API(t, "POST", "/api/v2/flags/shop", map[string]any{"key": "search", "name": "Search"}, 201)
		c.Go(t, "/webhooks/"+w.ID)
		deadline := time.Now().Add(20 * time.Second)
		for c.Text(t, "#deliveries tbody") == "" {
			if time.Now().After(deadline) {
				t.Fatal("no delivery attempt shown within 20 s")
			}
			time.Sleep(200 * time.Millisecond)
			c.Page.Do(t, chromedp.Click(chromedp.CSS("#refresh-deliveries")))
		}
		row := c.Text(t, "#deliveries tbody tr")
		if !strings.Contains(row, "failed") || !strings.Contains(row, "503") {
			t.Errorf("the failed attempt reads %q", row)
		}
		c.API(t, "DELETE", "/api/v2/webhooks/"+w.ID, nil, 204)
		c.Go(t, "/webhooks/"+id)
	})

	t.Run("deleting the webhook after confirming removes it", func(t *testing.T) {
		c.Page.Do(t, chromedp.Click(chromedp.CSS(`button[aria-label="Delete webhook Receiver"]`)))
		p3Confirm(t, c)
		p3Wait(t, c, `document.body.dataset.page === "/webhooks" && document.getElementById("main").textContent.includes("No webhook yet.")`)
		c.API(t, "GET", "/api/v2/webhooks/"+id, nil, 404)
	})
}
