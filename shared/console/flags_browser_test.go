package console_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/flagplane/flagplane/shared/browsertest"
	"github.com/flagplane/flagplane/shared/console/consoletest"
)

const semanticPatchType = "application/json; domain-model=flagplane.semanticpatch"

// wait waits for a JavaScript condition of the page.
func wait(tb testing.TB, c *consoletest.Console, expr string) {
	tb.Helper()
	c.Page.Wait(tb, expr, 10*time.Second, nil)
}

// present is the JavaScript condition that an element exists and holds text.
func present(selector, text string) string {
	return fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.textContent.includes(%q); })()`, selector, text)
}

// flagsAxe runs axe-core on the page as it is and fails on a serious or
// critical violation.
func flagsAxe(tb testing.TB, c *consoletest.Console, what string) {
	tb.Helper()
	c.Page.Eval(tb, string(browsertest.Bundle(tb, "axe"))+";true", nil)
	var found []string
	c.Page.Eval(tb, `axe.run(document, {resultTypes: ["violations"]}).then((r) => r.violations
		.filter((v) => v.impact === "serious" || v.impact === "critical")
		.map((v) => v.impact + " " + v.id + ": " + v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", ")))`, &found)
	if len(found) > 0 {
		tb.Errorf("axe-core on %s: %s", what, strings.Join(found, "; "))
	}
}

func click(tb testing.TB, c *consoletest.Console, selector string) {
	tb.Helper()
	c.Page.Do(tb, chromedp.Click(chromedp.CSS(selector)))
}

func setValue(tb testing.TB, c *consoletest.Console, selector, value string) {
	tb.Helper()
	c.Page.Do(tb, chromedp.SetValue(chromedp.CSS(selector), value))
}

// flagDoc reads a flag through the API.
func flagDoc(tb testing.TB, c *consoletest.Console, project, key string) map[string]any {
	tb.Helper()
	var f map[string]any
	if err := json.Unmarshal(c.API(tb, "GET", "/api/v2/flags/"+project+"/"+key, nil, 200), &f); err != nil {
		tb.Fatal(err)
	}
	return f
}

func envOf(f map[string]any, env string) map[string]any {
	return f["environments"].(map[string]any)[env].(map[string]any)
}

func createFlag(tb testing.TB, c *consoletest.Console, project, key, name string, tags ...string) {
	tb.Helper()
	if tags == nil {
		tags = []string{}
	}
	c.API(tb, "POST", "/api/v2/flags/"+project, map[string]any{"key": key, "name": name, "tags": tags}, 201)
}

func patchEnv(tb testing.TB, c *consoletest.Console, project, env string, ops ...map[string]any) {
	tb.Helper()
	c.API(tb, "PATCH", "/api/v2/projects/"+project+"/environments/"+env, ops, 200)
}

func TestConsoleFlagList(t *testing.T) {
	t.Parallel() // each test has its own server and browser
	c := consoletest.Start(t)
	c.API(t, "POST", "/api/v2/projects", map[string]any{"key": "shop", "name": "Shop"}, 201)
	for i := 0; i < 57; i++ {
		tags := []string{"bulk"}
		if i%10 == 0 {
			tags = append(tags, "beta")
		}
		createFlag(t, c, "shop", fmt.Sprintf("flag-%02d", i), fmt.Sprintf("Flag %02d", i), tags...)
	}
	createFlag(t, c, "shop", "dark-mode", "Dark mode", "ui")
	c.SignIn(t, c.Token)

	t.Run("the first page shows 50 of 58 flags with a switch per environment", func(t *testing.T) {
		c.Go(t, "/projects/shop/flags")
		var rows, switches int
		c.Page.Eval(t, `document.querySelectorAll("#flags tbody tr").length`, &rows)
		c.Page.Eval(t, `document.querySelectorAll("#flags button.switch[aria-pressed]").length`, &switches)
		if rows != 50 || switches != 100 {
			t.Errorf("rows %d, switches %d; want 50 and 100 (two environments)", rows, switches)
		}
		if got := c.Text(t, "#flags-total"); !strings.Contains(got, "58 flags") {
			t.Errorf("total: %q", got)
		}
		if got := c.Text(t, "nav[aria-label=Pages]"); !strings.Contains(got, "1–50 of 58") {
			t.Errorf("pager: %q", got)
		}
		flagsAxe(t, c, "the flag list")
	})

	t.Run("Next shows the last 8", func(t *testing.T) {
		click(t, c, `nav[aria-label=Pages] button:last-child`)
		wait(t, c, `document.querySelectorAll("#flags tbody tr").length === 8 && document.querySelector("nav[aria-label=Pages]").textContent.includes("51–58 of 58")`)
	})

	t.Run("a search matches key or name", func(t *testing.T) {
		c.Go(t, "/projects/shop/flags")
		setValue(t, c, "#flag-search", "dark")
		click(t, c, "#flag-filter button[type=submit]")
		wait(t, c, `document.querySelectorAll("#flags tbody tr").length === 1 && document.querySelector("#flags tbody tr").dataset.flag === "dark-mode"`)
	})

	t.Run("the tag filter keeps the flags with the tag", func(t *testing.T) {
		c.Go(t, "/projects/shop/flags")
		setValue(t, c, "#flag-tag", "beta")
		click(t, c, "#flag-filter button[type=submit]")
		wait(t, c, `document.querySelectorAll("#flags tbody tr").length === 6 && document.getElementById("flags-total").textContent.includes("tagged beta")`)
	})

	t.Run("a tag in a row filters by it", func(t *testing.T) {
		c.Go(t, "/projects/shop/flags?sort=-creationDate")
		click(t, c, `tr[data-flag="dark-mode"] button.tag-filter`)
		wait(t, c, `location.hash.includes("tag=ui") && document.querySelectorAll("#flags tbody tr").length === 1`)
	})

	t.Run("sorting by name puts Dark mode first", func(t *testing.T) {
		c.Go(t, "/projects/shop/flags?sort=name")
		if got := c.Text(t, "#flags tbody tr th a"); got != "Dark mode" {
			t.Errorf("first flag by name: %q", got)
		}
		c.Go(t, "/projects/shop/flags?sort=-name")
		if got := c.Text(t, "#flags tbody tr th a"); got != "Flag 56" {
			t.Errorf("first flag by name, descending: %q", got)
		}
	})
}

func TestConsoleFlagToggle(t *testing.T) {
	t.Parallel() // each test has its own server and browser
	c := consoletest.Start(t)
	c.API(t, "POST", "/api/v2/projects", map[string]any{"key": "shop", "name": "Shop"}, 201)
	createFlag(t, c, "shop", "checkout", "Checkout")
	patchEnv(t, c, "shop", "production", map[string]any{"op": "replace", "path": "/requireComments", "value": true})
	c.SignIn(t, c.Token)
	c.Go(t, "/projects/shop/flags")

	t.Run("a switch in an environment without rules turns the flag on at once", func(t *testing.T) {
		click(t, c, `button.switch[data-flag="checkout"][data-env="test"]`)
		wait(t, c, `document.querySelector('button.switch[data-flag="checkout"][data-env="test"]').getAttribute("aria-pressed") === "true"`)
		if !envOf(flagDoc(t, c, "shop", "checkout"), "test")["on"].(bool) {
			t.Error("the API shows the flag off in test")
		}
	})

	t.Run("the switch works from the keyboard", func(t *testing.T) {
		sel := `button.switch[data-flag="checkout"][data-env="test"]`
		c.Page.Eval(t, fmt.Sprintf(`document.querySelector(%q).focus(), true`, sel), nil)
		c.Page.Do(t, chromedp.KeyEvent(" "))
		wait(t, c, fmt.Sprintf(`document.querySelector(%q).getAttribute("aria-pressed") === "false" && document.activeElement === document.querySelector(%q)`, sel, sel))
		c.Page.Do(t, chromedp.KeyEvent("\r"))
		wait(t, c, fmt.Sprintf(`document.querySelector(%q).getAttribute("aria-pressed") === "true"`, sel))
		if got := c.Text(t, "#status"); !strings.Contains(got, "is on in Test") {
			t.Errorf("announced: %q", got)
		}
	})

	t.Run("an environment requiring comments asks for one and refuses none", func(t *testing.T) {
		click(t, c, `button.switch[data-flag="checkout"][data-env="production"]`)
		wait(t, c, `!!document.querySelector("dialog[open] #ask-comment")`)
		flagsAxe(t, c, "the comment dialog")
		click(t, c, "dialog[open] button[type=submit]")
		// The browser's own check of the required field keeps the dialog open.
		wait(t, c, `!!document.querySelector("dialog[open] #ask-comment")`)
		if envOf(flagDoc(t, c, "shop", "checkout"), "production")["on"].(bool) {
			t.Fatal("the flag was turned on without a comment")
		}
		setValue(t, c, "#ask-comment", "launch for Black Friday")
		click(t, c, "dialog[open] button[type=submit]")
		wait(t, c, `document.querySelector('button.switch[data-flag="checkout"][data-env="production"]').getAttribute("aria-pressed") === "true"`)
		if !envOf(flagDoc(t, c, "shop", "checkout"), "production")["on"].(bool) {
			t.Error("the API shows the flag off in production")
		}
		var log struct {
			Items []struct {
				Comment string `json:"comment"`
			} `json:"items"`
		}
		if err := json.Unmarshal(c.API(t, "GET", "/api/v2/auditlog?limit=1&spec=proj/shop:env/production:flag/checkout", nil, 200), &log); err != nil {
			t.Fatal(err)
		}
		if len(log.Items) != 1 || log.Items[0].Comment != "launch for Black Friday" {
			t.Errorf("audit entry: %+v", log.Items)
		}
	})

	t.Run("cancelling the dialog changes nothing", func(t *testing.T) {
		click(t, c, `button.switch[data-flag="checkout"][data-env="production"]`)
		wait(t, c, `!!document.querySelector("dialog[open]")`)
		click(t, c, "dialog[open] button.secondary")
		wait(t, c, `!document.querySelector("dialog")`)
		if !envOf(flagDoc(t, c, "shop", "checkout"), "production")["on"].(bool) {
			t.Error("a cancelled change turned the flag off")
		}
	})

	t.Run("an environment requiring approvals says so and offers a request", func(t *testing.T) {
		patchEnv(t, c, "shop", "test", map[string]any{"op": "replace", "path": "/approvalSettings/required", "value": true})
		c.Go(t, "/projects/shop/flags")
		click(t, c, `button.switch[data-flag="checkout"][data-env="test"]`)
		wait(t, c, present("#approval-needed", "requires approval"))
		if !envOf(flagDoc(t, c, "shop", "checkout"), "test")["on"].(bool) {
			t.Error("the flag changed without approval")
		}
		click(t, c, "#approval-needed button")
		wait(t, c, present("#approval-needed", "Approval requested"))
		var reqs struct {
			Items []map[string]any `json:"items"`
		}
		if err := json.Unmarshal(c.API(t, "GET", "/api/v2/approval-requests", nil, 200), &reqs); err != nil {
			t.Fatal(err)
		}
		if len(reqs.Items) != 1 {
			t.Errorf("approval requests: %d, want 1", len(reqs.Items))
		}
	})
}

func TestConsoleFlagEditRule(t *testing.T) {
	t.Parallel() // each test has its own server and browser
	c := consoletest.Start(t)
	c.API(t, "POST", "/api/v2/projects", map[string]any{"key": "shop", "name": "Shop"}, 201)
	createFlag(t, c, "shop", "checkout", "Checkout")
	c.SignIn(t, c.Token)
	c.Go(t, "/projects/shop/flags/checkout?env=test")

	t.Run("a rule made in the form is previewed as an addRule instruction and a new line", func(t *testing.T) {
		setValue(t, c, "#new-rule-clause-attr", "email")
		setValue(t, c, "#new-rule-clause-op", "endsWith")
		setValue(t, c, "#new-rule-clause-values", "@example.com, @example.org")
		setValue(t, c, "#new-rule-serve", variationID(t, c, "checkout", 1))
		click(t, c, "#add-rule button[type=submit]")
		wait(t, c, present("#preview-json", `"kind": "addRule"`))
		flagsAxe(t, c, "the flag page with a preview")
		if got := c.Text(t, "#preview-diff .diff-add"); !strings.Contains(got, `email endsWith "@example.com", "@example.org"`) || !strings.Contains(got, "false") {
			t.Errorf("preview's added line: %q", got)
		}
		if rules := envOf(flagDoc(t, c, "shop", "checkout"), "test")["rules"].([]any); len(rules) != 0 {
			t.Errorf("a previewed rule was sent: %v", rules)
		}
	})

	t.Run("sending applies it and the API shows the rule", func(t *testing.T) {
		click(t, c, "#send")
		wait(t, c, present("#sent", "Saved in Test"))
		rules := envOf(flagDoc(t, c, "shop", "checkout"), "test")["rules"].([]any)
		if len(rules) != 1 {
			t.Fatalf("rules: %v", rules)
		}
		r := rules[0].(map[string]any)
		cl := r["clauses"].([]any)[0].(map[string]any)
		if cl["attribute"] != "email" || cl["op"] != "endsWith" || len(cl["values"].([]any)) != 2 || r["variation"] != float64(1) {
			t.Errorf("rule: %v", r)
		}
		wait(t, c, present("#rules", "email endsWith"))
		wait(t, c, `!!document.getElementById("no-pending")`)
	})

	t.Run("a clause is added to the rule and the default rule becomes a rollout", func(t *testing.T) {
		c.Page.Eval(t, `document.querySelector("#rules details").open = true`, nil)
		setValue(t, c, "#rule0-clause-attr", "country")
		setValue(t, c, "#rule0-clause-values", "FR")
		click(t, c, "#rule0-clause-form button[type=submit]")
		c.Page.Eval(t, `(() => { const s = document.getElementById("fallthrough-serve"); s.value = "rollout"; s.dispatchEvent(new Event("change")); })()`, nil)
		setValue(t, c, "#fallthrough-w0", "25")
		setValue(t, c, "#fallthrough-w1", "75")
		click(t, c, "#fallthrough-form button[type=submit]")
		wait(t, c, present("#preview-json", "updateFallthroughVariationOrRollout"))
		if got := c.Text(t, "#preview-diff"); !strings.Contains(got, "25% true, 75% false") {
			t.Errorf("preview: %q", got)
		}
		click(t, c, "#send")
		wait(t, c, present("#sent", "Saved")+` && !!document.getElementById("no-pending")`)
		env := envOf(flagDoc(t, c, "shop", "checkout"), "test")
		if n := len(env["rules"].([]any)[0].(map[string]any)["clauses"].([]any)); n != 2 {
			t.Errorf("clauses: %d, want 2", n)
		}
		if _, ok := env["fallthrough"].(map[string]any)["rollout"]; !ok {
			t.Errorf("fallthrough: %v", env["fallthrough"])
		}
	})
}

func variationID(tb testing.TB, c *consoletest.Console, key string, i int) string {
	tb.Helper()
	return flagDoc(tb, c, "shop", key)["variations"].([]any)[i].(map[string]any)["_id"].(string)
}

func TestConsoleFlagConflict(t *testing.T) {
	t.Parallel() // each test has its own server and browser
	c := consoletest.Start(t)
	c.API(t, "POST", "/api/v2/projects", map[string]any{"key": "shop", "name": "Shop"}, 201)
	createFlag(t, c, "shop", "checkout", "Checkout")
	c.SignIn(t, c.Token)
	c.Go(t, "/projects/shop/flags/checkout?env=test")

	setValue(t, c, "#target-keys", "alice, bob")
	click(t, c, "#add-targets button[type=submit]")
	wait(t, c, present("#preview-json", "addTargets"))
	// Another writer turns the flag on after the page read it.
	c.APIAs(t, c.Token, "PATCH", "/api/v2/flags/shop/checkout",
		`{"environmentKey":"test","comment":"elsewhere","instructions":[{"kind":"turnFlagOn"}]}`, semanticPatchType, 200)

	t.Run("sending shows what changed and sends nothing", func(t *testing.T) {
		click(t, c, "#send")
		wait(t, c, present("#conflict", "Someone changed this flag"))
		flagsAxe(t, c, "the flag page with a conflict")
		got := c.Text(t, "#conflict-diff")
		if !strings.Contains(got, "− Off") || !strings.Contains(got, "+ On") {
			t.Errorf("what changed: %q", got)
		}
		if targets := envOf(flagDoc(t, c, "shop", "checkout"), "test")["targets"].([]any); len(targets) != 0 {
			t.Errorf("targets were sent despite the conflict: %v", targets)
		}
	})

	t.Run("re-applied on the new version it is sent", func(t *testing.T) {
		click(t, c, "#reapply")
		wait(t, c, `!document.getElementById("conflict") && !!document.getElementById("send")`)
		click(t, c, "#send")
		wait(t, c, present("#sent", "Saved"))
		env := envOf(flagDoc(t, c, "shop", "checkout"), "test")
		if !env["on"].(bool) {
			t.Error("the other writer's change was lost")
		}
		targets, _ := json.Marshal(env["targets"])
		if !strings.Contains(string(targets), "alice") || !strings.Contains(string(targets), "bob") {
			t.Errorf("targets: %s", targets)
		}
	})

	t.Run("a staged change survives leaving the page and is previewed on the flag as it is then", func(t *testing.T) {
		setValue(t, c, "#target-keys", "carol")
		click(t, c, "#add-targets button[type=submit]")
		wait(t, c, present("#preview-json", "carol"))
		c.Go(t, "/projects/shop/flags")
		c.APIAs(t, c.Token, "PATCH", "/api/v2/flags/shop/checkout",
			`{"environmentKey":"test","instructions":[{"kind":"turnFlagOff"}]}`, semanticPatchType, 200)
		c.Go(t, "/projects/shop/flags/checkout?env=test")
		wait(t, c, present("#preview-json", "carol")+` && document.getElementById("env-state").textContent === "Off"`)
		click(t, c, "#discard-all")
		wait(t, c, `!!document.getElementById("no-pending")`)
	})
}

func TestConsoleFlagReader(t *testing.T) {
	t.Parallel() // each test has its own server and browser
	c := consoletest.Start(t)
	c.API(t, "POST", "/api/v2/projects", map[string]any{"key": "shop", "name": "Shop"}, 201)
	createFlag(t, c, "shop", "checkout", "Checkout")
	var tok struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(c.API(t, "POST", "/api/v2/tokens", map[string]any{"name": "reader", "role": "reader"}, 201), &tok); err != nil {
		t.Fatal(err)
	}
	c.SignIn(t, tok.Token)

	t.Run("the list's switches are disabled with the reason", func(t *testing.T) {
		c.Go(t, "/projects/shop/flags")
		var got struct {
			Disabled bool   `json:"disabled"`
			Title    string `json:"title"`
			Denied   string `json:"denied"`
		}
		c.Page.Eval(t, `(() => { const e = document.querySelector('button.switch[data-flag="checkout"][data-env="test"]');
			return {disabled: e.disabled, title: e.title, denied: e.dataset.denied || ""}; })()`, &got)
		if !got.Disabled || got.Denied != "updateOn" || !strings.Contains(got.Title, "updateOn") {
			t.Errorf("reader's switch: %+v", got)
		}
	})

	t.Run("a refusal that gets through anyway is shown plainly", func(t *testing.T) {
		// As when rights changed after the page was drawn.
		c.Page.Eval(t, `document.querySelector('button.switch[data-flag="checkout"][data-env="test"]').disabled = false, true`, nil)
		click(t, c, `button.switch[data-flag="checkout"][data-env="test"]`)
		wait(t, c, present("#flags-msg .error", "403"))
		if got := c.Text(t, "#flags-msg .error"); !strings.Contains(got, "may not updateOn") {
			t.Errorf("refusal: %q", got)
		}
	})

	t.Run("the flag page disables the changes the role refuses and says why", func(t *testing.T) {
		c.Go(t, "/projects/shop/flags/checkout?env=test")
		flagsAxe(t, c, "the flag page of a reader")
		for _, sel := range []string{"#stage-toggle", "#add-rule button[type=submit]", "#add-targets button[type=submit]", "#delete", "#archive"} {
			var got struct {
				Disabled bool   `json:"disabled"`
				Title    string `json:"title"`
			}
			c.Page.Eval(t, fmt.Sprintf(`(() => { const e = document.querySelector(%q); return {disabled: e.disabled, title: e.title}; })()`, sel), &got)
			if !got.Disabled || got.Title == "" {
				t.Errorf("%s: disabled %t, reason %q", sel, got.Disabled, got.Title)
			}
		}
		if got := c.Text(t, "#env-area"); !strings.Contains(got, "may not updateRules") {
			t.Errorf("no reason written next to the rule form: %q", got)
		}
	})
}

func TestConsoleFlagArchiveDelete(t *testing.T) {
	t.Parallel() // each test has its own server and browser
	c := consoletest.Start(t)
	c.API(t, "POST", "/api/v2/projects", map[string]any{"key": "shop", "name": "Shop"}, 201)
	createFlag(t, c, "shop", "old-banner", "Old banner")
	c.SignIn(t, c.Token)
	c.Go(t, "/projects/shop/flags/old-banner")

	t.Run("archive asks, then archives", func(t *testing.T) {
		click(t, c, "#archive")
		wait(t, c, present("dialog[open]", "Archive Old banner?"))
		setValue(t, c, "#ask-comment", "replaced by the new banner")
		click(t, c, "dialog[open] button[type=submit]")
		wait(t, c, `!!document.getElementById("archived-badge")`)
		if !flagDoc(t, c, "shop", "old-banner")["archived"].(bool) {
			t.Error("the API shows the flag not archived")
		}
	})

	t.Run("delete asks, then deletes and shows the list", func(t *testing.T) {
		click(t, c, "#delete")
		wait(t, c, present("dialog[open]", "cannot be undone"))
		click(t, c, "dialog[open] button[type=submit]")
		wait(t, c, `document.body.dataset.page === "/projects/shop/flags"`)
		c.API(t, "GET", "/api/v2/flags/shop/old-banner", nil, 404)
	})
}

func TestConsoleFlagList1000(t *testing.T) {
	c := consoletest.Start(t)
	c.API(t, "POST", "/api/v2/projects", map[string]any{"key": "big", "name": "Big"}, 201)
	const n = 1000
	start := time.Now()
	var wg sync.WaitGroup
	keys := make(chan int)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range keys {
				createFlag(t, c, "big", fmt.Sprintf("flag-%04d", i), fmt.Sprintf("Flag %04d", i), "bulk")
			}
		}()
	}
	for i := 0; i < n; i++ {
		keys <- i
	}
	close(keys)
	wg.Wait()
	t.Logf("created %d flags through the API in %v", n, time.Since(start).Round(time.Millisecond))
	c.SignIn(t, c.Token)

	// Time from navigation to the first page drawn with every switch
	// enabled, checked at each frame.
	measure := func(t *testing.T, hash string) time.Duration {
		t.Helper()
		c.Page.Eval(t, fmt.Sprintf(`(() => {
			window.__t1 = 0; const t0 = performance.now(); window.__t0 = t0;
			const check = () => {
				const sw = document.querySelectorAll("#flags button.switch");
				if (document.body.dataset.page === "/projects/big/flags" && document.querySelectorAll("#flags tbody tr").length === 50 &&
					sw.length === 100 && [...sw].every((b) => !b.disabled) && document.getElementById("flags-total").textContent.includes("1000 flags")) {
					window.__t1 = performance.now();
				} else requestAnimationFrame(check);
			};
			location.hash = %q;
			requestAnimationFrame(check);
			return true;
		})()`, hash), nil)
		var ms float64
		c.Page.Wait(t, `window.__t1 > 0 && window.__t1 - window.__t0`, 10*time.Second, &ms)
		return time.Duration(ms * float64(time.Millisecond))
	}
	t.Run("the first page of 1,000 flags is interactive within 1 s", func(t *testing.T) {
		d := measure(t, "#/projects/big/flags")
		t.Logf("console flag list of 1,000 flags: interactive in %v", d.Round(time.Millisecond))
		if d > time.Second {
			t.Errorf("interactive in %v, want at most 1 s", d)
		}
	})
	t.Run("the last page and a search are as quick", func(t *testing.T) {
		c.Go(t, "/")
		d := measure(t, "#/projects/big/flags?offset=950")
		t.Logf("console flag list of 1,000 flags, last page: interactive in %v", d.Round(time.Millisecond))
		if d > time.Second {
			t.Errorf("interactive in %v, want at most 1 s", d)
		}
	})
}

func TestConsoleFlagInsights(t *testing.T) {
	t.Parallel() // each test has its own server and browser
	c := consoletest.Start(t)
	c.API(t, "POST", "/api/v2/projects", map[string]any{"key": "shop", "name": "Shop"}, 201)
	createFlag(t, c, "shop", "checkout", "Checkout")
	createFlag(t, c, "shop", "unused", "Unused")
	c.APIAs(t, c.Token, "PATCH", "/api/v2/flags/shop/checkout",
		`{"environmentKey":"test","comment":"first light","instructions":[{"kind":"turnFlagOn"}]}`, semanticPatchType, 200)
	c.API(t, "POST", "/api/v2/code-refs/repositories", map[string]any{"name": "web", "sourceLink": "https://example.com/web", "type": "custom", "defaultBranch": "main"}, 200)
	c.API(t, "PUT", "/api/v2/code-refs/repositories/web/branches/main", map[string]any{
		"name": "main", "head": "abc123", "syncTime": time.Now().UnixMilli(),
		"references": []map[string]any{{"path": "src/checkout.ts", "hunks": []map[string]any{
			{"startingLineNumber": 12, "lines": "if (ld.variation('checkout')) {\n  pay()\n}", "projKey": "shop", "flagKey": "checkout"},
		}}},
	}, 200)
	c.SignIn(t, c.Token)

	t.Run("a referenced flag shows where, its last change with the comment, and says when there is too little data", func(t *testing.T) {
		c.Go(t, "/projects/shop/flags/checkout?env=test")
		wait(t, c, present("#code-refs", "src/checkout.ts"))
		if got := c.Text(t, "#code-refs tbody tr"); !strings.Contains(got, "web") || !strings.Contains(got, "main") || !strings.Contains(got, "12") {
			t.Errorf("code reference row: %q", got)
		}
		if got := c.Text(t, "#last-change"); !strings.Contains(got, "first light") {
			t.Errorf("last change: %q", got)
		}
		if got := c.Text(t, "#stale"); !strings.Contains(got, "Not enough data") {
			t.Errorf("staleness: %q", got)
		}
		wait(t, c, `!!document.querySelector("#insights svg[role=img]")`)
		flagsAxe(t, c, "the flag page with its insights")
	})

	t.Run("a flag no repository names says so", func(t *testing.T) {
		c.Go(t, "/projects/shop/flags/unused")
		wait(t, c, present("#code-refs", "Not referenced in the default branch of 1 repository"))
	})
}
