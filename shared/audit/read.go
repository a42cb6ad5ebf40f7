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
	// Match, when set, keeps only the entries it accepts (a search's policy statements).
	Match func(Entry) bool
}

// ListResult is one page; Next is the cursor of the following page, or "".
type ListResult struct {
	Entries []Entry
	Next    string
}

// MaxScannedEntries is how many entries one filtered list request examines
// at most before it answers with what it found and a cursor below them.
const MaxScannedEntries = 1000

// List returns one page of entries: a Scan below the cursor that stops
// at a full page, examining only the page's entries when nothing filters
// and at most MaxScannedEntries when something does.
func (l *Log) List(ctx context.Context, q ListQuery) (ListResult, error) {
	if q.Cursor != "" && !ValidID(q.Cursor) {
		return ListResult{}, fault.New(fault.Invalid, "cursor %q is not a valid audit log cursor", q.Cursor)
	}
	needle := strings.ToLower(strings.TrimSpace(q.Q))
	budget := q.Limit
	if needle != "" || q.Match != nil {
		budget = MaxScannedEntries
	}
	var res ListResult
	scan, err := l.Scan(ctx, ScanQuery{After: q.After, Before: q.Before, Below: q.Cursor, Budget: budget}, func(e Entry) bool {
		if needle != "" && !matches(e, needle) || q.Match != nil && !q.Match(e) {
			return true
		}
		res.Entries = append(res.Entries, e)
		return len(res.Entries) < q.Limit
	})
	if err != nil {
		return ListResult{}, err
	}
	// The cursor means "continue below this id", so it may name an entry
	// that was examined but not returned (the budget ran out).
	if scan.More {
		res.Next = scan.Last
	}
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
	var it store.Item
	var err error
	// An entry written when the log had fewer shards sits where that count put it.
	for _, k := range store.AuditKeyCandidates(id, l.Shards()) {
		if it, err = l.table.Get(ctx, k); !errors.Is(err, store.ErrNotFound) {
			break
		}
	}
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

// ScanQuery selects a window of the log for Scan.
type ScanQuery struct {
	// After and Before bound the entries' times (Unix ms, both exclusive,
	// as in ListQuery and CountQuery; 0 = no bound).
	After, Before int64
	// Below, when set, keeps entries with ids strictly below it (newest
	// first walks); Above keeps ids strictly above it.
	Below, Above string
	// Ascending walks oldest first; the default is newest first.
	Ascending bool
	// Budget is the most entries examined; 0 means MaxScannedEntries.
	Budget int
}

// ScanResult says where a Scan stopped: Last is the id of the last entry
// examined, More whether the window holds entries beyond it.
type ScanResult struct {
	Last     string
	More     bool
	Examined int
}

// Scan walks a time window of the log, handing each entry to visit until
// visit returns false, the window ends or the budget is spent. It reads
// each shard's partition range, sorted by time-ordered ids, merging them in
// id order, so its cost is bounded by the budget (times the shards) whatever
// the log's size.
func (l *Log) Scan(ctx context.Context, q ScanQuery, visit func(Entry) bool) (ScanResult, error) {
	for _, c := range []string{q.Below, q.Above} {
		if c != "" && !ValidID(c) {
			return ScanResult{}, fault.New(fault.Invalid, "cursor %q is not a valid audit log entry id", c)
		}
	}
	var window store.Query
	if q.After > 0 {
		window.SKFrom = fmt.Sprintf("%012x000000000000", q.After+1)
	}
	if q.Before > 0 {
		// ids of entries made before ms Before are below this floor; the
		// floor itself is a possible id, so step down one.
		window.SKTo = predecessor(fmt.Sprintf("%012x000000000000", q.Before))
	}
	if q.Below != "" {
		if p := predecessor(q.Below); window.SKTo == "" || p < window.SKTo {
			window.SKTo = p
		}
	}
	if q.Above != "" {
		if n := successor(q.Above); n > window.SKFrom {
			window.SKFrom = n
		}
	}
	budget := q.Budget
	if budget <= 0 {
		budget = MaxScannedEntries
	}
	var res ScanResult
	if window.SKFrom != "" && window.SKTo != "" && window.SKFrom > window.SKTo {
		return res, nil
	}
	shards := make([]*shardReader, l.Shards())
	for i := range shards {
		sq := window
		sq.PK, sq.Descending = store.AuditShardPK(i), !q.Ascending
		shards[i] = &shardReader{q: sq, more: true}
	}
	remaining := func() bool {
		for _, sh := range shards {
			if len(sh.items) > 0 || sh.more {
				return true
			}
		}
		return false
	}
	for {
		if res.Examined >= budget {
			res.More = remaining()
			return res, nil
		}
		var next *shardReader
		for _, sh := range shards {
			if len(sh.items) == 0 && sh.more {
				if err := sh.fetch(ctx, l.table, min(100, budget-res.Examined)); err != nil {
					return res, err
				}
			}
			if len(sh.items) == 0 {
				continue
			}
			if next == nil || (sh.items[0].SK > next.items[0].SK) != q.Ascending {
				next = sh
			}
		}
		if next == nil {
			return res, nil
		}
		it := next.items[0]
		next.items = next.items[1:]
		var e Entry
		if err := json.Unmarshal(it.Data, &e); err != nil {
			return res, fmt.Errorf("decode audit entry %s: %w", it.SK, err)
		}
		res.Last = it.SK
		res.Examined++
		if !visit(e) {
			res.More = remaining()
			return res, nil
		}
	}
}

// shardReader pages through one shard's partition range for Scan.
type shardReader struct {
	q     store.Query
	items []store.Item
	more  bool // a page has not been read yet, or the last one had a cursor
}

func (r *shardReader) fetch(ctx context.Context, table store.Table, limit int) error {
	r.q.Limit = limit
	page, err := table.Query(ctx, r.q)
	if err != nil {
		return fmt.Errorf("scan audit log %s: %w", r.q.PK, err)
	}
	r.items, r.q.Cursor, r.more = page.Items, page.Cursor, page.Cursor != ""
	return nil
}

// CountQuery asks how many entries made strictly between After and Before
// (Unix ms) fall in each of Buckets equal spans; bucket i starts at
// After + i*IntervalMs.
type CountQuery struct {
	After, Before int64
	Buckets       int
	Match         func(Entry) bool
}

// CountResult is the count of each bucket, their total and the span of one.
type CountResult struct {
	Counts     []int64
	Total      int64
	IntervalMs int64
}

// MaxCountedEntries is how many entries one count request reads at most;
// a range holding more is refused, so no count is ever silently short.
const MaxCountedEntries = 20000

// Counts counts the entries between After and Before per bucket, reading
// that range of the time-ordered partition once.
func (l *Log) Counts(ctx context.Context, q CountQuery) (CountResult, error) {
	if q.Before <= q.After {
		return CountResult{}, fault.New(fault.Invalid, "\"before\" (%d) must be after \"after\" (%d)", q.Before, q.After)
	}
	span := q.Before - q.After
	interval := (span + int64(q.Buckets) - 1) / int64(q.Buckets)
	res := CountResult{Counts: make([]int64, q.Buckets), IntervalMs: interval}
	scan, err := l.Scan(ctx, ScanQuery{After: q.After, Before: q.Before, Ascending: true, Budget: MaxCountedEntries}, func(e Entry) bool {
		if q.Match != nil && !q.Match(e) {
			return true
		}
		i := min(int((e.Date-q.After)/interval), q.Buckets-1)
		res.Counts[max(i, 0)]++
		res.Total++
		return true
	})
	if err != nil {
		return CountResult{}, err
	}
	if scan.More {
		return CountResult{}, fault.New(fault.Invalid, "the range holds more than %d audit log entries, more than one request counts: narrow it with \"after\" and \"before\"", MaxCountedEntries)
	}
	return res, nil
}
