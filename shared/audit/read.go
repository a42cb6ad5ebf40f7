package audit

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/store"
)

// ListQuery selects entries, newest first.
type ListQuery struct {
	Before int64  // only entries before this Unix ms time; 0 = no bound
	After  int64  // only entries after this Unix ms time; 0 = no bound
	Q      string // case-insensitive text that the entry's name, title, kind, comment or resources contain
	Limit  int
	// Cursor is the id of the last entry of the previous page.
	Cursor string
}

// ListResult is one page; Next is the cursor of the following page, or "".
type ListResult struct {
	Entries []Entry
	Next    string
}

// maxScannedPages bounds the work of one text-filtered page.
const maxScannedPages = 10

// List returns one page of entries.
func (l *Log) List(ctx context.Context, q ListQuery) (ListResult, error) {
	if q.Cursor != "" && !ValidID(q.Cursor) {
		return ListResult{}, fault.New(fault.Invalid, "cursor %q is not a valid audit log cursor", q.Cursor)
	}
	sq := store.Query{PK: store.AuditPK, Descending: true}
	if q.After > 0 {
		sq.SKFrom = fmt.Sprintf("%012x000000000000", q.After+1)
	}
	if q.Before > 0 {
		sq.SKTo = fmt.Sprintf("%012x000000000000", q.Before)
		// ids of entries made before ms Before are below this floor; the floor itself is a possible id, so step down one.
		sq.SKTo = predecessor(sq.SKTo)
	}
	if q.Cursor != "" {
		if p := predecessor(q.Cursor); sq.SKTo == "" || p < sq.SKTo {
			sq.SKTo = p
		}
	}
	if sq.SKFrom != "" && sq.SKTo != "" && sq.SKFrom > sq.SKTo {
		return ListResult{}, nil
	}
	needle := strings.ToLower(strings.TrimSpace(q.Q))
	pageSize := q.Limit
	if needle != "" {
		pageSize = 100
	}
	sq.Limit = pageSize
	var res ListResult
	for scanned := 0; scanned < maxScannedPages; scanned++ {
		page, err := l.table.Query(ctx, sq)
		if err != nil {
			return ListResult{}, fmt.Errorf("list audit log: %w", err)
		}
		for i, it := range page.Items {
			var e Entry
			if err := json.Unmarshal(it.Data, &e); err != nil {
				return ListResult{}, fmt.Errorf("decode audit entry %s: %w", it.SK, err)
			}
			// The cursor means "continue below this id", so it may name an
			// entry that was examined but not returned.
			res.Next = it.SK
			if needle != "" && !matches(e, needle) {
				continue
			}
			res.Entries = append(res.Entries, e)
			if len(res.Entries) == q.Limit {
				if page.Cursor == "" && i == len(page.Items)-1 {
					res.Next = ""
				}
				return res, nil
			}
		}
		if page.Cursor == "" {
			res.Next = ""
			return res, nil
		}
		sq.Cursor = page.Cursor
	}
	// The scan budget ran out: the client continues below the last id examined.
	return res, nil
}

func matches(e Entry, needle string) bool {
	fields := []string{e.Name, e.Title, e.Kind, e.Comment, e.Description}
	for _, a := range e.Accesses {
		fields = append(fields, a.Resource, a.Action)
	}
	for _, f := range fields {
		if strings.Contains(strings.ToLower(f), needle) {
			return true
		}
	}
	return false
}

// Get returns one entry in its detailed form.
func (l *Log) Get(ctx context.Context, id string) (Entry, error) {
	if !ValidID(id) {
		return Entry{}, fault.New(fault.NotFound, "audit log entry %q not found", id)
	}
	it, err := l.table.Get(ctx, store.AuditKey(id))
	if errors.Is(err, store.ErrNotFound) {
		return Entry{}, fault.Wrap(err, fault.NotFound, "audit log entry %q not found", id)
	}
	if err != nil {
		return Entry{}, fmt.Errorf("load audit entry %q: %w", id, err)
	}
	var e Entry
	if err := json.Unmarshal(it.Data, &e); err != nil {
		return Entry{}, fmt.Errorf("decode audit entry %q: %w", id, err)
	}
	return e, nil
}

// predecessor and successor step a fixed-width hex id by one: an inclusive
// store bound can then say "strictly below this id", and ids made in one
// millisecond can still increase.
func predecessor(id string) string { return step(id, -1) }
func successor(id string) string   { return step(id, 1) }

func step(id string, by int64) string {
	n, ok := new(big.Int).SetString(id, 16)
	if !ok {
		return id
	}
	n.Add(n, big.NewInt(by))
	if n.Sign() < 0 {
		return id
	}
	s := n.Text(16)
	if len(s) > len(id) {
		return id
	}
	return strings.Repeat("0", len(id)-len(s)) + s
}

// ValidID reports whether s has the shape of an entry id.
func ValidID(s string) bool {
	if len(s) != 24 || strings.ToLower(s) != s {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}
