package usage_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/axiomhq/hyperloglog"
	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/dynamo"
	"github.com/flagplane/flagplane/shared/store/dynamo/dynamotest"
	"github.com/flagplane/flagplane/shared/usage"
)

// Benchmark shape: a day of a large account, 1,000,000 events spread over
// 50 environments × 4 senders (SDK and version) × 24 hours = 4,800 hour
// cells, each event adding its context key to a cell's sketch (user keys
// from a pool of 5,000 per environment, a tenth anonymous, a tenth orgs).
const (
	benchEnvs    = 50
	benchSenders = 4
	benchEvents  = 1_000_000
)

var benchDay = time.Date(2026, 5, 4, 0, 0, 0, 0, time.UTC)

// writeBenchDay writes the day's hour cells and returns the events they hold.
func writeBenchDay(tb testing.TB, table store.Table) int64 {
	tb.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	cells := benchEnvs * benchSenders * 24
	perCell := benchEvents / cells
	var total int64
	for h := 0; h < 24; h++ {
		hour := benchDay.Add(time.Duration(h) * time.Hour).Format("2006010215")
		for e := 0; e < benchEnvs; e++ {
			for s := 0; s < benchSenders; s++ {
				sketches := map[string]*hyperloglog.Sketch{}
				add := func(name, key string) {
					if sketches[name] == nil {
						sketches[name] = hyperloglog.New14()
					}
					sketches[name].Insert([]byte(key))
				}
				for i := 0; i < perCell; i++ {
					k := rng.IntN(5000)
					switch {
					case i%10 == 0:
						add(ingest.SketchKey("org", false), fmt.Sprintf("e%d-o%d", e, k%200))
					case i%10 == 1:
						add(ingest.SketchKey("user", true), fmt.Sprintf("e%d-anon%d", e, k))
					default:
						add(ingest.SketchKey("user", false), fmt.Sprintf("e%d-u%d", e, k))
					}
				}
				c := ingest.Cell{Hour: hour, Sender: ingest.Sender{ProjectKey: fmt.Sprintf("p%d", e%10), EnvKey: fmt.Sprintf("e%d", e), EnvID: fmt.Sprintf("env%d", e),
					SDKType: "server", SDKName: "GoClient", SDKVersion: fmt.Sprintf("7.%d.0", s)}, Events: map[string]int64{"index": int64(perCell)},
					Payloads: int64(perCell / 50), Sketches: map[string][]byte{}}
				if err := ingest.MergeSketches(c.Sketches, sketches); err != nil {
					tb.Fatal(err)
				}
				total += int64(perCell)
				data, _ := json.Marshal(c)
				k := store.UsageCellKey(hour, c.EnvID, ingest.CellID(c.SDKType, c.SDKName, c.SDKVersion, ""))
				if err := table.Put(ctx, store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: data}, store.Cond{}); err != nil {
					tb.Fatal(err)
				}
			}
		}
	}
	return total
}

// BenchmarkRollupDay recomputes and writes the rolled-up items of a day
// with a million events' worth of hour cells, and folds it into the months
// (the rolled-up items are removed before each run, so every run writes
// all of them), on the embedded store.
func BenchmarkRollupDay(b *testing.B) { benchRollupDay(b, openTable(b), nil) }

// BenchmarkRollupDayOnDynamoDB is the same on DynamoDB (Local), item by
// item as in AWS; it skips without FLAGPLANE_DYNAMODB_ENDPOINT.
func BenchmarkRollupDayOnDynamoDB(b *testing.B) {
	table, counter := dynamotest.NewTable(b)
	benchRollupDay(b, table, counter)
}

// benchRollupDay runs the benchmark on table; with counter, it reports
// the rollup's DynamoDB calls per run.
func benchRollupDay(b *testing.B, table store.Table, counter *dynamo.CallCounter) {
	events := writeBenchDay(b, table)
	r := usage.NewRollup(table, time.Now)
	ctx := context.Background()
	calls := map[string]int{}
	partitions := []string{store.UsageDayPartition(benchDay.Format("200601")), store.UsageMonthPartition(benchDay.Format("2006"))}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for _, pk := range partitions {
			var keys []store.Key
			q := store.Query{PK: pk}
			for {
				page, err := table.Query(ctx, q)
				if err != nil {
					b.Fatal(err)
				}
				for _, it := range page.Items {
					keys = append(keys, it.Key())
				}
				if q.Cursor = page.Cursor; q.Cursor == "" {
					break
				}
			}
			for _, k := range keys {
				if err := table.Delete(ctx, k, store.Cond{}); err != nil {
					b.Fatal(err)
				}
			}
		}
		if counter != nil {
			counter.Reset()
		}
		b.StartTimer()
		n, err := r.RollupDay(ctx, benchDay, benchDay.Add(23*time.Hour))
		if err != nil || n != 2*benchEnvs*benchSenders { // a day item and a month item per sender
			b.Fatalf("wrote %d items, %v", n, err)
		}
		if counter != nil {
			for op, c := range counter.Counts() {
				calls[op] += c
			}
		}
	}
	b.ReportMetric(float64(events), "events")
	for op, c := range calls {
		b.ReportMetric(float64(c)/float64(b.N), op+"/op")
	}
}

// BenchmarkSeriesWithLiveHours answers the account's month-to-date
// contexts on the bench day (4,800 hour cells, the embedded store): with
// every hour rolled up, and with the last two hours (400 cells) read live
// from their cells because the rollup has not reached them.
func BenchmarkSeriesWithLiveHours(b *testing.B) {
	ctx := context.Background()
	end := benchDay.Add(23*time.Hour + 59*time.Minute)
	req := usage.Request{Metric: usage.Contexts, From: benchDay, To: end, Aggregation: usage.MonthToDate, Granularity: usage.Daily}
	for _, c := range []struct {
		name    string
		through time.Time // the rollup's watermark
	}{
		{"all hours rolled up", benchDay.Add(23 * time.Hour)},
		{"the last two hours live", benchDay.Add(21 * time.Hour)},
	} {
		b.Run(c.name, func(b *testing.B) {
			table := openTable(b)
			writeBenchDay(b, table)
			now := c.through.Add(time.Hour + usage.Grace + time.Minute)
			if _, err := usage.NewRollup(table, func() time.Time { return now }).Run(ctx); err != nil {
				b.Fatal(err)
			}
			rd := usage.NewReader(table, func() time.Time { return end })
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s, err := rd.Compute(ctx, req)
				if err != nil || len(s.Points) != 1 {
					b.Fatalf("%+v %v", s, err)
				}
			}
		})
	}
}
