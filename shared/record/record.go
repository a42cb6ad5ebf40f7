// Package record reads typed documents out of the table: one item by key,
// or every item a query selects, page after page. Services keep their own
// decoding; this holds the loops and the not-found rule they share.
package record

import (
	"context"
	"errors"
	"fmt"

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
	for {
		page, err := table.Query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", what, err)
		}
		for _, it := range page.Items {
			v, err := decode(it)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		if page.Cursor == "" {
			return out, nil
		}
		q.Cursor = page.Cursor
	}
}
