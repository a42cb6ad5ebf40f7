package storetest

import (
	"context"
	"errors"
	"sync"

	"github.com/flagplane/flagplane/shared/store"
)

// CrashOnce is a table whose first transaction is written and then
// reported failed: a worker that stopped once its write landed, before it
// knew. Later transactions pass through.
type CrashOnce struct {
	store.Table
	mu      sync.Mutex
	crashed bool
}

// Transact writes ws, then fails the first time.
func (c *CrashOnce) Transact(ctx context.Context, ws []store.Write) error {
	if err := c.Table.Transact(ctx, ws); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.crashed {
		c.crashed = true
		return errors.New("worker stopped")
	}
	return nil
}
