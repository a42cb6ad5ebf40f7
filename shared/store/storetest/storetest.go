// Package storetest is the conformance suite every store.Table backend must
// pass, so the embedded and the DynamoDB backends cannot drift apart.
//
// The suite never assumes an empty table: open may hand every subtest the
// same shared table, so each subtest writes under its own random partition
// keys.
package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/flagplane/flagplane/shared/store"
)

// Run runs the whole suite. open returns the table a subtest uses; it may
// return the same table every time.
func Run(t *testing.T, open func(tb testing.TB) store.Table) {
	t.Run("items", func(t *testing.T) { testItems(t, open) })
	t.Run("conditions", func(t *testing.T) { testConditions(t, open) })
	t.Run("query", func(t *testing.T) { testQuery(t, open) })
	t.Run("paging", func(t *testing.T) { testPaging(t, open) })
	t.Run("index", func(t *testing.T) { testIndex(t, open) })
	t.Run("transact", func(t *testing.T) { testTransact(t, open) })
	t.Run("concurrency", func(t *testing.T) { testConcurrency(t, open) })
}

// fixture is one subtest's table and its private key space.
type fixture struct {
	tb  testing.TB
	tbl store.Table
	ctx context.Context
	ns  string
}

func newFixture(tb testing.TB, open func(tb testing.TB) store.Table) *fixture {
	tb.Helper()
	return &fixture{tb: tb, tbl: open(tb), ctx: tb.Context(), ns: "storetest-" + uuid.NewString()}
}

// pk returns a partition key no other subtest, or earlier run, uses.
func (f *fixture) pk(name string) string { return f.ns + "#" + name }

func (f *fixture) put(it store.Item) {
	f.tb.Helper()
	if err := f.tbl.Put(f.ctx, it, store.Cond{}); err != nil {
		f.tb.Fatalf("put %s/%s: %v", it.PK, it.SK, err)
	}
}

func (f *fixture) get(k store.Key) store.Item {
	f.tb.Helper()
	it, err := f.tbl.Get(f.ctx, k)
	if err != nil {
		f.tb.Fatalf("get %s/%s: %v", k.PK, k.SK, err)
	}
	return it
}

func (f *fixture) assertStored(want store.Item) {
	f.tb.Helper()
	assertItem(f.tb, f.get(want.Key()), want)
}

func (f *fixture) assertMissing(k store.Key) {
	f.tb.Helper()
	it, err := f.tbl.Get(f.ctx, k)
	if !errors.Is(err, store.ErrNotFound) {
		f.tb.Fatalf("get %s/%s: got item %+v, error %v; want ErrNotFound", k.PK, k.SK, it, err)
	}
}

func (f *fixture) query(q store.Query) store.Page {
	f.tb.Helper()
	p, err := f.tbl.Query(f.ctx, q)
	if err != nil {
		f.tb.Fatalf("query %+v: %v", q, err)
	}
	return p
}

// queryAll walks every page of q and checks the paging contract on the way:
// every page but the last is full and has a cursor, the last has none.
func (f *fixture) queryAll(q store.Query) []store.Item {
	f.tb.Helper()
	var all []store.Item
	for pages := 1; ; pages++ {
		if pages > 200 {
			f.tb.Fatalf("query %+v: more than 200 pages, cursor does not advance", q)
		}
		p := f.query(q)
		all = append(all, p.Items...)
		if p.Cursor == "" {
			return all
		}
		if q.Limit > 0 && len(p.Items) != q.Limit {
			f.tb.Fatalf("query %+v: page %d has %d items and a cursor, want %d", q, pages, len(p.Items), q.Limit)
		}
		if len(p.Items) == 0 {
			f.tb.Fatalf("query %+v: page %d is empty but has a cursor", q, pages)
		}
		q.Cursor = p.Cursor
	}
}

func assertItem(tb testing.TB, got, want store.Item) {
	tb.Helper()
	if got.PK != want.PK || got.SK != want.SK || got.GSI1PK != want.GSI1PK || got.GSI1SK != want.GSI1SK ||
		got.Version != want.Version || got.TTL != want.TTL || !bytes.Equal(got.Data, want.Data) {
		tb.Fatalf("item mismatch\n got: %s\nwant: %s", describe(got), describe(want))
	}
}

func describe(it store.Item) string {
	data := string(it.Data)
	if len(data) > 64 {
		data = fmt.Sprintf("%.64q... (%d bytes)", data, len(it.Data))
	} else {
		data = fmt.Sprintf("%q", data)
	}
	return fmt.Sprintf("{PK:%q SK:%q GSI1PK:%q GSI1SK:%q Version:%d TTL:%d Data:%s}",
		it.PK, it.SK, it.GSI1PK, it.GSI1SK, it.Version, it.TTL, data)
}

// sortKeys lists the sort keys of items, GSI1SK for index results.
func sortKeys(items []store.Item, index bool) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.SK
		if index {
			out[i] = it.GSI1SK
		}
	}
	return out
}

func primaryKeys(items []store.Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.PK + "/" + it.SK
	}
	return out
}

func randomBytes(tb testing.TB, n int) []byte {
	tb.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		tb.Fatalf("random bytes: %v", err)
	}
	return b
}

func testItems(t *testing.T, open func(tb testing.TB) store.Table) {
	t.Run("get of a missing item is not found", func(t *testing.T) {
		f := newFixture(t, open)
		f.assertMissing(store.Key{PK: f.pk("missing"), SK: "nothing"})
	})

	allBytes := make([]byte, 256)
	for i := range allBytes {
		allBytes[i] = byte(i)
	}
	roundTrips := []struct {
		name string
		item store.Item // PK is a fresh partition; GSI1PK is made unique too
	}{
		{"put then get returns every field", store.Item{
			SK: "full", GSI1PK: "idx", GSI1SK: "full", Version: 7, TTL: 1893456000,
			Data: []byte(`{"name":"full","on":true}`),
		}},
		{"put then get keeps a 100 KB data blob", store.Item{SK: "blob", Version: 1, Data: randomBytes(t, 100*1024)}},
		{"put then get keeps arbitrary bytes in data", store.Item{SK: "bytes", Version: 1, Data: allBytes}},
		{"put then get keeps an item without index keys, expiry or data", store.Item{SK: "bare", Version: 1}},
		{"put then get keeps a version beyond float precision", store.Item{SK: "big", Version: 1<<53 + 1, TTL: 1<<40 + 3}},
		{"put then get keeps non-ascii keys", store.Item{SK: "schlüssel/日本/🚩", GSI1PK: "idx-ü", GSI1SK: "ß", Version: 1}},
	}
	for _, c := range roundTrips {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, open)
			it := c.item
			it.PK = f.pk("item")
			if it.GSI1PK != "" {
				it.GSI1PK = f.pk(it.GSI1PK)
			}
			f.put(it)
			f.assertStored(it)
		})
	}

	t.Run("put replaces every field of an existing item", func(t *testing.T) {
		f := newFixture(t, open)
		old := store.Item{PK: f.pk("item"), SK: "x", GSI1PK: f.pk("idx"), GSI1SK: "x", Version: 1, TTL: 99, Data: []byte("old")}
		f.put(old)
		repl := store.Item{PK: old.PK, SK: old.SK, Version: 2, Data: []byte("new")}
		f.put(repl)
		f.assertStored(repl)
	})

	t.Run("put of an item with an empty key is refused", func(t *testing.T) {
		f := newFixture(t, open)
		for _, it := range []store.Item{{PK: f.pk("item"), SK: ""}, {PK: "", SK: "x"}} {
			if err := f.tbl.Put(f.ctx, it, store.Cond{}); err == nil {
				t.Errorf("put %q/%q: no error", it.PK, it.SK)
			}
		}
	})

	t.Run("get returns a copy the caller may change", func(t *testing.T) {
		f := newFixture(t, open)
		it := store.Item{PK: f.pk("item"), SK: "x", Version: 1, Data: []byte("original")}
		f.put(it)
		got := f.get(it.Key())
		copy(got.Data, "XXXXXXXX")
		f.assertStored(it)
	})
}

func testConditions(t *testing.T, open func(tb testing.TB) store.Table) {
	cases := []struct {
		name   string
		exists bool // an item with version 3 is stored first
		delete bool // the write is a Delete, else a Put of version 4
		cond   store.Cond
		ok     bool
	}{
		{"put always creates a missing item", false, false, store.Cond{}, true},
		{"put always replaces an existing item", true, false, store.Cond{}, true},
		{"put if not exists creates a missing item", false, false, store.IfNotExists(), true},
		{"put if not exists refuses an existing item", true, false, store.IfNotExists(), false},
		{"put if exists replaces an existing item", true, false, store.IfExists(), true},
		{"put if exists refuses a missing item", false, false, store.IfExists(), false},
		{"put if version matches replaces the item", true, false, store.IfVersion(3), true},
		{"put if version is stale is refused", true, false, store.IfVersion(2), false},
		{"put if version is ahead is refused", true, false, store.IfVersion(4), false},
		{"put if version refuses a missing item", false, false, store.IfVersion(0), false},
		{"delete always removes an existing item", true, true, store.Cond{}, true},
		{"delete always of a missing item is not an error", false, true, store.Cond{}, true},
		{"delete if exists removes an existing item", true, true, store.IfExists(), true},
		{"delete if exists refuses a missing item", false, true, store.IfExists(), false},
		{"delete if not exists refuses an existing item", true, true, store.IfNotExists(), false},
		{"delete if not exists of a missing item is not an error", false, true, store.IfNotExists(), true},
		{"delete if version matches removes the item", true, true, store.IfVersion(3), true},
		{"delete if version is stale is refused", true, true, store.IfVersion(2), false},
		{"delete if version refuses a missing item", false, true, store.IfVersion(0), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, open)
			old := store.Item{PK: f.pk("cond"), SK: "item", GSI1PK: f.pk("idx"), GSI1SK: "old", Version: 3, Data: []byte("old")}
			if c.exists {
				f.put(old)
			}
			next := store.Item{PK: old.PK, SK: old.SK, GSI1PK: old.GSI1PK, GSI1SK: "new", Version: 4, Data: []byte("new")}
			var err error
			if c.delete {
				err = f.tbl.Delete(f.ctx, old.Key(), c.cond)
			} else {
				err = f.tbl.Put(f.ctx, next, c.cond)
			}
			switch {
			case c.ok && err != nil:
				t.Fatalf("want success, got %v", err)
			case !c.ok && !errors.Is(err, store.ErrConditionFailed):
				t.Fatalf("want ErrConditionFailed, got %v", err)
			}

			want, present := old, c.exists // a refused write leaves things as they were
			if c.ok && c.delete {
				present = false
			} else if c.ok {
				want, present = next, true
			}
			if present {
				f.assertStored(want)
			} else {
				f.assertMissing(old.Key())
			}
			// The index follows the same outcome.
			idx := f.query(store.Query{Index: store.IndexGSI1, PK: old.GSI1PK})
			wantIdx := []string{}
			if present {
				wantIdx = []string{want.GSI1SK}
			}
			if got := sortKeys(idx.Items, true); !slices.Equal(got, wantIdx) {
				t.Fatalf("index holds %q, want %q", got, wantIdx)
			}
		})
	}
}

// queryCase is one selection run against both the table and the index, over
// items whose sort keys (or GSI1SKs) are querySortKeys.
type queryCase struct {
	name string
	q    store.Query // Index and PK are filled in per run
	want []string
}

var querySortKeys = []string{"a", "a#1", "a#2", "a#3", "b#1", "b#2", "c"}

var queryCases = []queryCase{
	{"with no selection returns the whole partition in order", store.Query{},
		[]string{"a", "a#1", "a#2", "a#3", "b#1", "b#2", "c"}},
	{"with no selection descending returns the whole partition in reverse", store.Query{Descending: true},
		[]string{"c", "b#2", "b#1", "a#3", "a#2", "a#1", "a"}},
	{"by prefix returns only that prefix in order", store.Query{SKPrefix: "a#"},
		[]string{"a#1", "a#2", "a#3"}},
	{"by prefix descending returns only that prefix in reverse", store.Query{SKPrefix: "a#", Descending: true},
		[]string{"a#3", "a#2", "a#1"}},
	{"by a prefix nothing has returns nothing", store.Query{SKPrefix: "zz"}, []string{}},
	{"by a prefix that is a whole key returns it and longer keys", store.Query{SKPrefix: "a"},
		[]string{"a", "a#1", "a#2", "a#3"}},
	{"between bounds includes both bounds", store.Query{SKFrom: "a#2", SKTo: "b#1"},
		[]string{"a#2", "a#3", "b#1"}},
	{"between bounds descending includes both bounds", store.Query{SKFrom: "a#2", SKTo: "b#1", Descending: true},
		[]string{"b#1", "a#3", "a#2"}},
	{"between bounds no key equals returns what lies between", store.Query{SKFrom: "a#15", SKTo: "b"},
		[]string{"a#2", "a#3"}},
	{"between equal bounds returns that one key", store.Query{SKFrom: "b#1", SKTo: "b#1"},
		[]string{"b#1"}},
	{"from a lower bound only runs to the end", store.Query{SKFrom: "b#1"},
		[]string{"b#1", "b#2", "c"}},
	{"from a lower bound only descending runs from the end", store.Query{SKFrom: "b#1", Descending: true},
		[]string{"c", "b#2", "b#1"}},
	{"to an upper bound only runs from the start", store.Query{SKTo: "a#2"},
		[]string{"a", "a#1", "a#2"}},
	{"to an upper bound only descending starts at the bound", store.Query{SKTo: "a#2", Descending: true},
		[]string{"a#2", "a#1", "a"}},
	{"with bounds out of order returns nothing", store.Query{SKFrom: "b#1", SKTo: "a#2"}, []string{}},
	{"with bounds out of order descending returns nothing", store.Query{SKFrom: "b#1", SKTo: "a#2", Descending: true}, []string{}},
	{"with bounds ignores the prefix", store.Query{SKPrefix: "c", SKFrom: "a#3", SKTo: "b#1"},
		[]string{"a#3", "b#1"}},
	{"with a limit returns the first items", store.Query{Limit: 2},
		[]string{"a", "a#1"}},
	{"with a limit descending returns the last items", store.Query{Limit: 2, Descending: true},
		[]string{"c", "b#2"}},
}

func testQuery(t *testing.T, open func(tb testing.TB) store.Table) {
	for _, index := range []bool{false, true} {
		where := "on the table"
		if index {
			where = "on the index"
		}
		t.Run(where, func(t *testing.T) {
			f := newFixture(t, open)
			part := seedQueryItems(f, index)
			for _, c := range queryCases {
				t.Run("a query "+c.name, func(t *testing.T) {
					q := c.q
					q.PK = part
					if index {
						q.Index = store.IndexGSI1
					}
					f := *f
					f.tb = t
					// One page: the limited cases check the first page only.
					p := f.query(q)
					if got := sortKeys(p.Items, index); !slices.Equal(got, c.want) {
						t.Fatalf("got %q, want %q", got, c.want)
					}
					if more := q.Limit > 0 && q.Limit < len(querySortKeys); more != (p.Cursor != "") {
						t.Fatalf("cursor %q, want one: %v", p.Cursor, more)
					}
				})
			}
		})
	}

	t.Run("query results carry every field", func(t *testing.T) {
		f := newFixture(t, open)
		it := store.Item{PK: f.pk("q"), SK: "x", GSI1PK: f.pk("idx"), GSI1SK: "y", Version: 5, TTL: 1893456000, Data: []byte(`{"a":1}`)}
		f.put(it)
		for _, q := range []store.Query{{PK: it.PK}, {Index: store.IndexGSI1, PK: it.GSI1PK}} {
			p := f.query(q)
			if len(p.Items) != 1 || p.Cursor != "" {
				t.Fatalf("query %+v: got %d items, cursor %q; want 1 item, no cursor", q, len(p.Items), p.Cursor)
			}
			assertItem(t, p.Items[0], it)
		}
	})

	t.Run("a query of an empty partition returns nothing and no cursor", func(t *testing.T) {
		f := newFixture(t, open)
		p := f.query(store.Query{PK: f.pk("empty"), Limit: 5})
		if len(p.Items) != 0 || p.Cursor != "" {
			t.Fatalf("got %d items, cursor %q", len(p.Items), p.Cursor)
		}
	})

	t.Run("a deleted item no longer shows in queries", func(t *testing.T) {
		f := newFixture(t, open)
		part := f.pk("q")
		for _, sk := range []string{"1", "2", "3"} {
			f.put(store.Item{PK: part, SK: sk, Version: 1})
		}
		if err := f.tbl.Delete(f.ctx, store.Key{PK: part, SK: "2"}, store.Cond{}); err != nil {
			t.Fatal(err)
		}
		if got := sortKeys(f.queryAll(store.Query{PK: part}), false); !slices.Equal(got, []string{"1", "3"}) {
			t.Fatalf("got %q", got)
		}
	})
}

// seedQueryItems stores one item per querySortKeys entry and neighbours that
// must never show up, and returns the partition (or index partition) to query.
func seedQueryItems(f *fixture, index bool) string {
	f.tb.Helper()
	part := f.pk("query")
	// Partitions that share a prefix with part, on either side of it.
	neighbours := []string{part + "#", part + "0", part[:len(part)-1]}
	for i, sk := range querySortKeys {
		if index {
			it := store.Item{PK: f.pk(fmt.Sprintf("item%d", i)), SK: "item", GSI1PK: part, GSI1SK: sk, Version: 1}
			f.put(it)
			for j, n := range neighbours {
				it.SK, it.GSI1PK = fmt.Sprintf("n%d", j), n
				f.put(it)
			}
			continue
		}
		f.put(store.Item{PK: part, SK: sk, Version: 1})
		for _, n := range neighbours {
			f.put(store.Item{PK: n, SK: sk, Version: 1})
		}
	}
	return part
}

func testPaging(t *testing.T, open func(tb testing.TB) store.Table) {
	const n = 25
	for _, index := range []bool{false, true} {
		where := "on the table"
		if index {
			where = "on the index"
		}
		t.Run(where, func(t *testing.T) {
			f := newFixture(t, open)
			part := f.pk("paging")
			q := store.Query{PK: part, SKPrefix: "item#"}
			var want []store.Item
			put := func(sk string, i int) store.Item {
				it := store.Item{PK: part, SK: sk, Version: int64(i + 1)}
				if index {
					// Pairs share a GSI1SK: ties must not break paging. Each
					// item lives in its own table partition.
					it = store.Item{PK: f.pk(fmt.Sprintf("p%02d", i)), SK: sk, GSI1PK: part, GSI1SK: sk, Version: int64(i + 1)}
					if sk != "a-before" && sk != "z-after" {
						it.GSI1SK = fmt.Sprintf("item#%02d", i/2)
					}
				}
				f.put(it)
				return it
			}
			// Items just outside the prefix on both sides, so a full last
			// page is followed by an item that must not count as more.
			put("a-before", 100)
			put("z-after", 101)
			for i := range n {
				want = append(want, put(fmt.Sprintf("item#%02d", i), i))
			}
			if index {
				q.Index = store.IndexGSI1
			}

			for _, desc := range []bool{false, true} {
				for _, limit := range []int{3, 5, n, 100, 0} {
					name := fmt.Sprintf("walking pages of %d ascending visits every item once in order", limit)
					if desc {
						name = fmt.Sprintf("walking pages of %d descending visits every item once in order", limit)
					}
					t.Run(name, func(t *testing.T) {
						f := *f
						f.tb = t
						q := q
						q.Limit, q.Descending = limit, desc
						got := f.queryAll(q)
						assertSameItems(t, got, want, index, desc)
					})
				}
			}

			t.Run("a limit larger than the count returns everything with no cursor", func(t *testing.T) {
				f := *f
				f.tb = t
				lq := q
				lq.Limit = n + 1
				p := f.query(lq)
				if len(p.Items) != n || p.Cursor != "" {
					t.Fatalf("got %d items, cursor %q; want %d, none", len(p.Items), p.Cursor, n)
				}
			})

			t.Run("a limit equal to the count returns everything with no cursor", func(t *testing.T) {
				f := *f
				f.tb = t
				lq := q
				lq.Limit = n
				p := f.query(lq)
				if len(p.Items) != n || p.Cursor != "" {
					t.Fatalf("got %d items, cursor %q; want %d, none", len(p.Items), p.Cursor, n)
				}
			})

			first := q
			first.Limit = 5
			page := f.query(first)
			if page.Cursor == "" {
				t.Fatal("first page has no cursor")
			}
			// Change the first character: the last one of a base64 token may
			// only carry padding bits, so changing it might change nothing.
			altered := []byte(page.Cursor)
			if altered[0] == 'A' {
				altered[0] = 'B'
			} else {
				altered[0] = 'A'
			}
			bad := []struct {
				name   string
				cursor string
				q      func(q store.Query) store.Query
			}{
				{"an altered cursor is refused", string(altered), nil},
				{"a cursor that is not one is refused", "not-a-cursor", nil},
				{"a cursor used with the other direction is refused", page.Cursor,
					func(q store.Query) store.Query { q.Descending = true; return q }},
				{"a cursor used with another prefix is refused", page.Cursor,
					func(q store.Query) store.Query { q.SKPrefix = "item#1"; return q }},
				{"a cursor used with bounds is refused", page.Cursor,
					func(q store.Query) store.Query { q.SKFrom = "item#"; return q }},
				{"a cursor used on another partition is refused", page.Cursor,
					func(q store.Query) store.Query { q.PK = f.pk("other"); return q }},
				{"a cursor used on the other of table and index is refused", page.Cursor,
					func(q store.Query) store.Query {
						if q.Index == "" {
							q.Index = store.IndexGSI1
						} else {
							q.Index = ""
						}
						return q
					}},
			}
			for _, c := range bad {
				t.Run(c.name, func(t *testing.T) {
					bq := first
					if c.q != nil {
						bq = c.q(bq)
					}
					bq.Cursor = c.cursor
					p, err := f.tbl.Query(t.Context(), bq)
					if !errors.Is(err, store.ErrBadCursor) {
						t.Fatalf("got %d items, error %v; want ErrBadCursor", len(p.Items), err)
					}
				})
			}
		})
	}
}

// assertSameItems checks got is want, walked in the query's order. On the
// index only the GSI1SK order is fixed; ties may come in any order, as in
// DynamoDB.
func assertSameItems(tb testing.TB, got, want []store.Item, index, desc bool) {
	tb.Helper()
	if len(got) != len(want) {
		tb.Fatalf("got %d items %q, want %d", len(got), primaryKeys(got), len(want))
	}
	ordered := slices.IsSorted(sortKeys(got, index))
	if desc {
		ordered = slices.IsSortedFunc(sortKeys(got, index), func(a, b string) int { return -cmpString(a, b) })
	}
	if !ordered {
		tb.Fatalf("items out of order: %q", sortKeys(got, index))
	}
	byKey := make(map[store.Key]store.Item, len(want))
	for _, it := range want {
		byKey[it.Key()] = it
	}
	for _, it := range got {
		w, ok := byKey[it.Key()]
		if !ok {
			tb.Fatalf("item %s/%s returned twice or not expected; got %q", it.PK, it.SK, primaryKeys(got))
		}
		assertItem(tb, it, w)
		delete(byKey, it.Key())
	}
	if !index {
		wantOrder := primaryKeys(want)
		if desc {
			slices.Reverse(wantOrder)
		}
		if g := primaryKeys(got); !slices.Equal(g, wantOrder) {
			tb.Fatalf("got order %q, want %q", g, wantOrder)
		}
	}
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func testIndex(t *testing.T, open func(tb testing.TB) store.Table) {
	indexKeys := func(f *fixture, gsi1pk string) []string {
		f.tb.Helper()
		return primaryKeys(f.queryAll(store.Query{Index: store.IndexGSI1, PK: gsi1pk}))
	}

	t.Run("items without an index partition key are absent from the index", func(t *testing.T) {
		f := newFixture(t, open)
		part, idx := f.pk("items"), f.pk("idx")
		f.put(store.Item{PK: part, SK: "in1", GSI1PK: idx, GSI1SK: "1", Version: 1})
		f.put(store.Item{PK: part, SK: "out", GSI1SK: "2", Version: 1})
		f.put(store.Item{PK: part, SK: "in2", GSI1PK: idx, GSI1SK: "3", Version: 1})
		if got, want := indexKeys(f, idx), []string{part + "/in1", part + "/in2"}; !slices.Equal(got, want) {
			t.Fatalf("index holds %q, want %q", got, want)
		}
	})

	t.Run("moving an item's index keys on put updates the index", func(t *testing.T) {
		f := newFixture(t, open)
		idxA, idxB := f.pk("idxA"), f.pk("idxB")
		it := store.Item{PK: f.pk("item"), SK: "x", GSI1PK: idxA, GSI1SK: "1", Version: 1, Data: []byte("v1")}
		f.put(it)

		steps := []struct {
			name       string
			gsi1pk     string
			gsi1sk     string
			wantA      []string
			wantBSorts []string
		}{
			{"to another index partition", idxB, "2", nil, []string{"2"}},
			{"to another index sort key", idxB, "3", nil, []string{"3"}},
			{"out of the index", "", "", nil, nil},
			{"back into the index", idxA, "4", []string{"4"}, nil},
		}
		for i, s := range steps {
			it.GSI1PK, it.GSI1SK, it.Version = s.gsi1pk, s.gsi1sk, int64(i+2)
			it.Data = fmt.Appendf(nil, "v%d", i+2)
			f.put(it)
			a := f.queryAll(store.Query{Index: store.IndexGSI1, PK: idxA})
			b := f.queryAll(store.Query{Index: store.IndexGSI1, PK: idxB})
			if got := sortKeys(a, true); !slices.Equal(got, s.wantA) {
				t.Fatalf("after moving %s, index partition A holds %q, want %q", s.name, got, s.wantA)
			}
			if got := sortKeys(b, true); !slices.Equal(got, s.wantBSorts) {
				t.Fatalf("after moving %s, index partition B holds %q, want %q", s.name, got, s.wantBSorts)
			}
			for _, got := range append(a, b...) {
				assertItem(t, got, it)
			}
		}
	})

	t.Run("deleting an item removes it from the index", func(t *testing.T) {
		f := newFixture(t, open)
		idx := f.pk("idx")
		keep := store.Item{PK: f.pk("keep"), SK: "x", GSI1PK: idx, GSI1SK: "1", Version: 1}
		gone := store.Item{PK: f.pk("gone"), SK: "x", GSI1PK: idx, GSI1SK: "2", Version: 1}
		f.put(keep)
		f.put(gone)
		if err := f.tbl.Delete(f.ctx, gone.Key(), store.IfExists()); err != nil {
			t.Fatal(err)
		}
		if got, want := indexKeys(f, idx), []string{keep.PK + "/x"}; !slices.Equal(got, want) {
			t.Fatalf("index holds %q, want %q", got, want)
		}
	})

	t.Run("an index partition spans items of many table partitions", func(t *testing.T) {
		f := newFixture(t, open)
		idx := f.pk("idx")
		var want []string
		for i := range 4 {
			it := store.Item{PK: f.pk(fmt.Sprintf("p%d", 3-i)), SK: "x", GSI1PK: idx, GSI1SK: fmt.Sprintf("%d", i), Version: 1}
			f.put(it)
			want = append(want, it.PK+"/x")
		}
		if got := indexKeys(f, idx); !slices.Equal(got, want) {
			t.Fatalf("index holds %q, want %q", got, want)
		}
	})
}

func testTransact(t *testing.T, open func(tb testing.TB) store.Table) {
	// setup stores B, C and D at version 1 and returns the items of a
	// transaction that creates A, bumps B, deletes C, checks D and checks
	// that E is missing.
	type txFixture struct {
		a, b, c, d, e store.Item
	}
	setup := func(f *fixture) txFixture {
		f.tb.Helper()
		part := f.pk("tx")
		idx := f.pk("idx")
		x := txFixture{
			a: store.Item{PK: part, SK: "a", GSI1PK: idx, GSI1SK: "a", Version: 1, Data: []byte("a1")},
			b: store.Item{PK: part, SK: "b", GSI1PK: idx, GSI1SK: "b", Version: 1, Data: []byte("b1")},
			c: store.Item{PK: part, SK: "c", GSI1PK: idx, GSI1SK: "c", Version: 1, Data: []byte("c1")},
			d: store.Item{PK: part, SK: "d", Version: 1, Data: []byte("d1")},
			e: store.Item{PK: part, SK: "e"},
		}
		f.put(x.b)
		f.put(x.c)
		f.put(x.d)
		return x
	}
	writes := func(x txFixture) []store.Write {
		b2 := x.b
		b2.Version, b2.Data, b2.GSI1SK = 2, []byte("b2"), "b2"
		return []store.Write{
			store.Put(x.a, store.IfNotExists()),
			store.Put(b2, store.IfVersion(1)),
			store.Delete(x.c.Key(), store.IfExists()),
			store.Check(x.d.Key(), store.IfVersion(1)),
			store.Check(x.e.Key(), store.IfNotExists()),
		}
	}
	assertUntouched := func(f *fixture, x txFixture) {
		f.tb.Helper()
		f.assertMissing(x.a.Key())
		f.assertStored(x.b)
		f.assertStored(x.c)
		f.assertStored(x.d)
		f.assertMissing(x.e.Key())
		idx := f.queryAll(store.Query{Index: store.IndexGSI1, PK: x.b.GSI1PK})
		if got, want := sortKeys(idx, true), []string{"b", "c"}; !slices.Equal(got, want) {
			f.tb.Fatalf("index holds %q, want %q", got, want)
		}
	}

	t.Run("transact applies every put, delete and check", func(t *testing.T) {
		f := newFixture(t, open)
		x := setup(f)
		ws := writes(x)
		if err := f.tbl.Transact(f.ctx, ws); err != nil {
			t.Fatal(err)
		}
		f.assertStored(x.a)
		f.assertStored(ws[1].Item)
		f.assertMissing(x.c.Key())
		f.assertStored(x.d)
		f.assertMissing(x.e.Key())
		idx := f.queryAll(store.Query{Index: store.IndexGSI1, PK: x.a.GSI1PK})
		if got, want := sortKeys(idx, true), []string{"a", "b2"}; !slices.Equal(got, want) {
			t.Fatalf("index holds %q, want %q", got, want)
		}
	})

	failures := []struct {
		name  string
		index int
		cond  store.Cond
	}{
		{"transact writes nothing when the first write's condition fails", 0, store.IfExists()},
		{"transact writes nothing when a put's version is stale", 1, store.IfVersion(7)},
		{"transact writes nothing when a delete's condition fails", 2, store.IfNotExists()},
		{"transact writes nothing when a check fails", 3, store.IfVersion(9)},
		{"transact writes nothing when the last write's condition fails", 4, store.IfExists()},
	}
	for _, c := range failures {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, open)
			x := setup(f)
			ws := writes(x)
			ws[c.index].Cond = c.cond
			err := f.tbl.Transact(f.ctx, ws)
			var txErr *store.TxError
			if !errors.As(err, &txErr) {
				t.Fatalf("want *store.TxError, got %v", err)
			}
			if !errors.Is(err, store.ErrConditionFailed) {
				t.Fatalf("error %v does not wrap ErrConditionFailed", err)
			}
			if txErr.Index != c.index || txErr.Key != ws[c.index].Item.Key() {
				t.Fatalf("TxError names write %d (%v), want %d (%v)", txErr.Index, txErr.Key, c.index, ws[c.index].Item.Key())
			}
			assertUntouched(f, x)
		})
	}

	t.Run("transact of a single write behaves like that write", func(t *testing.T) {
		f := newFixture(t, open)
		it := store.Item{PK: f.pk("tx"), SK: "one", Version: 1}
		if err := f.tbl.Transact(f.ctx, []store.Write{store.Put(it, store.IfNotExists())}); err != nil {
			t.Fatal(err)
		}
		f.assertStored(it)
		err := f.tbl.Transact(f.ctx, []store.Write{store.Put(it, store.IfNotExists())})
		if !errors.Is(err, store.ErrConditionFailed) {
			t.Fatalf("second put if not exists: want ErrConditionFailed, got %v", err)
		}
	})

	invalid := []struct {
		name     string
		validate bool // the error is ValidateWrites', returned as is
		writes   func(f *fixture) []store.Write
	}{
		{"transact refuses an empty write list", true, func(f *fixture) []store.Write { return nil }},
		{"transact refuses more than the maximum writes", true, func(f *fixture) []store.Write {
			ws := make([]store.Write, store.MaxWrites+1)
			for i := range ws {
				ws[i] = store.Put(store.Item{PK: f.pk("tx"), SK: fmt.Sprintf("%03d", i), Version: 1}, store.Cond{})
			}
			return ws
		}},
		{"transact refuses the same key twice", true, func(f *fixture) []store.Write {
			it := store.Item{PK: f.pk("tx"), SK: "twice", Version: 1}
			return []store.Write{store.Put(it, store.Cond{}), store.Check(it.Key(), store.IfExists())}
		}},
		{"transact refuses a check without a condition", false, func(f *fixture) []store.Write {
			it := store.Item{PK: f.pk("tx"), SK: "put", Version: 1}
			return []store.Write{store.Put(it, store.Cond{}), store.Check(store.Key{PK: f.pk("tx"), SK: "check"}, store.Cond{})}
		}},
	}
	for _, c := range invalid {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, open)
			ws := c.writes(f)
			err := f.tbl.Transact(f.ctx, ws)
			if err == nil || errors.Is(err, store.ErrConditionFailed) {
				t.Fatalf("want a validation error, got %v", err)
			}
			if want := store.ValidateWrites(ws); c.validate && err.Error() != want.Error() {
				t.Fatalf("got error %q, want ValidateWrites' %q", err, want)
			}
			if p := f.query(store.Query{PK: f.pk("tx")}); len(p.Items) != 0 {
				t.Fatalf("%d items written", len(p.Items))
			}
		})
	}
}

func testConcurrency(t *testing.T, open func(tb testing.TB) store.Table) {
	t.Run("of 8 concurrent puts at the same version exactly one wins", func(t *testing.T) {
		f := newFixture(t, open)
		it := store.Item{PK: f.pk("race"), SK: "x", Version: 1, Data: []byte("start")}
		f.put(it)

		const writers = 8
		errs := make([]error, writers)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range writers {
			wg.Go(func() {
				next := it
				next.Version, next.Data = 2, fmt.Appendf(nil, "writer %d", i)
				<-start
				errs[i] = f.tbl.Put(f.ctx, next, store.IfVersion(1))
			})
		}
		close(start)
		wg.Wait()

		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("writers %d and %d both succeeded", winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, store.ErrConditionFailed):
				t.Fatalf("writer %d: want ErrConditionFailed, got %v", i, err)
			}
		}
		if winner < 0 {
			t.Fatal("no writer succeeded")
		}
		it.Version, it.Data = 2, fmt.Appendf(nil, "writer %d", winner)
		f.assertStored(it)
	})
}
