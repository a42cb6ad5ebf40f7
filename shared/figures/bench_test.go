package figures_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/figures"
)

// The files make figures-bench leaves in the benchmark folder.
const (
	benchLoopback = "loopback.txt"    // Benchmark{GetEnvironment,ListFlags,Evaluate}Loopback, one run
	benchWebhooks = "webhooks.txt"    // BenchmarkWebhookDelivery
	benchPolicy   = "policy.txt"      // BenchmarkEvaluate, with -benchmem
	benchE2E      = "e2e.txt"         // make bench-e2e, verbose
	benchLoad     = "uptime.txt"      // uptime when the benchmarks began
	benchSDK      = "sdk.txt"         // BenchmarkSDKPoll
	benchIngest   = "ingest.txt"      // BenchmarkIngest, 2000 payloads
	benchSegments = "segments.txt"    // Benchmark{SegmentList,SDKPayloadWithSegments}
	benchBig      = "bigsegments.txt" // BenchmarkBigSegmentImport, once
)

// benchNames are the figures benchFigures returns.
var benchNames = []string{
	"bench-machine", "loopback-rps", "loopback-p99", "webhook-run", "webhook-rate",
	"policy-decision", "policy-allocs", "policy-access",
	"cold-init-groups", "cold-init-all", "cold-init-max", "cold-init-verdict",
	"cold-first-groups", "cold-first-all", "warm-requests", "warm-p50", "warm-p99",
	"env-bytes", "list-rps", "list-p99", "list-share", "list-bytes", "eval-rps", "eval-p99",
	"sdk-poll-rps", "sdk-304-rps", "sdk-poll-query-rps", "sdk-304-query-rps",
	"seg-eval-rps", "seg-latest-rps", "seg-latest-query-rps", "seg-latest-bytes", "seg-payload-bytes", "seg-payload-ms",
	"big-import-s", "big-import-items", "big-import-txs", "big-import-heap",
	"ingest-rate", "ingest-contexts", "ingest-heap", "ingest-aws-cost", "ingest-aws-rru", "ingest-aws-wru", "ingest-aws-sqs", "ingest-aws-ms",
	"cost-billed-ms", "cost-invoke-p50", "cost-rru", "cost-wru", "cost-lambda", "cost-dynamodb", "cost-sqs", "cost-total", "cost-peak-mib",
}

// benchFigures reads the benchmark output in dir.
func benchFigures(t *testing.T, dir string) []figures.Figure {
	t.Helper()
	read := func(name string) string {
		t.Helper()
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("benchmark output: %v", err)
		}
		return string(raw)
	}
	metric := func(out, bench, unit string) float64 {
		t.Helper()
		v, err := figures.BenchMetric(out, bench, unit)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	loopback, webhooks, policy, e2e := read(benchLoopback), read(benchWebhooks), read(benchPolicy), read(benchE2E)

	cpu := "unknown CPU"
	if m := regexp.MustCompile(`(?m)^cpu: (.+)$`).FindStringSubmatch(loopback); m != nil {
		cpu = strings.TrimSpace(m[1])
	}
	// Other work on the machine slows every figure; the load says how busy
	// it was (uptime prints "load average:" on Linux, "load averages:" on BSD).
	load := "unknown"
	if m := regexp.MustCompile(`load averages?: ([0-9.]+)`).FindStringSubmatch(read(benchLoad)); m != nil {
		load = m[1]
	}
	webhookSeconds := metric(webhooks, "BenchmarkWebhookDelivery", "ns/op") / 1e9
	var decisions []float64
	allocs := 0.0
	for _, c := range []string{"allowed_by_the_last_statement", "implicitly_denied", "explicitly_denied"} {
		name := "BenchmarkEvaluate/compiled/" + c
		decisions = append(decisions, metric(policy, name, "ns/op")/1000)
		allocs = max(allocs, metric(policy, name, "allocs/op"))
	}
	allocText := "no allocation"
	if allocs > 0 {
		allocText = fmt.Sprintf("%g allocations", allocs)
	}
	cold := coldStarts(t, e2e)
	envRate := metric(loopback, "BenchmarkGetEnvironmentLoopback", "req/s")
	listRate := metric(loopback, "BenchmarkListFlagsLoopback", "req/s")
	dollars := func(unit string) string {
		return "$" + strconv.FormatFloat(metric(e2e, "BenchmarkTypicalMixCost", unit), 'f', 2, 64)
	}
	sdk, ingest, segs, big := read(benchSDK), read(benchIngest), read(benchSegments), read(benchBig)
	ingestCost := "unknown"
	if m := regexp.MustCompile(`per million events: .*: \$([0-9.]+) in all`).FindStringSubmatch(e2e); m != nil {
		ingestCost = "$" + m[1]
	} else {
		t.Errorf("%s: no \"per million events\" line of TestIngestThroughSQS", benchE2E)
	}
	perPayload := []string{"unknown", "unknown", "unknown", "unknown"}
	if m := regexp.MustCompile(`per payload of 400 events: ([0-9.]+) read units, ([0-9.]+) write units, ([0-9.]+) SQS calls, ([0-9.]+) billed Lambda ms`).FindStringSubmatch(e2e); m != nil {
		copy(perPayload, m[1:])
	} else {
		t.Errorf("%s: no \"per payload\" line of TestIngestThroughSQS", benchE2E)
	}
	return []figures.Figure{
		{Name: "ingest-aws-rru", Text: perPayload[0]},
		{Name: "ingest-aws-wru", Text: perPayload[1]},
		{Name: "ingest-aws-sqs", Text: perPayload[2]},
		{Name: "ingest-aws-ms", Text: perPayload[3]},
		{Name: "sdk-poll-rps", Text: figures.Round(metric(sdk, "BenchmarkSDKPoll/local/payload", "requests/s"), 3)},
		{Name: "sdk-304-rps", Text: figures.Round(metric(sdk, "BenchmarkSDKPoll/local/not-modified", "requests/s"), 3)},
		{Name: "sdk-poll-query-rps", Text: figures.Round(metric(sdk, "BenchmarkSDKPoll/every-poll-reads/payload", "requests/s"), 3)},
		{Name: "sdk-304-query-rps", Text: figures.Round(metric(sdk, "BenchmarkSDKPoll/every-poll-reads/not-modified", "requests/s"), 3)},
		{Name: "seg-eval-rps", Text: figures.Round(metric(segs, "BenchmarkSegmentList/evaluate/listed", "requests/s"), 3)},
		{Name: "seg-latest-rps", Text: figures.Round(metric(segs, "BenchmarkSegmentList/latest-all/local", "requests/s"), 3)},
		{Name: "seg-latest-query-rps", Text: figures.Round(metric(segs, "BenchmarkSegmentList/latest-all/every-poll-reads", "requests/s"), 3)},
		{Name: "seg-latest-bytes", Text: figures.Round(metric(segs, "BenchmarkSegmentList/latest-all/local", "payload-bytes")/1000, 3) + " KB"},
		{Name: "seg-payload-bytes", Text: figures.Round(metric(segs, "BenchmarkSDKPayloadWithSegments", "payload-bytes")/1000, 3) + " KB"},
		{Name: "seg-payload-ms", Text: figures.Round(metric(segs, "BenchmarkSDKPayloadWithSegments", "ns/op")/1e6, 2) + " ms"},
		{Name: "big-import-s", Text: figures.Round(metric(big, "BenchmarkBigSegmentImport", "ns/op")/1e9, 3) + " s"},
		{Name: "big-import-items", Text: figures.Round(metric(big, "BenchmarkBigSegmentImport", "items-written"), 4)},
		{Name: "big-import-txs", Text: figures.Round(metric(big, "BenchmarkBigSegmentImport", "transactions"), 3)},
		{Name: "big-import-heap", Text: figures.Round(metric(big, "BenchmarkBigSegmentImport", "peak-heap-MB"), 2) + " MB"},
		{Name: "ingest-rate", Text: figures.Round(metric(ingest, "BenchmarkIngest", "events/s"), 3)},
		{Name: "ingest-contexts", Text: figures.Round(metric(ingest, "BenchmarkIngest", "contexts"), 3)},
		{Name: "ingest-heap", Text: figures.Round(metric(ingest, "BenchmarkIngest", "heap-MB"), 2) + " MB"},
		{Name: "ingest-aws-cost", Text: ingestCost},
		{Name: "env-bytes", Text: figures.Round(metric(loopback, "BenchmarkGetEnvironmentLoopback", "answer-bytes")/1000, 2) + " KB"},
		{Name: "list-rps", Text: figures.Round(listRate, 3)},
		{Name: "list-p99", Text: figures.Round(metric(loopback, "BenchmarkListFlagsLoopback", "p99-ms"), 3) + " ms"},
		{Name: "list-share", Text: strconv.Itoa(int(100*listRate/envRate+0.5)) + "%"},
		{Name: "list-bytes", Text: figures.Round(metric(loopback, "BenchmarkListFlagsLoopback", "answer-bytes")/1000, 3) + " KB"},
		{Name: "eval-rps", Text: figures.Round(metric(loopback, "BenchmarkEvaluateLoopback", "req/s"), 3)},
		{Name: "eval-p99", Text: figures.Round(metric(loopback, "BenchmarkEvaluateLoopback", "p99-ms"), 3) + " ms"},
		{Name: "cost-billed-ms", Text: figures.Round(metric(e2e, "BenchmarkTypicalMixCost", "billed-ms/req"), 2) + " ms"},
		{Name: "cost-invoke-p50", Text: figures.Round(metric(e2e, "BenchmarkTypicalMixCost", "invoke-p50-ms"), 2) + " ms"},
		{Name: "cost-rru", Text: figures.Round(metric(e2e, "BenchmarkTypicalMixCost", "rru/req"), 2)},
		{Name: "cost-wru", Text: figures.Round(metric(e2e, "BenchmarkTypicalMixCost", "wru/req"), 2)},
		{Name: "cost-lambda", Text: dollars("lambda-$/M")},
		{Name: "cost-dynamodb", Text: dollars("dynamodb-$/M")},
		{Name: "cost-sqs", Text: dollars("sqs-$/M")},
		{Name: "cost-total", Text: dollars("total-$/M")},
		{Name: "cost-peak-mib", Text: figures.Round(metric(e2e, "BenchmarkTypicalMixCost", "peak-MiB"), 2) + " MiB"},
		{Name: "bench-machine", Text: fmt.Sprintf("%s, %d cores, Go %s, load average %s when the run began",
			cpu, runtime.NumCPU(), strings.TrimPrefix(runtime.Version(), "go"), load)},
		{Name: "loopback-rps", Text: figures.Round(metric(loopback, "BenchmarkGetEnvironmentLoopback", "req/s"), 3)},
		{Name: "loopback-p99", Text: figures.Round(metric(loopback, "BenchmarkGetEnvironmentLoopback", "p99-ms"), 3) + " ms"},
		{Name: "webhook-run", Text: figures.Round(webhookSeconds, 3) + " s"},
		{Name: "webhook-rate", Text: figures.Round(metric(webhooks, "BenchmarkWebhookDelivery", "deliveries/op")/webhookSeconds, 3)},
		{Name: "policy-decision", Text: figures.Span(decisions, 2) + " µs"},
		{Name: "policy-allocs", Text: allocText},
		{Name: "policy-access", Text: figures.Round(metric(policy, "BenchmarkEvaluate/compiled/access_for_10_actions", "ns/op")/1000, 2) + " µs"},
		{Name: "cold-init-groups", Text: figures.Span(cold.initMedians, 2) + " ms"},
		{Name: "cold-init-all", Text: figures.Round(cold.initAll, 2) + " ms"},
		{Name: "cold-init-max", Text: figures.Round(cold.initMax, 2) + " ms"},
		{Name: "cold-init-verdict", Text: cold.verdict},
		{Name: "cold-first-groups", Text: figures.Span(cold.firstMedians, 2) + " ms"},
		{Name: "cold-first-all", Text: figures.Round(cold.firstAll, 3) + " ms"},
		{Name: "warm-requests", Text: strconv.Itoa(warmRequests(t, e2e))},
		{Name: "warm-p50", Text: figures.Round(metric(e2e, "BenchmarkWarmGetEnvironment", "p50-µs")/1000, 3) + " ms"},
		{Name: "warm-p99", Text: figures.Round(metric(e2e, "BenchmarkWarmGetEnvironment", "p99-µs")/1000, 2) + " ms"},
	}
}

// warmRequests is how many requests the warm GET benchmark timed: its
// largest run, which -benchtime sets (the first run is one request).
func warmRequests(t *testing.T, out string) int {
	t.Helper()
	n := 0
	for _, m := range regexp.MustCompile(`([0-9]+) warm GETs of one environment`).FindAllStringSubmatch(out, -1) {
		v, _ := strconv.Atoi(m[1])
		n = max(n, v)
	}
	if n == 0 {
		t.Fatalf("%s: the warm GET benchmark logged no run", benchE2E)
	}
	return n
}

// coldStartFigures is what TestColdStartOfEveryBootstrap logs.
type coldStartFigures struct {
	initMedians, firstMedians  []float64
	initAll, initMax, firstAll float64
	verdict                    string
}

// coldStarts reads the cold-start table and summary lines that
// TestColdStartOfEveryBootstrap in shared/e2e logs.
func coldStarts(t *testing.T, out string) coldStartFigures {
	t.Helper()
	var c coldStartFigures
	groups := catalog.Groups()
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) < 6 || !slices.Contains(groups, f[0]) {
			continue
		}
		initP50, err1 := strconv.ParseFloat(f[2], 64)
		firstP50, err2 := strconv.ParseFloat(f[4], 64)
		if err1 == nil && err2 == nil {
			c.initMedians = append(c.initMedians, initP50)
			c.firstMedians = append(c.firstMedians, firstP50)
		}
	}
	if len(c.initMedians) != len(groups) {
		t.Fatalf("%s: cold starts of %d groups, want %d", benchE2E, len(c.initMedians), len(groups))
	}
	all := regexp.MustCompile(`all groups: init p50 ([0-9.]+) ms, max ([0-9.]+) ms; first response p50 ([0-9.]+) ms`).FindStringSubmatch(out)
	budget := regexp.MustCompile(`budget init < ([0-9]+)ms \(median per group\): holds for (all )?([0-9]+)( of ([0-9]+))? groups`).FindStringSubmatch(out)
	if all == nil || budget == nil {
		t.Fatalf("%s: the cold-start summary lines are missing", benchE2E)
	}
	c.initAll, _ = strconv.ParseFloat(all[1], 64)
	c.initMax, _ = strconv.ParseFloat(all[2], 64)
	c.firstAll, _ = strconv.ParseFloat(all[3], 64)
	if budget[2] != "" {
		c.verdict = fmt.Sprintf("all %s under the %s ms budget", budget[3], budget[1])
	} else {
		c.verdict = fmt.Sprintf("%s of %s under the %s ms budget", budget[3], budget[5], budget[1])
	}
	return c
}

// TestColdStartsReadsTheE2ELog feeds coldStarts the lines
// TestColdStartOfEveryBootstrap logs, so a change of that format fails here
// rather than in make figures-bench.
func TestColdStartsReadsTheE2ELog(t *testing.T) {
	var log strings.Builder
	log.WriteString("    measure_test.go:74: cold starts, 5 rounds per group (ms):\n")
	fmt.Fprintf(&log, "%-24s %8s %9s %9s %10s %10s  %s\n", "group", "MB", "init p50", "init max", "first p50", "first max", "answer")
	for i, g := range catalog.Groups() {
		fmt.Fprintf(&log, "%-24s %8.2f %9s %9s %10s %10s  %d %s\n", g, 11.04, fmt.Sprintf("%.2f", 3.6+float64(i)/10), "9.80", "14.60", "22.00", 200, "get")
	}
	log.WriteString("    measure_test.go:75: all groups: init p50 4.50 ms, max 9.80 ms; first response p50 14.63 ms, max 68.00 ms\n")
	log.WriteString("    measure_test.go:77: budget init < 30ms (median per group): holds for all 25 groups\n")
	log.WriteString("    measure_test.go:79: budget bootstrap < 12000000 bytes: holds for all 25 groups (largest 11.04 MB)\n")

	c := coldStarts(t, log.String())

	n := len(catalog.Groups())
	tests := []struct {
		name      string
		got, want any
	}{
		{"every group's init median is read", len(c.initMedians), n},
		{"the smallest init median is the first group's", slices.Min(c.initMedians), 3.6},
		{"the all-groups init median is read", c.initAll, 4.5},
		{"the all-groups init maximum is read", c.initMax, 9.8},
		{"the all-groups first-response median is read", c.firstAll, 14.63},
		{"the budget verdict is read", c.verdict, "all 25 under the 30 ms budget"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if fmt.Sprint(tc.got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %v, want %v", tc.got, tc.want)
			}
		})
	}
}
