package audit

import (
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

func TestEntriesOfOneMillisecondListNewestFirst(t *testing.T) {
	table, err := bolt.Open(filepath.Join(t.TempDir(), "audit.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { table.Close() })
	frozen := time.UnixMilli(1_795_219_200_000)
	log := New(table, Discard{}, "acct", slog.New(slog.NewTextHandler(io.Discard, nil)), func() time.Time { return frozen })

	var made []string
	for i := range 20 {
		k := store.Key{PK: "T", SK: string(rune('a' + i))}
		e, err := log.Commit(t.Context(), Change{
			Writes: []store.Write{store.Put(store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: []byte("{}")}, store.IfNotExists())},
			Kind:   "thing", Resource: "thing/" + k.SK, Actions: []string{"createThing"}, Name: k.SK,
		})
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, e.ID)
	}
	res, err := log.List(t.Context(), ListQuery{Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entries) != len(made) {
		t.Fatalf("listed %d entries, made %d", len(res.Entries), len(made))
	}
	for i, e := range res.Entries {
		if want := made[len(made)-1-i]; e.ID != want {
			t.Fatalf("entry %d is %s, want %s (newest first)", i, e.ID, want)
		}
		if e.Date != frozen.UnixMilli() {
			t.Fatalf("entry %d dated %d, want %d", i, e.Date, frozen.UnixMilli())
		}
	}
}
