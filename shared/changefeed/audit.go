package changefeed

import (
	"context"
	"fmt"
	"time"

	"github.com/flagplane/flagplane/shared/store"
)

// AuditLog is the audit partition of a table as a Log: one Query per
// poll, eventually consistent (half the read units of a consistent one;
// the margin covers its lag), paged until the range is read.
type AuditLog struct {
	Table store.Table
}

// Since visits the ids of the audit entries made at from or later.
func (l AuditLog) Since(ctx context.Context, from time.Time, visit func(id string)) error {
	// An id is 12 hex digits of milliseconds and 12 more: the bare 12
	// digits sort before every id of that millisecond.
	q := store.Query{PK: store.AuditPK, SKFrom: fmt.Sprintf("%012x", max(from.UnixMilli(), 0)), Eventual: true}
	for {
		page, err := l.Table.Query(ctx, q)
		if err != nil {
			return fmt.Errorf("read the audit log from %s: %w", from.UTC().Format(time.RFC3339Nano), err)
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
