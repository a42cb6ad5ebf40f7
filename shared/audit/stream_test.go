package audit

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

func TestStreamedCommitWritesNoOutboxRecord(t *testing.T) {
	table, err := bolt.Open(filepath.Join(t.TempDir(), "stream.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { table.Close() })
	pub := &flakyPublisher{}
	log := New(table, pub, "acct", slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now)
	log.SetStreamed(true)
	e, err := log.Commit(t.Context(), Change{
		Writes: []store.Write{store.Put(store.Item{PK: "T", SK: "x", Version: 1, Data: []byte("{}")}, store.IfNotExists())},
		Kind:   "thing", Resource: "thing/x", Actions: []string{"createThing"}, Name: "x",
	})
	if err != nil {
		t.Fatal(err)
	}
	count := func(pk string) int {
		page, err := table.Query(context.Background(), store.Query{PK: pk})
		if err != nil {
			t.Fatal(err)
		}
		return len(page.Items)
	}
	if n := count(store.OutboxPK); n != 0 {
		t.Errorf("%d outbox records, want none: the stream hands entries off", n)
	}
	if n := count(store.AuditKey(e.ID).PK); n != 1 {
		t.Errorf("%d audit entries, want 1", n)
	}
	if len(pub.got) != 1 || pub.got[0] != e.ID {
		t.Errorf("the publisher heard of %v, want [%s]", pub.got, e.ID)
	}
	if n, err := log.Sweep(t.Context(), 0); err != nil || n != 0 {
		t.Errorf("the sweep found %d records (%v), want none", n, err)
	}
}
