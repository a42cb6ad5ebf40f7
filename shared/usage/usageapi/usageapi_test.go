package usageapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/destination"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/usage"
	"github.com/flagplane/flagplane/shared/usage/usageapi"
)

// clock is the injected time of the aggregator and of the usage service.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

type env struct {
	project, env, id, sdkKey, mobileKey string
}

type fixture struct {
	srv   *apptest.Server
	clock *clock
	svc   *usage.Service
	envs  map[string]env // by "project/env"
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	// The clock starts at a real time: audit entries are dated by it too.
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	srv := apptest.New(t, apptest.WithClock(c.now))
	svc := usageapi.Service(srv.App)
	f := &fixture{srv: srv, clock: c, svc: svc, envs: map[string]env{}}
	for _, p := range []string{"shop", "blog"} {
		srv.MustCreateProject(t, p)
		for _, e := range []string{"production", "test"} {
			res := srv.Do(t, http.MethodGet, "/api/v2/projects/"+p+"/environments/"+e, nil)
			m := res.Map(t)
			f.envs[p+"/"+e] = env{project: p, env: e, id: m["_id"].(string), sdkKey: m["apiKey"].(string), mobileKey: m["mobileKey"].(string)}
		}
	}
	return f
}

// contexts are index events of the keys (kind user unless "kind:key"),
// anonymous when the key starts with "anon".
func contexts(keys ...string) []string {
	var out []string
	for _, k := range keys {
		kind := "user"
		if before, after, ok := strings.Cut(k, ":"); ok {
			kind, k = before, after
		}
		out = append(out, fmt.Sprintf(`{"kind":"index","creationDate":1,"context":{"kind":%q,"key":%q,"anonymous":%t}}`, kind, k, strings.HasPrefix(k, "anon")))
	}
	return out
}

func keys(prefix string, from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("%s%d", prefix, i))
	}
	return out
}

// send posts events at the clock's time t through the route of sdk: "server", "mobile" or "client".
func (f *fixture) send(t *testing.T, at time.Time, target, sdk, userAgent string, events []string) {
	t.Helper()
	f.clock.set(at)
	e := f.envs[target]
	body := "[" + strings.Join(events, ",") + "]"
	var res *apptest.Response
	switch sdk {
	case "server":
		res = f.srv.Do(t, http.MethodPost, "/bulk", body, "Authorization", e.sdkKey, "User-Agent", userAgent, "X-LaunchDarkly-Event-Schema", "4",
			"X-LaunchDarkly-Tags", "application-id/"+e.project+"-api")
	case "mobile":
		res = f.srv.Do(t, http.MethodPost, "/mobile/events/bulk", body, "Authorization", "api_key "+e.mobileKey, "User-Agent", userAgent, "X-LaunchDarkly-Event-Schema", "4")
	case "client":
		res = f.srv.Do(t, http.MethodPost, "/events/bulk/"+e.id, body, "Authorization", "", "X-LaunchDarkly-User-Agent", userAgent, "X-LaunchDarkly-Event-Schema", "4",
			"X-LaunchDarkly-Tags", "application-id/web")
	}
	if res.Status != http.StatusAccepted {
		t.Fatalf("post events: %d %s", res.Status, res.Body)
	}
}

type seriesAnswer struct {
	Links    map[string]any     `json:"_links"`
	Metadata []map[string]any   `json:"metadata"`
	Series   []map[string]int64 `json:"series"`
}

func (f *fixture) get(t *testing.T, path string, q url.Values) *apptest.Response {
	t.Helper()
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return f.srv.Do(t, http.MethodGet, path, nil, "SVC-API-Version", "beta")
}

func (f *fixture) series(t *testing.T, path string, q url.Values) seriesAnswer {
	t.Helper()
	res := f.get(t, path, q)
	if res.Status != http.StatusOK {
		t.Fatalf("GET %s?%s: %d %s", path, q.Encode(), res.Status, res.Body)
	}
	var a seriesAnswer
	res.JSON(t, &a)
	if a.Links == nil || a.Metadata == nil || a.Series == nil {
		t.Fatalf("answer lacks _links, metadata or series: %s", res.Body)
	}
	return a
}

// seriesCase is a usage series request (path below /api/v2/usage/) and
// the count it should answer at a time, for the group whose metadata holds
// every pair of group.
type seriesCase struct {
	name  string
	path  string
	query url.Values
	at    time.Time
	group map[string]string
	want  int64
}

// checkSeries runs each case as a subtest; equal says whether a count is
// the one wanted (exactly, or near it for sketch estimates).
func (f *fixture) checkSeries(t *testing.T, cases []seriesCase, equal func(got, want int64) bool) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := f.series(t, "/api/v2/usage/"+c.path, c.query)
			if got := a.value(t, c.at, c.group); !equal(got, c.want) {
				t.Errorf("%v at %s = %d, want %d: %v %v", c.group, c.at.Format(time.DateTime), got, c.want, a.Metadata, a.Series)
			}
		})
	}
}

func exactly(got, want int64) bool { return got == want }

// value is the count at time at of the group whose metadata holds every pair of want.
func (a seriesAnswer) value(t *testing.T, at time.Time, want map[string]string) int64 {
	t.Helper()
	idx := -1
	for i, md := range a.Metadata {
		ok := true
		for k, v := range want {
			ok = ok && fmt.Sprint(md[k]) == v
		}
		if ok {
			if idx >= 0 {
				t.Fatalf("two groups match %v: %v", want, a.Metadata)
			}
			idx = i
		}
	}
	if idx < 0 {
		return 0
	}
	for _, p := range a.Series {
		if p["time"] == at.UnixMilli() {
			return p[fmt.Sprint(idx)]
		}
	}
	t.Fatalf("no point at %s in %v", at, a.Series)
	return 0
}

// hllTolerance is the error allowed on sketch counts: three standard
// errors of a precision-14 HyperLogLog (1.04/sqrt(16384) = 0.81%), at least 1.
func near(got, want int64) bool {
	tol := math.Max(1, math.Ceil(3*0.0081*float64(want)))
	return math.Abs(float64(got-want)) <= tol
}

func q(pairs ...string) url.Values {
	v := url.Values{}
	for i := 0; i < len(pairs); i += 2 {
		v.Add(pairs[i], pairs[i+1])
	}
	return v
}

func ms(t time.Time) string { return fmt.Sprint(t.UnixMilli()) }

var (
	feb25 = time.Date(2026, 2, 25, 12, 0, 0, 0, time.UTC)
	mar10 = time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	mar11 = time.Date(2026, 3, 11, 0, 0, 0, 0, time.UTC)
	mar12 = time.Date(2026, 3, 12, 0, 0, 0, 0, time.UTC)
)

// arrange sends the known payloads and rolls them up.
func arrange(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	ai := `{"kind":"custom","key":"$ld:ai:generation","creationDate":1,"context":{"kind":"user","key":"u1"}}`
	// February: 7 users in blog.
	f.send(t, feb25, "blog/production", "server", "PythonClient/9.0.0", contexts(keys("r", 1, 7)...))
	// 10 March, 10:30: 100 server users in shop, three AI runs; 10 in blog.
	f.send(t, mar10.Add(10*time.Hour+30*time.Minute), "shop/production", "server", "GoClient/7.14.6", append(contexts(keys("u", 1, 100)...), ai, ai, ai))
	f.send(t, mar10.Add(11*time.Hour), "blog/production", "server", "PythonClient/9.0.0", contexts(keys("b", 1, 10)...))
	// 10 March, 14:00: a browser: 50 of those users, 20 anonymous ones, 5 orgs.
	f.send(t, mar10.Add(14*time.Hour), "shop/production", "client", "JSClient/3.1.0",
		contexts(append(append(keys("u", 1, 50), keys("anon", 1, 20)...), keys("org:o", 1, 5)...)...))
	// 10 March, 20:00: a mobile app in shop's test environment: 30 users.
	f.send(t, mar10.Add(20*time.Hour), "shop/test", "mobile", "AndroidClient/5.0.0", contexts(keys("m", 1, 30)...))
	// 11 March, 09:00: 100 server users, 50 of them seen the day before; an older Go SDK too.
	f.send(t, mar11.Add(9*time.Hour), "shop/production", "server", "GoClient/7.14.6", contexts(keys("u", 50, 149)...))
	f.send(t, mar11.Add(9*time.Hour+10*time.Minute), "shop/production", "server", "GoClient/7.2.0", contexts("u1"))
	f.clock.set(mar12.Add(10 * time.Minute))
	if _, err := f.svc.Rollup.Run(context.Background()); err != nil {
		t.Fatalf("rollup: %v", err)
	}
	return f
}

func TestContextSeries(t *testing.T) {
	f := arrange(t)
	window := func(pairs ...string) url.Values {
		return q(append([]string{"from", ms(mar10), "to", ms(mar11.Add(23 * time.Hour))}, pairs...)...)
	}
	user, org := map[string]string{"contextKind": "user"}, map[string]string{"contextKind": "org"}
	cases := []seriesCase{
		{"total contexts of a day count each user once across SDKs", "total-contexts", window("projectKey", "shop", "aggregationType", "incremental"), mar10, user, 150},
		{"total contexts count other kinds apart", "total-contexts", window("projectKey", "shop", "aggregationType", "incremental"), mar10, org, 5},
		{"the next day counts only its own users when incremental", "total-contexts", window("projectKey", "shop", "aggregationType", "incremental"), mar11, user, 101},
		{"month to date merges the days", "total-contexts", window("projectKey", "shop"), mar11, user, 199},
		{"month to date on its first day equals the day", "total-contexts", window("projectKey", "shop"), mar10, user, 150},
		{"without a project filter the account is counted", "total-contexts", window(), mar11, user, 209},
		{"client-side contexts come from browser and mobile SDKs", "clientside-contexts", window("aggregationType", "incremental"), mar10, user, 100},
		{"server-side contexts come from server SDKs", "serverside-contexts", window("projectKey", "shop"), mar11, user, 149},
		{"the anonymous filter keeps anonymous contexts", "clientside-contexts", window("anonymous", "true"), mar10, user, 20},
		{"an environment filter with its project", "clientside-contexts", window("projectKey", "shop", "environmentKey", "test"), mar10, user, 30},
		{"a context kind filter", "total-contexts", window("contextKind", "org"), mar10, org, 5},
		{"an SDK name filter", "total-contexts", window("sdkName", "AndroidClient"), mar10, user, 30},
		{"an SDK type filter", "total-contexts", window("sdkType", "mobile"), mar10, user, 30},
		{"grouped by anonymity", "clientside-contexts", window("groupBy", "anonymousV2"), mar10, map[string]string{"contextKind": "user", "anonymousV2": "false"}, 80},
		{"grouped by SDK name", "total-contexts", window("groupBy", "sdkName", "projectKey", "shop"), mar10, map[string]string{"contextKind": "user", "sdkName": "JSClient"}, 70},
		{"grouped by environment", "total-contexts", window("groupBy", "environmentId", "projectKey", "shop"), mar10,
			map[string]string{"contextKind": "user", "environmentId": f.envs["shop/test"].id, "environmentKey": "test"}, 30},
		{"grouped by project id", "total-contexts", window("groupBy", "projectId"), mar11, map[string]string{"contextKind": "user", "projectKey": "blog"}, 10},
		{"grouped by application", "total-contexts", window("groupBy", "sdkAppId"), mar10, map[string]string{"contextKind": "user", "sdkAppId": "web"}, 70},
		{"rolling 30 days reaches into the month before", "total-mau", window("projectKey", "blog", "aggregationType", "rolling_30d"), mar11, map[string]string{}, 17},
		{"month to date stays in its month", "total-mau", window("projectKey", "blog"), mar11, map[string]string{}, 10},
		{"MAU counts the primary kind only", "total-mau", window("projectKey", "shop", "groupBy", "contextKind"), mar10, org, 0},
		{"client-side MAU", "clientside-mau", window(), mar11, map[string]string{}, 100},
		{"monthly month to date is one point per month", "total-mau",
			q("from", ms(feb25), "to", ms(mar11), "granularity", "monthly"), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), map[string]string{}, 209},
		{"monthly includes the earlier month", "total-mau",
			q("from", ms(feb25), "to", ms(mar11), "granularity", "monthly"), time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), map[string]string{}, 7},
		{"the legacy MAU series is rolling 30 days by default", "mau", window(), mar11, map[string]string{}, 216},
		{"the legacy MAU series filters by SDK type client", "mau", window("sdktype", "client", "aggregationType", "daily_incremental"), mar10, map[string]string{}, 100},
		{"MAU by category: mobile", "mau/bycategory", window(), mar10, map[string]string{"category": "mobile"}, 30},
		{"MAU by category: backend", "mau/bycategory", window(), mar10, map[string]string{"category": "backend"}, 117},
	}
	f.checkSeries(t, cases, near)
	t.Run("the series has a point per day of the range, zero where nothing was seen", func(t *testing.T) {
		a := f.series(t, "/api/v2/usage/total-contexts", q("from", ms(mar10.Add(-48*time.Hour)), "to", ms(mar11), "aggregationType", "incremental"))
		if len(a.Series) != 4 || a.Series[0]["time"] != mar10.Add(-48*time.Hour).UnixMilli() {
			t.Fatalf("series = %v", a.Series)
		}
		if a.value(t, mar10.Add(-24*time.Hour), user) != 0 {
			t.Errorf("a day without data counts %v", a.Series[1])
		}
	})
	t.Run("the defaults are month to date from the start of the month to now", func(t *testing.T) {
		a := f.series(t, "/api/v2/usage/total-contexts", nil)
		if len(a.Series) != 12 || a.Series[0]["time"] != time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).UnixMilli() {
			t.Fatalf("series = %v", a.Series)
		}
		if got := a.value(t, mar12, user); !near(got, 209) {
			t.Errorf("today's month to date = %d", got)
		}
	})
}

func TestCountSeries(t *testing.T) {
	f := arrange(t)
	window := func(pairs ...string) url.Values {
		return q(append([]string{"from", ms(mar10), "to", ms(mar11.Add(23 * time.Hour))}, pairs...)...)
	}
	cases := []seriesCase{
		{"AI runs of a day", "ai-runs", window("aggregationType", "incremental"), mar10, map[string]string{}, 3},
		{"AI runs month to date carry on", "ai-runs", window(), mar11, map[string]string{}, 3},
		{"AI runs by the hour", "ai-runs", window("aggregationType", "incremental", "granularity", "hourly"), mar10.Add(10 * time.Hour), map[string]string{}, 3},
		{"AI runs in another hour", "ai-runs", window("aggregationType", "incremental", "granularity", "hourly"), mar10.Add(11 * time.Hour), map[string]string{}, 0},
		{"AI runs month to date by the hour", "ai-runs", window("granularity", "hourly"), mar11.Add(5 * time.Hour), map[string]string{}, 3},
		{"AI runs monthly", "ai-runs", window("granularity", "monthly"), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), map[string]string{}, 3},
		{"AI runs grouped by SDK", "ai-runs", window("groupBy", "sdkName", "groupBy", "sdkVersion"), mar10, map[string]string{"sdkName": "GoClient", "sdkVersion": "7.14.6"}, 3},
		{"AI runs filtered to another SDK", "ai-runs", window("sdkName", "JSClient"), mar10, map[string]string{}, 0},
		{"events received by the hour", "events/received", q("from", ms(mar10.Add(10*time.Hour)), "to", ms(mar10.Add(15*time.Hour))), mar10.Add(14 * time.Hour), map[string]string{}, 75},
		{"events received by the day beyond two days", "events/received", q("from", ms(mar10.Add(-24*time.Hour)), "to", ms(mar12)), mar10, map[string]string{}, 103 + 10 + 75 + 30},
	}
	f.checkSeries(t, cases, exactly)
}

func TestSeriesRejectsBadRequests(t *testing.T) {
	f := newFixture(t)
	f.clock.set(mar12)
	long := q("from", ms(mar12.Add(-366*24*time.Hour)), "to", ms(mar12))
	cases := []struct {
		name, path string
		query      url.Values
		want       string
	}{
		{"a range over 365 days", "total-contexts", long, "365 days"},
		{"a range over 365 days of AI runs", "ai-runs", long, "365 days"},
		{"a range over 365 days of evaluations", "events/received", long, "365 days"},
		{"from after to", "clientside-mau", q("from", ms(mar12), "to", ms(mar11)), "from"},
		{"a from that is not a number", "total-mau", q("from", "yesterday"), "from"},
		{"an unknown aggregation type", "total-contexts", q("aggregationType", "weekly"), "aggregationType"},
		{"monthly incremental contexts", "clientside-contexts", q("aggregationType", "incremental", "granularity", "monthly"), `is not supported with aggregationType`},
		{"monthly rolling contexts", "serverside-contexts", q("aggregationType", "rolling_30d", "granularity", "monthly"), "rolling_30d"},
		{"hourly contexts", "total-contexts", q("granularity", "hourly"), "hourly"},
		{"incremental monthly AI runs", "ai-runs", q("aggregationType", "incremental", "granularity", "monthly"), "monthly"},
		{"rolling AI runs", "ai-runs", q("aggregationType", "rolling_30d"), "rolling_30d"},
		{"an environment without a project", "total-contexts", q("environmentKey", "production"), "exactly one projectKey"},
		{"an environment with two projects", "total-mau", q("environmentKey", "production", "projectKey", "a", "projectKey", "b"), "exactly one projectKey"},
		{"an unknown group-by", "total-contexts", q("groupBy", "colour"), "groupBy"},
		{"an anonymous filter that is not a boolean", "clientside-contexts", q("anonymous", "maybe"), "anonymous"},
		{"an unknown event type", "events/sent", nil, "received or published"},
		{"an unknown stream source", "streams/edge", nil, "client or server"},
		{"an unknown MAU SDK type", "mau/sdks", q("sdktype", "edge"), "sdktype"},
		{"a not-collected series still checks its range", "observability/logs", q("from", "0", "to", fmt.Sprint(mar12.Unix())), "365 days"},
		{"a not-collected series still checks its granularity", "vega-ai", q("aggregationType", "incremental", "granularity", "monthly"), "monthly"},
		{"an unknown time zone", "evaluations/shop/production/checkout", q("tz", "Mars/Olympus"), "tz"},
		{"event kinds of data export", "data-export-events", q("eventKind", "custom"), "eventKind"},
		{"a filter repeated more than 50 times", "total-contexts", manyProjects(), "at most 50"},
	}
	for _, c := range cases {
		t.Run(c.name+" is a 400", func(t *testing.T) {
			res := f.get(t, "/api/v2/usage/"+c.path, c.query)
			if res.Status != http.StatusBadRequest || !strings.Contains(res.String(), c.want) {
				t.Errorf("status %d, want 400 naming %q: %s", res.Status, c.want, res.Body)
			}
		})
	}
}

func TestSourcesNotCollectedSaySo(t *testing.T) {
	f := newFixture(t)
	f.clock.set(mar12)
	for _, path := range []string{"observability/errors", "observability/logs", "observability/metrics", "observability/sessions",
		"observability/traces", "vega-ai", "experimentation-events", "experimentation-keys",
		"service-connections", "streams/client", "streams/client/bysdkversion"} {
		t.Run(path+" answers an empty series and a metadata entry saying the source is not collected", func(t *testing.T) {
			a := f.series(t, "/api/v2/usage/"+path, nil)
			if len(a.Series) != 0 || len(a.Metadata) != 1 || a.Metadata[0]["collected"] != false || a.Metadata[0]["source"] == "" {
				t.Errorf("answer = %+v", a)
			}
		})
	}
	t.Run("client stream SDK versions are an empty list", func(t *testing.T) {
		res := f.get(t, "/api/v2/usage/streams/client/sdkversions", nil)
		if res.Status != http.StatusOK || !strings.Contains(res.String(), `"sdkVersions":[]`) {
			t.Errorf("%d %s", res.Status, res.Body)
		}
	})
}

func TestDataExportEvents(t *testing.T) {
	f := newFixture(t)
	shop := f.envs["shop/production"]
	blog := f.envs["blog/production"]
	ctx := context.Background()
	for _, x := range []struct {
		hour  time.Time
		env   string
		count int64
	}{{mar10.Add(3 * time.Hour), shop.id, 40}, {mar10.Add(4 * time.Hour), shop.id, 2}, {mar11.Add(1 * time.Hour), blog.id, 7}} {
		h := x.hour.Format("2006010215")
		k := store.DataExportHourKey(h, x.env)
		data, _ := json.Marshal(map[string]any{"hour": h, "environmentId": x.env, "events": x.count})
		if err := f.srv.Table.Put(ctx, store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: data}, store.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	f.clock.set(mar12)
	if _, err := f.svc.Rollup.Run(ctx); err != nil {
		t.Fatal(err)
	}
	window := func(pairs ...string) url.Values {
		return q(append([]string{"from", ms(mar10), "to", ms(mar11)}, pairs...)...)
	}
	cases := []seriesCase{
		{"a day's exported events", "data-export-events", window("aggregationType", "incremental"), mar10, map[string]string{}, 42},
		{"month to date", "data-export-events", window(), mar11, map[string]string{}, 49},
		{"filtered to a project", "data-export-events", window("projectKey", "shop"), mar11, map[string]string{}, 42},
		{"filtered to an environment", "data-export-events", window("projectKey", "blog", "environmentKey", "production"), mar11, map[string]string{}, 7},
		{"grouped by environment", "data-export-events", window("groupBy", "environmentId", "aggregationType", "incremental"), mar11, map[string]string{"environmentId": blog.id}, 7},
		{"by the hour", "data-export-events", window("granularity", "hourly", "aggregationType", "incremental"), mar10.Add(3 * time.Hour), map[string]string{}, 40},
		{"events published", "events/published", q("from", ms(mar10), "to", ms(mar10.Add(20*time.Hour))), mar10.Add(4 * time.Hour), map[string]string{}, 2},
	}
	f.checkSeries(t, cases, exactly)
	for _, path := range []string{"data-export-events", "warehouse-export"} {
		t.Run(path+" of an environment that exported nothing counts zero", func(t *testing.T) {
			a := f.series(t, "/api/v2/usage/"+path, window("projectKey", "blog", "environmentKey", "test"))
			if len(a.Metadata) != 1 || len(a.Metadata[0]) != 0 || len(a.Series) != 2 || a.Series[0]["0"] != 0 || a.Series[1]["0"] != 0 {
				t.Errorf("answer = %+v", a)
			}
		})
	}
	t.Run("warehouse export counts the same exports", func(t *testing.T) {
		a := f.series(t, "/api/v2/usage/warehouse-export", window("groupBy", "environmentId", "aggregationType", "incremental"))
		if got := a.value(t, mar10, map[string]string{"environmentId": shop.id}); got != 42 {
			t.Errorf("shop's exports on 10 March = %d, want 42: %+v", got, a)
		}
	})
	t.Run("warehouse export refuses a destination kind filter: the counters are by environment", func(t *testing.T) {
		res := f.get(t, "/api/v2/usage/warehouse-export", window("destination", "bigquery"))
		if res.Status != http.StatusBadRequest || !strings.Contains(res.String(), "destination") {
			t.Errorf("%d %s", res.Status, res.Body)
		}
	})
}

func TestSDKVersionsBeforeTheFirstRollup(t *testing.T) {
	f := newFixture(t)
	f.send(t, mar10.Add(10*time.Hour), "shop/production", "server", "GoClient/7.14.6", contexts("u1"))
	f.clock.set(mar10.Add(10*time.Hour + time.Minute))
	for _, path := range []string{"sdk-versions/all", "sdk-versions/details"} {
		t.Run(path+" lists an SDK seen a minute ago, read from the SDKs seen themselves", func(t *testing.T) {
			res := f.get(t, "/api/v2/usage/"+path, nil)
			var got []map[string]any
			res.JSON(t, &got)
			if res.Status != http.StatusOK || len(got) != 1 || got[0]["name"] != "GoClient" {
				t.Errorf("%d %s", res.Status, res.Body)
			}
		})
	}
}

func TestSDKVersions(t *testing.T) {
	f := arrange(t)
	type item struct {
		Name, Version, Type, ProjectKey, ProjectName, EnvironmentKey, EnvironmentName, EnvironmentID, ProjectID string
		ApplicationID, SvcLatestVersion, EolStatus, LatestReleaseURL, ConnectionType                            string
	}
	list := func(t *testing.T, path string, query url.Values) []item {
		t.Helper()
		res := f.get(t, path, query)
		if res.Status != http.StatusOK {
			t.Fatalf("%d %s", res.Status, res.Body)
		}
		var out []item
		res.JSON(t, &out)
		return out
	}
	t.Run("all lists every version seen in the last 24 hours", func(t *testing.T) {
		got := list(t, "/api/v2/usage/sdk-versions/all", nil)
		if len(got) != 2 || got[0].Version != "7.2.0" || got[1].Version != "7.14.6" {
			t.Fatalf("items = %+v", got)
		}
		g := got[1]
		if g.Name != "GoClient" || g.Type != "server" || g.ProjectKey != "shop" || g.ProjectName == "" || g.EnvironmentKey != "production" ||
			g.EnvironmentName == "" || g.EnvironmentID != f.envs["shop/production"].id || g.ProjectID == "" || g.ApplicationID != "shop-api" ||
			g.SvcLatestVersion != usage.Versions.SDKs["GoClient"].LatestVersion || g.EolStatus != usage.EolAllClear || g.ConnectionType != "direct" {
			t.Errorf("item = %+v", g)
		}
	})
	t.Run("details keeps the highest version of each SDK", func(t *testing.T) {
		got := list(t, "/api/v2/usage/sdk-versions/details", nil)
		if len(got) != 1 || got[0].Version != "7.14.6" {
			t.Errorf("items = %+v", got)
		}
	})
	t.Run("an SDK seen more than 24 hours ago is left out, and filters apply", func(t *testing.T) {
		snapshotAt := func(at time.Time) {
			f.clock.set(at)
			if _, err := f.svc.Rollup.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		snapshotAt(mar10.Add(23 * time.Hour))
		defer snapshotAt(mar12.Add(10 * time.Minute))
		if got := list(t, "/api/v2/usage/sdk-versions/all", q("sdkType", "browser")); len(got) != 1 || got[0].Name != "JSClient" {
			t.Errorf("browser SDKs = %+v", got)
		}
		if got := list(t, "/api/v2/usage/sdk-versions/all", q("environmentId", f.envs["shop/test"].id)); len(got) != 1 || got[0].Name != "AndroidClient" {
			t.Errorf("SDKs of shop/test = %+v", got)
		}
		all := list(t, "/api/v2/usage/sdk-versions/all", nil)
		blogID := ""
		for _, it := range all {
			if it.ProjectKey == "blog" {
				blogID = it.ProjectID
			}
		}
		if got := list(t, "/api/v2/usage/sdk-versions/all", q("projectId", blogID)); blogID == "" || len(got) != 1 || got[0].Name != "PythonClient" {
			t.Errorf("SDKs of blog = %+v", got)
		}
		if got := list(t, "/api/v2/usage/sdk-versions/all", q("sdkAppId", "web", "connectionType", "direct")); len(got) != 1 || got[0].Name != "JSClient" {
			t.Errorf("SDKs of app web = %+v", got)
		}
	})
	t.Run("the lists are the rollup's hourly snapshot: an SDK seen since shows from the next hour's", func(t *testing.T) {
		f.send(t, mar12.Add(20*time.Minute), "blog/test", "server", "RubyClient/8.0.0", contexts("r1"))
		if got := list(t, "/api/v2/usage/sdk-versions/all", q("sdkName", "RubyClient")); len(got) != 0 {
			t.Errorf("listed before the next snapshot: %+v", got)
		}
		f.clock.set(mar12.Add(30 * time.Minute))
		if _, err := f.svc.Rollup.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := list(t, "/api/v2/usage/sdk-versions/all", q("sdkName", "RubyClient")); len(got) != 0 {
			t.Errorf("a second snapshot within the hour: %+v", got)
		}
		f.clock.set(mar12.Add(65 * time.Minute))
		if _, err := f.svc.Rollup.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := list(t, "/api/v2/usage/sdk-versions/all", q("sdkName", "RubyClient")); len(got) != 1 || got[0].EnvironmentKey != "test" {
			t.Errorf("after the next hour's snapshot: %+v", got)
		}
		snapshot := 0
		page, err := f.srv.Table.Query(context.Background(), store.Query{PK: store.UsageSDKsPartition})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			if it.SK != "CURRENT" {
				snapshot++
			}
		}
		if snapshot != 1 {
			t.Errorf("%d snapshot chunks kept, want the current one only", snapshot)
		}
	})
	t.Run("MAU SDKs by type", func(t *testing.T) {
		res := f.get(t, "/api/v2/usage/mau/sdks", q("sdktype", "client"))
		var got struct {
			Links map[string]any `json:"_links"`
			SDKs  []string       `json:"sdks"`
		}
		res.JSON(t, &got)
		if res.Status != http.StatusOK || fmt.Sprint(got.SDKs) != "[AndroidClient JSClient]" || got.Links == nil {
			t.Errorf("%d %s", res.Status, res.Body)
		}
	})
}

func TestEvaluationsSeries(t *testing.T) {
	f := newFixture(t)
	res := f.srv.Do(t, http.MethodPost, "/api/v2/flags/shop", map[string]any{"key": "checkout", "name": "Checkout"})
	if res.Status != http.StatusCreated {
		t.Fatalf("create flag: %d %s", res.Status, res.Body)
	}
	summary := func(end time.Time, on, off int) string {
		return fmt.Sprintf(`{"kind":"summary","startDate":%d,"endDate":%d,"features":{"checkout":{"default":false,"contextKinds":["user"],"counters":[{"variation":1,"version":1,"value":true,"count":%d},{"variation":0,"version":1,"value":false,"count":%d},{"value":false,"count":1}]}}}`,
			end.UnixMilli()-1000, end.UnixMilli(), on, off)
	}
	f.send(t, mar10.Add(10*time.Hour), "shop/production", "server", "GoClient/7.14.6", []string{summary(mar10.Add(10*time.Hour), 5, 2)})
	f.send(t, mar10.Add(13*time.Hour), "shop/production", "server", "GoClient/7.14.6", []string{summary(mar10.Add(13*time.Hour), 1, 0)})
	f.send(t, mar11.Add(2*time.Hour), "shop/production", "server", "GoClient/7.14.6", []string{summary(mar11.Add(2*time.Hour), 4, 0)})
	f.clock.set(mar12)
	path := "/api/v2/usage/evaluations/shop/production/checkout"
	t.Run("within two days the series is hourly, by variation", func(t *testing.T) {
		a := f.series(t, path, q("from", ms(mar10), "to", ms(mar11)))
		if len(a.Series) != 25 || len(a.Metadata) != 3 || a.Metadata[0]["variation"] != "0" || a.Metadata[1]["variation"] != "1" || a.Metadata[2]["variation"] != "default" {
			t.Fatalf("answer = %+v", a)
		}
		if got := a.value(t, mar10.Add(10*time.Hour), map[string]string{"variation": "1"}); got != 5 {
			t.Errorf("variation 1 at 10:00 = %d", got)
		}
	})
	t.Run("beyond two days it is daily, and tz moves the day breaks", func(t *testing.T) {
		a := f.series(t, path, q("from", ms(mar10.Add(-48*time.Hour)), "to", ms(mar12)))
		if got := a.value(t, mar10, map[string]string{"variation": "1"}); got != 6 {
			t.Errorf("variation 1 on 10 March = %d", got)
		}
		tz := f.series(t, path, q("from", ms(mar10.Add(-48*time.Hour)), "to", ms(mar12), "tz", "Pacific/Auckland"))
		// 11 March 02:00 UTC is 11 March 15:00 in Auckland; 10 March 13:00 UTC is 11 March 02:00 there.
		nz, _ := time.LoadLocation("Pacific/Auckland")
		if got := tz.value(t, time.Date(2026, 3, 11, 0, 0, 0, 0, nz), map[string]string{"variation": "1"}); got != 5 {
			t.Errorf("variation 1 on 11 March in Auckland = %d: %v", got, tz.Series)
		}
	})
	t.Run("an unknown flag is a 404", func(t *testing.T) {
		if res := f.get(t, "/api/v2/usage/evaluations/shop/production/nope", nil); res.Status != http.StatusNotFound {
			t.Errorf("%d %s", res.Status, res.Body)
		}
	})
}

func manyProjects() url.Values {
	v := url.Values{}
	for i := 0; i < 51; i++ {
		v.Add("projectKey", fmt.Sprint("p", i))
	}
	return v
}

func TestLocalRollupJob(t *testing.T) {
	f := newFixture(t)
	f.send(t, mar10.Add(9*time.Hour), "shop/production", "server", "GoClient/7.14.6", contexts("j1", "j2"))
	f.clock.set(mar11)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.srv.App.RunWorkers(ctx, slog.New(slog.NewTextHandler(io.Discard, nil))); close(done) }()
	t.Run("the local server's workers roll up at once, and stop with the server", func(t *testing.T) {
		deadline := time.Now().Add(10 * time.Second)
		for {
			if _, err := f.srv.Table.Get(context.Background(), store.UsageRollupWatermarkKey()); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("no rollup within 10 s")
			}
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the workers did not stop")
		}
		a := f.series(t, "/api/v2/usage/total-contexts", q("from", ms(mar10), "to", ms(mar10)))
		if got := a.value(t, mar10, map[string]string{"contextKind": "user"}); got != 2 {
			t.Errorf("contexts after the worker's rollup = %d", got)
		}
	})
}

// openStream opens the server-side SDK stream (/all) and closes it once
// its first event arrived.
func (f *fixture) openStream(t *testing.T, at time.Time, target, userAgent string) {
	t.Helper()
	f.clock.set(at)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.srv.URL+"/all", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", f.envs[target].sdkKey)
	req.Header.Set("User-Agent", userAgent)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	line, err := bufio.NewReader(res.Body).ReadString('\n')
	if res.StatusCode != http.StatusOK || err != nil || line != "event: put\n" {
		t.Fatalf("stream: %d %q %v", res.StatusCode, line, err)
	}
}

func TestStreamSeries(t *testing.T) {
	f := newFixture(t)
	f.openStream(t, mar10.Add(10*time.Hour), "shop/production", "GoClient/7.14.6")
	f.openStream(t, mar10.Add(10*time.Hour+5*time.Minute), "shop/production", "GoClient/7.14.6")
	f.openStream(t, mar10.Add(11*time.Hour), "blog/production", "PythonClient/9.0.0")
	f.openStream(t, mar11.Add(3*time.Hour), "shop/test", "GoClient/7.15.0")
	f.clock.set(mar12.Add(10 * time.Minute))
	if _, err := f.svc.Rollup.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	cases := []seriesCase{
		{"streams opened in a day", "streams/server", q("from", ms(mar10.Add(-24*time.Hour)), "to", ms(mar12)), mar10, map[string]string{}, 3},
		{"streams opened the next day", "streams/server", q("from", ms(mar10.Add(-24*time.Hour)), "to", ms(mar12)), mar11, map[string]string{}, 1},
		{"streams by the hour within two days", "streams/server", q("from", ms(mar10), "to", ms(mar11)), mar10.Add(10 * time.Hour), map[string]string{}, 2},
		{"streams by SDK version", "streams/server/bysdkversion", q("from", ms(mar10), "to", ms(mar11)), mar10.Add(11 * time.Hour),
			map[string]string{"sdkName": "PythonClient", "sdkVersion": "9.0.0"}, 1},
		{"streams of one SDK version", "streams/server/bysdkversion", q("from", ms(mar10), "to", ms(mar12), "sdk", "GoClient", "version", "7.15.0"), mar11.Add(3 * time.Hour),
			map[string]string{"sdkName": "GoClient"}, 1},
	}
	f.checkSeries(t, cases, exactly)
	t.Run("the SDK versions that streamed", func(t *testing.T) {
		res := f.get(t, "/api/v2/usage/streams/server/sdkversions", nil)
		want := `"sdkVersions":[{"sdk":"GoClient","version":"7.14.6"},{"sdk":"GoClient","version":"7.15.0"},{"sdk":"PythonClient","version":"9.0.0"}]`
		if res.Status != http.StatusOK || !strings.Contains(res.String(), want) {
			t.Errorf("%d %s", res.Status, res.Body)
		}
	})
}

func TestTheHoursNotRolledUpAreReadLive(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	res := f.srv.Do(t, http.MethodPost, "/api/v2/destinations/shop/production", map[string]any{"kind": "databricks", "on": true,
		"config": map[string]any{"host": "dbc-1234.cloud.databricks.com"}})
	if res.Status != http.StatusCreated {
		t.Fatalf("create destination: %d %s", res.Status, res.Body)
	}
	// The rollup ran at 10:05: everything up to 09:00 is rolled up, 10:00 is not.
	f.clock.set(mar10.Add(10*time.Hour + 5*time.Minute))
	if _, err := f.svc.Rollup.Run(ctx); err != nil {
		t.Fatal(err)
	}
	ai := `{"kind":"custom","key":"$ld:ai:generation","creationDate":1,"context":{"kind":"user","key":"u1"}}`
	f.send(t, mar10.Add(10*time.Hour+30*time.Minute), "shop/production", "server", "GoClient/7.14.6", append(contexts(keys("u", 1, 100)...), ai, ai, ai))
	f.openStream(t, mar10.Add(10*time.Hour+35*time.Minute), "shop/production", "GoClient/7.14.6")
	f.clock.set(mar10.Add(10*time.Hour + 40*time.Minute))
	exported, err := destination.NewExporter(f.srv.Table, destination.Folder{Dir: t.TempDir()}, nil, f.srv.App.Now).Run(ctx)
	if err != nil || exported.Events == 0 {
		t.Fatalf("export: %+v %v", exported, err)
	}
	now := mar10.Add(10*time.Hour + 45*time.Minute)
	f.clock.set(now)
	hour := mar10.Add(10 * time.Hour)
	day := func(pairs ...string) url.Values {
		return q(append([]string{"from", ms(mar10), "to", ms(now)}, pairs...)...)
	}
	hourly := func(pairs ...string) url.Values {
		return day(append([]string{"aggregationType", "incremental", "granularity", "hourly"}, pairs...)...)
	}
	user := map[string]string{"contextKind": "user"}
	cases := []struct {
		seriesCase
		equal func(got, want int64) bool
	}{
		{seriesCase{"contexts this month count the users of the current hour", "total-contexts", day(), mar10, user, 100}, near},
		{seriesCase{"MAU by the month count them", "total-mau", day("granularity", "monthly"), monthStart(mar10), map[string]string{}, 100}, near},
		{seriesCase{"MAU of one project count them", "total-mau", day("projectKey", "shop"), mar10, map[string]string{}, 100}, near},
		{seriesCase{"MAU of another project do not", "total-mau", day("projectKey", "blog"), mar10, map[string]string{}, 0}, exactly},
		{seriesCase{"AI runs by the hour count the current hour's", "ai-runs", hourly(), hour, map[string]string{}, 3}, exactly},
		{seriesCase{"events received count the current hour's", "events/received", q("from", ms(mar10), "to", ms(now)), hour, map[string]string{}, 103}, exactly},
		{seriesCase{"streams count the one opened this hour", "streams/server", q("from", ms(mar10), "to", ms(now)), hour, map[string]string{}, 1}, exactly},
		{seriesCase{"data export events count what the destination exported this hour", "data-export-events", day("aggregationType", "incremental"), mar10, map[string]string{}, exported.Events}, exactly},
		{seriesCase{"warehouse export counts it by the hour", "warehouse-export", hourly(), hour, map[string]string{}, exported.Events}, exactly},
		{seriesCase{"events published count it", "events/published", q("from", ms(mar10), "to", ms(now)), hour, map[string]string{}, exported.Events}, exactly},
	}
	before := make([]int64, len(cases))
	for i, c := range cases {
		t.Run(c.name+" at once, before the rollup", func(t *testing.T) {
			a := f.series(t, "/api/v2/usage/"+c.path, c.query)
			before[i] = a.value(t, c.at, c.group)
			if !c.equal(before[i], c.want) {
				t.Errorf("%v at %s = %d, want %d: %v %v", c.group, c.at.Format(time.DateTime), before[i], c.want, a.Metadata, a.Series)
			}
		})
	}
	same := func(t *testing.T, when string) {
		t.Helper()
		for i, c := range cases {
			t.Run(c.name+" the same "+when, func(t *testing.T) {
				a := f.series(t, "/api/v2/usage/"+c.path, c.query)
				if got := a.value(t, c.at, c.group); got != before[i] {
					t.Errorf("%v at %s = %d, was %d before the rollup: %v %v", c.group, c.at.Format(time.DateTime), got, before[i], a.Metadata, a.Series)
				}
			})
		}
	}
	// A rollup that wrote the day through 10:00 and stopped before moving the watermark.
	if _, err := f.svc.Rollup.RollupDay(ctx, mar10, hour); err != nil {
		t.Fatal(err)
	}
	same(t, "when a rollup wrote the hour but stopped before moving the watermark")
	f.clock.set(mar10.Add(11*time.Hour + 5*time.Minute))
	if rep, err := f.svc.Rollup.Run(ctx); err != nil || rep.Through != hour.Format("2006010215") {
		t.Fatalf("rollup: %+v %v", rep, err)
	}
	same(t, "after the rollup of that hour")
}

func monthStart(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}
