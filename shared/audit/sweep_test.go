package audit

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

// flakyPublisher fails while down, and records what it was handed.
type flakyPublisher struct {
	mu   sync.Mutex
	down bool
	got  []string
}

func (p *flakyPublisher) Publish(_ context.Context, rec Outbox) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return errors.New("queue unreachable")
	}
	p.got = append(p.got, rec.EntryID)
	return nil
}

func TestSweepHandsOverWhatACrashLeftBehind(t *testing.T) {
	table, err := bolt.Open(filepath.Join(t.TempDir(), "sweep.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { table.Close() })
	pub := &flakyPublisher{down: true}
	now := time.UnixMilli(1_795_219_200_000)
	log := New(table, pub, "acct", slog.New(slog.NewTextHandler(io.Discard, nil)), func() time.Time { return now })

	// A change committed while the queue was unreachable: the enqueue failed after the commit.
	e, err := log.Commit(t.Context(), Change{
		Writes: []store.Write{store.Put(store.Item{PK: "T", SK: "x", Version: 1, Data: []byte("{}")}, store.IfNotExists())},
		Kind:   "thing", Resource: "thing/x", Actions: []string{"createThing"}, Name: "x",
	})
	if err != nil {
		t.Fatal(err)
	}
	pub.mu.Lock()
	pub.down = false
	pub.mu.Unlock()

	t.Run("a record younger than the sweep age is left to its hand-off", func(t *testing.T) {
		if n, err := log.Sweep(t.Context(), time.Minute); err != nil || n != 0 {
			t.Fatalf("swept %d, %v", n, err)
		}
	})
	t.Run("an older record is handed over once and dropped", func(t *testing.T) {
		now = now.Add(2 * time.Minute)
		if n, err := log.Sweep(t.Context(), time.Minute); err != nil || n != 1 {
			t.Fatalf("swept %d, %v", n, err)
		}
		if len(pub.got) != 1 || pub.got[0] != e.ID {
			t.Fatalf("handed over %v, want [%s]", pub.got, e.ID)
		}
		if n, _ := log.Sweep(t.Context(), time.Minute); n != 0 {
			t.Fatalf("a second sweep re-sent %d records", n)
		}
		if _, err := table.Get(t.Context(), store.OutboxKey(e.ID)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the outbox record is still there: %v", err)
		}
	})
}

func TestDropOnFanOut(t *testing.T) {
	open := func(tb testing.TB, dropOnFanOut bool) (*Log, *bolt.Table) {
		tb.Helper()
		table, err := bolt.Open(filepath.Join(tb.TempDir(), "fanout.db"))
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { table.Close() })
		log := New(table, &flakyPublisher{}, "acct", slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now)
		log.SetDropOnFanOut(dropOnFanOut)
		return log, table
	}
	commit := func(tb testing.TB, log *Log) Entry {
		tb.Helper()
		e, err := log.Commit(tb.Context(), Change{
			Writes: []store.Write{store.Put(store.Item{PK: "T", SK: "x", Version: 1, Data: []byte("{}")}, store.IfNotExists())},
			Kind:   "thing", Resource: "thing/x", Actions: []string{"createThing"}, Name: "x",
		})
		if err != nil {
			tb.Fatal(err)
		}
		return e
	}
	t.Run("with the queue in the process the record stays after hand-off until its fan-out", func(t *testing.T) {
		log, table := open(t, true)
		e := commit(t, log)
		if _, err := table.Get(t.Context(), store.OutboxKey(e.ID)); err != nil {
			t.Fatalf("the record went before its fan-out: %v", err)
		}
		log.FannedOut(t.Context(), e.ID)
		if _, err := table.Get(t.Context(), store.OutboxKey(e.ID)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the record is still there after its fan-out: %v", err)
		}
	})
	t.Run("otherwise the record goes at hand-off", func(t *testing.T) {
		log, table := open(t, false)
		e := commit(t, log)
		if _, err := table.Get(t.Context(), store.OutboxKey(e.ID)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the record is still there after its hand-off: %v", err)
		}
	})
}
