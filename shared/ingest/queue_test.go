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

// held is a table whose reads wait until release is closed: an
// aggregator over it is a worker that has not got to a payload yet.
type held struct {
	store.Table
	release chan struct{}
}

func (h held) Get(ctx context.Context, k store.Key) (store.Item, error) {
	<-h.release
	return h.Table.Get(ctx, k)
}

func newInbox(tb testing.TB, table store.Table, agg *ingest.Aggregator, max int) *ingest.Inbox {
	tb.Helper()
	q, err := ingest.NewInbox(context.Background(), table, agg, max, discardLogger())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(q.Close)
	return q
}

func identify(id string, user int) ingest.Payload {
	return ingest.Payload{Source: ingest.SourceServer, ProjectKey: "p", EnvKey: "e", EnvID: "env", PayloadID: id,
		ReceivedAt: time.Now().UnixMilli(), Body: identifies(user, 1)}
}

func hasContext(tb testing.TB, table store.Table, user int) bool {
	tb.Helper()
	_, err := table.Get(context.Background(), store.ContextInstanceKey("env", sdkcontext.InstanceID(fmt.Sprintf("u%d", user))))
	return err == nil
}

func kept(tb testing.TB, table store.Table) int {
	tb.Helper()
	page, err := table.Query(context.Background(), store.Query{PK: store.IngestInboxPK})
	if err != nil {
		tb.Fatal(err)
	}
	return len(page.Items)
}

func TestInbox(t *testing.T) {
	ctx := context.Background()
	t.Run("every payload sent is applied and removed from the inbox, and a repeated id counts once", func(t *testing.T) {
		agg, table := newAggregator(t)
		q := newInbox(t, table, agg, 4)
		for i := 0; i < 20; i++ {
			if err := q.Send(ctx, identify(fmt.Sprintf("q%d", i%10), i)); err != nil {
				t.Fatalf("send %d: %v", i, err)
			}
		}
		q.Wait()
		for i := 0; i < 20; i++ {
			if got, want := hasContext(t, table, i), i < 10; got != want {
				t.Errorf("u%d applied: %v, want %v (ids repeat from the 11th payload on)", i, got, want)
			}
		}
		if n := kept(t, table); n != 0 {
			t.Errorf("%d payloads left in the inbox after they were applied", n)
		}
		for i := 0; i < 10; i++ {
			page, err := table.Query(ctx, store.Query{PK: store.PayloadKey("env", fmt.Sprintf("q%d", i)).PK})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Items) != 1 || page.Items[0].SK != store.PayloadKey("env", "").SK {
				t.Errorf("payload q%d left %d items in its partition; want its own mark alone, the step marks gone", i, len(page.Items))
			}
		}
	})
	t.Run("payloads without an id get one each, so each is applied", func(t *testing.T) {
		agg, table := newAggregator(t)
		q := newInbox(t, table, agg, 4)
		for i := 0; i < 3; i++ {
			if err := q.Send(ctx, identify("", i)); err != nil {
				t.Fatal(err)
			}
		}
		q.Wait()
		for i := 0; i < 3; i++ {
			if !hasContext(t, table, i) {
				t.Errorf("u%d, sent without a payload id, was not applied", i)
			}
		}
	})
	t.Run("payloads kept by a run that never applied them are applied by the next inbox on the same file", func(t *testing.T) {
		_, table := newAggregator(t)
		stuck := held{Table: table, release: make(chan struct{})}
		first, err := ingest.NewInbox(ctx, table, ingest.NewAggregator(stuck, discardLogger(), time.Now), 8, discardLogger())
		if err != nil {
			t.Fatal(err)
		}
		defer first.Close()
		defer close(stuck.release)
		for i := 0; i < 5; i++ {
			if err := first.Send(ctx, identify(fmt.Sprintf("k%d", i), i)); err != nil {
				t.Fatal(err)
			}
		}
		if n := kept(t, table); n != 5 {
			t.Fatalf("%d payloads kept, want the 5 acknowledged", n)
		}
		// The first run "crashed": its worker never got past the first read.
		next := newInbox(t, table, ingest.NewAggregator(table, discardLogger(), time.Now), 8)
		next.Wait()
		for i := 0; i < 5; i++ {
			if !hasContext(t, table, i) {
				t.Errorf("u%d, kept before the crash, was not applied after it", i)
			}
		}
	})
	t.Run("a full inbox makes Send wait, then answer 503, and keeps no more than its bound", func(t *testing.T) {
		_, table := newAggregator(t)
		stuck := held{Table: table, release: make(chan struct{})}
		q := newInbox(t, table, ingest.NewAggregator(stuck, discardLogger(), time.Now), 2)
		q.SetWait(50 * time.Millisecond)
		for i := 0; i < 2; i++ {
			if err := q.Send(ctx, identify(fmt.Sprintf("f%d", i), i)); err != nil {
				t.Fatal(err)
			}
		}
		began := time.Now()
		err := q.Send(ctx, identify("f2", 2))
		if !fault.Is(err, fault.Unavailable) || time.Since(began) < 50*time.Millisecond {
			t.Errorf("Send to a full inbox = %v after %s; want a service_unavailable fault after waiting", err, time.Since(began))
		}
		if n := kept(t, table); n != 2 {
			t.Errorf("%d payloads kept, want the bound 2", n)
		}
		close(stuck.release)
		q.Wait()
		if err := q.Send(ctx, identify("f2", 2)); err != nil {
			t.Errorf("Send once there is room again: %v", err)
		}
		q.Wait()
		for i := 0; i < 3; i++ {
			if !hasContext(t, table, i) {
				t.Errorf("u%d not applied", i)
			}
		}
	})
	t.Run("Close applies what is kept, and a send after it is refused with 503", func(t *testing.T) {
		agg, table := newAggregator(t)
		q := newInbox(t, table, agg, 8)
		for i := 0; i < 4; i++ {
			if err := q.Send(ctx, identify(fmt.Sprintf("c%d", i), i)); err != nil {
				t.Fatal(err)
			}
		}
		q.Close()
		if !hasContext(t, table, 3) || kept(t, table) != 0 {
			t.Errorf("the payloads kept before Close were not all applied")
		}
		if err := q.Send(ctx, identify("late", 9)); !fault.Is(err, fault.Unavailable) {
			t.Errorf("Send after Close = %v; want a service_unavailable fault", err)
		}
		q.Close() // a second Close is harmless
	})
}
