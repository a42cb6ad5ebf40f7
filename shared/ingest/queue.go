package ingest

import (
	"context"
	"log/slog"
	"sync"

	"github.com/flagplane/flagplane/shared/fault"
)

// Queue takes payloads from the ingest handler to the aggregator.
type Queue interface {
	// Send hands one payload over; the handler answers 202 once it returns.
	Send(ctx context.Context, p Payload) error
}

// MemoryQueue is the local delivery path: payloads wait in a buffered
// channel and one worker applies them, so the handler answers at once.
// When the buffer is full, Send waits: the SDK's request slows down rather
// than memory growing.
type MemoryQueue struct {
	ch      chan Payload
	agg     *Aggregator
	logger  *slog.Logger
	pending sync.WaitGroup
	done    chan struct{}
	// closed refuses sends after Close; mu keeps a send from racing the
	// channel's close (a handler the shutdown grace cut off may still send).
	mu     sync.RWMutex
	closed bool
}

// NewMemoryQueue starts the worker over agg.
func NewMemoryQueue(agg *Aggregator, buffer int, logger *slog.Logger) *MemoryQueue {
	q := &MemoryQueue{ch: make(chan Payload, buffer), agg: agg, logger: logger, done: make(chan struct{})}
	go q.run()
	return q
}

// Send queues p; after Close it refuses with 503.
func (q *MemoryQueue) Send(ctx context.Context, p Payload) error {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if q.closed {
		return fault.New(fault.Unavailable, "the server is stopping and takes no more events; send them again")
	}
	q.pending.Add(1)
	select {
	case q.ch <- p:
		return nil
	case <-ctx.Done():
		q.pending.Done()
		return ctx.Err()
	}
}

func (q *MemoryQueue) run() {
	defer close(q.done)
	for p := range q.ch {
		if _, err := q.agg.Apply(context.Background(), p); err != nil {
			q.logger.Error("ingest payload failed", "environmentId", p.EnvID, "payloadId", p.PayloadID, "err", err)
		}
		q.pending.Done()
	}
}

// Wait returns when every payload sent so far has been applied.
func (q *MemoryQueue) Wait() { q.pending.Wait() }

// Close applies what is queued and stops the worker.
func (q *MemoryQueue) Close() {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.ch)
	}
	q.mu.Unlock()
	<-q.done
}

// Direct applies each payload before Send returns: the Lambda function's
// path until the SQS ingest queue lands, and tests that read at once.
type Direct struct{ Agg *Aggregator }

// Send applies p.
func (d Direct) Send(ctx context.Context, p Payload) error {
	_, err := d.Agg.Apply(ctx, p)
	return err
}
