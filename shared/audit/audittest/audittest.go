// Package audittest sets up what a domain package's tests need to run its
// service for real: a fresh embedded store (behind a storetest.Barrier, so
// a test can make writers race) with an audit log over it, and reads back
// what the log recorded.
package audittest

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/store/bolt"
	"github.com/flagplane/flagplane/shared/store/storetest"
)

// Rig is a store in a temporary directory and the audit log over it.
type Rig struct {
	Table *storetest.Barrier
	Log   *audit.Log
}

// New opens a fresh store, closed when the test ends, and an audit log
// over it that dates entries by now and publishes nowhere.
func New(tb testing.TB, now func() time.Time) Rig {
	tb.Helper()
	table, err := bolt.Open(filepath.Join(tb.TempDir(), "test.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { table.Close() })
	b := &storetest.Barrier{Table: table}
	return Rig{Table: b, Log: audit.New(b, audit.Discard{}, "acct", Quiet, now)}
}

// Quiet is a logger that writes nowhere.
var Quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// Actions lists the actions of the entries log holds, oldest first: of
// the entries of the given kinds, or of every entry when none is given.
func Actions(tb testing.TB, log *audit.Log, kinds ...string) []string {
	tb.Helper()
	res, err := log.List(context.Background(), audit.ListQuery{Limit: 1000})
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for i := len(res.Entries) - 1; i >= 0; i-- {
		e := res.Entries[i]
		if len(kinds) > 0 && !slices.Contains(kinds, e.Kind) {
			continue
		}
		for _, a := range e.Accesses {
			out = append(out, a.Action)
		}
	}
	return out
}
