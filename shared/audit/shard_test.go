package audit

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/changefeed"
	"github.com/flagplane/flagplane/shared/store"
)

func TestShardCounts(t *testing.T) {
	for _, tc := range []struct {
		n  int
		ok bool
	}{{1, true}, {2, true}, {32, true}, {64, true}, {0, false}, {3, false}, {24, false}, {128, false}, {-4, false}} {
		t.Run(fmt.Sprintf("GIVEN %d shards THEN SetShards accepts it: %v", tc.n, tc.ok), func(t *testing.T) {
			log, _ := scanLog(t, 0, time.Now(), 1)
			if err := log.SetShards(tc.n); (err == nil) != tc.ok {
				t.Errorf("SetShards(%d) = %v", tc.n, err)
			}
		})
	}
}

// At a sustained rate every shard takes its share: the ids' random tails
// pick the shard, whatever the times.
func TestShardsTakeEvenShares(t *testing.T) {
	const n, ids = 32, 100_000
	per := map[string]int{}
	at := time.UnixMilli(1_795_219_200_000)
	for i := range ids {
		id, err := NewID(at.Add(time.Duration(i/10) * time.Millisecond)) // 10,000 a second
		if err != nil {
			t.Fatal(err)
		}
		per[store.AuditShardKey(id, n).PK]++
	}
	if len(per) != n {
		t.Fatalf("%d partitions used, want %d", len(per), n)
	}
	fair := ids / n
	for pk, c := range per {
		if c < fair*85/100 || c > fair*115/100 {
			t.Errorf("%s holds %d of %d entries, want within 15%% of %d", pk, c, ids, fair)
		}
	}
}

func TestShardedLog(t *testing.T) {
	base := time.UnixMilli(1_795_219_200_000)
	log, made := scanLog(t, 64, base, 8)
	ctx := t.Context()
	ids := func(es []Entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.ID)
		}
		return out
	}
	newestFirst := ids(made)
	slices.Reverse(newestFirst)

	t.Run("GIVEN 64 changes in 8 shards THEN they spread over the partitions", func(t *testing.T) {
		total, used := 0, 0
		for i := range 8 {
			page, err := log.table.Query(ctx, store.Query{PK: store.AuditShardPK(i)})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Items) > 0 {
				used++
			}
			total += len(page.Items)
		}
		// Random ids leave fewer than 5 of 8 partitions used once in about 1e17 runs.
		if total != 64 || used < 5 {
			t.Errorf("%d entries in %d partitions, want 64 in at least 5", total, used)
		}
	})
	t.Run("GIVEN a sharded log THEN pages of the list read newest first across shards", func(t *testing.T) {
		var got []string
		q := ListQuery{Limit: 10}
		for range 10 {
			res, err := log.List(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, ids(res.Entries)...)
			if res.Next == "" {
				break
			}
			q.Cursor = res.Next
		}
		if !slices.Equal(got, newestFirst) {
			t.Errorf("listed %d entries %v, want the 64 newest first", len(got), got)
		}
	})
	t.Run("GIVEN more shards than when entries were written THEN every entry is still found", func(t *testing.T) {
		if err := log.SetShards(32); err != nil {
			t.Fatal(err)
		}
		for _, e := range made {
			if _, err := log.Get(ctx, e.ID); err != nil {
				t.Fatalf("get %s after growing to 32 shards: %v", e.ID, err)
			}
		}
		res, err := log.List(ctx, ListQuery{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(res.Entries), newestFirst) {
			t.Errorf("listed %d entries after growing, want the 64", len(res.Entries))
		}
		if _, err := log.Get(ctx, "0123456789abcdef01234567"); err == nil {
			t.Error("an id never written was found")
		}
	})
	t.Run("GIVEN a sharded log THEN the change feed visits every entry once", func(t *testing.T) {
		seen := map[string]int{}
		err := changefeed.AuditLog{Table: log.table, Shards: log.Shards()}.Since(ctx, base, func(id string) { seen[id]++ })
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range made {
			if seen[e.ID] != 1 {
				t.Errorf("entry %s visited %d times", e.ID, seen[e.ID])
			}
		}
		if len(seen) != len(made) {
			t.Errorf("visited %d ids, want %d", len(seen), len(made))
		}
	})
}
