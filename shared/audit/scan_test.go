package audit

import (
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

// scanLog holds one entry a minute for n minutes from base, oldest first,
// spread over shards partitions.
func scanLog(tb testing.TB, n int, base time.Time, shards int) (*Log, []Entry) {
	tb.Helper()
	table, err := bolt.Open(filepath.Join(tb.TempDir(), "audit.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { table.Close() })
	var at time.Time
	log := New(table, Discard{}, "acct", slog.New(slog.NewTextHandler(io.Discard, nil)), func() time.Time { return at })
	if err := log.SetShards(shards); err != nil {
		tb.Fatal(err)
	}
	var made []Entry
	for i := range n {
		at = base.Add(time.Duration(i) * time.Minute)
		k := store.Key{PK: "T", SK: strconv.Itoa(i)}
		e, err := log.Commit(tb.Context(), Change{
			Writes: []store.Write{store.Put(store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: []byte("{}")}, store.IfNotExists())},
			Kind:   "thing", Resource: "thing/" + k.SK, Actions: []string{"createThing"}, Name: k.SK,
		})
		if err != nil {
			tb.Fatal(err)
		}
		made = append(made, e)
	}
	return log, made
}

func TestScanWalksAWindowWithinItsBudget(t *testing.T) {
	for _, shards := range []int{1, 8} {
		t.Run(fmt.Sprintf("in a log of %d shards", shards), func(t *testing.T) { testScan(t, shards) })
	}
}

func testScan(t *testing.T, shards int) {
	base := time.UnixMilli(1_795_219_200_000)
	log, made := scanLog(t, 30, base, shards)
	minute := time.Minute.Milliseconds()
	collect := func(tb testing.TB, q ScanQuery) ([]string, ScanResult) {
		tb.Helper()
		var names []string
		res, err := log.Scan(tb.Context(), q, func(e Entry) bool { names = append(names, e.Name); return true })
		if err != nil {
			tb.Fatal(err)
		}
		return names, res
	}
	cases := []struct {
		name  string
		q     ScanQuery
		first string
		n     int
		more  bool
	}{
		{"the whole log, newest first", ScanQuery{}, "29", 30, false},
		{"a time window, both ends exclusive", ScanQuery{After: base.UnixMilli() + 10*minute - 1, Before: base.UnixMilli() + 19*minute + 1}, "19", 10, false},
		{"oldest first", ScanQuery{Ascending: true, Before: base.UnixMilli() + 4*minute + 1}, "0", 5, false},
		{"below a cursor", ScanQuery{Below: made[5].ID}, "4", 5, false},
		{"above a cursor", ScanQuery{Above: made[25].ID, Ascending: true}, "26", 4, false},
		{"a budget cut", ScanQuery{Budget: 7}, "29", 7, true},
		{"a window of nothing", ScanQuery{After: 4, Before: 11}, "", 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			names, res := collect(t, c.q)
			if len(names) != c.n || (c.n > 0 && names[0] != c.first) || res.More != c.more || res.Examined != c.n {
				t.Errorf("walked %v (%+v), want %d from %q, more %v", names, res, c.n, c.first, c.more)
			}
		})
	}
	t.Run("a visitor that stops says where", func(t *testing.T) {
		res, err := log.Scan(t.Context(), ScanQuery{}, func(e Entry) bool { return e.Name != "20" })
		if err != nil {
			t.Fatal(err)
		}
		if res.Last != made[20].ID || !res.More || res.Examined != 10 {
			t.Errorf("stopped at %+v, want entry 20 with more to go", res)
		}
	})
	t.Run("a cursor that is not an id is refused", func(t *testing.T) {
		if _, err := log.Scan(t.Context(), ScanQuery{Below: "nope"}, func(Entry) bool { return true }); err == nil {
			t.Error("no error")
		}
	})
	t.Run("counts put each entry in the bucket of its time", func(t *testing.T) {
		after := base.UnixMilli() - 1
		res, err := log.Counts(t.Context(), CountQuery{After: after, Before: after + 30*minute, Buckets: 3})
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != 30 || res.Counts[0] != 10 || res.Counts[1] != 10 || res.Counts[2] != 10 || res.IntervalMs != 10*minute {
			t.Errorf("counts %+v", res)
		}
		only := func(e Entry) bool { return e.Name == "3" || e.Name == "29" }
		res, err = log.Counts(t.Context(), CountQuery{After: after, Before: after + 30*minute, Buckets: 3, Match: only})
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != 2 || res.Counts[0] != 1 || res.Counts[2] != 1 {
			t.Errorf("matched counts %+v", res)
		}
	})
}
