package console_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/flagplane/flagplane/shared/console/consoletest"
)

// seeded names what seedConsole made: each console page has something to
// show, and each route's parameters a value.
type seeded struct {
	approval, audit, webhook string
	// params fill a route pattern's :name segments (:id by the page).
	params map[string]string
}

// seedConsole makes, through the API with the admin token, one of each
// thing the console shows: a project with its environments (production
// wanting comments and approvals), flags with targets, rules, a rollout
// and a prerequisite, a segment with targets and a rule, a pending
// approval request, a member, a team, a custom role, a token and a
// webhook; their audit entries come with them.
func seedConsole(tb testing.TB, c *consoletest.Console) seeded {
	tb.Helper()
	// A webhook needs somewhere to deliver; what it receives is ignored.
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	tb.Cleanup(recv.Close)
	do := func(method, path string, body any, want int) map[string]any {
		tb.Helper()
		var out map[string]any
		if raw := c.API(tb, method, path, body, want); len(raw) > 0 {
			if err := json.Unmarshal(raw, &out); err != nil {
				tb.Fatalf("%s %s: %v", method, path, err)
			}
		}
		return out
	}
	semantic := func(path, env, comment string, instructions ...map[string]any) {
		tb.Helper()
		body := map[string]any{"comment": comment, "instructions": instructions}
		if env != "" {
			body["environmentKey"] = env
		}
		c.APIAs(tb, c.Token, "PATCH", path, mustJSON(tb, body), "application/json; domain-model=flagplane.semanticpatch", 200)
	}

	do("POST", "/api/v2/projects", map[string]any{"key": "shop", "name": "Shop", "tags": []string{"web"}}, 201)
	do("POST", "/api/v2/flags/shop", map[string]any{"key": "new-search", "name": "New search", "tags": []string{"search"}}, 201)
	flag := do("POST", "/api/v2/flags/shop", map[string]any{
		"key": "checkout", "name": "New checkout", "description": "The one-page checkout", "tags": []string{"payments", "web"},
	}, 201)
	var vars []string
	for _, v := range flag["variations"].([]any) {
		vars = append(vars, v.(map[string]any)["_id"].(string))
	}
	do("POST", "/api/v2/flags/shop", map[string]any{
		"key": "banner", "name": "Banner", "variations": []map[string]any{{"value": "blue", "name": "Blue"}, {"value": "green", "name": "Green"}, {"value": "none"}},
	}, 201)
	do("POST", "/api/v2/segments/shop/production", map[string]any{"key": "beta", "name": "Beta testers", "description": "Early adopters"}, 201)
	semantic("/api/v2/segments/shop/production/beta", "", "seed",
		map[string]any{"kind": "addIncludedTargets", "contextKind": "user", "values": []string{"ann", "bob"}},
		map[string]any{"kind": "addRule", "clauses": []map[string]any{{"contextKind": "user", "attribute": "email", "op": "endsWith", "values": []string{"@example.com"}}}})
	semantic("/api/v2/flags/shop/checkout", "test", "first light",
		map[string]any{"kind": "turnFlagOn"},
		map[string]any{"kind": "addTargets", "contextKind": "user", "variationId": vars[0], "values": []string{"qa-1", "qa-2"}},
		map[string]any{"kind": "addRule", "description": "Sweden", "variationId": vars[0], "clauses": []map[string]any{{"contextKind": "user", "attribute": "country", "op": "in", "values": []string{"SE"}}}},
		map[string]any{"kind": "addRule", "description": "Paying customers", "clauses": []map[string]any{{"contextKind": "user", "attribute": "plan", "op": "in", "values": []string{"pro", "team"}}},
			"rolloutWeights": map[string]int{vars[0]: 25000, vars[1]: 75000}},
		map[string]any{"kind": "addPrerequisite", "key": "new-search", "variationId": firstVariation(tb, c, "new-search")},
	)
	// A small change after it: its audit entry's diff is the one opened.
	semantic("/api/v2/flags/shop/checkout", "test", "QA needs one more tester",
		map[string]any{"kind": "addTargets", "contextKind": "user", "variationId": vars[0], "values": []string{"qa-3"}})
	// Production asks for a comment and an approval: its pages show both.
	do("PATCH", "/api/v2/projects/shop/environments/production", []map[string]any{
		{"op": "replace", "path": "/requireComments", "value": true},
		{"op": "replace", "path": "/confirmChanges", "value": true},
		{"op": "replace", "path": "/approvalSettings/required", "value": true},
	}, 200)
	bot := do("POST", "/api/v2/tokens", map[string]any{"name": "release-bot", "role": "writer", "serviceToken": true}, 201)["token"].(string)
	var req map[string]any
	raw := c.APIAs(tb, bot, "POST", "/api/v2/approval-requests", map[string]any{
		"resourceId": "proj/shop:env/production:flag/checkout", "description": "Launch checkout",
		"instructions": []map[string]any{{"kind": "turnFlagOn"}, {"kind": "addTargets", "contextKind": "user", "variationId": vars[0], "values": []string{"vip-1"}}},
	}, "", 201)
	if err := json.Unmarshal(raw, &req); err != nil {
		tb.Fatal(err)
	}
	do("POST", "/api/v2/members", []map[string]any{{"email": "ann@example.com", "firstName": "Ann", "lastName": "Lee", "role": "writer"}}, 201)
	do("POST", "/api/v2/roles", map[string]any{"key": "flag-toggler", "name": "Flag toggler", "description": "Turns flags on and off in production",
		"policy": []map[string]any{{"effect": "allow", "resources": []string{"proj/*:env/production:flag/*"}, "actions": []string{"updateOn"}}}}, 201)
	do("POST", "/api/v2/teams", map[string]any{"key": "ops", "name": "Ops", "description": "Runs the releases", "customRoleKeys": []string{"flag-toggler"}}, 201)
	do("POST", "/api/v2/tokens", map[string]any{"name": "ci-reader", "role": "reader"}, 201)
	hook := do("POST", "/api/v2/webhooks", map[string]any{"name": "Chat", "url": recv.URL + "/hook", "sign": false, "on": true, "tags": []string{"ops"}}, 200)
	log := do("GET", "/api/v2/auditlog?limit=20&spec=proj/shop:env/*:flag/checkout", nil, 200)
	audit := ""
	for _, e := range log["items"].([]any) {
		entry := e.(map[string]any)
		// The small flag change: an entry with a previous and a current
		// version to diff.
		if entry["comment"] == "QA needs one more tester" || audit == "" {
			audit = entry["_id"].(string)
		}
	}
	s := seeded{approval: req["_id"].(string), audit: audit, webhook: hook["_id"].(string)}
	s.params = map[string]string{"project": "shop", "flag": "checkout", "env": "production", "segment": "beta", "key": "ops"}
	return s
}

func mustJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func firstVariation(tb testing.TB, c *consoletest.Console, key string) string {
	tb.Helper()
	var f struct {
		Variations []struct {
			ID string `json:"_id"`
		} `json:"variations"`
	}
	if err := json.Unmarshal(c.API(tb, "GET", "/api/v2/flags/shop/"+key, nil, 200), &f); err != nil || len(f.Variations) == 0 {
		tb.Fatalf("flag %s: %v", key, err)
	}
	return f.Variations[0].ID
}

var routeParam = regexp.MustCompile(`:([a-zA-Z]+)`)

// fill gives a route pattern the seeded keys; :id is the approval
// request's, the audit entry's or the webhook's by the pattern's start.
func (s seeded) fill(tb testing.TB, pattern string) string {
	tb.Helper()
	return routeParam.ReplaceAllStringFunc(pattern, func(m string) string {
		name := m[1:]
		if name == "id" {
			for prefix, id := range map[string]string{"/approvals/": s.approval, "/audit/": s.audit, "/webhooks/": s.webhook} {
				if strings.HasPrefix(pattern, prefix) {
					return id
				}
			}
		}
		v, ok := s.params[name]
		if !ok {
			tb.Fatalf("route %s: no seeded value for :%s (seedConsole must make one for a new page)", pattern, name)
		}
		return v
	})
}

// consolePatterns are the routes the console's page modules registered,
// as the router holds them.
func consolePatterns(tb testing.TB, c *consoletest.Console) []string {
	tb.Helper()
	var out []string
	c.Page.Eval(tb, `import("/console/js/router.js").then((m) => m.patterns())`, &out)
	if len(out) < 10 {
		tb.Fatalf("the router has %d routes: %v", len(out), out)
	}
	return out
}

// settle waits (briefly, never failing) until the page shows nothing
// still loading, so the checks see what a user would.
func settle(c *consoletest.Console) {
	_ = c.Page.WaitErr(`!document.querySelector("#main [aria-busy=true]")`, 3*time.Second, nil)
}

func TestConsoleAccessibility(t *testing.T) {
	t.Parallel() // each test has its own server and browser
	c := consoletest.Start(t)
	s := seedConsole(t, c)
	var serious, other int
	check := func(t *testing.T, path string) {
		t.Helper()
		settle(c)
		for _, v := range c.Axe(t) {
			if v.Impact == "serious" || v.Impact == "critical" {
				serious++
			} else {
				other++
			}
		}
		keyboard(t, c)
	}

	// Signed out, the one page is the sign-in form.
	c.Go(t, "/sign-in")
	t.Run("/sign-in signed out passes axe-core and works by keyboard", func(t *testing.T) { check(t, "/sign-in") })

	c.SignIn(t, c.Token)
	patterns := consolePatterns(t, c)
	for _, pattern := range patterns {
		path := s.fill(t, pattern)
		t.Run(path+" passes axe-core and works by keyboard", func(t *testing.T) {
			c.Go(t, path)
			check(t, path)
		})
	}

	// The dialogs every confirmation goes through (ui.ask), by keyboard.
	t.Run("a confirmation dialog opens by Enter with the focus inside, passes axe-core, and Escape closes it and gives the focus back", func(t *testing.T) {
		c.Go(t, "/projects/shop/flags/checkout")
		settle(c)
		c.Page.Eval(t, `document.getElementById("archive").focus(), true`, nil)
		c.Page.Do(t, chromedp.KeyEvent(kb.Enter))
		c.Page.Wait(t, `!!document.querySelector("dialog[open]")`, 5*time.Second, nil)
		var inside bool
		c.Page.Eval(t, `document.querySelector("dialog[open]").contains(document.activeElement)`, &inside)
		if !inside {
			t.Error("the dialog opened without the focus in it")
		}
		check(t, "the confirmation dialog")
		c.Page.Do(t, chromedp.KeyEvent(kb.Escape))
		c.Page.Wait(t, `!document.querySelector("dialog[open]")`, 5*time.Second, nil)
		var back string
		c.Page.Eval(t, `document.activeElement.id`, &back)
		if back != "archive" {
			t.Errorf("after Escape the focus is on %q, not the button that opened the dialog", back)
		}
		c.API(t, "GET", "/api/v2/flags/shop/checkout", nil, 200) // Escape archived nothing
	})
	t.Logf("axe-core %s on %d pages (%d routes and the signed-out sign-in) and a dialog: %d serious or critical violations, %d minor or moderate",
		axeVersion(t, c), len(patterns)+1, len(patterns), serious, other)
}

func axeVersion(tb testing.TB, c *consoletest.Console) string {
	tb.Helper()
	var v string
	c.Page.Eval(tb, `window.axe ? axe.version : ""`, &v)
	return v
}

// focusStep is one element the keyboard walk reached.
type focusStep struct {
	Desc     string `json:"desc"`
	Index    int    `json:"index"`    // in DOM order of the focusable elements; -1 for none
	Scroller bool   `json:"scroller"` // a scrollable box Chromium puts in the tab order itself
	Outline  bool   `json:"outline"`  // a visible focus indicator (outline or box-shadow)
}

// keyboard walks the page with Tab from its first focusable element (the
// skip link) and checks every visible interactive element receives focus
// in document order, with a visible focus indicator, and that no element
// has a positive tabindex.
func keyboard(t *testing.T, c *consoletest.Console) {
	t.Helper()
	var plan struct {
		N        int      `json:"n"`
		Positive []string `json:"positive"`
	}
	// A key first: Chromium shows :focus-visible on a focus the script
	// makes only once the user has used the keyboard.
	c.Page.Do(t, chromedp.KeyEvent(kb.Shift))
	c.Page.Eval(t, keyboardSetup, &plan)
	for _, p := range plan.Positive {
		t.Errorf("a positive tabindex changes the tab order: %s", p)
	}
	if plan.N == 0 {
		t.Fatal("the page has no focusable element, not even the skip link")
	}
	// One press fewer than elements: the walk starts on the first.
	steps := make([]chromedp.Action[chromedp.Void], 0, plan.N)
	for i := 1; i < plan.N; i++ {
		steps = append(steps, chromedp.KeyEvent(kb.Tab))
	}
	if len(steps) > 0 {
		c.Page.Do(t, steps...)
	}
	// Chromium's own stops on scrollable boxes take presses too: go on
	// while the walk still reaches new elements, up to a bound.
	for extra := 0; extra < 50; extra++ {
		var reached int
		c.Page.Eval(t, `Math.max(-1, ...window.__keyboardWalk.seen.map((s) => s.index)) + 1`, &reached)
		if reached >= plan.N {
			break
		}
		c.Page.Do(t, chromedp.KeyEvent(kb.Tab))
	}
	var walk struct {
		Expected []string    `json:"expected"`
		Seen     []focusStep `json:"seen"`
	}
	c.Page.Eval(t, `(() => { const k = window.__keyboardWalk; window.removeEventListener("focusin", k.listen, true); return {expected: k.expected.map(k.describe), seen: k.seen}; })()`, &walk)
	next := 0
	for _, st := range walk.Seen {
		switch {
		case st.Index < 0 && st.Scroller:
			continue // Chromium's own stop on a scrollable box: reachable, not ours to order
		case st.Index != next:
			want := "nothing"
			if next < len(walk.Expected) {
				want = walk.Expected[next]
			}
			t.Errorf("Tab reached %s where %s comes next in the page (elements in order: %s)", st.Desc, want, strings.Join(walk.Expected, " | "))
			return
		}
		if !st.Outline {
			t.Errorf("%s shows no focus indicator when focused by keyboard", st.Desc)
		}
		next++
	}
	if next < len(walk.Expected) {
		t.Errorf("Tab stopped reaching elements at %s (%d of %d reached)", walk.Expected[next], next, len(walk.Expected))
	}
}

// keyboardSetup lists the page's (or its modal dialog's) visible
// interactive elements in document order (one per radio group: the checked one, else the first,
// as Tab does), focuses the first and records, on each focus, which one
// it is and whether it shows a focus indicator. It answers their number
// and any element with a positive tabindex.
const keyboardSetup = `(() => {
  const sel = 'a[href], button, input, select, textarea, summary, [tabindex], [contenteditable="true"], [contenteditable=""]';
  // checkVisibility also hides what a closed <details> holds.
  const visible = (el) => el.checkVisibility({visibilityProperty: true}) && el.getClientRects().length > 0 && !el.closest('[inert]');
  const radios = new Set();
  // A modal dialog makes the rest of the page inert: the walk is the dialog's.
  const scope = document.querySelector('dialog:modal') || document;
  const expected = [...scope.querySelectorAll(sel)].filter((el) => {
    if (el.tabIndex < 0 || el.disabled || !visible(el)) return false;
    if (el.type === 'radio' && el.name) {
      const group = [...document.querySelectorAll('input[type=radio]')].filter((r) => r.name === el.name && r.form === el.form && visible(r) && !r.disabled);
      const stop = group.find((r) => r.checked) || group[0];
      if (radios.has(el.name) || el !== stop) return false;
      radios.add(el.name);
    }
    return true;
  });
  const describe = (el) => {
    const text = (el.getAttribute('aria-label') || el.textContent || el.value || el.placeholder || '').trim().replace(/\s+/g, ' ').slice(0, 40);
    return el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.type && el.tagName !== 'A' ? '[' + el.type + ']' : '') + (text ? ' "' + text + '"' : '');
  };
  const shows = (el) => {
    const cs = getComputedStyle(el);
    return (cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) > 0) || (cs.boxShadow && cs.boxShadow !== 'none');
  };
  const seen = [];
  const listen = (e) => {
    const el = e.target;
    const index = expected.indexOf(el);
    const cs = getComputedStyle(el);
    const scroller = index < 0 && !el.matches(sel) && (el.scrollHeight > el.clientHeight || el.scrollWidth > el.clientWidth) && /(auto|scroll)/.test(cs.overflow + cs.overflowX + cs.overflowY);
    seen.push({desc: describe(el), index, scroller, outline: shows(el)});
  };
  window.__keyboardWalk = {expected, seen, listen, describe};
  window.addEventListener('focusin', listen, true);
  if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
  if (expected.length) expected[0].focus();
  const positive = [...document.querySelectorAll('[tabindex]')].filter((el) => el.tabIndex > 0).map(describe);
  return {n: expected.length, positive};
})()`
