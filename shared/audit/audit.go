// Package audit records every change: it commits a resource's writes
// together with an audit log entry and an outbox record in one atomic
// write, then hands the outbox record to the queue. It is the only path by
// which a mutation reaches the table.
package audit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/store"
)

// Access is one action on one resource specifier.
type Access struct {
	Action   string `json:"action"`
	Resource string `json:"resource"`
}

// Subject is who made the change, as shown in the entry.
type Subject struct {
	Name string `json:"name"`
}

// Member is the member who made the change, when it was a member.
type Member struct {
	ID    string `json:"_id"`
	Email string `json:"email,omitempty"`
}

// Token is the access token that made the change.
type Token struct {
	ID           string `json:"_id"`
	Name         string `json:"name"`
	Ending       string `json:"ending"`
	ServiceToken bool   `json:"serviceToken"`
}

// Parent is the resource the changed resource belongs to.
type Parent struct {
	Name     string `json:"name"`
	Resource string `json:"resource"`
	// Href is the API path of the parent, for its self link.
	Href string `json:"href,omitempty"`
}

// Entry is one audit log entry as stored. The detailed fields
// (PreviousVersion, CurrentVersion, Delta) are shown only by the
// single-entry read.
type Entry struct {
	ID               string          `json:"_id"`
	AccountID        string          `json:"_accountId"`
	Date             int64           `json:"date"`
	Accesses         []Access        `json:"accesses"`
	Kind             string          `json:"kind"`
	Name             string          `json:"name"`
	Description      string          `json:"description"`
	ShortDescription string          `json:"shortDescription"`
	Comment          string          `json:"comment"`
	Subject          Subject         `json:"subject"`
	Member           *Member         `json:"member,omitempty"`
	Token            *Token          `json:"token,omitempty"`
	TitleVerb        string          `json:"titleVerb"`
	Title            string          `json:"title"`
	Target           string          `json:"target"`
	Parent           *Parent         `json:"parent,omitempty"`
	Href             string          `json:"href,omitempty"` // API path of the changed resource
	PreviousVersion  json.RawMessage `json:"previousVersion"`
	CurrentVersion   json.RawMessage `json:"currentVersion"`
	Delta            json.RawMessage `json:"delta"`
}

// Change describes one mutation: the resource writes and what the entry says.
type Change struct {
	// Writes are the resource's own writes, with their conditions.
	Writes []store.Write
	// Kind is the resource kind, e.g. "environment".
	Kind string
	// Resource is the resource specifier, e.g. "proj/p:env/e".
	Resource string
	// Actions are the actions performed, e.g. "updateColor"; at least one.
	Actions []string
	// Name is the resource's display name; Href its API path.
	Name string
	Href string
	// TitleVerb completes "<subject> <verb> <name>", e.g. "created the environment".
	TitleVerb string
	Comment   string
	Parent    *Parent
	// Previous and Current are the resource before and after (nil when absent).
	Previous any
	Current  any
	// Delta is the JSON patch as sent, or nil (semantic patch, create, delete).
	Delta json.RawMessage
	// Conflict, when set, is the message of the 409 optimistic_locking_error
	// Commit answers when a condition of Writes fails (the resource changed
	// since it was read); when empty the store's error is returned as is.
	Conflict string
}

// Outbox is the record handed to the delivery queue after a commit.
type Outbox struct {
	EntryID string `json:"entryId"`
	Date    int64  `json:"date"`
}

// Publisher hands outbox records to the delivery queue.
type Publisher interface {
	Publish(ctx context.Context, rec Outbox) error
}

// Discard is the publisher used while nothing consumes outbox records.
type Discard struct{}

// Publish accepts and drops the record.
func (Discard) Publish(context.Context, Outbox) error { return nil }

// outboxTTL bounds how long an undelivered record is kept before the table expires it.
const outboxTTL = 7 * 24 * time.Hour

// Log writes and reads the audit log.
type Log struct {
	table     store.Table
	publisher Publisher
	accountID string
	now       func() time.Time
	log       *slog.Logger

	// lastID keeps ids of one process strictly increasing, so entries made
	// in the same millisecond still list newest first.
	mu     sync.Mutex
	lastID string

	// commits counts this process's commits; soleWriter says the process
	// is its table's only writer (see Generation).
	commits    atomic.Uint64
	soleWriter atomic.Bool

	// shards is how many partitions the log spreads over (1 until SetShards).
	shards atomic.Int32

	// streamed says the table's stream hands entries off (see SetStreamed).
	streamed atomic.Bool

	// dropOnFanOut says outbox records are dropped once fanned out, not at
	// hand-off (see SetDropOnFanOut).
	dropOnFanOut atomic.Bool
}

// SetShards spreads new entries over n partitions (a power of two up to
// store.MaxAuditShards), so one account's changes are not capped by one
// partition's write rate; reads merge every partition in time order.
// Every process sharing a table must use the same n, and n may only grow:
// entries written under a smaller count stay readable, under a larger one
// they would be hidden.
func (l *Log) SetShards(n int) error {
	if !store.ValidAuditShards(n) {
		return fmt.Errorf("audit log shards: %d is not a power of two from 1 to %d", n, store.MaxAuditShards)
	}
	l.shards.Store(int32(n))
	return nil
}

// Shards is the number of partitions the log spreads over.
func (l *Log) Shards() int { return max(int(l.shards.Load()), 1) }

// SetSoleWriter says whether this process is the only writer of its table
// (the local server, which holds the data file's lock).
func (l *Log) SetSoleWriter(v bool) { l.soleWriter.Store(v) }

// Generation is the number of commits this process has made, and whether
// that is every change of the table (sole). When sole, an answer computed
// after reading generation g stays true until the generation moves past g:
// a cache may keep it under g. Elsewhere (several Lambda instances share
// the table) it says nothing about other processes' changes.
func (l *Log) Generation() (gen uint64, sole bool) {
	return l.commits.Load(), l.soleWriter.Load()
}

// New returns a Log writing to table and handing records to publisher;
// entries are dated by now.
func New(table store.Table, publisher Publisher, accountID string, logger *slog.Logger, now func() time.Time) *Log {
	if logger == nil {
		logger = slog.Default()
	}
	return &Log{table: table, publisher: publisher, accountID: accountID, now: now, log: logger}
}

// SetAccountID sets the account stamped on entries, once the account is
// known (the local server wires the log before it bootstraps the account).
func (l *Log) SetAccountID(id string) {
	l.mu.Lock()
	l.accountID = id
	l.mu.Unlock()
}

// Commit writes the change, its entry and its outbox record atomically, then
// publishes the record. When the stream carries the outbox (SetStreamed),
// the entry alone is the record: nothing else is written or deleted, and
// the publisher is only told of the commit. A failed condition of one of
// the change's writes is returned as the store's error (a *store.TxError naming it).
func (l *Log) Commit(ctx context.Context, c Change) (Entry, error) {
	if len(c.Actions) == 0 {
		return Entry{}, fmt.Errorf("commit %s %q: a change needs at least one action", c.Kind, c.Resource)
	}
	now := l.now()
	e, err := l.entry(ctx, c, now)
	if err != nil {
		return Entry{}, err
	}
	entryData, err := json.Marshal(e)
	if err != nil {
		return Entry{}, fmt.Errorf("encode audit entry: %w", err)
	}
	rec := Outbox{EntryID: e.ID, Date: e.Date}
	recData, _ := json.Marshal(rec)
	ak, ok := store.AuditShardKey(e.ID, l.Shards()), store.OutboxKey(e.ID)
	streamed := l.streamed.Load()
	writes := append(append(make([]store.Write, 0, len(c.Writes)+2), c.Writes...),
		store.Put(store.Item{PK: ak.PK, SK: ak.SK, Version: 1, Data: entryData}, store.IfNotExists()))
	if !streamed {
		writes = append(writes, store.Put(store.Item{PK: ok.PK, SK: ok.SK, Version: 1, TTL: now.Add(outboxTTL).Unix(), Data: recData}, store.IfNotExists()))
	}
	if err := l.table.Transact(ctx, writes); err != nil {
		if c.Conflict != "" && errors.Is(err, store.ErrConditionFailed) {
			return Entry{}, fault.Wrap(err, fault.OptimisticLock, "%s", c.Conflict)
		}
		if errors.Is(err, store.ErrConflict) {
			return Entry{}, fault.Wrap(err, fault.OptimisticLock, "%s %q is being changed by another request; try again", c.Kind, c.Name)
		}
		return Entry{}, fmt.Errorf("commit %s %q: %w", c.Kind, c.Resource, err)
	}
	l.commits.Add(1)
	l.handOff(ctx, rec, streamed)
	return e, nil
}

// SetDropOnFanOut says the publisher's queue lives in this process (the
// local server's): an outbox record is then kept until the delivery worker
// has fanned its entry out (FannedOut), not dropped once queued, so a
// change whose fan-out a stop or crash cut short is sent again by the
// sweep, and the request that made the change waits for one commit, not two.
func (l *Log) SetDropOnFanOut(v bool) { l.dropOnFanOut.Store(v) }

// FannedOut drops the outbox record of entryID once its entry was handed to
// every webhook and consumer, when SetDropOnFanOut is on and ctx (the
// queue's) is not done; otherwise the record went at hand-off, or stays.
// A failure is only logged: the sweep sends the entry again, and
// deliveries are idempotent.
func (l *Log) FannedOut(ctx context.Context, entryID string) {
	if !l.dropOnFanOut.Load() || ctx.Err() != nil {
		// Stopping: the deliveries just queued are dropped with the
		// queue, so the record stays for the sweep of the next start.
		return
	}
	if err := l.table.Delete(ctx, store.OutboxKey(entryID), store.Cond{}); err != nil {
		l.log.Warn("outbox record not removed after fan-out", "entryId", entryID, "error", err.Error())
	}
}

// handOff publishes rec and then drops its outbox record, unless there
// is none (the stream carries the outbox: the publisher only hears of the
// commit) or the fan-out drops it (SetDropOnFanOut). A failure is only
// logged: the record stays and the outbox sweep hands it over later.
func (l *Log) handOff(ctx context.Context, rec Outbox, streamed bool) {
	if err := l.publisher.Publish(ctx, rec); err != nil {
		msg := "outbox hand-off failed; the sweep will retry"
		if streamed {
			msg = "commit notice failed; the stream hands the entry off"
		}
		l.log.Warn(msg, "entryId", rec.EntryID, "error", err.Error())
		return
	}
	if streamed || l.dropOnFanOut.Load() {
		return
	}
	if err := l.table.Delete(ctx, store.OutboxKey(rec.EntryID), store.Cond{}); err != nil {
		l.log.Warn("outbox record not removed after hand-off", "entryId", rec.EntryID, "error", err.Error())
	}
}

func (l *Log) entry(ctx context.Context, c Change, now time.Time) (Entry, error) {
	id, err := l.nextID(now)
	if err != nil {
		return Entry{}, err
	}
	l.mu.Lock()
	accountID := l.accountID
	l.mu.Unlock()
	e := Entry{
		ID:        id,
		AccountID: accountID,
		Date:      now.UnixMilli(),
		Kind:      c.Kind,
		Name:      c.Name,
		Comment:   c.Comment,
		TitleVerb: c.TitleVerb,
		Parent:    c.Parent,
		Href:      c.Href,
		Delta:     c.Delta,
	}
	for _, a := range c.Actions {
		e.Accesses = append(e.Accesses, Access{Action: a, Resource: c.Resource})
	}
	who := "flagplane"
	if p, ok := identity.From(ctx); ok {
		if p.MemberID != "" {
			e.Member = &Member{ID: p.MemberID, Email: p.MemberEmail}
			who = p.MemberEmail
		}
		if p.TokenID != "" {
			e.Token = &Token{ID: p.TokenID, Name: p.TokenName, Ending: p.TokenEnding, ServiceToken: p.ServiceToken}
			if who == "flagplane" || who == "" {
				who = p.TokenName
			}
		}
		if e.AccountID == "" {
			e.AccountID = p.AccountID
		}
	}
	e.Subject = Subject{Name: who}
	e.Title = fmt.Sprintf("%s %s %s", who, c.TitleVerb, c.Name)
	e.Target = fmt.Sprintf("[%s](%s)", markdownEscape(c.Name), c.Href)
	e.Description = fmt.Sprintf("%s %s %s", who, c.TitleVerb, c.Name)
	e.ShortDescription = c.Comment
	if e.PreviousVersion, err = marshalOrNull(c.Previous); err != nil {
		return Entry{}, err
	}
	if e.CurrentVersion, err = marshalOrNull(c.Current); err != nil {
		return Entry{}, err
	}
	return e, nil
}

func marshalOrNull(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode audit version: %w", err)
	}
	return b, nil
}

func markdownEscape(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', ']', '(', ')', '*', '_', '`', '\\':
			out = append(out, '\\')
		}
		out = append(out, s[i])
	}
	return string(out)
}

func (l *Log) nextID(now time.Time) (string, error) {
	id, err := NewID(now)
	if err != nil {
		return "", err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if id <= l.lastID {
		id = successor(l.lastID)
	}
	l.lastID = id
	return id, nil
}

// NewID returns an entry id: 12 hex digits of the Unix millisecond time
// followed by 12 random hex digits, so ids sort by time.
func NewID(t time.Time) (string, error) {
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", fmt.Errorf("new audit id: %w", err)
	}
	return fmt.Sprintf("%012x%s", t.UnixMilli(), hex.EncodeToString(rnd[:])), nil
}

// Sweep hands to the queue every outbox record older than olderThan — the
// changes whose hand-off failed or never ran (a crash between commit and
// enqueue) — and drops each once handed over. It returns how many it sent.
// Running it twice, or while a hand-off is in flight, only sends a record
// again, and deliveries carry ids receivers use to drop duplicates.
func (l *Log) Sweep(ctx context.Context, olderThan time.Duration) (int, error) {
	// Ids start with their millisecond; the bound takes in all of the cutoff's.
	cutoff := fmt.Sprintf("%012xffffffffffff", l.now().Add(-olderThan).UnixMilli())
	q := store.Query{PK: store.OutboxPK, SKTo: cutoff, Limit: 100}
	sent := 0
	for {
		page, err := l.table.Query(ctx, q)
		if err != nil {
			return sent, fmt.Errorf("sweep outbox: %w", err)
		}
		for _, it := range page.Items {
			var rec Outbox
			if err := json.Unmarshal(it.Data, &rec); err != nil {
				return sent, fmt.Errorf("decode outbox record %s: %w", it.SK, err)
			}
			if err := l.publisher.Publish(ctx, rec); err != nil {
				return sent, fmt.Errorf("re-send outbox record %s: %w", it.SK, err)
			}
			if err := l.table.Delete(ctx, it.Key(), store.Cond{}); err != nil {
				return sent, fmt.Errorf("drop outbox record %s: %w", it.SK, err)
			}
			sent++
		}
		if page.Cursor == "" {
			return sent, nil
		}
		q.Cursor = page.Cursor
	}
}
