package ingest_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/store"
)

// counting counts the table calls DynamoDB bills: reads and writes.
type counting struct {
	store.Table
	reads, writes atomic.Int64
}

func (c *counting) Get(ctx context.Context, k store.Key) (store.Item, error) {
	c.reads.Add(1)
	return c.Table.Get(ctx, k)
}

func (c *counting) Put(ctx context.Context, it store.Item, cond store.Cond) error {
	c.writes.Add(1)
	return c.Table.Put(ctx, it, cond)
}

func (c *counting) Transact(ctx context.Context, ws []store.Write) error {
	c.writes.Add(2 * int64(len(ws))) // a transaction's write is billed twice
	return c.Table.Transact(ctx, ws)
}

// flush is a server SDK's flush: fresh new contexts (index events), three
// custom events each, 400 events in all with the summary of 20 flags.
func flush(seq, fresh int) []byte {
	now := time.Now().UnixMilli()
	var parts []string
	for i := 0; i < fresh; i++ {
		parts = append(parts, fmt.Sprintf(`{"kind":"index","creationDate":%d,"context":{"kind":"user","key":"s%d-%d","email":"s%d-%d@example.com","plan":"p%d"}}`, now, seq, i, seq, i, i%5))
	}
	for len(parts) < 399 {
		parts = append(parts, fmt.Sprintf(`{"kind":"custom","creationDate":%d,"key":"click","contextKeys":{"user":"s%d-%d"}}`, now, seq, len(parts)%max(fresh, 1)))
	}
	var flags []string
	for f := 0; f < 20; f++ {
		flags = append(flags, fmt.Sprintf(`"flag-%d":{"counters":[{"variation":0,"version":1,"value":false,"count":40},{"variation":1,"version":1,"value":true,"count":60}]}`, f))
	}
	parts = append(parts, fmt.Sprintf(`{"kind":"summary","startDate":%d,"endDate":%d,"features":{%s}}`, now-5000, now, strings.Join(flags, ",")))
	return []byte("[" + strings.Join(parts, ",") + "]")
}

// TestBilledCallsPerPayload measures, item by item as on DynamoDB, the
// reads and writes one payload of 400 events costs in steady state (after
// a warm-up payload), for a few and for many new contexts per payload.
func TestBilledCallsPerPayload(t *testing.T) {
	for _, fresh := range []int{10, 100} {
		t.Run(fmt.Sprintf("a payload of 400 events with %d new contexts", fresh), func(t *testing.T) {
			_, table := newAggregator(t)
			c := &counting{Table: table}
			agg := ingest.NewAggregator(c, discardLogger(), time.Now).PerItemWrites()
			const payloads = 10
			for i := 0; i <= payloads; i++ {
				if i == 1 {
					c.reads.Store(0)
					c.writes.Store(0)
				}
				if _, err := agg.Apply(context.Background(), ingest.Payload{Source: ingest.SourceServer, ProjectKey: "p", EnvKey: "e", EnvID: "env",
					PayloadID: fmt.Sprint(i), UserAgent: "GoClient/7.14.6", Tags: "application-id/a application-version/1", ReceivedAt: time.Now().UnixMilli(), Body: flush(i, fresh)}); err != nil {
					t.Fatal(err)
				}
			}
			reads, writes := float64(c.reads.Load())/payloads, float64(c.writes.Load())/payloads
			t.Logf("per payload of 400 events: %.0f reads, %.0f writes; per million events: %.0f reads, %.0f writes", reads, writes, reads*2500, writes*2500)
			// What adds up (and the instances, whose creation decides the
			// counts) is written in transactions with the step marks that make
			// a redelivered payload count once, billed twice per item.
			if limit := 2 * (4*fresh + 40); writes > float64(limit) {
				t.Errorf("%.0f writes per payload, want at most %d: two per item touched", writes, limit)
			}
		})
	}
}
