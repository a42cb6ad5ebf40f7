package console_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/console/consoletest"
)

// p3Series is a usage answer: points with a time and one count per group.
type p3Series struct {
	Metadata []map[string]any   `json:"metadata"`
	Series   []map[string]int64 `json:"series"`
}

// sum is the series' total over every point and group.
func (s p3Series) sum() int64 {
	var n int64
	for _, p := range s.Series {
		for k, v := range p {
			if k != "time" {
				n += v
			}
		}
	}
	return n
}

// p3Usage reads a usage operation (beta) with the admin token.
func p3Usage(tb testing.TB, c *consoletest.Console, path string) p3Series {
	tb.Helper()
	req, err := http.NewRequest("GET", c.Base+path, nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", c.Token)
	req.Header.Set("SVC-API-Version", "beta")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		tb.Fatalf("GET %s: %d %s", path, res.StatusCode, b)
	}
	var s p3Series
	if err := json.Unmarshal(b, &s); err != nil {
		tb.Fatal(err)
	}
	return s
}

// p3Chart is what a sparkline shows: its bars, hidden table rows, label.
type p3Chart struct {
	Bars  int    `json:"bars"`
	Rows  int    `json:"rows"`
	Label string `json:"label"`
}

func p3ChartIn(tb testing.TB, c *consoletest.Console, selector string) p3Chart {
	tb.Helper()
	var ch p3Chart
	c.Page.Eval(tb, fmt.Sprintf(`(() => { const s = document.querySelector(%q); if (!s) return {bars: -1, rows: -1, label: ""};
		return {bars: s.querySelectorAll("svg rect.bar").length, rows: s.querySelectorAll("table.sr-only tbody tr").length, label: s.querySelector("svg").getAttribute("aria-label")}; })()`, selector+" .sparkline"), &ch)
	return ch
}

func TestConsoleUsage(t *testing.T) {
	t.Parallel() // each test has its own server and browser
	c := consoletest.Start(t)
	c.API(t, "POST", "/api/v2/projects", map[string]any{"key": "shop", "name": "Shop"}, 201)
	for _, f := range []string{"checkout", "search", "idle"} {
		c.API(t, "POST", "/api/v2/flags/shop", map[string]any{"key": f, "name": f}, 201)
	}
	var env struct {
		APIKey string `json:"apiKey"`
	}
	if err := json.Unmarshal(c.API(t, "GET", "/api/v2/projects/shop/environments/production", nil, 200), &env); err != nil {
		t.Fatal(err)
	}
	// An SDK's events: two contexts, checkout evaluated 5 + 2 times, search 3.
	now := time.Now().UnixMilli()
	events := fmt.Sprintf(`[{"kind":"index","creationDate":%[1]d,"context":{"kind":"user","key":"u1"}},{"kind":"index","creationDate":%[1]d,"context":{"kind":"user","key":"u2"}},`+
		`{"kind":"summary","startDate":%[1]d,"endDate":%[1]d,"features":{`+
		`"checkout":{"counters":[{"variation":1,"version":1,"value":true,"count":5},{"variation":0,"version":1,"value":false,"count":2}]},`+
		`"search":{"counters":[{"variation":0,"version":1,"value":true,"count":3}]}}}]`, now)
	c.APIAs(t, env.APIKey, "POST", "/bulk", events, "", 202)
	// The local server aggregates each payload soon after acknowledging it.
	deadline := time.Now().Add(10 * time.Second)
	for p3Usage(t, c, "/api/v2/usage/evaluations/shop/production/search").sum() != 3 {
		if time.Now().After(deadline) {
			t.Fatal("the evaluations were not counted within 10 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.SignIn(t, c.Token)

	week := fmt.Sprintf("from=%d&to=%d", time.Now().Add(-7*24*time.Hour).UnixMilli(), time.Now().UnixMilli())
	t.Run("the top flags are ordered by evaluations and the unused flag is left out", func(t *testing.T) {
		c.Go(t, "/usage?project=shop&env=production")
		var order []string
		c.Page.Eval(t, `[...document.querySelectorAll("#top-flags > tbody > tr")].map((r) => r.dataset.flag + "=" + r.querySelector("td.count").textContent)`, &order)
		if fmt.Sprint(order) != "[checkout=7 search=3]" {
			t.Errorf("top flags = %v", order)
		}
	})

	t.Run("a flag's chart has a bar per day and its label states the total", func(t *testing.T) {
		want := p3Usage(t, c, "/api/v2/usage/evaluations/shop/production/checkout?"+week)
		ch := p3ChartIn(t, c, `#top-flags tr[data-flag="checkout"]`)
		if ch.Bars != len(want.Series) || ch.Rows != len(want.Series) {
			t.Errorf("chart: %d bars, %d table rows; the API answers %d points", ch.Bars, ch.Rows, len(want.Series))
		}
		prefix := fmt.Sprintf("Evaluations of checkout: %d daily points", len(want.Series))
		if !strings.HasPrefix(ch.Label, prefix) || !strings.Contains(ch.Label, "total 7, highest 7") || !strings.HasSuffix(ch.Label, "latest 7.") {
			t.Errorf("label = %q", ch.Label)
		}
	})

	t.Run("the context chart draws the API's daily distinct counts, which do not add up to a total", func(t *testing.T) {
		// The chart shows what the API answers, this hour's contexts
		// included (read from the live hour cells before the rollup).
		want := p3Usage(t, c, "/api/v2/usage/total-contexts?projectKey=shop&environmentKey=production&aggregationType=incremental&granularity=daily&"+week)
		var high int64
		for _, p := range want.Series {
			var n int64
			for k, v := range p {
				if k != "time" {
					n += v
				}
			}
			high = max(high, n)
		}
		ch := p3ChartIn(t, c, "#contexts-chart")
		if ch.Bars != len(want.Series) || ch.Rows != len(want.Series) {
			t.Errorf("chart: %d bars, %d rows; the API answers %d points", ch.Bars, ch.Rows, len(want.Series))
		}
		if strings.Contains(ch.Label, "total") || !strings.Contains(ch.Label, fmt.Sprintf("highest %d", high)) {
			t.Errorf("label = %q", ch.Label)
		}
		month := p3Usage(t, c, "/api/v2/usage/total-contexts?projectKey=shop&environmentKey=production&aggregationType=month_to_date&granularity=daily")
		var last int64
		if n := len(month.Series); n > 0 {
			for k, v := range month.Series[n-1] {
				if k != "time" {
					last += v
				}
			}
		}
		if got, want := c.Text(t, "#contexts-month"), fmt.Sprintf("this month: %d.", last); !strings.HasSuffix(got, want) {
			t.Errorf("month total reads %q, want it to end %q", got, want)
		}
	})

	t.Run("choosing the last 24 hours redraws the charts by the hour", func(t *testing.T) {
		var before string
		c.Page.Eval(t, `document.body.dataset.ready`, &before)
		c.Page.Eval(t, `(() => { const s = document.getElementById("usage-range"); s.value = "24h"; s.dispatchEvent(new Event("change")); return true; })()`, nil)
		p3Wait(t, c, fmt.Sprintf(`location.hash.includes("range=24h") && document.body.dataset.ready !== %q && !!document.querySelector("#top-flags")`, before))
		ch := p3ChartIn(t, c, `#top-flags tr[data-flag="checkout"]`)
		if ch.Bars != 24 || !strings.HasPrefix(ch.Label, "Evaluations of checkout: 24 hourly points") || !strings.Contains(ch.Label, "total 7") {
			t.Errorf("hourly chart: %+v", ch)
		}
	})

	t.Run("the exported evaluations chart names each variation's count, for other pages", func(t *testing.T) {
		var got string
		c.Page.Eval(t, `import("/console/js/pages/usage.js").then((m) => m.evaluationsChart("shop", "production", "checkout", {variations: [{value: false, name: "off"}, {value: true, name: "on"}]})).then((el) => el.querySelector("p").textContent)`, &got)
		if got != "7 evaluations: off 2, on 5" {
			t.Errorf("chart text = %q", got)
		}
	})
}
