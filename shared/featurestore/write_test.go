package featurestore

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

// memStore is a Store in memory with the same conditions as the real ones.
type memStore struct {
	items map[string]map[string]Item
	puts  int
	// members are the big segment sets: "include:<hash>" or
	// "exclude:<hash>" -> refs; synced the synchronized-on time.
	members map[string]map[string]bool
	synced  int64
}

func newMemStore() *memStore {
	return &memStore{items: map[string]map[string]Item{}, members: map[string]map[string]bool{}}
}

func (m *memStore) WriteMembers(_ context.Context, ref string, included, on bool, keys []string) error {
	set := "exclude:"
	if included {
		set = "include:"
	}
	for _, k := range keys {
		name := set + HashContextKey(k)
		if m.members[name] == nil {
			m.members[name] = map[string]bool{}
		}
		if on {
			m.members[name][ref] = true
		} else {
			delete(m.members[name], ref)
		}
	}
	return nil
}

func (m *memStore) Items(_ context.Context, kind string) (map[string]Item, error) {
	out := map[string]Item{}
	for k, v := range m.items[kind] {
		out[k] = v
	}
	return out, nil
}

func (m *memStore) Put(_ context.Context, kind, key string, it Item, expect int) (bool, error) {
	old, ok := m.items[kind][key]
	if expect < 0 && ok && old.Version >= it.Version || expect >= 0 && (!ok || old.Version != expect) {
		return false, nil
	}
	if m.items[kind] == nil {
		m.items[kind] = map[string]Item{}
	}
	m.items[kind][key] = it
	m.puts++
	return true, nil
}

func (m *memStore) Delete(_ context.Context, kind, key string, expect int) (bool, error) {
	old, ok := m.items[kind][key]
	if !ok || old.Version != expect {
		return false, nil
	}
	delete(m.items[kind], key)
	return true, nil
}

func (m *memStore) MarkInitialized(context.Context) error               { return nil }
func (m *memStore) SetSynchronizedOn(_ context.Context, ms int64) error { m.synced = ms; return nil }
func (m *memStore) SynchronizedOn(context.Context) (int64, error)       { return m.synced, nil }
func (m *memStore) Probe(context.Context) error                         { return nil }
func (m *memStore) Close() error                                        { return nil }

func item(v int, body string) Item {
	return Item{Version: v, JSON: []byte(fmt.Sprintf(`{"version":%d,"v":%q}`, v, body))}
}

func TestWriteKeepsTheStoreEqualToTheDataSet(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		stored   map[string]Item
		want     map[string]Item
		result   map[string]Item
		wantPuts int
	}{
		{"an empty store gets every item",
			nil, map[string]Item{"a": item(1, "a"), "b": item(4, "b")},
			map[string]Item{"a": item(1, "a"), "b": item(4, "b")}, 2},
		{"an unchanged item is not written again",
			map[string]Item{"a": item(2, "a")}, map[string]Item{"a": item(2, "a")},
			map[string]Item{"a": item(2, "a")}, 0},
		{"a newer version replaces the stored one",
			map[string]Item{"a": item(2, "old")}, map[string]Item{"a": item(3, "new")},
			map[string]Item{"a": item(3, "new")}, 1},
		{"a flag deleted and created again replaces the higher stored version",
			map[string]Item{"a": item(7, "first life")}, map[string]Item{"a": item(1, "second life")},
			map[string]Item{"a": item(1, "second life")}, 1},
		{"an item the data set lacks is removed",
			map[string]Item{"a": item(2, "a"), "gone": item(5, "gone")}, map[string]Item{"a": item(2, "a")},
			map[string]Item{"a": item(2, "a")}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newMemStore()
			st.items[KindFeatures] = map[string]Item{}
			for k, v := range tc.stored {
				st.items[KindFeatures][k] = v
			}
			if err := write(ctx, st, KindFeatures, tc.want); err != nil {
				t.Fatal(err)
			}
			got := st.items[KindFeatures]
			if len(got) != len(tc.result) {
				t.Fatalf("store holds %d items, want %d: %v", len(got), len(tc.result), got)
			}
			for k, w := range tc.result {
				if g := got[k]; g.Version != w.Version || string(g.JSON) != string(w.JSON) {
					t.Fatalf("%s: stored %d %s, want %d %s", k, g.Version, g.JSON, w.Version, w.JSON)
				}
			}
			if st.puts != tc.wantPuts {
				t.Fatalf("%d writes, want %d", st.puts, tc.wantPuts)
			}
		})
	}
}

// raceStore changes an item between write's read and its put, as another
// writer of the same store would.
type raceStore struct {
	*memStore
	before func()
}

func (r raceStore) Put(ctx context.Context, kind, key string, it Item, expect int) (bool, error) {
	if r.before != nil {
		r.before()
	}
	return r.memStore.Put(ctx, kind, key, it, expect)
}

func TestWriteNeverReplacesANewerItemWrittenMeanwhile(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		stored Item
		ours   Item
		theirs Item
	}{
		{"an upsert loses to a newer version written meanwhile", item(1, "old"), item(2, "ours"), item(3, "theirs")},
		{"a replacement of a recreated flag loses to any change meanwhile", item(7, "first life"), item(1, "ours"), item(8, "theirs")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newMemStore()
			st.items[KindFeatures] = map[string]Item{"a": tc.stored}
			rs := raceStore{memStore: st, before: func() { st.items[KindFeatures]["a"] = tc.theirs }}
			if err := write(ctx, rs, KindFeatures, map[string]Item{"a": tc.ours}); err != nil {
				t.Fatal(err)
			}
			if got := st.items[KindFeatures]["a"]; got.Version != tc.theirs.Version {
				t.Fatalf("stored version %d, want the newer %d kept", got.Version, tc.theirs.Version)
			}
		})
	}
}

func TestSyncsOfOneConfigurationNeverOverlap(t *testing.T) {
	table := newLeaseTable(t)
	s := &Service{table: table, logger: discardLogger(), now: timeNow}
	var running, most atomic.Int32
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.withLease(context.Background(), "cfg", func() error {
				n := running.Add(1)
				for {
					m := most.Load()
					if n <= m || most.CompareAndSwap(m, n) {
						break
					}
				}
				time.Sleep(20 * time.Millisecond)
				running.Add(-1)
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Fatalf("%d syncs ran at once, want 1", most.Load())
	}
	t.Run("a lease left by a crashed sync is taken over once it expires", func(t *testing.T) {
		k := store.FeatureStoreLeaseKey("crashed")
		if err := table.Put(context.Background(), store.Item{PK: k.PK, SK: k.SK, Version: 3, TTL: time.Now().Add(-time.Second).Unix()}, store.IfNotExists()); err != nil {
			t.Fatal(err)
		}
		ran := false
		if err := s.withLease(context.Background(), "crashed", func() error { ran = true; return nil }); err != nil || !ran {
			t.Fatalf("ran %v, err %v", ran, err)
		}
	})
}

func newLeaseTable(tb testing.TB) store.Table {
	tb.Helper()
	bt, err := bolt.Open(filepath.Join(tb.TempDir(), "lease.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { bt.Close() })
	return bt
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

var timeNow = time.Now

// syncedStore answers a fixed synchronized-on time, or an error.
type syncedStore struct {
	*memStore
	ms  int64
	err error
}

func (s syncedStore) SynchronizedOn(context.Context) (int64, error) { return s.ms, s.err }

func TestBigSegmentStatusFollowsTheStoresSynchronizedOnTime(t *testing.T) {
	now := time.UnixMilli(1700000000000)
	for _, tc := range []struct {
		name             string
		ms               int64
		err              error
		available, stale bool
		errors           int
	}{
		{"synchronized a minute ago is available", now.Add(-time.Minute).UnixMilli(), nil, true, false, 0},
		{"synchronized three minutes ago is potentially stale", now.Add(-3 * time.Minute).UnixMilli(), nil, false, true, 0},
		{"never synchronized is potentially stale", 0, nil, false, true, 0},
		{"a store that does not answer is potentially stale, with the error", 0, fmt.Errorf("connection refused"), false, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			open := func(context.Context, string, Settings) (Store, error) {
				return syncedStore{memStore: newMemStore(), ms: tc.ms, err: tc.err}, nil
			}
			s := &Service{table: newLeaseTable(t), open: open, logger: discardLogger(), now: func() time.Time { return now }}
			st, err := s.BigSegmentStatus(context.Background(), &Config{ID: "c", IntegrationKey: Redis, Config: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			if st.Available != tc.available || st.PotentiallyStale != tc.stale || len(st.Errors) != tc.errors {
				t.Fatalf("status %+v", st)
			}
			if tc.err == nil && int64(st.LastSync) != tc.ms {
				t.Fatalf("lastSync %d, want %d", st.LastSync, tc.ms)
			}
		})
	}
}
