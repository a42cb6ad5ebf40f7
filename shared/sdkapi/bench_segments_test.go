package sdkapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// listKeys is the size of the benchmarks' list segment: the most keys a
// segment that is not big may list.
const listKeys = 15000

// listSegmentProject makes project "proof" with a segment of listKeys user
// keys in the test environment and ten flags whose first rule matches it,
// and returns the SDK key.
func listSegmentProject(b *testing.B) (*apptest.Server, string) {
	b.Helper()
	srv := apptest.New(b)
	srv.MustCreateProject(b, "proof")
	keys := make([]string, listKeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("user-%05d", i)
	}
	mustSegment(b, srv, "proof", "test", "listed", map[string]any{"included": keys})
	for i := 0; i < 10; i++ {
		key := fmt.Sprintf("flag-%02d", i)
		mustFlag(b, srv, "proof", key, nil)
		mustPatch(b, srv, "proof", key, on("test", true),
			map[string]any{"op": "replace", "path": "/environments/test/rules", "value": []map[string]any{
				{"variation": 0, "clauses": []map[string]any{{"attribute": "", "op": "segmentMatch", "values": []string{"listed"}}}}}})
	}
	return srv, mustEnv(b, srv, "proof", "test").SDKKey
}

// BenchmarkSegmentList measures a list segment of 15,000 keys where users
// see it: /flags/evaluate of ten flags matching it, for a listed key and
// an unlisted one, and the /sdk/latest-all payload carrying it, as the
// local server serves them and as every Lambda instance does (each
// request reads flags and segments).
//
//	go test -run '^$' -bench SegmentList -benchtime 3s ./shared/sdkapi/
func BenchmarkSegmentList(b *testing.B) {
	srv, sdkKey := listSegmentProject(b)
	evaluate := func(user string) func() *http.Request {
		return func() *http.Request {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v2/projects/proof/environments/test/flags/evaluate",
				strings.NewReader(`{"kind":"user","key":"`+user+`"}`))
			req.Header.Set("Authorization", srv.Token)
			req.Header.Set("Content-Type", "application/json")
			return req
		}
	}
	latestAll := func() *http.Request {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/sdk/latest-all", nil)
		req.Header.Set("Authorization", sdkKey)
		return req
	}
	b.Run("evaluate/listed", func(b *testing.B) { timedRequests(b, http.StatusOK, evaluate("user-14999")) })
	b.Run("evaluate/unlisted", func(b *testing.B) { timedRequests(b, http.StatusOK, evaluate("someone-else")) })
	for _, mode := range []struct {
		name string
		sole bool
	}{{"local", true}, {"every-poll-reads", false}} {
		srv.App.SDK.SetSoleWriter(mode.sole)
		b.Run("latest-all/"+mode.name, func(b *testing.B) { timedRequests(b, http.StatusOK, latestAll) })
	}
}

// BenchmarkSDKPayloadWithSegments measures the /sdk/latest-all payload of
// an environment of 1,000 flags (benchProject's) and 100 segments of 100
// keys and two rules each: its size, and the time to read and build it on
// every poll, as a Lambda instance does.
//
//	go test -run '^$' -bench SDKPayloadWithSegments ./shared/sdkapi/
func BenchmarkSDKPayloadWithSegments(b *testing.B) {
	srv, sdkKey := benchProject(b)
	for i := 0; i < 100; i++ {
		keys := make([]string, 100)
		for j := range keys {
			keys[j] = fmt.Sprintf("user-%d-%d", i, j)
		}
		mustSegment(b, srv, "bench", "test", fmt.Sprintf("segment-%03d", i), map[string]any{
			"included": keys,
			"rules": []map[string]any{
				segmentRule("r1", 0, "", "", clause("email", "endsWith", fmt.Sprintf("@team%d.example", i))),
				segmentRule("r2", 25000, "user", "country", clause("country", "in", "de", "fr")),
			},
		})
	}
	srv.App.SDK.SetSoleWriter(false)
	timedRequests(b, http.StatusOK, func() *http.Request {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/sdk/latest-all", nil)
		req.Header.Set("Authorization", sdkKey)
		return req
	})
}
