package ingest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/store"
)

// largePayload is a payload of about size bytes: identify events of users
// from and from+1, and custom events carrying large data, as a browser
// flushing a long session sends.
func largePayload(id string, from, size int) ingest.Payload {
	events := []string{strings.Trim(string(identifies(from, 2)), "[]")}
	pad := strings.Repeat("x", 100<<10)
	for n := 0; n*len(pad) < size; n++ {
		events = append(events, fmt.Sprintf(`{"kind":"custom","creationDate":%d,"key":"cart","contextKeys":{"user":"u%d"},"data":{"items":%q}}`,
			time.Now().UnixMilli(), from, pad))
	}
	return ingest.Payload{Source: ingest.SourceClient, ProjectKey: "p", EnvKey: "e", EnvID: "env", PayloadID: id,
		ReceivedAt: time.Now().UnixMilli(), Body: []byte("[" + strings.Join(events, ",") + "]")}
}

func countItems(tb testing.TB, table store.Table, pk string) int {
	tb.Helper()
	page, err := table.Query(context.Background(), store.Query{PK: pk})
	if err != nil {
		tb.Fatal(err)
	}
	return len(page.Items)
}

// TestInboxLargePayloads: a payload may be up to MaxBody (5 MiB), far
// above what one item of the store holds (400 KiB).
func TestInboxLargePayloads(t *testing.T) {
	ctx := context.Background()
	t.Run("a payload of 5 MiB is kept in parts, applied whole after a restart, and removed with its parts", func(t *testing.T) {
		_, table := newAggregator(t)
		stuck := held{Table: table, release: make(chan struct{})}
		first, err := ingest.NewInbox(ctx, table, ingest.NewAggregator(stuck, discardLogger(), time.Now), 4, discardLogger())
		if err != nil {
			t.Fatal(err)
		}
		defer first.Close()
		defer close(stuck.release)
		if err := first.Send(ctx, largePayload("big", 0, ingest.MaxBody-(200<<10))); err != nil {
			t.Fatalf("send: %v", err)
		}
		if heads, parts := countItems(t, table, store.IngestInboxPK), countItems(t, table, store.IngestInboxPartPK); heads != 1 || parts < 15 {
			t.Fatalf("kept %d payloads in %d further parts, want 1 in about 20", heads, parts)
		}
		// The first run "crashed" before applying it.
		next := newInbox(t, table, ingest.NewAggregator(table, discardLogger(), time.Now), 4)
		next.Wait()
		if !hasContext(t, table, 0) || !hasContext(t, table, 1) {
			t.Error("the contexts of the large payload were not applied")
		}
		if heads, parts := countItems(t, table, store.IngestInboxPK), countItems(t, table, store.IngestInboxPartPK); heads != 0 || parts != 0 {
			t.Errorf("%d payloads and %d parts left after applying", heads, parts)
		}
	})
	t.Run("a payload kept whole in its head item, as before bodies were kept in parts, is applied", func(t *testing.T) {
		_, table := newAggregator(t)
		p := identify("old", 3)
		data, _ := json.Marshal(p)
		k := store.IngestInboxKey(p.ReceivedAt, p.EnvID, p.PayloadID)
		if err := table.Put(ctx, store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: data}, store.Cond{}); err != nil {
			t.Fatal(err)
		}
		newInbox(t, table, ingest.NewAggregator(table, discardLogger(), time.Now), 4).Wait()
		if !hasContext(t, table, 3) {
			t.Error("the payload kept whole was not applied")
		}
		if heads := countItems(t, table, store.IngestInboxPK); heads != 0 {
			t.Errorf("%d payloads left after applying", heads)
		}
	})
	t.Run("a head that does not decode is dropped with its parts", func(t *testing.T) {
		_, table := newAggregator(t)
		k := store.IngestInboxKey(time.Now().UnixMilli(), "env", "torn")
		part := store.IngestInboxPartKey(k, 1)
		for _, it := range []store.Item{{PK: k.PK, SK: k.SK, Version: 1, Data: []byte("{not json")}, {PK: part.PK, SK: part.SK, Version: 1, Data: []byte("[]")}} {
			if err := table.Put(ctx, it, store.Cond{}); err != nil {
				t.Fatal(err)
			}
		}
		newInbox(t, table, ingest.NewAggregator(table, discardLogger(), time.Now), 4).Wait()
		if heads, parts := countItems(t, table, store.IngestInboxPK), countItems(t, table, store.IngestInboxPartPK); heads != 0 || parts != 0 {
			t.Errorf("%d payloads and %d parts left", heads, parts)
		}
	})
	t.Run("large and small payloads in turn are each applied once", func(t *testing.T) {
		agg, table := newAggregator(t)
		q := newInbox(t, table, agg, 4)
		for i := range 6 {
			p := identify(fmt.Sprintf("s%d", i), 10*i)
			if i%2 == 0 {
				p = largePayload(fmt.Sprintf("b%d", i), 10*i, 1<<20)
			}
			if err := q.Send(ctx, p); err != nil {
				t.Fatalf("send %d: %v", i, err)
			}
		}
		q.Wait()
		for i := range 6 {
			if !hasContext(t, table, 10*i) {
				t.Errorf("payload %d was not applied", i)
			}
		}
		if parts := countItems(t, table, store.IngestInboxPartPK); parts != 0 {
			t.Errorf("%d parts left after applying", parts)
		}
	})
}
