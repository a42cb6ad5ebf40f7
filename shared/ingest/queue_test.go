package ingest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/sdkcontext"
	"github.com/flagplane/flagplane/shared/store"
)

func TestMemoryQueue(t *testing.T) {
	agg, table := newAggregator(t)
	q := ingest.NewMemoryQueue(agg, 4, discardLogger())
	ctx := context.Background()
	const n = 20
	for i := 0; i < n; i++ {
		p := ingest.Payload{Source: ingest.SourceServer, ProjectKey: "p", EnvKey: "e", EnvID: "env", PayloadID: fmt.Sprintf("q%d", i%10),
			ReceivedAt: time.Now().UnixMilli(), Body: identifies(i, 1)}
		if err := q.Send(ctx, p); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"Wait returns once every payload sent is applied", func(t *testing.T) {
			q.Wait()
			for i := 0; i < 10; i++ {
				if _, err := table.Get(ctx, store.ContextInstanceKey("env", sdkcontext.InstanceID(fmt.Sprintf("u%d", i)))); err != nil {
					t.Errorf("u%d not applied: %v", i, err)
				}
			}
		}},
		{"payloads that repeat an id are counted once", func(t *testing.T) {
			for i := 10; i < n; i++ {
				if _, err := table.Get(ctx, store.ContextInstanceKey("env", sdkcontext.InstanceID(fmt.Sprintf("u%d", i)))); err == nil {
					t.Errorf("u%d came in a repeated payload id and was applied", i)
				}
			}
		}},
		{"Close applies what is still queued, then stops the worker", func(t *testing.T) {
			for i := 100; i < 104; i++ {
				if err := q.Send(ctx, ingest.Payload{Source: ingest.SourceServer, EnvID: "env", ReceivedAt: time.Now().UnixMilli(), Body: identifies(i, 1)}); err != nil {
					t.Fatal(err)
				}
			}
			q.Close()
			if _, err := table.Get(ctx, store.ContextInstanceKey("env", sdkcontext.InstanceID("u103"))); err != nil {
				t.Errorf("the last payload queued before Close was not applied: %v", err)
			}
		}},
		{"a send after Close is refused with 503 instead of panicking", func(t *testing.T) {
			err := q.Send(ctx, ingest.Payload{Source: ingest.SourceServer, EnvID: "env", ReceivedAt: time.Now().UnixMilli(), Body: identifies(200, 1)})
			if !fault.Is(err, fault.Unavailable) {
				t.Errorf("Send after Close = %v; want a service_unavailable fault", err)
			}
			q.Close() // a second Close is harmless
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.run)
	}
}
