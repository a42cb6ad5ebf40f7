package storetest

import (
	"context"
	"sync"

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
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return b.Table.Transact(ctx, ws)
}
