package webhook_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/store/bolt"
	"github.com/flagplane/flagplane/shared/webhook"
)

// consumerRig is a table, an audit log publishing to an in-process queue,
// and a dispatcher running that queue's messages.
type consumerRig struct {
	log   *audit.Log
	queue *webhook.MemoryQueue
	disp  *webhook.Dispatcher
}

func newConsumerRig(tb testing.TB, attempts int) *consumerRig {
	tb.Helper()
	table, err := bolt.Open(filepath.Join(tb.TempDir(), "consumers.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { table.Close() })
	queue := webhook.NewMemoryQueue(attempts, 2, func(int) time.Duration { return time.Millisecond })
	tb.Cleanup(queue.Close)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	log := audit.New(table, webhook.Publisher{Queue: queue}, "acct", logger, time.Now)
	hooks := webhook.NewService(table, log, webhook.Guard{AllowPrivate: true}, time.Now)
	disp := webhook.NewDispatcher(table, hooks, log, queue, webhook.Guard{AllowPrivate: true}, func(audit.Entry) ([]byte, error) { return []byte("{}"), nil }, time.Now)
	return &consumerRig{log: log, queue: queue, disp: disp}
}

func (r *consumerRig) commit(tb testing.TB, name string) audit.Entry {
	tb.Helper()
	e, err := r.log.Commit(context.Background(), audit.Change{Kind: "thing", Resource: "thing/" + name, Actions: []string{"createThing"}, Name: name, TitleVerb: "made"})
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

func (r *consumerRig) idle(tb testing.TB) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.queue.Idle(ctx); err != nil {
		tb.Fatal("the queue did not go idle:", err)
	}
}

// seen records what a consumer was handed, by entry id.
type seen struct {
	mu       sync.Mutex
	attempts map[string][]int
}

func (s *seen) handle(fail func(attempt int) bool) func(context.Context, audit.Entry, int) error {
	return func(_ context.Context, e audit.Entry, attempt int) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.attempts == nil {
			s.attempts = map[string][]int{}
		}
		s.attempts[e.ID] = append(s.attempts[e.ID], attempt)
		if fail(attempt) {
			return errors.New("the store is down")
		}
		return nil
	}
}

func TestOutboxConsumers(t *testing.T) {
	t.Run("every consumer is handed each committed entry once when it succeeds", func(t *testing.T) {
		rig := newConsumerRig(t, 3)
		var a, b seen
		never := func(int) bool { return false }
		rig.disp.AddConsumer(webhook.Consumer{Name: "a", Handle: a.handle(never)})
		rig.disp.AddConsumer(webhook.Consumer{Name: "b", Handle: b.handle(never)})
		rig.queue.Start(rig.disp.Handle)
		e1, e2 := rig.commit(t, "one"), rig.commit(t, "two")
		rig.idle(t)
		for name, s := range map[string]*seen{"a": &a, "b": &b} {
			if len(s.attempts) != 2 || len(s.attempts[e1.ID]) != 1 || len(s.attempts[e2.ID]) != 1 {
				t.Errorf("consumer %s was handed %v; want each of %s and %s once", name, s.attempts, e1.ID, e2.ID)
			}
		}
	})
	t.Run("a failing consumer is retried and dead-lettered on its own, without holding back the others", func(t *testing.T) {
		rig := newConsumerRig(t, 3)
		var good, bad, flaky seen
		rig.disp.AddConsumer(webhook.Consumer{Name: "good", Handle: good.handle(func(int) bool { return false })})
		rig.disp.AddConsumer(webhook.Consumer{Name: "bad", Handle: bad.handle(func(int) bool { return true })})
		rig.disp.AddConsumer(webhook.Consumer{Name: "flaky", Handle: flaky.handle(func(n int) bool { return n == 1 })})
		rig.queue.Start(rig.disp.Handle)
		e := rig.commit(t, "one")
		rig.idle(t)
		if got := good.attempts[e.ID]; len(got) != 1 {
			t.Errorf("the good consumer ran %v times; want once", got)
		}
		if got := flaky.attempts[e.ID]; len(got) != 2 || got[1] != 2 {
			t.Errorf("the flaky consumer ran attempts %v; want [1 2]", got)
		}
		if got := bad.attempts[e.ID]; len(got) != 3 {
			t.Errorf("the failing consumer ran attempts %v; want 3, the queue's limit", got)
		}
		dead := rig.queue.Dead()
		if len(dead) != 1 || dead[0].Message.Consumer != "bad" || dead[0].Message.EntryID != e.ID {
			t.Errorf("dead letters %+v; want the failing consumer's message only", dead)
		}
	})
	t.Run("a consumer is handed only the entries it wants, the others without a message", func(t *testing.T) {
		rig := newConsumerRig(t, 3)
		var picky seen
		rig.disp.AddConsumer(webhook.Consumer{Name: "picky", Handle: picky.handle(func(int) bool { return false }),
			Wants: func(e audit.Entry) bool { return e.Name == "wanted" }})
		rig.queue.Start(rig.disp.Handle)
		wanted := rig.commit(t, "wanted")
		rig.commit(t, "other")
		rig.idle(t)
		if len(picky.attempts) != 1 || len(picky.attempts[wanted.ID]) != 1 {
			t.Errorf("the consumer was handed %v; want %s once and nothing else", picky.attempts, wanted.ID)
		}
	})
	t.Run("a message for a consumer this process does not link is dropped, not retried", func(t *testing.T) {
		rig := newConsumerRig(t, 3)
		e := rig.commit(t, "one")
		if err := rig.disp.Handle(context.Background(), webhook.Message{EntryID: e.ID, Consumer: "gone"}, 1); err != nil {
			t.Errorf("Handle = %v; want nil", err)
		}
	})
}
