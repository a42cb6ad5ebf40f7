package webhook

import (
	"context"
	"sync"
	"time"
)

// MemoryQueue is the queue of local mode. It has the semantics of the SQS
// path: a failed message comes back after a backoff, and after MaxAttempts
// it is dead-lettered; it only does not survive a restart (the outbox
// sweep re-sends what was committed but not delivered).
type MemoryQueue struct {
	maxAttempts int
	backoff     func(attempt int) time.Duration
	handle      func(ctx context.Context, m Message, attempt int) error
	slots       chan struct{}
	ctx         context.Context
	cancel      context.CancelFunc
	wg          sync.WaitGroup

	mu      sync.Mutex
	dead    []DeadLetter
	running sync.WaitGroup // handlers running, which Close waits for
}

// DeadLetter is a message whose attempts ran out.
type DeadLetter struct {
	Message  Message
	Attempts int
	Err      string
}

// NewMemoryQueue returns a queue that gives each message maxAttempts tries,
// waiting backoff(n) after the n-th failure, and runs at most workers at once.
func NewMemoryQueue(maxAttempts, workers int, backoff func(int) time.Duration) *MemoryQueue {
	ctx, cancel := context.WithCancel(context.Background())
	return &MemoryQueue{maxAttempts: maxAttempts, backoff: backoff, slots: make(chan struct{}, workers), ctx: ctx, cancel: cancel}
}

// Start sets the handler; messages sent before Start wait for it.
func (q *MemoryQueue) Start(handle func(ctx context.Context, m Message, attempt int) error) {
	q.mu.Lock()
	q.handle = handle
	q.mu.Unlock()
}

// Send queues m for its first attempt.
func (q *MemoryQueue) Send(_ context.Context, m Message) error {
	q.schedule(m, 1, 0)
	return nil
}

func (q *MemoryQueue) schedule(m Message, attempt int, delay time.Duration) {
	q.wg.Add(1)
	time.AfterFunc(delay, func() {
		defer q.wg.Done()
		select {
		case q.slots <- struct{}{}:
		case <-q.ctx.Done():
			return
		}
		defer func() { <-q.slots }()
		if !q.begin() {
			return
		}
		defer q.running.Done()
		q.run(m, attempt)
	})
}

// begin counts a handler about to run, unless the queue is closed. It
// holds mu, as Close does to cancel, so no handler is counted after Close
// began waiting.
func (q *MemoryQueue) begin() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.ctx.Err() != nil {
		return false
	}
	q.running.Add(1)
	return true
}

func (q *MemoryQueue) run(m Message, attempt int) {
	q.mu.Lock()
	handle := q.handle
	q.mu.Unlock()
	if handle == nil {
		q.schedule(m, attempt, 10*time.Millisecond)
		return
	}
	err := handle(q.ctx, m, attempt)
	if err == nil || q.ctx.Err() != nil {
		return
	}
	if attempt >= q.maxAttempts {
		q.mu.Lock()
		q.dead = append(q.dead, DeadLetter{Message: m, Attempts: attempt, Err: err.Error()})
		q.mu.Unlock()
		return
	}
	q.schedule(m, attempt+1, q.backoff(attempt))
}

// Dead returns the dead-lettered messages so far.
func (q *MemoryQueue) Dead() []DeadLetter {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]DeadLetter(nil), q.dead...)
}

// Idle waits until no message is queued or running, or ctx ends.
func (q *MemoryQueue) Idle(ctx context.Context) error {
	done := make(chan struct{})
	go func() { q.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the queue: waiting messages are dropped, and it returns once
// the running ones have finished, so none of them uses the store after its
// owner closes it.
func (q *MemoryQueue) Close() {
	q.mu.Lock()
	q.cancel()
	q.mu.Unlock()
	q.running.Wait()
}
