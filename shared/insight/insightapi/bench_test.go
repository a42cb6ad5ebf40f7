package insightapi_test

import (
	"net/http"
	"testing"
	"time"
)

// benchFixture holds 200 changes of the flag in production, with
// evaluations in every hour around them, and 60 deployments.
func benchFixture(b *testing.B) *fixture {
	b.Helper()
	f := newFixture(b)
	for i := range 200 {
		kind := "turnFlagOn"
		if i%2 == 1 {
			kind = "turnFlagOff"
		}
		res := f.srv.Do(b, http.MethodPatch, "/api/v2/flags/"+proj+"/"+flag, map[string]any{"environmentKey": env,
			"instructions": []any{map[string]any{"kind": kind}}}, "Content-Type", "application/json; domain-model=launchdarkly.semanticpatch")
		want(b, res, http.StatusOK)
	}
	now := time.Now()
	for h := range 3 {
		f.evaluate(b, h%2, 100, now.Add(-time.Duration(h)*time.Hour).UnixMilli())
	}
	for i := range 60 {
		at := now.Add(-time.Duration(i) * 12 * time.Hour).UnixMilli()
		f.deploy(b, "web", "v"+string(rune('a'+i%26))+string(rune('a'+i/26)), "started", at)
		f.deploy(b, "web", "v"+string(rune('a'+i%26))+string(rune('a'+i/26)), "finished", at+600_000)
	}
	return f
}

// BenchmarkFlagEventsPage reads one page of 20 flag events, each with its
// impact, out of 200 changes: go test -run - -bench FlagEvents ./shared/insight/insightapi/
func BenchmarkFlagEventsPage(b *testing.B) {
	f := benchFixture(b)
	b.ReportAllocs()
	for b.Loop() {
		res := f.do(b, http.MethodGet, base+"/flag-events?projectKey="+proj+"&environmentKey="+env, nil)
		want(b, res, http.StatusOK)
	}
}

// BenchmarkScores computes every score of two periods over the same data.
func BenchmarkScores(b *testing.B) {
	f := benchFixture(b)
	b.ReportAllocs()
	for b.Loop() {
		res := f.do(b, http.MethodGet, base+"/insights/scores?projectKey="+proj+"&environmentKey="+env, nil)
		want(b, res, http.StatusOK)
	}
}
