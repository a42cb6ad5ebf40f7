package usage_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/axiomhq/hyperloglog"
	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
	"github.com/flagplane/flagplane/shared/usage"
)

func openTable(tb testing.TB) store.Table {
	tb.Helper()
	t, err := bolt.Open(filepath.Join(tb.TempDir(), "usage.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { t.Close() })
	return t
}

// feed aggregates payloads of n users each, one payload per hour from start.
func feed(tb testing.TB, table store.Table, start time.Time, hours, users int) {
	tb.Helper()
	now := start
	agg := ingest.NewAggregator(table, slog.New(slog.NewTextHandler(io.Discard, nil)), func() time.Time { return now })
	for h := 0; h < hours; h++ {
		now = start.Add(time.Duration(h) * time.Hour)
		var ev []string
		for i := 0; i < users; i++ {
			ev = append(ev, fmt.Sprintf(`{"kind":"index","creationDate":1,"context":{"kind":"user","key":"u%d-%d"}}`, h%5, i))
		}
		p := ingest.Payload{Source: ingest.SourceServer, ProjectKey: "p", EnvKey: "e", EnvID: "env1", UserAgent: "GoClient/7.1.0",
			ReceivedAt: now.UnixMilli(), Body: json.RawMessage("[" + strings.Join(ev, ",") + "]")}
		if _, err := agg.Apply(context.Background(), p); err != nil {
			tb.Fatal(err)
		}
	}
}

// snapshot is every rolled-up item: key -> version and data.
func snapshot(tb testing.TB, table store.Table, months ...string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	for _, m := range months {
		q := store.Query{PK: store.UsageDayPartition(m)}
		for {
			page, err := table.Query(context.Background(), q)
			if err != nil {
				tb.Fatal(err)
			}
			for _, it := range page.Items {
				out[it.SK] = fmt.Sprintf("v%d ttl%d %s", it.Version, it.TTL, it.Data)
			}
			if page.Cursor == "" {
				break
			}
			q.Cursor = page.Cursor
		}
	}
	return out
}

// failingTable fails every Put after the first n: a rollup killed half way.
type failingTable struct {
	store.Table
	left atomic.Int64
}

var errKilled = errors.New("killed")

func (f *failingTable) Put(ctx context.Context, it store.Item, c store.Cond) error {
	if f.left.Add(-1) < 0 {
		return errKilled
	}
	return f.Table.Put(ctx, it, c)
}

func TestRollup(t *testing.T) {
	start := time.Date(2026, 4, 29, 20, 0, 0, 0, time.UTC)
	after := start.Add(3*24*time.Hour + 10*time.Minute)
	months := []string{"202604", "202605"}
	ctx := context.Background()

	t.Run("running it twice leaves identical items", func(t *testing.T) {
		table := openTable(t)
		feed(t, table, start, 60, 20)
		r := usage.NewRollup(table, func() time.Time { return after })
		first, err := r.Run(ctx)
		// Without a watermark it starts as far back as cells are kept.
		if err != nil || first.Written == 0 || first.From != after.Add(-ingest.CellTTL).Format("2006010215") {
			t.Fatalf("first run = %+v, %v", first, err)
		}
		before := snapshot(t, table, months...)
		// Recompute every day again, past the watermark.
		for d := 0; d < 4; d++ {
			day := start.Truncate(24 * time.Hour).Add(time.Duration(d) * 24 * time.Hour)
			through := day.Add(23 * time.Hour)
			if last := after.Truncate(time.Hour).Add(-time.Hour); through.After(last) {
				through = last
			}
			n, err := r.RollupDay(ctx, day, through)
			if err != nil || n != 0 {
				t.Fatalf("rerun of day %d wrote %d items, %v", d, n, err)
			}
		}
		if again := snapshot(t, table, months...); fmt.Sprint(again) != fmt.Sprint(before) {
			t.Errorf("items changed on a rerun")
		}
		if rep, err := r.Run(ctx); err != nil || rep.Days != 0 {
			t.Errorf("a run with nothing due = %+v, %v", rep, err)
		}
	})
	t.Run("a run killed half way and rerun gives the numbers of a clean run", func(t *testing.T) {
		clean := openTable(t)
		feed(t, clean, start, 60, 20)
		if _, err := usage.NewRollup(clean, func() time.Time { return after }).Run(ctx); err != nil {
			t.Fatal(err)
		}
		want := snapshot(t, clean, months...)

		// Each kill gets a store of its own, so they run in parallel.
		for _, killAfter := range []int64{0, 1, 2, 3} {
			t.Run(fmt.Sprintf("killed after %d writes", killAfter), func(t *testing.T) {
				t.Parallel()
				table := openTable(t)
				feed(t, table, start, 60, 20)
				ft := &failingTable{Table: table}
				ft.left.Store(killAfter)
				if _, err := usage.NewRollup(ft, func() time.Time { return after }).Run(ctx); !errors.Is(err, errKilled) {
					t.Fatalf("kill after %d writes: err = %v", killAfter, err)
				}
				if _, err := usage.NewRollup(table, func() time.Time { return after }).Run(ctx); err != nil {
					t.Fatal(err)
				}
				got := snapshot(t, table, months...)
				if len(got) != len(want) {
					t.Fatalf("kill after %d: %d items, want %d", killAfter, len(got), len(want))
				}
				for k, w := range want {
					// Versions may differ (an item written twice); the data may not.
					if data(got[k]) != data(w) {
						t.Errorf("kill after %d: item %s differs", killAfter, k)
					}
				}
			})
		}
	})
	t.Run("it catches up on every hour since the watermark after downtime", func(t *testing.T) {
		table := openTable(t)
		now := start.Add(2 * time.Hour)
		r := usage.NewRollup(table, func() time.Time { return now })
		feed(t, table, start, 1, 5)
		if _, err := r.Run(ctx); err != nil {
			t.Fatal(err)
		}
		feed(t, table, start.Add(2*time.Hour), 50, 5) // hours while the rollup was down
		now = start.Add(60 * time.Hour)
		rep, err := r.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if rep.From != start.Add(time.Hour).Format("2006010215") || rep.Through != start.Add(58*time.Hour).Format("2006010215") {
			t.Errorf("caught up %s..%s", rep.From, rep.Through)
		}
		s, err := usage.NewReader(table, func() time.Time { return now }).Compute(ctx, usage.Request{Metric: usage.Events, From: start, To: now,
			Aggregation: usage.MonthToDate, Granularity: usage.Monthly})
		if err != nil {
			t.Fatal(err)
		}
		var total int64
		for _, p := range s.Points {
			total += p["0"]
		}
		if total != 5+50*5 {
			t.Errorf("events rolled up = %d, want %d", total, 5+50*5)
		}
	})
	t.Run("an hour is not rolled up before it is complete", func(t *testing.T) {
		table := openTable(t)
		feed(t, table, start, 1, 3)
		rep, err := usage.NewRollup(table, func() time.Time { return start.Add(time.Hour + time.Minute) }).Run(ctx)
		if err != nil || rep.Through != start.Add(-time.Hour).Format("2006010215") {
			t.Errorf("run within the grace = %+v, %v", rep, err)
		}
	})
}

func data(s string) string {
	_, d, _ := strings.Cut(s, " ")
	return d
}

func TestDistinctCountsStayWithinTheErrorBound(t *testing.T) {
	// 24 hours of one sender; hour h sees users h*3000 .. h*3000+4999, so
	// consecutive hours overlap and the day has 23*3000+5000 = 74,000.
	table := openTable(t)
	ctx := context.Background()
	day := time.Date(2026, 6, 2, 0, 0, 0, 0, time.UTC)
	for h := 0; h < 24; h++ {
		hour := day.Add(time.Duration(h) * time.Hour).Format("2006010215")
		s := hyperloglog.New14()
		for i := h * 3000; i < h*3000+5000; i++ {
			s.Insert([]byte(fmt.Sprint("user-", i)))
		}
		c := ingest.Cell{Hour: hour, Sender: ingest.Sender{ProjectKey: "p", EnvKey: "e", EnvID: "env1", SDKType: "server", SDKName: "GoClient"},
			Events: map[string]int64{"index": 5000}, Sketches: map[string][]byte{}}
		if err := ingest.MergeSketches(c.Sketches, map[string]*hyperloglog.Sketch{ingest.SketchKey("user", false): s}); err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(c)
		k := store.UsageCellKey(hour, "env1", "c1")
		if err := table.Put(ctx, store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: data}, store.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := usage.NewRollup(table, nil).RollupDay(ctx, day, day.Add(23*time.Hour)); err != nil {
		t.Fatal(err)
	}
	for _, gran := range []string{usage.Daily, usage.Monthly} {
		t.Run("the "+gran+" count of 74,000 distinct users is within three standard errors (2.43%)", func(t *testing.T) {
			s, err := usage.NewReader(table, nil).Compute(ctx, usage.Request{Metric: usage.MAU, From: day, To: day,
				Aggregation: usage.MonthToDate, Granularity: gran})
			if err != nil {
				t.Fatal(err)
			}
			got := s.Points[len(s.Points)-1]["0"]
			if diff := math.Abs(float64(got-74000)) / 74000; diff > 3*1.04/128 {
				t.Errorf("estimate %d is %.2f%% off", got, 100*diff)
			} else {
				t.Logf("estimate %d (%.2f%% off)", got, 100*diff)
			}
		})
	}
}
