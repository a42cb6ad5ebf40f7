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
// rolling window reaching into the month before), and never a Scan.
func TestUsageSeriesOnDynamoDB(t *testing.T) {
	u := newUsageOnDynamo(t, 28)
	cases := []struct {
		name, query     string
		queries, points int
	}{
		{"month to date for one project is one Query", "projectKey=shop", 1, 29},
		{"month to date for one environment is one Query", "projectKey=shop&environmentKey=production&groupBy=environmentId", 1, 29},
		{"month to date for the account is one Query", "", 1, 29},
		{"rolling 30 days from mid-month is two Queries, this month's and the last", "projectKey=shop&aggregationType=rolling_30d&from=" +
			fmt.Sprint(time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC).UnixMilli()), 2, 15},
		{"a year by the month reads the rolled-up months: one Query per calendar year", "projectKey=shop&granularity=monthly&from=" +
			fmt.Sprint(time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC).UnixMilli()), 2, 12},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body, calls := u.monthToDate(t, c.query)
			if calls["Query"] != c.queries || calls["Scan"] != 0 {
				t.Errorf("calls %v, want %d Query", calls, c.queries)
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
