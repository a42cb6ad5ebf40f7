package cache_test

import (
	"sync"
	"testing"

	"github.com/flagplane/flagplane/shared/cache"
)

func TestBoundedKeepsAtMostMaxEntries(t *testing.T) {
	c := cache.Bounded[int, string]{Max: 3}
	for i := range 3 {
		c.Put(i, "v")
	}
	t.Run("entries up to the bound are kept", func(t *testing.T) {
		for i := range 3 {
			if v, ok := c.Get(i); !ok || v != "v" {
				t.Errorf("entry %d: %q %v", i, v, ok)
			}
		}
	})
	t.Run("one more empties the map and keeps the new entry", func(t *testing.T) {
		c.Put(3, "w")
		if _, ok := c.Get(0); ok {
			t.Error("an old entry survived a full map")
		}
		if v, ok := c.Get(3); !ok || v != "w" {
			t.Errorf("new entry: %q %v", v, ok)
		}
	})
	t.Run("a zero value works, keeping one entry", func(t *testing.T) {
		var z cache.Bounded[string, int]
		z.Put("a", 1)
		if v, ok := z.Get("a"); !ok || v != 1 {
			t.Errorf("%d %v", v, ok)
		}
	})
}

func TestBoundedIsSafeForConcurrentUse(t *testing.T) {
	c := cache.Bounded[int, int]{Max: 10}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				c.Put(i%17, g)
				c.Get(i % 13)
			}
		}()
	}
	wg.Wait()
}
