package featurestoreapi_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/flagplane/flagplane/shared/featurestore"
	"github.com/flagplane/flagplane/shared/featurestore/dynamostore"
	"github.com/flagplane/flagplane/shared/featurestore/redisstore"
)

// The conditions of the real stores' writes, against the servers of
// make test-featurestores: what keeps an older write from replacing a newer
// item is the store's own check (WATCH on Redis, a condition expression on
// DynamoDB), so it is proved on the stores themselves.

func openStore(tb testing.TB, k storeKind) featurestore.Store {
	tb.Helper()
	s := featurestore.SettingsOf(k.config(tb, "c"+uuid.NewString()[:8]))
	var st featurestore.Store
	var err error
	if k.name == "redis" {
		st, err = redisstore.Open(context.Background(), s, nil)
	} else {
		st, err = dynamostore.Open(context.Background(), s, nil)
	}
	if err != nil {
		tb.Fatalf("open %s: %v", k.name, err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

func flagItem(v int, body string) featurestore.Item {
	return featurestore.Item{Version: v, JSON: []byte(fmt.Sprintf(`{"key":"f","version":%d,"on":%s}`, v, body))}
}

func TestStoresHoldTheSDKsConditions(t *testing.T) {
	ctx := context.Background()
	for _, k := range []storeKind{redisKind(), dynamoKind()} {
		t.Run(k.name, func(t *testing.T) {
			st := openStore(t, k)
			put := func(t *testing.T, it featurestore.Item, expect int, want bool) {
				t.Helper()
				wrote, err := st.Put(ctx, featurestore.KindFeatures, "f", it, expect)
				if err != nil || wrote != want {
					t.Fatalf("put version %d (expect %d): wrote %v, err %v; want wrote %v", it.Version, expect, wrote, err, want)
				}
			}
			stored := func(t *testing.T) (featurestore.Item, bool) {
				t.Helper()
				all, err := st.Items(ctx, featurestore.KindFeatures)
				if err != nil {
					t.Fatal(err)
				}
				it, ok := all["f"]
				return it, ok
			}
			t.Run("an absent item is written", func(t *testing.T) { put(t, flagItem(3, "true"), -1, true) })
			t.Run("a lower or equal version is not written", func(t *testing.T) {
				put(t, flagItem(2, "false"), -1, false)
				put(t, flagItem(3, "false"), -1, false)
				if it, _ := stored(t); it.Version != 3 || string(it.JSON) != string(flagItem(3, "true").JSON) {
					t.Fatalf("stored %d %s", it.Version, it.JSON)
				}
			})
			t.Run("a higher version is written", func(t *testing.T) { put(t, flagItem(4, "false"), -1, true) })
			t.Run("a compare-and-swap on another version does not write", func(t *testing.T) { put(t, flagItem(1, "true"), 3, false) })
			t.Run("a compare-and-swap on the stored version writes a lower version", func(t *testing.T) {
				put(t, flagItem(1, "true"), 4, true)
				if it, _ := stored(t); it.Version != 1 {
					t.Fatalf("stored version %d, want 1", it.Version)
				}
			})
			t.Run("a delete on another version leaves the item", func(t *testing.T) {
				if gone, err := st.Delete(ctx, featurestore.KindFeatures, "f", 7); err != nil || gone {
					t.Fatalf("deleted %v, err %v", gone, err)
				}
				if _, ok := stored(t); !ok {
					t.Fatal("the item is gone")
				}
			})
			t.Run("a delete on the stored version removes it", func(t *testing.T) {
				if gone, err := st.Delete(ctx, featurestore.KindFeatures, "f", 1); err != nil || !gone {
					t.Fatalf("deleted %v, err %v", gone, err)
				}
				if _, ok := stored(t); ok {
					t.Fatal("the item is still there")
				}
			})
			t.Run("the synchronized-on time reads back as written", func(t *testing.T) {
				if ms, err := st.SynchronizedOn(ctx); err != nil || ms != 0 {
					t.Fatalf("before any write: %d, %v", ms, err)
				}
				if err := st.SetSynchronizedOn(ctx, 1700000000123); err != nil {
					t.Fatal(err)
				}
				if ms, err := st.SynchronizedOn(ctx); err != nil || ms != 1700000000123 {
					t.Fatalf("read back %d, %v", ms, err)
				}
			})
			t.Run("a probe leaves nothing behind", func(t *testing.T) {
				if err := st.Probe(ctx); err != nil {
					t.Fatal(err)
				}
				if all, err := st.Items(ctx, featurestore.KindFeatures); err != nil || len(all) != 0 {
					t.Fatalf("items after the probe: %v, %v", all, err)
				}
			})
		})
	}
}
