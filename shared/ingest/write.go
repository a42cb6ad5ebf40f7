package ingest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/flagplane/flagplane/shared/store"
)

// change is one item a payload touches, written once per payload.
type change struct {
	key store.Key
	// merge computes the item from the stored one (nil when absent); ok
	// false writes nothing. Nil merge puts item unconditionally.
	merge func(old *store.Item) (store.Item, bool, error)
	item  store.Item
}

// maxAttempts bounds the retries of a chunk that lost a race.
const maxAttempts = 8

// writeAll writes the changes in atomic chunks of at most store.MaxWrites
// items: each merged item is read, merged and written on the condition
// that it did not change meanwhile (version, or absence); a chunk that
// loses a race is read and merged again. Counters so add up exactly.
func writeAll(ctx context.Context, table store.Table, changes []change) error {
	for start := 0; start < len(changes); start += store.MaxWrites {
		chunk := changes[start:min(start+store.MaxWrites, len(changes))]
		var err error
		for attempt := 0; attempt < maxAttempts; attempt++ {
			if err = writeChunk(ctx, table, chunk); err == nil || !lostRace(err) || !backOff(ctx, attempt) {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("write %d aggregates: %w", len(chunk), err)
		}
	}
	return nil
}

// lostRace says whether err is a write that lost to another writer of the same items.
func lostRace(err error) bool {
	return errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrConflict)
}

// backOff waits before attempt+1 of a write that lost a race: a random
// part of a window doubling from 2 ms, so two workers retrying the same
// items do not collide again in step. It reports false when ctx ended or
// no attempt is left.
func backOff(ctx context.Context, attempt int) bool {
	if attempt+1 >= maxAttempts {
		return false
	}
	t := time.NewTimer(time.Duration(rand.Int64N(int64(2*time.Millisecond) << attempt)))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// perItemParallel is how many items writeEach writes at once.
const perItemParallel = 8

// writeEach writes every change with its own conditional put, a few at a
// time; a merged item that lost a race is read and merged again.
func writeEach(ctx context.Context, table store.Table, changes []change) error {
	sem := make(chan struct{}, perItemParallel)
	errs := make(chan error, len(changes))
	var wg sync.WaitGroup
	for _, c := range changes {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var err error
			for attempt := 0; attempt < maxAttempts; attempt++ {
				if err = writeChunk(ctx, table, []change{c}); err == nil || !lostRace(err) || !backOff(ctx, attempt) {
					break
				}
			}
			if err != nil {
				errs <- fmt.Errorf("write %s/%s: %w", c.key.PK, c.key.SK, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs // nil when none failed
}

func writeChunk(ctx context.Context, table store.Table, chunk []change) error {
	writes, err := mergeWrites(ctx, table, chunk)
	if err != nil {
		return err
	}
	return commit(ctx, table, writes)
}

// mergeWrites reads and merges each change of chunk into the write that
// lands it on the condition that the item did not change meanwhile.
func mergeWrites(ctx context.Context, table store.Table, chunk []change) ([]store.Write, error) {
	writes := make([]store.Write, 0, len(chunk)+1)
	for _, c := range chunk {
		if c.merge == nil {
			writes = append(writes, store.Put(c.item, store.Cond{}))
			continue
		}
		var old *store.Item
		it, err := table.Get(ctx, c.key)
		switch {
		case err == nil:
			old = &it
		case !errors.Is(err, store.ErrNotFound):
			return nil, fmt.Errorf("read %s/%s: %w", c.key.PK, c.key.SK, err)
		}
		next, ok, err := c.merge(old)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		next.PK, next.SK = c.key.PK, c.key.SK
		cond := store.IfNotExists()
		next.Version = 1
		if old != nil {
			cond = store.IfVersion(old.Version)
			next.Version = old.Version + 1
		}
		writes = append(writes, store.Put(next, cond))
	}
	return writes, nil
}

// commit writes all of writes or none.
func commit(ctx context.Context, table store.Table, writes []store.Write) error {
	switch len(writes) {
	case 0:
		return nil
	case 1:
		// One item needs no transaction: a conditional put is cheaper on DynamoDB.
		return table.Put(ctx, writes[0].Item, writes[0].Cond)
	}
	return table.Transact(ctx, writes)
}
