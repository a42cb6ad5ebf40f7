package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/store"
)

// Queue takes payloads from the ingest handler to the aggregator.
type Queue interface {
	// Send hands one payload over; the handler answers 202 once it
	// returns, so a payload Send took must not be lost.
	Send(ctx context.Context, p Payload) error
}

// InboxWait is how long Send waits for room in a full inbox before it
// answers 503: the SDK keeps its events and sends them again.
const InboxWait = 5 * time.Second

// applyAttempts is how often the inbox's worker tries a payload before it
// gives up on it (the table keeps failing on it), so one payload cannot
// stop every later one.
const applyAttempts = 5

// Inbox is the local delivery path. Send keeps the payload in the table
// (the data file), in the same commit that marks its payload id, before
// the handler answers 202; one worker applies the kept payloads, oldest
// first, and removes each once applied. A restart applies what the last
// run kept, and Apply's step marks make a payload applied again after a
// crash count once. At most max payloads are kept unapplied: Send waits
// for room (InboxWait at most, then 503), so a burst slows the SDKs down
// rather than growing the file or the memory without bound.
type Inbox struct {
	table  store.Table
	agg    *Aggregator
	logger *slog.Logger
	// slots holds one token per payload this process kept and its worker
	// has not removed yet.
	slots chan struct{}
	// unslotted counts the payloads found kept at start, which took no
	// slot; only the worker touches it once running.
	unslotted int
	// wait is how long Send waits for room: InboxWait unless SetWait.
	wait    time.Duration
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	pending sync.WaitGroup
	// closed refuses sends after Close; mu keeps a send from racing the
	// stop (a handler the shutdown grace cut off may still send).
	mu     sync.RWMutex
	closed bool
}

// NewInbox starts the worker over agg, which applies into table; it first
// applies the payloads a previous run kept and did not remove.
func NewInbox(ctx context.Context, table store.Table, agg *Aggregator, max int, logger *slog.Logger) (*Inbox, error) {
	kept, err := countKept(ctx, table)
	if err != nil {
		return nil, err
	}
	q := &Inbox{table: table, agg: agg, logger: logger, slots: make(chan struct{}, max), unslotted: kept, wait: InboxWait,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if kept > 0 {
		logger.Info("applying SDK event payloads accepted before the last stop", "payloads", kept)
		q.pending.Add(kept)
	}
	go q.run()
	return q, nil
}

func countKept(ctx context.Context, table store.Table) (int, error) {
	n := 0
	q := store.Query{PK: store.IngestInboxPK, Limit: 16}
	for {
		page, err := table.Query(ctx, q)
		if err != nil {
			return 0, fmt.Errorf("read the ingest inbox: %w", err)
		}
		n += len(page.Items)
		if page.Cursor == "" {
			return n, nil
		}
		q.Cursor = page.Cursor
	}
}

// SetWait sets how long Send waits for room in a full inbox; call it
// before the inbox is in use.
func (q *Inbox) SetWait(d time.Duration) { q.wait = d }

// Send keeps p in the inbox, marking its payload id (one is made up for a
// payload without). A payload id marked before is a duplicate: Send
// returns nil and keeps nothing, so it counts once.
func (q *Inbox) Send(ctx context.Context, p Payload) error {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if q.closed {
		return fault.New(fault.Unavailable, "the server is stopping and takes no more events; send them again")
	}
	if p.PayloadID == "" {
		p.PayloadID = uuid.NewString()
	}
	wait := time.NewTimer(q.wait)
	defer wait.Stop()
	select {
	case q.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-wait.C:
		return fault.New(fault.Unavailable, "the server is busy applying earlier events; send these again later")
	}
	kept, err := q.keep(ctx, p)
	if err != nil || !kept {
		<-q.slots
		return err
	}
	q.pending.Add(1)
	select {
	case q.wake <- struct{}{}:
	default: // the worker is already woken
	}
	return nil
}

// keep writes the payload and its pending mark in one commit; false when
// the mark existed (a duplicate). The head item holds what the request
// said about its sender, and the body follows as sent in parts of at most
// inboxPart bytes: a body is up to MaxBody (5 MiB), far above what one
// item holds, and encoding it into the head's JSON would copy it twice
// more and leave a buffer of its size in encoding/json's pool.
func (q *Inbox) keep(ctx context.Context, p Payload) (bool, error) {
	body := p.Body
	p.Body = nil
	head, err := json.Marshal(p)
	if err != nil {
		return false, fmt.Errorf("encode payload %q: %w", p.PayloadID, err)
	}
	mark := store.PayloadKey(p.EnvID, p.PayloadID)
	pending, _ := json.Marshal(payloadMark{Pending: true})
	ttl := time.UnixMilli(p.ReceivedAt).Add(PayloadTTL).Unix()
	k := store.IngestInboxKey(p.ReceivedAt, p.EnvID, p.PayloadID)
	writes := []store.Write{
		store.Put(store.Item{PK: mark.PK, SK: mark.SK, Version: 1, TTL: ttl, Data: pending}, store.IfNotExists()),
		store.Put(store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: head}, store.Cond{}),
	}
	for n := 1; len(body) > 0; n++ {
		part := body[:min(len(body), inboxPart)]
		body = body[len(part):]
		pk := store.IngestInboxPartKey(k, n)
		writes = append(writes, store.Put(store.Item{PK: pk.PK, SK: pk.SK, Version: 1, Data: part}, store.Cond{}))
	}
	err = q.table.Transact(ctx, writes)
	if errors.Is(err, store.ErrConditionFailed) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("keep payload %q: %w", p.PayloadID, err)
	}
	return true, nil
}

// inboxPart is the most bytes of a body one inbox item holds: a body of
// MaxBody is kept in 20 parts, under the store's item size limit, and
// with its head and mark in one commit.
const inboxPart = 256 << 10

// readKept returns the kept payload whose head item is head, its body
// joined from its parts, and the keys of those parts. (A head written
// before bodies were kept in parts holds the whole payload.)
func (q *Inbox) readKept(ctx context.Context, head store.Item) (Payload, []store.Key, error) {
	var (
		p     Payload
		parts [][]byte
		keys  []store.Key
		size  int
	)
	for n := 1; ; n++ {
		k := store.IngestInboxPartKey(head.Key(), n)
		part, err := q.table.Get(ctx, k)
		if errors.Is(err, store.ErrNotFound) {
			break
		}
		if err != nil {
			return p, nil, fmt.Errorf("read part %d of kept payload %s: %w", n, head.SK, err)
		}
		parts, keys, size = append(parts, part.Data), append(keys, k), size+len(part.Data)
	}
	if err := json.Unmarshal(head.Data, &p); err != nil {
		return p, keys, fmt.Errorf("%w: %v", errUnreadable, err) // with its parts' keys, to remove them too
	}
	if len(parts) > 0 {
		p.Body = make(json.RawMessage, 0, size)
		for _, part := range parts {
			p.Body = append(p.Body, part...)
		}
	}
	return p, keys, nil
}

// errUnreadable is a kept head that does not decode: it is dropped, as
// no later attempt can read it.
var errUnreadable = errors.New("unreadable payload")

func (q *Inbox) run() {
	defer close(q.done)
	ctx := context.Background()
	for {
		page, err := q.table.Query(ctx, store.Query{PK: store.IngestInboxPK, Limit: 1})
		if err != nil {
			q.logger.Error("read the ingest inbox", "err", err)
			if !q.pause(time.Second) {
				return
			}
			continue
		}
		if len(page.Items) == 0 {
			select {
			case <-q.wake:
				continue
			case <-q.stop:
				// Sends ended before stop closed, and each woke us after its
				// commit: an empty inbox now stays empty.
				return
			}
		}
		if !q.applyKept(ctx, page.Items[0]) && !q.pause(time.Second) {
			return
		}
	}
}

// applyKept applies one kept payload and removes it, reporting whether
// it did; a payload the table keeps failing on is given up after
// applyAttempts, and logged.
func (q *Inbox) applyKept(ctx context.Context, it store.Item) bool {
	p, parts, err := q.readKept(ctx, it)
	if err != nil && !errors.Is(err, errUnreadable) {
		q.logger.Error("read a payload of the ingest inbox", "key", it.SK, "err", err)
		return false
	}
	if err != nil {
		q.logger.Error("dropped an unreadable payload from the ingest inbox", "key", it.SK, "err", err)
	} else {
		for attempt := 1; ; attempt++ {
			_, err := q.agg.Apply(ctx, p)
			if err == nil {
				break
			}
			if attempt == applyAttempts {
				q.logger.Error("ingest payload failed; dropped it", "environmentId", p.EnvID, "payloadId", p.PayloadID, "attempts", attempt, "err", err)
				break
			}
			q.logger.Warn("ingest payload failed; trying again", "environmentId", p.EnvID, "payloadId", p.PayloadID, "attempt", attempt, "err", err)
			time.Sleep(time.Duration(attempt) * 200 * time.Millisecond)
		}
	}
	// Removed once applied: a crash before this delete applies the payload
	// again at the next start (or the next turn, when the delete failed),
	// which its marks make a duplicate.
	if err := dropStepMarks(ctx, q.table, p); err != nil {
		q.logger.Error("remove the step marks of an applied payload", "payloadId", p.PayloadID, "err", err)
		return false
	}
	removal := []store.Write{store.Delete(it.Key(), store.Cond{})}
	for _, k := range parts {
		removal = append(removal, store.Delete(k, store.Cond{}))
	}
	if err := q.table.Transact(ctx, removal); err != nil {
		q.logger.Error("remove an applied payload from the ingest inbox", "key", it.SK, "err", err)
		return false
	}
	if q.unslotted > 0 {
		// Oldest first: the payloads found at start go before any sent since.
		if q.unslotted--; q.unslotted == 0 {
			q.logger.Info("applied the SDK event payloads accepted before the last stop")
		}
	} else {
		<-q.slots
	}
	q.pending.Done()
	return true
}

// dropStepMarks deletes the step marks of a payload applied in full:
// its own mark says so from then on. The embedded store removes no
// expired item, so they would pile up in the data file; on DynamoDB
// their TTL removes them for free.
func dropStepMarks(ctx context.Context, table store.Table, p Payload) error {
	if p.PayloadID == "" {
		return nil
	}
	q := store.Query{PK: store.PayloadKey(p.EnvID, p.PayloadID).PK, SKPrefix: store.PayloadStepPrefix, Limit: store.MaxWrites}
	for {
		page, err := table.Query(ctx, q)
		if err != nil {
			return fmt.Errorf("list step marks: %w", err)
		}
		if len(page.Items) == 0 {
			return nil
		}
		ws := make([]store.Write, len(page.Items))
		for i, it := range page.Items {
			ws[i] = store.Delete(it.Key(), store.Cond{})
		}
		if err := table.Transact(ctx, ws); err != nil {
			return fmt.Errorf("delete %d step marks: %w", len(ws), err)
		}
	}
}

// pause waits d, or reports false when the inbox is stopping.
func (q *Inbox) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-q.stop:
		return false
	}
}

// Wait returns when every payload kept so far has been applied.
func (q *Inbox) Wait() { q.pending.Wait() }

// Close refuses new sends, applies what is kept, and stops the worker.
// The table must stay open until it returns.
func (q *Inbox) Close() {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.stop)
	}
	q.mu.Unlock()
	<-q.done
}

// Direct applies each payload before Send returns: the Lambda function's
// path when no ingest queue is configured, and tests that read at once.
type Direct struct{ Agg *Aggregator }

// Send applies p.
func (d Direct) Send(ctx context.Context, p Payload) error {
	_, err := d.Agg.Apply(ctx, p)
	return err
}
