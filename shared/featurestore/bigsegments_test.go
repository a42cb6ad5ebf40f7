package featurestore

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/audit/audittest"
	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/segment/segmenttest"
	"github.com/flagplane/flagplane/shared/store"
)

// failingOnce is a store whose nth WriteMembers fails, once.
type failingOnce struct {
	*memStore
	n, calls int
}

func (f *failingOnce) WriteMembers(ctx context.Context, ref string, included, on bool, keys []string) error {
	f.calls++
	if f.calls == f.n {
		return errors.New("store went away")
	}
	return f.memStore.WriteMembers(ctx, ref, included, on, keys)
}

// bigRig is a segment service with big segment "big" in p/production and a
// store service whose one big segment store integration is st.
type bigRig struct {
	rig  audittest.Rig
	segs *segment.Service
	svc  *Service
	cfg  *Config
}

func newBigRig(tb testing.TB, st Store) bigRig {
	tb.Helper()
	ctx := context.Background()
	segs, r := segmenttest.New(tb, "p", "production")
	if _, err := segs.Create(ctx, "p", "production", segment.Input{Key: "big", Name: "Big", Unbounded: true}); err != nil {
		tb.Fatal(err)
	}
	c := &Config{ID: uuid.NewString(), Capability: BigSegmentStore, IntegrationKey: "redis", ProjectKey: "p", EnvironmentKey: "production",
		Name: "big", On: true, Version: 1, Config: map[string]any{}}
	it, err := encode(c)
	if err != nil {
		tb.Fatal(err)
	}
	if err := r.Table.Put(ctx, it, store.IfNotExists()); err != nil {
		tb.Fatal(err)
	}
	open := func(context.Context, string, Settings) (Store, error) { return st, nil }
	return bigRig{rig: r, segs: segs, svc: NewService(r.Table, r.Log, nil, nil, open, nil, nil, time.Now), cfg: c}
}

// consumeLast hands the newest audit entry to the consumer.
func (b bigRig) consumeLast(tb testing.TB) error {
	tb.Helper()
	res, err := b.rig.Log.List(context.Background(), audit.ListQuery{Limit: 1})
	if err != nil {
		tb.Fatal(err)
	}
	return b.svc.Consume(context.Background(), res.Entries[0], 1)
}

func (m *memStore) holds(set, key, ref string) bool {
	return m.members[set+":"+HashContextKey(key)][ref]
}

func TestMembershipChangesReachTheBigSegmentStore(t *testing.T) {
	ctx := context.Background()
	mem := newMemStore()
	b := newBigRig(t, mem)
	change := func(t *testing.T, in segment.TargetChanges) {
		t.Helper()
		if err := b.segs.UpdateTargets(ctx, "p", "production", "big", "", in); err != nil {
			t.Fatal(err)
		}
		if err := b.consumeLast(t); err != nil {
			t.Fatal(err)
		}
	}
	change(t, segment.TargetChanges{Included: &segment.KeyChanges{Add: []string{"alice", "bob"}}, Excluded: &segment.KeyChanges{Add: []string{"mallory"}}})
	for _, tc := range []struct {
		name, set, key string
		want           bool
	}{
		{"an included key's include set holds the segment's generation", "include", "alice", true},
		{"an excluded key's exclude set holds it", "exclude", "mallory", true},
		{"an excluded key is not included", "include", "mallory", false},
		{"a key never named holds nothing", "include", "nobody", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mem.holds(tc.set, tc.key, "big.g1"); got != tc.want {
				t.Fatalf("%s set of %s holds big.g1: %v, want %v", tc.set, tc.key, got, tc.want)
			}
		})
	}
	t.Run("the synchronized-on time is set after the write", func(t *testing.T) {
		if mem.synced == 0 || time.Since(time.UnixMilli(mem.synced)) > time.Minute {
			t.Fatalf("synchronized on %d", mem.synced)
		}
	})
	t.Run("a removed key leaves the set", func(t *testing.T) {
		change(t, segment.TargetChanges{Included: &segment.KeyChanges{Remove: []string{"bob"}}})
		if mem.holds("include", "bob", "big.g1") || !mem.holds("include", "alice", "big.g1") {
			t.Fatal("bob is still included, or alice no longer")
		}
	})
	t.Run("a full sync of a new store writes every member", func(t *testing.T) {
		fresh := newMemStore()
		b.svc.open = func(context.Context, string, Settings) (Store, error) { return fresh, nil }
		if err := b.svc.Sync(ctx, b.cfg); err != nil {
			t.Fatal(err)
		}
		if !fresh.holds("include", "alice", "big.g1") || !fresh.holds("exclude", "mallory", "big.g1") || fresh.holds("include", "bob", "big.g1") {
			t.Fatalf("fresh store members: %v", fresh.members)
		}
	})
}

func TestABatchSyncCutShortResumesWhereItStopped(t *testing.T) {
	ctx := context.Background()
	st := &failingOnce{memStore: newMemStore(), n: 2}
	b := newBigRig(t, st)
	// Keys of 60 bytes: 12,000 of them are three chunks.
	var keys []string
	for i := range 12000 {
		keys = append(keys, fmt.Sprintf("%060d", i))
	}
	if err := b.segs.UpdateTargets(ctx, "p", "production", "big", "", segment.TargetChanges{Included: &segment.KeyChanges{Add: keys}}); err != nil {
		t.Fatal(err)
	}
	if err := b.consumeLast(t); err == nil {
		t.Fatal("the failed chunk did not fail the delivery")
	}
	if st.synced != 0 {
		t.Fatal("synchronized-on set though the batch is not written")
	}
	if err := b.consumeLast(t); err != nil {
		t.Fatalf("the redelivery: %v", err)
	}
	t.Run("the redelivery writes from the failed chunk on, not the first again", func(t *testing.T) {
		if st.calls != 4 {
			t.Fatalf("%d writes, want 3 chunks and the failed one", st.calls)
		}
	})
	t.Run("every key is in the store after it", func(t *testing.T) {
		for _, k := range []string{keys[0], keys[6000], keys[11999]} {
			if !st.holds("include", k, "big.g1") {
				t.Fatalf("%s is not in the store", k)
			}
		}
		if st.synced == 0 {
			t.Fatal("synchronized-on not set")
		}
	})
}

func TestABatchLeftUnfinishedByItsBudgetIsCarriedOnByTheRefresh(t *testing.T) {
	ctx := context.Background()
	mem := newMemStore()
	b := newBigRig(t, mem)
	var keys []string
	for i := range 12000 {
		keys = append(keys, fmt.Sprintf("%060d", i))
	}
	if err := b.segs.UpdateTargets(ctx, "p", "production", "big", "", segment.TargetChanges{Included: &segment.KeyChanges{Add: keys}}); err != nil {
		t.Fatal(err)
	}
	res, err := b.rig.Log.List(ctx, audit.ListQuery{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	ref, ok := segment.BatchOf(res.Entries[0])
	if !ok || ref.Chunks != 3 {
		t.Fatalf("batch %+v of the entry, want 3 chunks", ref)
	}
	// A delivery whose budget is spent after its first chunk.
	if err := b.svc.syncBatch(ctx, b.cfg, ref, time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	t.Run("the delivery wrote a chunk and left the rest, not yet synchronized", func(t *testing.T) {
		if !mem.holds("include", keys[0], "big.g1") || mem.holds("include", keys[11999], "big.g1") || mem.synced != 0 {
			t.Fatalf("first key %v, last key %v, synchronized on %d", mem.holds("include", keys[0], "big.g1"), mem.holds("include", keys[11999], "big.g1"), mem.synced)
		}
	})
	if err := b.svc.RefreshBigSegments(ctx); err != nil {
		t.Fatal(err)
	}
	t.Run("the refresh wrote the rest", func(t *testing.T) {
		if !mem.holds("include", keys[11999], "big.g1") || mem.synced == 0 {
			t.Fatalf("last key %v, synchronized on %d", mem.holds("include", keys[11999], "big.g1"), mem.synced)
		}
	})
	t.Run("a finished sync is no longer listed", func(t *testing.T) {
		page, err := b.rig.Table.Query(ctx, store.Query{Index: store.IndexGSI1, PK: store.BigSegmentSyncsIndexPK})
		if err != nil || len(page.Items) != 0 {
			t.Fatalf("%d unfinished syncs listed, %v", len(page.Items), err)
		}
	})
}
