package e2e_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/lambdaemu"
)

// Budgets of the design notes; reported, never failed on (timings vary
// with the machine and its load).
const (
	initBudget  = 30 * time.Millisecond
	sizeBudget  = 12_000_000 // bytes, as the Makefile's check-lambdas
	coldRounds  = 5
	coldPathArg = "e2e-cold"
)

// TestColdStartOfEveryBootstrap starts every group's bootstrap coldRounds
// times in a fresh execution environment and sends it one request (the
// group's first GET, with the admin token and the beta header, so it
// authenticates against DynamoDB Local). It logs, per group, the binary
// size, init (process start to the first /next call) and process start to
// the first response, as medians and maxima.
func TestColdStartOfEveryBootstrap(t *testing.T) {
	s := e2eStack(t)
	param := regexp.MustCompile(`\{[^}]*\}`)
	var (
		table             strings.Builder
		allInit, allFirst []time.Duration
		overInit, overMB  []string
		overFirst         []string
		largest           int64
	)
	fmt.Fprintf(&table, "%-24s %8s %9s %9s %10s %10s  %s\n", "group", "MB", "init p50", "init max", "first p50", "first max", "answer")
	for _, g := range catalog.Groups() {
		st, err := os.Stat(s.bootstrap(g))
		if err != nil {
			t.Fatalf("bootstrap of %s: %v", g, err)
		}
		largest = max(largest, st.Size())
		if st.Size() > sizeBudget {
			overMB = append(overMB, g)
		}
		op := measuredOp(t, g)
		path := param.ReplaceAllString(op.Path, coldPathArg)
		var inits, firsts []time.Duration
		status := 0
		for range coldRounds {
			cs, code := s.coldStart(t, g, op.Method, path)
			inits, firsts, status = append(inits, cs.Init), append(firsts, cs.FirstResponse), code
		}
		allInit, allFirst = append(allInit, inits...), append(allFirst, firsts...)
		if quantile(inits, 0.5) >= initBudget {
			overInit = append(overInit, g)
		}
		if quantile(firsts, 0.5) >= initBudget {
			overFirst = append(overFirst, g)
		}
		fmt.Fprintf(&table, "%-24s %8.2f %9s %9s %10s %10s  %d %s\n", g, float64(st.Size())/1e6,
			ms(quantile(inits, 0.5)), ms(slices.Max(inits)), ms(quantile(firsts, 0.5)), ms(slices.Max(firsts)), status, op.ID)
	}
	t.Logf("cold starts, %d rounds per group (ms):\n%s", coldRounds, table.String())
	t.Logf("all groups: init p50 %s ms, max %s ms; first response p50 %s ms, max %s ms",
		ms(quantile(allInit, 0.5)), ms(slices.Max(allInit)), ms(quantile(allFirst, 0.5)), ms(slices.Max(allFirst)))
	t.Logf("budget init < %v (median per group): %s", initBudget, verdict(len(catalog.Groups()), overInit))
	t.Logf("budget first response < %v (median per group): %s", initBudget, verdict(len(catalog.Groups()), overFirst))
	t.Logf("budget bootstrap < %d bytes: %s (largest %.2f MB)", sizeBudget, verdict(len(catalog.Groups()), overMB), float64(largest)/1e6)
}

// coldStart runs one request through a new function of group with one
// execution environment and returns its cold start and the status.
func (s *stack) coldStart(tb testing.TB, group, method, path string) (lambdaemu.ColdStart, int) {
	tb.Helper()
	var out bytes.Buffer
	cfg := s.functionConfig(group, 1)
	cfg.Output = &out // shown only when the request fails
	fn, err := lambdaemu.New(cfg)
	if err != nil {
		tb.Fatalf("function %s: %v", group, err)
	}
	defer fn.Close()
	front, err := s.newFront(map[string]*lambdaemu.Function{group: fn})
	if err != nil {
		tb.Fatalf("front for %s: %v", group, err)
	}
	var body io.Reader
	if method != http.MethodGet {
		body = strings.NewReader("[]") // the events group takes only POSTs; its answer (401 for the admin token) is no matter
	}
	req := httptest.NewRequest(method, path, body)
	req.Header.Set("Authorization", s.token)
	req.Header.Set("SVC-API-Version", "beta")
	w := httptest.NewRecorder()
	front.ServeHTTP(w, req)
	if w.Header().Get("X-Request-Id") == "" || w.Code >= 500 && w.Code != http.StatusNotImplemented {
		_ = fn.Close()
		tb.Fatalf("%s %s %s: %d %s\n%s", group, method, path, w.Code, w.Body, out.String())
	}
	st := fn.Stats()
	if len(st.ColdStarts) != 1 {
		tb.Fatalf("%s: %d cold starts recorded, want 1", group, len(st.ColdStarts))
	}
	return st.ColdStarts[0], w.Code
}

// measuredOp is the group's first GET, or its first operation when it has
// none (the events group, where SDKs only post).
func measuredOp(tb testing.TB, group string) catalog.Operation {
	tb.Helper()
	ops, err := catalog.Group(group)
	if err != nil {
		tb.Fatal(err)
	}
	for _, op := range ops {
		if op.Method == http.MethodGet {
			return op
		}
	}
	if len(ops) == 0 {
		tb.Fatalf("group %s has no operation", group)
	}
	return ops[0]
}

// The environment the benchmark reads, made once per test binary.
var benchEnv struct {
	once sync.Once
	path string
}

// BenchmarkWarmGetEnvironment measures GET one environment through the
// front against a warm function: the client's latency per request (p50,
// p99) and the harness's invoke latency (event in to response out). The
// allocations are the test process's (client, front, harness); the
// function's own are in its process.
//
//	make bench-e2e   (go test -run '^$' -bench BenchmarkWarmGetEnvironment -benchtime 500x ./shared/e2e)
func BenchmarkWarmGetEnvironment(b *testing.B) {
	s := e2eStack(b)
	benchEnv.once.Do(func() {
		p := s.newProject(b, "bench")
		s.newEnvironment(b, p, "e", nil)
		benchEnv.path = envPath(p, "e")
	})
	if benchEnv.path == "" {
		b.Fatal("the benchmark's environment could not be made")
	}
	client := s.server.Client()
	get := func() error {
		req, err := http.NewRequest(http.MethodGet, s.server.URL+benchEnv.path, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", s.token)
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if err == nil && res.StatusCode != http.StatusOK {
			err = fmt.Errorf("status %d", res.StatusCode)
		}
		return err
	}
	if err := get(); err != nil { // a warm function and a kept-alive connection
		b.Fatalf("warm-up: %v", err)
	}
	fn := s.functions["environments"]
	fn.ResetStats()
	var lat []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		began := time.Now()
		if err := get(); err != nil {
			b.Fatalf("GET %s: %v", benchEnv.path, err)
		}
		lat = append(lat, time.Since(began))
	}
	st := fn.Stats()
	b.ReportMetric(float64(quantile(lat, 0.5).Microseconds()), "p50-µs")
	b.ReportMetric(float64(quantile(lat, 0.99).Microseconds()), "p99-µs")
	b.ReportMetric(float64(quantile(st.Warm, 0.5).Microseconds()), "invoke-p50-µs")
	b.Logf("%d warm GETs of one environment: client p50 %s ms, p99 %s ms, max %s ms; harness invoke p50 %s ms, p99 %s ms; cold starts during the run: %d",
		len(lat), ms(quantile(lat, 0.5)), ms(quantile(lat, 0.99)), ms(slices.Max(lat)),
		ms(quantile(st.Warm, 0.5)), ms(quantile(st.Warm, 0.99)), len(st.ColdStarts))
}

// The project of 20 flags BenchmarkWarmListFlags lists, made once per test binary.
var benchFlags struct {
	once      sync.Once
	list, env string
}

// BenchmarkWarmListFlags measures GET a page of 20 flags (the default page,
// summaries, admin token) through the front against a warm function, each
// list followed by a GET of one of the project's environments, so the
// ratio it reports (GET p50 / list p50: the list's rate as a share of a
// GET's) compares the two under the same load. Issue 26 wants it at least
// 0.6 on Lambda, where no whole-answer cache may serve the list.
//
//	make bench-e2e   (go test -run '^$' -bench BenchmarkWarmListFlags -benchtime 300x ./shared/e2e)
func BenchmarkWarmListFlags(b *testing.B) {
	s := e2eStack(b)
	benchFlags.once.Do(func() {
		// Two environments, as a project made without a list of them gets.
		p := s.newProject(b, "benchlist")
		s.newEnvironment(b, p, "production", nil)
		s.newEnvironment(b, p, "test", nil)
		for i := range 20 {
			body := map[string]any{"key": fmt.Sprintf("flag-%02d", i), "name": fmt.Sprintf("Flag %d", i), "tags": []string{"bench"}}
			wantStatus(b, s.do(b, http.MethodPost, api+"/flags/"+p, body), http.StatusCreated)
		}
		benchFlags.list, benchFlags.env = api+"/flags/"+p, envPath(p, "production")
	})
	if benchFlags.list == "" {
		b.Fatal("the benchmark's flags could not be made")
	}
	client := s.server.Client()
	get := func(path string) error {
		req, err := http.NewRequest(http.MethodGet, s.server.URL+path, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", s.token)
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if err == nil && res.StatusCode != http.StatusOK {
			err = fmt.Errorf("status %d", res.StatusCode)
		}
		return err
	}
	for _, path := range []string{benchFlags.list, benchFlags.env} { // warm functions, kept-alive connection
		if err := get(path); err != nil {
			b.Fatalf("warm-up %s: %v", path, err)
		}
	}
	fn := s.functions["flags"]
	fn.ResetStats()
	var lists, gets []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		began := time.Now()
		if err := get(benchFlags.list); err != nil {
			b.Fatalf("GET %s: %v", benchFlags.list, err)
		}
		lists = append(lists, time.Since(began))
		began = time.Now()
		if err := get(benchFlags.env); err != nil {
			b.Fatalf("GET %s: %v", benchFlags.env, err)
		}
		gets = append(gets, time.Since(began))
	}
	st := fn.Stats()
	list50, get50 := quantile(lists, 0.5), quantile(gets, 0.5)
	b.ReportMetric(float64(list50.Microseconds()), "list-p50-µs")
	b.ReportMetric(float64(quantile(lists, 0.99).Microseconds()), "list-p99-µs")
	b.ReportMetric(float64(get50.Microseconds()), "get-p50-µs")
	b.ReportMetric(float64(quantile(st.Warm, 0.5).Microseconds()), "list-invoke-p50-µs")
	if list50 > 0 {
		b.ReportMetric(float64(get50)/float64(list50), "list/get")
	}
	b.Logf("%d warm lists of 20 flags: client p50 %s ms, p99 %s ms; harness invoke p50 %s ms; GET environment p50 %s ms between them; list/get rate %.2f; cold starts during the run: %d",
		len(lists), ms(list50), ms(quantile(lists, 0.99)), ms(quantile(st.Warm, 0.5)), ms(get50),
		float64(get50)/float64(max(list50, 1)), len(st.ColdStarts))
}

// quantile returns the q-quantile (nearest rank) of ds; 0 when empty.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) }

func verdict(n int, over []string) string {
	if len(over) == 0 {
		return fmt.Sprintf("holds for all %d groups", n)
	}
	return fmt.Sprintf("holds for %d of %d groups; over: %s", n-len(over), n, strings.Join(over, ", "))
}
