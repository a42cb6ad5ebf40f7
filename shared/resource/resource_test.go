package resource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

// thing is the resource the tests keep: a key, a name and labels.
type thing struct {
	Key     string            `json:"key"`
	Name    string            `json:"name"`
	Labels  map[string]string `json:"labels"`
	Secret  string            `json:"secret"`
	Version int64             `json:"-"`
}

var things = Kind[thing]{
	Audit: "thing", Noun: "thing", Created: "createThing", Deleted: "deleteThing",
	Patchable: map[string]string{"name": "updateName", "labels": "updateLabels", "secret": "updateSecret"},
	Called:    "a thing",
	Item: func(t *thing) (store.Item, error) {
		data, err := json.Marshal(t)
		return store.Item{Data: data}, err
	},
	Decode: func(it store.Item) (*thing, error) {
		var t thing
		if err := json.Unmarshal(it.Data, &t); err != nil {
			return nil, err
		}
		t.Version = it.Version
		return &t, nil
	},
	Version: func(t *thing) int64 { return t.Version },
	Name:    func(t *thing) string { return t.Name },
	Shown: func(t *thing) any {
		c := *t
		c.Secret = "***"
		return c
	},
}

func thingKey(key string) store.Key { return store.Key{PK: "THING#" + key, SK: "THING"} }

func ref(key string) Ref {
	return Ref{Key: thingKey(key), What: fmt.Sprintf("thing %q", key), Resource: "thing/" + key, Href: "/things/" + key}
}

// recording is a table that remembers the keys of every transaction and
// counts reads.
type recording struct {
	store.Table
	mu    sync.Mutex
	txs   [][]store.Key
	reads int
}

func (r *recording) Transact(ctx context.Context, ws []store.Write) error {
	keys := make([]store.Key, len(ws))
	for i, w := range ws {
		keys[i] = w.Item.Key()
	}
	r.mu.Lock()
	r.txs = append(r.txs, keys)
	r.mu.Unlock()
	return r.Table.Transact(ctx, ws)
}

func (r *recording) Get(ctx context.Context, k store.Key) (store.Item, error) {
	r.mu.Lock()
	r.reads++
	r.mu.Unlock()
	return r.Table.Get(ctx, k)
}

// failing publishes nothing, so every outbox record stays in the table.
type failing struct{}

func (failing) Publish(context.Context, audit.Outbox) error { return errors.New("queue down") }

type fixture struct {
	kit   Kit[thing]
	table *recording
	log   *audit.Log
}

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	b, err := bolt.Open(filepath.Join(tb.TempDir(), "kit.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { b.Close() })
	table := &recording{Table: b}
	log := audit.New(table, failing{}, "acct", slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now)
	return &fixture{kit: New(&things, table, log), table: table, log: log}
}

func (f *fixture) create(tb testing.TB, key, name string) *thing {
	tb.Helper()
	t, err := f.kit.Create(tb.Context(), ref(key), &thing{Key: key, Name: name, Labels: map[string]string{}}, Change{})
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

func (f *fixture) entries(tb testing.TB) []audit.Entry {
	tb.Helper()
	res, err := f.log.List(tb.Context(), audit.ListQuery{Limit: 100})
	if err != nil {
		tb.Fatal(err)
	}
	return res.Entries
}

func (f *fixture) count(tb testing.TB, pk string) int {
	tb.Helper()
	page, err := f.table.Query(tb.Context(), store.Query{PK: pk})
	if err != nil {
		tb.Fatal(err)
	}
	return len(page.Items)
}

func wantFault(tb testing.TB, err error, code fault.Code, msg string) {
	tb.Helper()
	if !fault.Is(err, code) || fault.MessageOf(err) != msg {
		tb.Fatalf("got %v (code %v), want %v %q", err, fault.CodeOf(err), code, msg)
	}
}

func mustPatch(tb testing.TB, body string) patch.Patch {
	tb.Helper()
	p, err := patch.Parse([]byte(body))
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func keep(old, next *thing) error {
	next.Key = old.Key
	if next.Name == "" {
		return fault.New(fault.Invalid, "field \"name\" may not be empty")
	}
	return nil
}

func TestGet(t *testing.T) {
	f := newFixture(t)
	f.create(t, "a", "A")
	for _, c := range []struct {
		name  string
		ref   Ref
		code  fault.Code
		msg   string
		reads int
	}{
		{"a stored thing is read", ref("a"), "", "", 1},
		{"a missing thing is a 404 that names it", ref("b"), fault.NotFound, `thing "b" not found`, 1},
		{"a malformed id is a 404 without a read", Ref{What: `thing "#"`, Malformed: true}, fault.NotFound, `thing "#" not found`, 0},
		{"a 404 says what Missing says", Ref{Key: thingKey("b"), What: `thing "b"`, Missing: `thing "b" not found in box "x"`}, fault.NotFound, `thing "b" not found in box "x"`, 1},
		{"a malformed id says it too", Ref{What: `thing "#"`, Missing: `thing "#" not found in box "x"`, Malformed: true}, fault.NotFound, `thing "#" not found in box "x"`, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := f.table.reads
			got, err := f.kit.Get(t.Context(), c.ref)
			if c.code != "" {
				wantFault(t, err, c.code, c.msg)
			} else if err != nil || got.Name != "A" || got.Version != 1 {
				t.Fatalf("got %+v, %v; want thing A at version 1", got, err)
			}
			if n := f.table.reads - before; n != c.reads {
				t.Fatalf("%d reads, want %d", n, c.reads)
			}
		})
	}
}

func TestCreate(t *testing.T) {
	t.Run("a new thing is stored at version 1 with its entry", func(t *testing.T) {
		f := newFixture(t)
		got := f.create(t, "a", "A")
		if got.Version != 1 {
			t.Fatalf("version %d, want 1", got.Version)
		}
		es := f.entries(t)
		if len(es) != 1 || es[0].Kind != "thing" || es[0].Title != "flagplane created the thing A" ||
			len(es[0].Accesses) != 1 || es[0].Accesses[0] != (audit.Access{Action: "createThing", Resource: "thing/a"}) {
			t.Fatalf("entries %+v", es)
		}
	})
	t.Run("a thing that exists is a 409 and is left as it was", func(t *testing.T) {
		f := newFixture(t)
		f.create(t, "a", "A")
		_, err := f.kit.Create(t.Context(), ref("a"), &thing{Key: "a", Name: "B"}, Change{})
		wantFault(t, err, fault.Conflict, `thing "a" already exists`)
		_, err = f.kit.Create(t.Context(), ref("a"), &thing{Key: "a", Name: "B"}, Change{Exists: `a thing with key "a" already exists`})
		wantFault(t, err, fault.Conflict, `a thing with key "a" already exists`)
		if got, _ := f.kit.Get(t.Context(), ref("a")); got.Name != "A" || got.Version != 1 {
			t.Fatalf("stored %+v, want A at version 1", got)
		}
		if n := len(f.entries(t)); n != 1 {
			t.Fatalf("%d entries, want 1", n)
		}
	})
	t.Run("the write, its entry and its outbox record are one commit", func(t *testing.T) {
		f := newFixture(t)
		f.create(t, "a", "A")
		if len(f.table.txs) != 1 {
			t.Fatalf("%d transactions, want 1", len(f.table.txs))
		}
		var pks []string
		for _, k := range f.table.txs[0] {
			pks = append(pks, k.PK)
		}
		sort.Strings(pks)
		if fmt.Sprint(pks) != "[AUDIT OUTBOX THING#a]" {
			t.Fatalf("one transaction wrote %v, want the thing, its entry and its outbox record", pks)
		}
		if n := f.count(t, store.OutboxPK); n != 1 {
			t.Fatalf("%d outbox records, want the 1 the queue did not take", n)
		}
	})
	t.Run("a failed commit writes nothing", func(t *testing.T) {
		f := newFixture(t)
		also := store.Check(thingKey("parent"), store.IfExists())
		_, err := f.kit.Create(t.Context(), ref("a"), &thing{Key: "a", Name: "A"}, Change{Also: []store.Write{also}, Exists: "no parent"})
		wantFault(t, err, fault.Conflict, "no parent")
		if _, err := f.kit.Get(t.Context(), ref("a")); !fault.Is(err, fault.NotFound) {
			t.Fatalf("thing stored after a failed commit: %v", err)
		}
		if a, o := f.count(t, store.AuditPK), f.count(t, store.OutboxPK); a != 0 || o != 0 {
			t.Fatalf("%d entries and %d outbox records after a failed commit, want none", a, o)
		}
	})
	t.Run("the entry shows the thing as Shown makes it", func(t *testing.T) {
		f := newFixture(t)
		if _, err := f.kit.Create(t.Context(), ref("a"), &thing{Key: "a", Name: "A", Secret: "s3cret"}, Change{}); err != nil {
			t.Fatal(err)
		}
		e, err := f.log.Get(t.Context(), f.entries(t)[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		var shown thing
		if err := json.Unmarshal(e.CurrentVersion, &shown); err != nil || shown.Secret != "***" {
			t.Fatalf("entry shows %s, want the secret masked", e.CurrentVersion)
		}
	})
}

func TestPatch(t *testing.T) {
	t.Run("a patch is written on the next version with its actions", func(t *testing.T) {
		f := newFixture(t)
		f.create(t, "a", "A")
		got, err := f.kit.Patch(t.Context(), ref("a"), mustPatch(t, `[{"op":"replace","path":"/name","value":"B"}]`), keep)
		if err != nil || got.Name != "B" || got.Version != 2 {
			t.Fatalf("got %+v, %v; want B at version 2", got, err)
		}
		es := f.entries(t)
		if len(es) != 2 || es[0].Title != "flagplane updated the thing B" || es[0].Accesses[0].Action != "updateName" {
			t.Fatalf("newest entry %+v", es[0])
		}
	})
	t.Run("a patch of a read-only field is a 400", func(t *testing.T) {
		f := newFixture(t)
		f.create(t, "a", "A")
		_, err := f.kit.Patch(t.Context(), ref("a"), mustPatch(t, `[{"op":"replace","path":"/key","value":"b"}]`), keep)
		wantFault(t, err, fault.Invalid, `path "/key" cannot be patched: "key" is read-only or not a field of a thing`)
	})
	t.Run("a patch settle refuses writes nothing", func(t *testing.T) {
		f := newFixture(t)
		f.create(t, "a", "A")
		_, err := f.kit.Patch(t.Context(), ref("a"), mustPatch(t, `[{"op":"replace","path":"/name","value":""}]`), keep)
		wantFault(t, err, fault.Invalid, `field "name" may not be empty`)
		if n := len(f.entries(t)); n != 1 {
			t.Fatalf("%d entries, want only the create's", n)
		}
	})
	t.Run("a patch that changes nothing writes nothing", func(t *testing.T) {
		f := newFixture(t)
		f.create(t, "a", "A")
		got, err := f.kit.Patch(t.Context(), ref("a"), mustPatch(t, `[{"op":"replace","path":"/name","value":"A"}]`), keep)
		if err != nil || got.Version != 1 || len(f.table.txs) != 1 {
			t.Fatalf("got %+v, %v after %d transactions; want version 1 after the create's only", got, err, len(f.table.txs))
		}
	})
	t.Run("a patch of a missing thing is a 404", func(t *testing.T) {
		f := newFixture(t)
		_, err := f.kit.Patch(t.Context(), ref("b"), mustPatch(t, `[{"op":"replace","path":"/name","value":"B"}]`), keep)
		wantFault(t, err, fault.NotFound, `thing "b" not found`)
	})
	t.Run("an update on a stale read is a 409 and keeps the other change", func(t *testing.T) {
		f := newFixture(t)
		stale := f.create(t, "a", "A")
		if _, err := f.kit.Patch(t.Context(), ref("a"), mustPatch(t, `[{"op":"replace","path":"/name","value":"B"}]`), keep); err != nil {
			t.Fatal(err)
		}
		next := *stale
		next.Labels = map[string]string{"x": "y"}
		_, err := f.kit.Update(t.Context(), ref("a"), stale, &next, Change{Actions: []string{"updateLabels"}})
		wantFault(t, err, fault.OptimisticLock, `thing "a" was changed by another request; read it again and retry`)
		if got, _ := f.kit.Get(t.Context(), ref("a")); got.Name != "B" || len(got.Labels) != 0 || got.Version != 2 {
			t.Fatalf("stored %+v, want B without labels at version 2", got)
		}
	})
	t.Run("concurrent patches each land or get a 409, and none is lost", func(t *testing.T) {
		f := newFixture(t)
		f.create(t, "a", "A")
		const n = 8
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := fmt.Sprintf(`[{"op":"add","path":"/labels/l%d","value":"v"}]`, i)
				_, errs[i] = f.kit.Patch(context.Background(), ref("a"), mustPatch(t, body), keep)
			}()
		}
		wg.Wait()
		got, err := f.kit.Get(t.Context(), ref("a"))
		if err != nil {
			t.Fatal(err)
		}
		landed := 0
		for i, err := range errs {
			_, kept := got.Labels[fmt.Sprintf("l%d", i)]
			switch {
			case err == nil && !kept:
				t.Fatalf("patch %d answered 200 but its label is lost: %v", i, got.Labels)
			case err == nil:
				landed++
			case !fault.Is(err, fault.OptimisticLock):
				t.Fatalf("patch %d: %v, want a 409 optimistic_locking_error", i, err)
			case kept:
				t.Fatalf("patch %d answered 409 but its label was written", i)
			}
		}
		t.Logf("%d of %d landed", landed, n)
		if landed == 0 || got.Version != int64(1+landed) || len(got.Labels) != landed {
			t.Fatalf("%d patches landed, stored %+v", landed, got)
		}
	})
}

func TestDelete(t *testing.T) {
	t.Run("a thing is deleted with its entry", func(t *testing.T) {
		f := newFixture(t)
		f.create(t, "a", "A")
		if err := f.kit.Delete(t.Context(), ref("a"), Change{}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.kit.Get(t.Context(), ref("a")); !fault.Is(err, fault.NotFound) {
			t.Fatalf("after delete: %v, want a 404", err)
		}
		if es := f.entries(t); es[0].Title != "flagplane deleted the thing A" || es[0].Accesses[0].Action != "deleteThing" {
			t.Fatalf("newest entry %+v", es[0])
		}
	})
	t.Run("a missing thing is a 404", func(t *testing.T) {
		f := newFixture(t)
		wantFault(t, f.kit.Delete(t.Context(), ref("b"), Change{}), fault.NotFound, `thing "b" not found`)
	})
	t.Run("a thing changed since it was read is not deleted", func(t *testing.T) {
		f := newFixture(t)
		stale := f.create(t, "a", "A")
		if _, err := f.kit.Patch(t.Context(), ref("a"), mustPatch(t, `[{"op":"replace","path":"/name","value":"B"}]`), keep); err != nil {
			t.Fatal(err)
		}
		err := f.kit.Remove(t.Context(), ref("a"), stale, Change{})
		wantFault(t, err, fault.OptimisticLock, `thing "a" was changed by another request; try again`)
		if got, err := f.kit.Get(t.Context(), ref("a")); err != nil || got.Name != "B" {
			t.Fatalf("after a refused delete: %+v, %v", got, err)
		}
	})
}
