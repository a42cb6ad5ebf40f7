// Package record reads typed documents out of the table: one item by key,
// or every item a query selects, page after page. Services keep their own
// decoding; this holds the loops and the not-found rule they share.
package record

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/flagplane/flagplane/shared/cache"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/store"
)

// Load reads the item at k and decodes it. A missing item is a 404
// "<what> not found"; what names the resource, e.g. `custom role "ops"`.
func Load[T any](ctx context.Context, table store.Table, k store.Key, what string, decode func(store.Item) (T, error)) (T, error) {
	var zero T
	it, err := table.Get(ctx, k)
	if errors.Is(err, store.ErrNotFound) {
		return zero, fault.Wrap(err, fault.NotFound, "%s not found", what)
	}
	if err != nil {
		return zero, fmt.Errorf("load %s: %w", what, err)
	}
	return decode(it)
}

// All reads every item q selects, following cursors, and decodes each;
// what names the collection for errors, e.g. "custom roles".
func All[T any](ctx context.Context, table store.Table, q store.Query, what string, decode func(store.Item) (T, error)) ([]T, error) {
	var out []T
	err := Each(ctx, table, q, what, func(it store.Item) error {
		v, err := decode(it)
		if err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Each calls fn with every item q selects, page after page, keeping no
// more than a page in memory; it stops at fn's first error and returns it.
// what names the collection for errors, as for All.
func Each(ctx context.Context, table store.Table, q store.Query, what string, fn func(store.Item) error) error {
	for {
		page, err := table.Query(ctx, q)
		if err != nil {
			return fmt.Errorf("list %s: %w", what, err)
		}
		for _, it := range page.Items {
			if err := fn(it); err != nil {
				return err
			}
		}
		if page.Cursor == "" {
			return nil
		}
		q.Cursor = page.Cursor
	}
}

// maxMemo bounds the values one Memo keeps.
const maxMemo = 20000

// Memo decodes items once per process while they stay the same: an item
// whose version and stored bytes (compared in full, so an item deleted and
// written again is never taken for the old one) match the last decoded
// under its key gets the same value back, with the same pointer, which
// callers may key caches of their own on. Values are shared between
// requests: read them only. A Memo is safe for concurrent use.
type Memo[T any] struct {
	decode func(store.Item) (T, error)
	m      cache.Bounded[store.Key, memoEntry[T]]
}

type memoEntry[T any] struct {
	version int64
	data    []byte
	v       T
}

// NewMemo returns a Memo over decode.
func NewMemo[T any](decode func(store.Item) (T, error)) *Memo[T] {
	m := &Memo[T]{decode: decode}
	m.m.Max = maxMemo
	return m
}

// Decode returns the value stored in it, decoding it only when it changed.
func (m *Memo[T]) Decode(it store.Item) (T, error) {
	if e, ok := m.m.Get(it.Key()); ok && e.version == it.Version && bytes.Equal(e.data, it.Data) {
		return e.v, nil
	}
	v, err := m.decode(it)
	if err != nil {
		return v, err
	}
	m.m.Put(it.Key(), memoEntry[T]{version: it.Version, data: bytes.Clone(it.Data), v: v})
	return v, nil
}
