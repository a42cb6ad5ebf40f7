package bolt

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/storetest"
)

func openTemp(tb testing.TB) *Table {
	tb.Helper()
	tbl, err := Open(filepath.Join(tb.TempDir(), "flagplane.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := tbl.Close(); err != nil {
			tb.Error(err)
		}
	})
	return tbl
}

func TestConformance(t *testing.T) {
	t.Run("with a fresh file per subtest", func(t *testing.T) {
		storetest.Run(t, func(tb testing.TB) store.Table { return openTemp(tb) })
	})
	t.Run("with one file shared by every subtest", func(t *testing.T) {
		shared := openTemp(t)
		storetest.Run(t, func(testing.TB) store.Table { return shared })
	})
}

func TestReopenKeepsDataAndCursors(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "flagplane.db")
	tbl, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	want := store.Item{PK: "p", SK: "1", GSI1PK: "g", GSI1SK: "1", Version: 3, TTL: 42, Data: []byte(`{"x":1}`)}
	for _, sk := range []string{"1", "2", "3"} {
		it := want
		it.SK, it.GSI1SK = sk, sk
		if err := tbl.Put(ctx, it, store.IfNotExists()); err != nil {
			t.Fatal(err)
		}
	}
	queries := []store.Query{{PK: "p", Limit: 1}, {Index: store.IndexGSI1, PK: "g", Limit: 1}}
	var cursors []string
	for _, q := range queries {
		p, err := tbl.Query(ctx, q)
		if err != nil || p.Cursor == "" {
			t.Fatalf("query %+v before reopen: cursor %q, error %v", q, p.Cursor, err)
		}
		cursors = append(cursors, p.Cursor)
	}
	if err := tbl.Close(); err != nil {
		t.Fatal(err)
	}

	tbl, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	got, err := tbl.Get(ctx, want.Key())
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after reopen got %+v, want %+v", got, want)
	}
	for i, q := range queries {
		q.Cursor = cursors[i]
		q.Limit = 0
		p, err := tbl.Query(ctx, q)
		if err != nil {
			t.Fatalf("query %+v with a cursor from before reopen: %v", q, err)
		}
		if sks := sortKeysOf(p.Items); !slices.Equal(sks, []string{"2", "3"}) || p.Cursor != "" {
			t.Fatalf("query %+v after reopen: got %q, cursor %q", q, sks, p.Cursor)
		}
	}
}

func TestSecondOpenOfALockedFileFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flagplane.db")
	tbl, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()

	// bbolt takes an flock, which conflicts between two opens in one process
	// just as between two processes.
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		second, err := Open(path)
		if err == nil {
			second.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("second open of a locked file succeeded")
		}
		if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), path) {
			t.Fatalf("error %q does not say the file is locked", err)
		}
		if waited := time.Since(start); waited < LockTimeout/2 {
			t.Fatalf("gave up after %s, want about %s", waited, LockTimeout)
		}
	case <-time.After(LockTimeout + 10*time.Second):
		t.Fatal("second open still waiting long after the lock timeout")
	}
}

func TestOpenRefusesAMissingDirectory(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "no-such-dir", "flagplane.db"))
	if err == nil || !strings.Contains(err.Error(), "no-such-dir") {
		t.Fatalf("want an error naming the missing directory, got %v", err)
	}
}

func TestIndexTiesAreOrderedByPrimaryKey(t *testing.T) {
	tbl := openTemp(t)
	ctx := t.Context()
	// Written out of order, all with the same GSI1SK.
	keys := []store.Key{{PK: "b", SK: "1"}, {PK: "a", SK: "2"}, {PK: "a", SK: "1"}, {PK: "c", SK: "0"}}
	for _, k := range keys {
		if err := tbl.Put(ctx, store.Item{PK: k.PK, SK: k.SK, GSI1PK: "g", GSI1SK: "same"}, store.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, desc := range []bool{false, true} {
		want := []string{"a/1", "a/2", "b/1", "c/0"}
		if desc {
			slices.Reverse(want)
		}
		p, err := tbl.Query(ctx, store.Query{Index: store.IndexGSI1, PK: "g", Descending: desc})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range p.Items {
			got = append(got, it.PK+"/"+it.SK)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("descending=%v: got %q, want %q", desc, got, want)
		}
	}
}

func TestCursorOfAnotherFileIsRefused(t *testing.T) {
	ctx := t.Context()
	a, b := openTemp(t), openTemp(t)
	for _, tbl := range []*Table{a, b} {
		for _, sk := range []string{"1", "2"} {
			if err := tbl.Put(ctx, store.Item{PK: "p", SK: sk}, store.Cond{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	q := store.Query{PK: "p", Limit: 1}
	p, err := a.Query(ctx, q)
	if err != nil || p.Cursor == "" {
		t.Fatalf("cursor %q, error %v", p.Cursor, err)
	}
	q.Cursor = p.Cursor
	if _, err := b.Query(ctx, q); !errors.Is(err, store.ErrBadCursor) {
		t.Fatalf("want ErrBadCursor, got %v", err)
	}
}

func TestRefusesWhatDynamoDBRefuses(t *testing.T) {
	tbl := openTemp(t)
	ctx := t.Context()
	cases := []struct {
		name string
		call func() error
	}{
		{"a NUL in a partition key", func() error { return tbl.Put(ctx, store.Item{PK: "a\x00b", SK: "x"}, store.Cond{}) }},
		{"a NUL in an index sort key", func() error {
			return tbl.Put(ctx, store.Item{PK: "a", SK: "x", GSI1PK: "g", GSI1SK: "s\x00"}, store.Cond{})
		}},
		{"a partition key over 2048 bytes", func() error {
			return tbl.Put(ctx, store.Item{PK: strings.Repeat("p", 2049), SK: "x"}, store.Cond{})
		}},
		{"a sort key over 1024 bytes", func() error {
			return tbl.Put(ctx, store.Item{PK: "p", SK: strings.Repeat("s", 1025)}, store.Cond{})
		}},
		{"an item over 400 KB", func() error {
			return tbl.Put(ctx, store.Item{PK: "p", SK: "big", Data: make([]byte, 400*1024)}, store.Cond{})
		}},
		{"a get with an empty key", func() error { _, err := tbl.Get(ctx, store.Key{PK: "p"}); return err }},
		{"a query on an unknown index", func() error { _, err := tbl.Query(ctx, store.Query{Index: "GSI9", PK: "p"}); return err }},
		{"a query without a partition", func() error { _, err := tbl.Query(ctx, store.Query{}); return err }},
		{"a query with a negative limit", func() error { _, err := tbl.Query(ctx, store.Query{PK: "p", Limit: -1}); return err }},
		{"a transaction with an unknown operation", func() error {
			return tbl.Transact(ctx, []store.Write{{Kind: store.OpKind(9), Item: store.Item{PK: "p", SK: "x"}}})
		}},
		{"a put with an unknown condition", func() error {
			return tbl.Put(ctx, store.Item{PK: "p", SK: "x"}, store.Cond{Kind: store.CondKind(9)})
		}},
	}
	for _, c := range cases {
		t.Run(c.name+" is refused", func(t *testing.T) {
			err := c.call()
			if err == nil || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConditionFailed) {
				t.Fatalf("want a validation error, got %v", err)
			}
		})
	}
	if p, err := tbl.Query(ctx, store.Query{PK: "p"}); err != nil || len(p.Items) != 0 {
		t.Fatalf("refused calls wrote %d items (error %v)", len(p.Items), err)
	}
}

func TestCancelledContextFailsEveryCall(t *testing.T) {
	tbl := openTemp(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	k := store.Key{PK: "p", SK: "x"}
	_, getErr := tbl.Get(ctx, k)
	_, queryErr := tbl.Query(ctx, store.Query{PK: "p"})
	errs := map[string]error{
		"get":      getErr,
		"put":      tbl.Put(ctx, store.Item{PK: "p", SK: "x"}, store.Cond{}),
		"delete":   tbl.Delete(ctx, k, store.Cond{}),
		"query":    queryErr,
		"transact": tbl.Transact(ctx, []store.Write{store.Put(store.Item{PK: "p", SK: "x"}, store.Cond{})}),
	}
	for name, err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: want context.Canceled, got %v", name, err)
		}
	}
}

func sortKeysOf(items []store.Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.SK
	}
	return out
}
