package app_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/flagplane/flagplane/shared/app"
)

type keyA struct{}
type keyB struct{}

func TestShared(t *testing.T) {
	t.Run("a value is built once however many ask at once", func(t *testing.T) {
		a := &app.App{}
		var builds atomic.Int32
		var wg sync.WaitGroup
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a.Shared(keyA{}, func() any { builds.Add(1); return "a" })
			}()
		}
		wg.Wait()
		if n := builds.Load(); n != 1 {
			t.Errorf("built %d times; want once", n)
		}
	})
	t.Run("a builder may ask for another shared value", func(t *testing.T) {
		a := &app.App{}
		got := a.Shared(keyA{}, func() any {
			return a.Shared(keyB{}, func() any { return "b" }).(string) + "a"
		})
		if got != "ba" {
			t.Errorf("got %v; want ba", got)
		}
	})
}
