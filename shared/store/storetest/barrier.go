package storetest

import (
	"context"
	"sync"
	"time"

	"github.com/flagplane/flagplane/shared/store"
)

// Barrier is a table that, once armed for n, holds each transaction until
// n have arrived: n writers that read the same version all write against
// it, so a test of "two writers, one wins" does not depend on timing.
// Unarmed, transactions pass through.
type Barrier struct {
	store.Table
	mu      sync.Mutex
	n       int
	waiting int
	release chan struct{}
}

// roundTimeout is how long a transaction waits for the rest of its round.
const roundTimeout = 5 * time.Second

// Arm makes the next n transactions wait for each other.
func (b *Barrier) Arm(n int) {
	b.mu.Lock()
	b.n, b.waiting, b.release = n, 0, make(chan struct{})
	b.mu.Unlock()
}

// Transact writes ws, after the others of an armed round have arrived.
func (b *Barrier) Transact(ctx context.Context, ws []store.Write) error {
	b.mu.Lock()
	var release chan struct{}
	if b.n > 0 {
		release = b.release
		b.waiting++
		if b.waiting == b.n {
			close(b.release)
			b.n = 0
		}
	}
	b.mu.Unlock()
	if release != nil {
		select {
		case <-release:
		case <-time.After(roundTimeout):
			// A writer that never came (it failed before writing): go ahead,
			// so the test fails on its outcome rather than hanging.
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return b.Table.Transact(ctx, ws)
}

// Race arms the barrier for n and runs f(0) to f(n-1) at once, each a
// writer whose transaction waits for the others'; it returns their errors.
func (b *Barrier) Race(n int, f func(i int) error) []error {
	b.Arm(n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	return errs
}
