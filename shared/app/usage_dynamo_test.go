package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/usage/usageapi"
)

// usageOnDynamo is an app on a fresh DynamoDB table whose projects
// "shop" and "blog" received SDK events on days 1..days of March 2026,
// rolled up; now is 10 minutes into the next day.
type usageOnDynamo struct {
	*dynamoAPI
	now time.Time
	// setNow moves the app's clock (and now).
	setNow func(time.Time)
}

func newUsageOnDynamo(tb testing.TB, days int) *usageOnDynamo {
	tb.Helper()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	api := newDynamoAPI(tb, app.Settings{Approvals: true, Clock: clock})
	api.directIngest()
	svc := usageapi.Service(api.App)
	api.serve(tb, "")
	u := &usageOnDynamo{dynamoAPI: api}
	u.setNow = func(t time.Time) { now, u.now = t, t }
	for _, p := range []string{"shop", "blog"} {
		u.do(tb, http.MethodPost, "/api/v2/projects", "", fmt.Sprintf(`{"key":%q,"name":%q}`, p, p), http.StatusCreated)
	}
	var keys map[string]string
	json.Unmarshal(u.do(tb, http.MethodGet, "/api/v2/projects/shop/environments/production", "", "", http.StatusOK), &keys)
	var blogKeys map[string]string
	json.Unmarshal(u.do(tb, http.MethodGet, "/api/v2/projects/blog/environments/production", "", "", http.StatusOK), &blogKeys)
	for d := 0; d < days; d++ {
		now = time.Date(2026, 3, 1+d, 9, 0, 0, 0, time.UTC)
		for _, env := range []map[string]string{keys, blogKeys} {
			var ev []string
			for i := 0; i < 20; i++ {
				ev = append(ev, fmt.Sprintf(`{"kind":"index","creationDate":1,"context":{"kind":"user","key":"d%d-u%d"}}`, d, i))
			}
			u.do(tb, http.MethodPost, "/bulk", env["apiKey"], "["+strings.Join(ev, ",")+"]", http.StatusAccepted, "User-Agent", "GoClient/7.14.6", "X-LaunchDarkly-Event-Schema", "4")
		}
	}
	now = time.Date(2026, 3, 1+days, 0, 10, 0, 0, time.UTC)
	u.now = now
	if _, err := svc.Rollup.Run(tb.Context()); err != nil {
		tb.Fatal(err)
	}
	// The app's clock moved on by weeks, past the 30 s a resolved token is
	// trusted: one read resolves it again, so the counted reads count only
	// the series.
	u.do(tb, http.MethodGet, "/api/v2/projects", "", "", http.StatusOK)
	return u
}

// monthToDate asks shop's month-to-date contexts and returns the answer
// and the DynamoDB calls it made.
func (u *usageOnDynamo) monthToDate(tb testing.TB, query string) ([]byte, map[string]int) {
	tb.Helper()
	u.Counter.Reset()
	body := u.do(tb, http.MethodGet, "/api/v2/usage/total-contexts?"+query, "", "", http.StatusOK, "SVC-API-Version", "beta")
	return body, u.Counter.Counts()
}

// TestUsageSeriesOnDynamoDB: the rolled-up days of a project's month sit in
// one partition, so its month-to-date series is one Query (two for a
// rolling window reaching into the month before), plus a GetItem of the
// rollup watermark and one Query of the live cells of each hour after it
// (here the current hour, 00:00), and never a Scan.
func TestUsageSeriesOnDynamoDB(t *testing.T) {
	u := newUsageOnDynamo(t, 28)
	cases := []struct {
		name, query     string
		queries, points int
	}{
		{"month to date for one project is one Query and one of the current hour", "projectKey=shop", 2, 29},
		{"month to date for one environment is one Query and one of the current hour", "projectKey=shop&environmentKey=production&groupBy=environmentId", 2, 29},
		{"month to date for the account is one Query and one of the current hour", "", 2, 29},
		{"rolling 30 days from mid-month is two Queries, this month's and the last, and one of the current hour", "projectKey=shop&aggregationType=rolling_30d&from=" +
			fmt.Sprint(time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC).UnixMilli()), 3, 15},
		{"a year by the month reads the rolled-up months (one Query per calendar year), the days of the month not all rolled up and the current hour", "projectKey=shop&granularity=monthly&from=" +
			fmt.Sprint(time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC).UnixMilli()), 4, 12},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body, calls := u.monthToDate(t, c.query)
			if calls["Query"] != c.queries || calls["GetItem"] != 1 || calls["Scan"] != 0 {
				t.Errorf("calls %v, want %d Query and 1 GetItem", calls, c.queries)
			}
			var got struct {
				Series []map[string]int64 `json:"series"`
			}
			if err := json.Unmarshal(body, &got); err != nil || len(got.Series) != c.points {
				t.Fatalf("answer %s", body)
			}
			if last := got.Series[len(got.Series)-2]; c.query == "projectKey=shop" && last["0"] != 28*20 {
				t.Errorf("28 days of 20 new users each read %d", last["0"])
			}
			if last := got.Series[len(got.Series)-1]; c.points == 12 && last["0"] != 28*20 {
				t.Errorf("March of 28 days of 20 new users each read %d", last["0"])
			}
		})
	}
}

// TestUsageCurrentHourOnDynamoDB: events of the hour the rollup has not
// reached count at once, from a Query of the hour's cells, and the same
// once the rollup took the hour.
func TestUsageCurrentHourOnDynamoDB(t *testing.T) {
	u := newUsageOnDynamo(t, 1)
	var keys map[string]string
	json.Unmarshal(u.do(t, http.MethodGet, "/api/v2/projects/shop/environments/production", "", "", http.StatusOK), &keys)
	var ev []string
	for i := 0; i < 30; i++ {
		ev = append(ev, fmt.Sprintf(`{"kind":"index","creationDate":1,"context":{"kind":"user","key":"now-u%d"}}`, i))
	}
	u.do(t, http.MethodPost, "/bulk", keys["apiKey"], "["+strings.Join(ev, ",")+"]", http.StatusAccepted, "User-Agent", "GoClient/7.14.6", "X-LaunchDarkly-Event-Schema", "4")
	query := "projectKey=shop&aggregationType=incremental&to=" + fmt.Sprint(u.now.UnixMilli())
	before, calls := u.monthToDate(t, query)
	if calls["Query"] != 2 || calls["GetItem"] != 1 || calls["Scan"] != 0 {
		t.Errorf("calls %v, want the day partition's Query, the current hour's and the watermark's GetItem", calls)
	}
	var got struct {
		Series []map[string]int64 `json:"series"`
	}
	if err := json.Unmarshal(before, &got); err != nil || len(got.Series) != 2 || got.Series[0]["0"] != 20 || got.Series[1]["0"] != 30 {
		t.Fatalf("the day rolled up should read 20 users and the current hour 30: %s", before)
	}
	svc := usageapi.Service(u.App)
	u.setNow(u.now.Add(time.Hour))
	if rep, err := svc.Rollup.Run(t.Context()); err != nil || rep.Through != u.now.Add(-time.Hour).Truncate(time.Hour).Format("2006010215") {
		t.Fatalf("rollup: %+v %v", rep, err)
	}
	if after, _ := u.monthToDate(t, query); string(after) != string(before) {
		t.Errorf("after the rollup of the hour:\n%s\nbefore:\n%s", after, before)
	}
}

// BenchmarkUsageMonthToDateOnDynamoDB: a project's month-to-date series
// (28 days rolled up) on DynamoDB Local, with the Query calls per answer.
func BenchmarkUsageMonthToDateOnDynamoDB(b *testing.B) {
	u := newUsageOnDynamo(b, 28)
	b.ReportAllocs()
	b.ResetTimer()
	queries := 0
	for i := 0; i < b.N; i++ {
		_, calls := u.monthToDate(b, "projectKey=shop")
		queries += calls["Query"]
	}
	b.ReportMetric(float64(queries)/float64(b.N), "queries/op")
}
