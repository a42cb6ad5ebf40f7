package eventapi_test

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// benchPayload is one flush of a busy server SDK: newContexts index events
// (each context new, with a plan and a unique email), custom events for
// them, and the summary of evaluations of 20 flags.
func benchPayload(seq, newContexts, customPer int) (string, int) {
	now := time.Now().UnixMilli()
	var b strings.Builder
	b.WriteString("[")
	n := 0
	for i := 0; i < newContexts; i++ {
		key := fmt.Sprintf("c-%d-%d", seq, i)
		fmt.Fprintf(&b, `{"kind":"index","creationDate":%d,"context":{"kind":"user","key":%q,"email":"%s@example.com","plan":"p%d"}},`, now, key, key, i%5)
		n++
		for j := 0; j < customPer; j++ {
			fmt.Fprintf(&b, `{"kind":"custom","creationDate":%d,"key":"click","contextKeys":{"user":%q}},`, now, key)
			n++
		}
	}
	b.WriteString(`{"kind":"summary","startDate":` + fmt.Sprint(now-60000) + `,"endDate":` + fmt.Sprint(now) + `,"features":{`)
	for f := 0; f < 20; f++ {
		if f > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"flag-%d":{"default":false,"contextKinds":["user"],"counters":[{"variation":0,"version":1,"value":false,"count":40},{"variation":1,"version":1,"value":true,"count":60}]}`, f)
	}
	b.WriteString("}}]")
	return b.String(), n + 1
}

// BenchmarkIngest posts payloads of 401 events (100 new contexts each)
// with the SDK key and aggregates them before the answer, so the rate is
// the whole path: HTTP, credential, parse, aggregate, write. heap-MB is
// the live heap after the run: it stays flat while distinct contexts grow.
func BenchmarkIngest(b *testing.B) {
	srv := apptest.New(b)
	e := apptest.NewSDKEnv(b, srv, "bench")
	events := 0
	payloads := make([]string, 64)
	for i := range payloads {
		payloads[i], events = benchPayload(i, 100, 3)
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		body := payloads[i%len(payloads)]
		if i >= len(payloads) {
			body, _ = benchPayload(i, 100, 3)
		}
		res := apptest.PostEvents(b, srv, "/bulk", e.SDKKey, body, "X-LaunchDarkly-Payload-ID", fmt.Sprintf("bench-%d", i))
		if res.Status != http.StatusAccepted {
			b.Fatalf("status %d: %s", res.Status, res.Body)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	b.ReportMetric(float64(events*b.N)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(100*b.N), "contexts")
	b.ReportMetric(float64(m.HeapAlloc)/(1<<20), "heap-MB")
}
