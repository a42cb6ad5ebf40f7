package record_test

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/store"
)

type doc struct{ Name string }

func TestMemoDecodesAnItemAgainOnlyWhenItChanged(t *testing.T) {
	decodes := 0
	m := record.NewMemo(func(it store.Item) (*doc, error) {
		decodes++
		var d doc
		return &d, json.Unmarshal(it.Data, &d)
	})
	item := func(version int64, name string) store.Item {
		return store.Item{PK: "P", SK: "S", Version: version, Data: []byte(`{"Name":"` + name + `"}`)}
	}
	first, err := m.Decode(item(1, "a"))
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name      string
		it        store.Item
		same      bool
		wantName  string
		wantCount int
	}{
		{"the same item again is the same value, not decoded again", item(1, "a"), true, "a", 1},
		{"new bytes at the same version are decoded again", item(1, "b"), false, "b", 2},
		{"the same bytes at another version are decoded again", item(2, "b"), false, "b", 3},
		{"an item written again with its old bytes and version after a change is decoded again", item(1, "a"), false, "a", 4},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			got, err := m.Decode(s.it)
			if err != nil {
				t.Fatal(err)
			}
			if (got == first) != s.same || got.Name != s.wantName || decodes != s.wantCount {
				t.Errorf("same pointer %v, name %q, %d decodes; want %v, %q, %d", got == first, got.Name, decodes, s.same, s.wantName, s.wantCount)
			}
		})
	}
	t.Run("the caller's bytes are not kept: changing them afterwards changes nothing", func(t *testing.T) {
		it := item(7, "kept")
		v, _ := m.Decode(it)
		copy(it.Data, []byte(`{"Name":"xxxx"}`))
		again, _ := m.Decode(item(7, "kept"))
		if again != v {
			t.Error("the memo compared against bytes the caller changed")
		}
	})
}

func TestMemoIsSafeForConcurrentUse(t *testing.T) {
	m := record.NewMemo(func(it store.Item) (string, error) { return string(it.Data), nil })
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				it := store.Item{PK: "P", SK: string(rune('a' + i%5)), Version: int64(g % 2), Data: []byte{byte(i % 3)}}
				if v, err := m.Decode(it); err != nil || v != string(it.Data) {
					t.Errorf("decode %v: %q %v", it, v, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
