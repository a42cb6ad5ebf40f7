package ingest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/store"
)

var errCrash = errors.New("injected crash")

// Crashing fails one write of the table, the at-th (from 1): before it
// commits, or after (committed, yet the caller hears an error, as after
// a timeout or a crash between a commit and what follows it).
type Crashing struct {
	store.Table
	At     int64
	After  bool
	writes atomic.Int64
}

func (c *Crashing) fail(write func() error) error {
	if c.writes.Add(1) != c.At {
		return write()
	}
	if c.After {
		if err := write(); err != nil {
			return err
		}
	}
	return errCrash
}

func (c *Crashing) Put(ctx context.Context, it store.Item, cond store.Cond) error {
	return c.fail(func() error { return c.Table.Put(ctx, it, cond) })
}

func (c *Crashing) Delete(ctx context.Context, k store.Key, cond store.Cond) error {
	return c.fail(func() error { return c.Table.Delete(ctx, k, cond) })
}

func (c *Crashing) Transact(ctx context.Context, ws []store.Write) error {
	return c.fail(func() error { return c.Table.Transact(ctx, ws) })
}

// clock is the fixed time of every delivery, so that what two tables
// hold can be compared byte for byte.
var clock = time.Date(2026, 5, 4, 10, 30, 0, 0, time.UTC)

// bigPayload spans several chunks of every step: 150 new contexts with
// unique emails (300 attribute values), custom events, and a summary of
// 120 flags (past 99 counters).
func bigPayload(id string) ingest.Payload {
	ms := clock.UnixMilli()
	var events []string
	for i := 0; i < 150; i++ {
		events = append(events, fmt.Sprintf(`{"kind":"index","creationDate":%d,"context":{"kind":"user","key":"r%d","email":"r%d@example.com","tier":"t%d"}}`, ms, i, i, i%3))
		events = append(events, fmt.Sprintf(`{"kind":"custom","creationDate":%d,"key":"click","contextKeys":{"user":"r%d"}}`, ms, i))
	}
	var flags []string
	for f := 0; f < 120; f++ {
		flags = append(flags, fmt.Sprintf(`"flag-%d":{"counters":[{"variation":0,"version":1,"value":false,"count":%d},{"variation":1,"version":1,"value":true,"count":7}]}`, f, f+1))
	}
	events = append(events, fmt.Sprintf(`{"kind":"summary","startDate":%d,"endDate":%d,"features":{%s}}`, ms-5000, ms, strings.Join(flags, ",")))
	return ingest.Payload{Source: ingest.SourceServer, ProjectKey: "p", EnvKey: "e", EnvID: "env", PayloadID: id,
		UserAgent: "GoClient/7.14.6", ReceivedAt: ms, Body: []byte("[" + strings.Join(events, ",") + "]")}
}

// openTable is an empty embedded table.
func openTable(tb testing.TB) store.Table {
	tb.Helper()
	_, table := newAggregator(tb)
	return table
}

func aggregator(table store.Table, perItem bool) *ingest.Aggregator {
	agg := ingest.NewAggregator(table, discardLogger(), func() time.Time { return clock })
	if perItem {
		agg.PerItemWrites()
	}
	return agg
}

// aggregates is every item a payload of bigPayload adds to or creates,
// by key, leaving out versions (retries move them) and the marks.
func aggregates(tb testing.TB, table store.Table) map[string]string {
	tb.Helper()
	out := map[string]string{}
	for _, pk := range []string{store.ContextPartition("env"), store.ContextAttrPartition("env"), store.ProjectPartition("p"),
		store.UsageCellPartition(clock.Format("2006010215"))} {
		q := store.Query{PK: pk}
		for {
			page, err := table.Query(context.Background(), q)
			if err != nil {
				tb.Fatal(err)
			}
			for _, it := range page.Items {
				out[it.PK+" "+it.SK] = string(it.Data)
			}
			if page.Cursor == "" {
				break
			}
			q.Cursor = page.Cursor
		}
	}
	return out
}

func sameAggregates(tb testing.TB, got, want map[string]string) {
	tb.Helper()
	if len(got) != len(want) {
		tb.Errorf("%d items, want %d", len(got), len(want))
	}
	diffs := 0
	for k, w := range want {
		if g := got[k]; g != w && diffs < 3 {
			diffs++
			tb.Errorf("%s:\n got %.300s\nwant %.300s", k, g, w)
		}
	}
}

// TestRedeliveryCountsOnce fails a payload's delivery at each of its
// writes in turn, before and after that write commits, then delivers it
// again as SQS (or the local inbox after a crash) would: what the table
// holds must be what one clean delivery writes, every count once.
func TestRedeliveryCountsOnce(t *testing.T) {
	for _, perItem := range []bool{false, true} {
		clean := openTable(t)
		if _, err := aggregator(clean, perItem).Apply(context.Background(), bigPayload("big")); err != nil {
			t.Fatal(err)
		}
		want := aggregates(t, clean)
		if len(want) < 700 {
			t.Fatalf("the payload wrote %d items; want it to span several chunks of each step", len(want))
		}
		mode := map[bool]string{false: "in atomic batches (local)", true: "item by item (AWS)"}[perItem]
		for _, after := range []bool{false, true} {
			when := map[bool]string{false: "before", true: "after"}[after]
			t.Run(fmt.Sprintf("written %s, a delivery that fails at a write %s it commits, delivered again, counts once", mode, when), func(t *testing.T) {
				for at := int64(1); ; at += stride(perItem) {
					table := openTable(t)
					crashing := &Crashing{Table: table, At: at, After: after}
					_, err := aggregator(crashing, perItem).Apply(context.Background(), bigPayload("big"))
					if err == nil {
						if at < 10 {
							t.Fatalf("the payload applied in %d writes; want several steps", at-1)
						}
						return // every write was tried
					}
					if !errors.Is(err, errCrash) {
						t.Fatalf("write %d: %v", at, err)
					}
					// A duplicate only when the failed write was the last, the payload's own mark.
					if _, err := aggregator(table, perItem).Apply(context.Background(), bigPayload("big")); err != nil {
						t.Fatalf("delivery again after write %d failed: %v", at, err)
					}
					sameAggregates(t, aggregates(t, table), want)
					if t.Failed() {
						t.Fatalf("after a failure at write %d %s its commit", at, when)
					}
					if res, _ := aggregator(table, perItem).Apply(context.Background(), bigPayload("big")); !res.Duplicate {
						t.Fatalf("a third delivery after write %d is not a duplicate", at)
					}
				}
			})
		}
		t.Run(fmt.Sprintf("written %s, a payload failing at its next write on every delivery counts once when it lands", mode), func(t *testing.T) {
			table := openTable(t)
			for at := int64(1); ; at += stride(perItem) {
				_, err := aggregator(&Crashing{Table: table, At: at, After: at%2 == 0}, perItem).Apply(context.Background(), bigPayload("big"))
				if err == nil {
					break
				}
				if at > 1000 {
					t.Fatal("the payload never landed")
				}
			}
			sameAggregates(t, aggregates(t, table), want)
		})
		t.Run(fmt.Sprintf("written %s, deliveries of one payload at once count once", mode), func(t *testing.T) {
			table := openTable(t)
			var wg sync.WaitGroup
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := aggregator(table, perItem).Apply(context.Background(), bigPayload("big")); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			sameAggregates(t, aggregates(t, table), want)
		})
	}
}

// stride is how far apart the failed writes are: item by item a delivery
// makes some 170 writes, and every fifth still fails inside each step
// while keeping the test short.
func stride(perItem bool) int64 {
	if perItem {
		return 5
	}
	return 1
}
