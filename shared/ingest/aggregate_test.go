package ingest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/sdkcontext"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

func newAggregator(tb testing.TB) (*ingest.Aggregator, store.Table) {
	tb.Helper()
	table, err := bolt.Open(filepath.Join(tb.TempDir(), "ingest.db"))
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	tb.Cleanup(func() { table.Close() })
	return ingest.NewAggregator(table, discardLogger(), time.Now), table
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// identifies is a payload of identify events for users with unique emails.
func identifies(from, n int) []byte {
	var parts []string
	for i := from; i < from+n; i++ {
		parts = append(parts, fmt.Sprintf(`{"kind":"identify","creationDate":%d,"context":{"kind":"user","key":"u%d","email":"u%d@example.com","tier":"gold"}}`, time.Now().UnixMilli(), i, i))
	}
	return []byte("[" + strings.Join(parts, ",") + "]")
}

func countValues(tb testing.TB, table store.Table, envID, name string) int {
	tb.Helper()
	n := 0
	q := store.Query{PK: store.ContextAttrPartition(envID), SKPrefix: store.ContextAttrValuePrefix(sdkcontext.Hash(name))}
	for {
		page, err := table.Query(context.Background(), q)
		if err != nil {
			tb.Fatal(err)
		}
		n += len(page.Items)
		if page.Cursor == "" {
			return n
		}
		q.Cursor = page.Cursor
	}
}

func TestAttributeIndex(t *testing.T) {
	agg, table := newAggregator(t)
	ctx := context.Background()
	send := func(t *testing.T, body []byte, id string) ingest.Result {
		t.Helper()
		res, err := agg.Apply(ctx, ingest.Payload{Source: ingest.SourceServer, ProjectKey: "p", EnvKey: "e", EnvID: "env1", PayloadID: id, ReceivedAt: time.Now().UnixMilli(), Body: body})
		if err != nil {
			t.Fatalf("apply: %v", err)
		}
		return res
	}
	t.Run("a high-cardinality attribute stops growing the index at the bound", func(t *testing.T) {
		for from := 0; from < ingest.MaxValuesPerAttribute+300; from += 100 {
			send(t, identifies(from, 100), fmt.Sprintf("p%d", from))
		}
		if n := countValues(t, table, "env1", "email"); n < ingest.MaxValuesPerAttribute || n > ingest.MaxValuesPerAttribute+100 {
			t.Errorf("%d email values indexed, want the bound %d (plus at most one payload)", n, ingest.MaxValuesPerAttribute)
		}
		if n := countValues(t, table, "env1", "tier"); n != 1 {
			t.Errorf("%d tier values, want 1", n)
		}
	})
	t.Run("a payload id seen before is a duplicate and writes nothing", func(t *testing.T) {
		if res := send(t, identifies(5000, 1), "p0"); !res.Duplicate {
			t.Errorf("want a duplicate: %+v", res)
		}
		if _, err := table.Get(ctx, store.ContextInstanceKey("env1", sdkcontext.InstanceID("u5000"))); err == nil {
			t.Error("the duplicate's context was written")
		}
	})
	t.Run("malformed events are counted as skipped beside the good ones", func(t *testing.T) {
		huge := fmt.Sprintf(`{"kind":"identify","context":{"kind":"user","key":"big","blob":%q}}`, strings.Repeat("x", ingest.MaxContextSize))
		res := send(t, []byte(`[1,{"kind":"identify"},`+huge+`,{"kind":"identify","context":{"kind":"user","key":"ok"}}]`), "")
		if res.Accepted != 1 || res.Skipped != 3 {
			t.Errorf("accepted %d, skipped %d; want 1 and 3 (a number, no context, a context over the size limit)", res.Accepted, res.Skipped)
		}
	})
}

func TestSplit(t *testing.T) {
	big := identifies(0, 3000)
	p := ingest.Payload{Source: ingest.SourceServer, EnvID: "e", PayloadID: "x", Body: big}
	tests := []struct {
		name string
		in   ingest.Payload
		want func(t *testing.T, parts []ingest.Payload)
	}{
		{"a payload that fits travels whole", ingest.Payload{Source: ingest.SourceServer, Body: identifies(0, 2)}, func(t *testing.T, parts []ingest.Payload) {
			if len(parts) != 1 {
				t.Errorf("%d parts, want 1", len(parts))
			}
		}},
		{"a large payload is cut into parts that each fit, keeping every event in order", p, func(t *testing.T, parts []ingest.Payload) {
			if len(parts) < 2 {
				t.Fatalf("%d parts, want several", len(parts))
			}
			var all []json.RawMessage
			for i, part := range parts {
				msg, _ := json.Marshal(part)
				if len(msg) > ingest.MaxMessage {
					t.Errorf("part %d is %d bytes", i, len(msg))
				}
				if want := fmt.Sprintf("x#%d", i); part.PayloadID != want {
					t.Errorf("part %d payload id %q, want %q", i, part.PayloadID, want)
				}
				var evs []json.RawMessage
				if err := json.Unmarshal(part.Body, &evs); err != nil {
					t.Fatalf("part %d is not an array: %v", i, err)
				}
				all = append(all, evs...)
			}
			var orig []json.RawMessage
			_ = json.Unmarshal(big, &orig)
			if len(all) != len(orig) || string(all[len(all)-1]) != string(orig[len(orig)-1]) {
				t.Errorf("%d events after the cut, want %d in order", len(all), len(orig))
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parts, err := ingest.Split(tc.in, ingest.MaxMessage)
			if err != nil {
				t.Fatal(err)
			}
			tc.want(t, parts)
		})
	}
}

func TestCountersAddUpAcrossWorkers(t *testing.T) {
	for _, mode := range []struct {
		name    string
		perItem bool
	}{{"in atomic batches", false}, {"item by item", true}} {
		t.Run("two workers counting the same flag "+mode.name+" lose no evaluation", func(t *testing.T) {
			_, table := newAggregator(t)
			now := time.Now().UnixMilli()
			body := []byte(fmt.Sprintf(`[{"kind":"summary","startDate":%d,"endDate":%d,"features":{"f":{"counters":[{"variation":1,"version":1,"value":true,"count":1}]}}}]`, now, now))
			errs := make(chan error, 2)
			for w := 0; w < 2; w++ {
				agg := ingest.NewAggregator(table, discardLogger(), time.Now)
				if mode.perItem {
					agg.PerItemWrites()
				}
				go func() {
					for i := 0; i < 20; i++ {
						if _, err := agg.Apply(context.Background(), ingest.Payload{Source: ingest.SourceServer, ProjectKey: "p", EnvKey: "e", EnvID: "env", ReceivedAt: now, Body: body}); err != nil {
							errs <- err
							return
						}
					}
					errs <- nil
				}()
			}
			for w := 0; w < 2; w++ {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			it, err := table.Get(context.Background(), store.FlagEvalKey("p", "e", "f", time.UnixMilli(now).UTC().Format("2006010215")))
			if err != nil {
				t.Fatal(err)
			}
			var doc ingest.FlagEvals
			if err := json.Unmarshal(it.Data, &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Counts["1"] != 40 {
				t.Errorf("counted %d, want 40", doc.Counts["1"])
			}
		})
	}
}
