package localserver_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/localserver"
)

// startLocal runs the local server on a free loopback port and returns its
// base URL and the admin token it printed.
func startLocal(tb testing.TB, dataFile string) (string, string, context.CancelFunc) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- localserver.RunLocal(ctx, localserver.LocalConfig{
			Addr: "127.0.0.1:0", DataFile: dataFile, Out: &out,
			Settings: app.Settings{Approvals: true}, Ready: func(a string) { ready <- a },
		}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	select {
	case addr := <-ready:
		token := regexp.MustCompile(`api-[0-9a-f-]{36}`).FindString(out.String())
		return "http://" + addr, token, func() { cancel(); <-done }
	case err := <-done:
		tb.Fatalf("local server: %v", err)
	case <-time.After(10 * time.Second):
		tb.Fatal("local server did not start")
	}
	return "", "", cancel
}

func call(tb testing.TB, c *http.Client, method, url, token, body string) *http.Response {
	tb.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", token)
	resp, err := c.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func TestRestartKeepsDataAndPrintsTokenOnce(t *testing.T) {
	data := filepath.Join(t.TempDir(), "flagplane.db")
	base, token, stop := startLocal(t, data)
	if token == "" {
		t.Fatal("the first start printed no admin token")
	}
	c := &http.Client{}
	if r := call(t, c, "POST", base+"/api/v2/projects", token, `{"key":"p","name":"P"}`); r.StatusCode != 201 {
		t.Fatalf("create project: %d", r.StatusCode)
	}
	stop()
	base, second, stop := startLocal(t, data)
	defer stop()
	if second != "" {
		t.Fatal("a restart printed a new admin token")
	}
	if r := call(t, c, "GET", base+"/api/v2/projects/p/environments/production", token, ""); r.StatusCode != 200 {
		t.Fatalf("after restart the environment reads %d, want 200", r.StatusCode)
	}
}

// BenchmarkGetEnvironmentLoopback measures the local server end to end over
// loopback with concurrent keep-alive clients; it reports requests/s and
// the 99th percentile latency.
func BenchmarkGetEnvironmentLoopback(b *testing.B) {
	base, token, stop := startLocal(b, filepath.Join(b.TempDir(), "bench.db"))
	defer stop()
	setup := &http.Client{}
	if r := call(b, setup, "POST", base+"/api/v2/projects", token, `{"key":"bench","name":"Bench"}`); r.StatusCode != 201 {
		b.Fatalf("create project: %d", r.StatusCode)
	}
	url := base + "/api/v2/projects/bench/environments/production"
	transport := &http.Transport{MaxIdleConnsPerHost: 64}
	client := &http.Client{Transport: transport}
	var mu sync.Mutex
	var latencies []time.Duration
	b.ReportAllocs()
	b.SetParallelism(4)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		local := make([]time.Duration, 0, 1024)
		for pb.Next() {
			t0 := time.Now()
			if r := call(b, client, "GET", url, token, ""); r.StatusCode != 200 {
				b.Errorf("status %d", r.StatusCode)
				return
			}
			local = append(local, time.Since(t0))
		}
		mu.Lock()
		latencies = append(latencies, local...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	if n := len(latencies); n > 0 {
		b.ReportMetric(float64(n)/elapsed.Seconds(), "req/s")
		b.ReportMetric(float64(latencies[n*99/100].Microseconds())/1000, "p99-ms")
	}
}
