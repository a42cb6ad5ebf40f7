package sdkapi_test

import (
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// benchFlags is the size of the benchmarks' project.
const benchFlags = 1000

// benchProject makes a project of benchFlags flags with targets, a rule and
// a rollout each, and returns the test environment's SDK key.
func benchProject(b *testing.B) (*apptest.Server, string) {
	b.Helper()
	srv := apptest.New(b)
	srv.MustCreateProject(b, "bench")
	for i := 0; i < benchFlags; i++ {
		key := fmt.Sprintf("flag-%04d", i)
		mustFlag(b, srv, "bench", key, map[string]any{"variations": []map[string]any{{"value": "a"}, {"value": "b"}, {"value": "c"}}})
		mustPatch(b, srv, "bench", key,
			on("test", true),
			map[string]any{"op": "replace", "path": "/environments/test/targets", "value": []map[string]any{{"values": []string{"u1", "u2"}, "variation": 1}}},
			map[string]any{"op": "replace", "path": "/environments/test/rules", "value": []map[string]any{
				{"clauses": []map[string]any{{"attribute": "email", "op": "endsWith", "values": []string{"@example.com"}}}, "variation": 2}}},
			map[string]any{"op": "replace", "path": "/environments/test/fallthrough", "value": map[string]any{"rollout": map[string]any{
				"variations": []map[string]any{{"variation": 0, "weight": 50000}, {"variation": 1, "weight": 50000}}}}})
	}
	return srv, mustEnv(b, srv, "bench", "test").SDKKey
}

// poll sends b.N polls of /sdk/latest-all (see timedRequests); every
// answer must have the status want.
func poll(b *testing.B, srv *apptest.Server, sdkKey, etag string, want int) {
	b.Helper()
	timedRequests(b, want, func() *http.Request {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/sdk/latest-all", nil)
		req.Header.Set("Authorization", sdkKey)
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		return req
	})
}

// timedRequests sends b.N requests from parallel keep-alive clients,
// reporting requests per second and the answer's bytes; every answer
// must have the status want.
func timedRequests(b *testing.B, want int, newRequest func() *http.Request) {
	b.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var size atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(4)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := client.Do(newRequest())
			if err != nil {
				b.Error(err)
				return
			}
			n, _ := io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != want {
				b.Errorf("status %d, want %d", res.StatusCode, want)
				return
			}
			size.Store(n)
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "requests/s")
	b.ReportMetric(float64(size.Load()), "payload-bytes")
}

// BenchmarkSDKPoll measures GET /sdk/latest-all of 1,000 flags over
// loopback: the whole payload and the 304 answer to an SDK that holds it,
// as the local server serves them (it is the store's only writer, so the
// payload is read and built once per change) and as every Lambda instance
// does (each poll reads the flags and the segments: two Queries).
//
//	go test -run '^$' -bench SDKPoll -benchtime 3s ./shared/sdkapi/
func BenchmarkSDKPoll(b *testing.B) {
	srv, sdkKey := benchProject(b)
	first := srv.Do(b, http.MethodGet, "/sdk/latest-all", nil, "Authorization", sdkKey)
	if first.Status != http.StatusOK {
		b.Fatalf("status %d", first.Status)
	}
	b.Logf("payload of %d flags: %d bytes", benchFlags, len(first.Body))
	etag := first.Header.Get("ETag")
	for _, mode := range []struct {
		name string
		sole bool
	}{{"local", true}, {"every-poll-reads", false}} {
		srv.App.SDK.SetSoleWriter(mode.sole)
		b.Run(mode.name+"/payload", func(b *testing.B) { poll(b, srv, sdkKey, "", http.StatusOK) })
		b.Run(mode.name+"/not-modified", func(b *testing.B) { poll(b, srv, sdkKey, etag, http.StatusNotModified) })
	}
}
