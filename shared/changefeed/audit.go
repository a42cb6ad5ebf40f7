package changefeed

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/flagplane/flagplane/shared/store"
)

// AuditLog is the audit log of a table as a Log: one Query per shard per
// poll, eventually consistent (half the read units of a consistent one;
// the margin covers its lag), paged until the range is read.
type AuditLog struct {
	Table store.Table
	// Shards is the audit log's shard count (audit.Log.Shards); 0 means 1.
	Shards int
}

// Since visits the ids of the audit entries made at from or later; shards
// are read at once, and visit is never called concurrently.
func (l AuditLog) Since(ctx context.Context, from time.Time, visit func(id string)) error {
	return l.Between(ctx, from, time.Time{}, visit)
}

// Between is Since up to to, inclusive, to the millisecond; a zero to
// leaves the range open.
func (l AuditLog) Between(ctx context.Context, from, to time.Time, visit func(id string)) error {
	n := max(l.Shards, 1)
	if n == 1 {
		return l.since(ctx, 0, from, to, visit)
	}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs = make([]error, n)
	)
	for i := range n {
		wg.Go(func() {
			errs[i] = l.since(ctx, i, from, to, func(id string) {
				mu.Lock()
				defer mu.Unlock()
				visit(id)
			})
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (l AuditLog) since(ctx context.Context, shard int, from, to time.Time, visit func(id string)) error {
	// An id is 12 hex digits of milliseconds and 12 more: the bare 12
	// digits sort before every id of that millisecond.
	q := store.Query{PK: store.AuditShardPK(shard), SKFrom: fmt.Sprintf("%012x", max(from.UnixMilli(), 0)), Eventual: true}
	if !to.IsZero() {
		q.SKTo = fmt.Sprintf("%012x", max(to.UnixMilli()+1, 0))
	}
	for {
		page, err := l.Table.Query(ctx, q)
		if err != nil {
			return fmt.Errorf("read the audit log (%s) from %s: %w", q.PK, from.UTC().Format(time.RFC3339Nano), err)
		}
		for _, it := range page.Items {
			visit(it.SK)
		}
		if page.Cursor == "" {
			return nil
		}
		q.Cursor = page.Cursor
	}
}
