package webhook

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

func TestMemoryQueueClose(t *testing.T) {
	t.Run("close waits for a running handler, and nothing runs after it", func(t *testing.T) {
		q := NewMemoryQueue(3, 2, func(int) time.Duration { return time.Millisecond })
		started, release := make(chan struct{}), make(chan struct{})
		var ran atomic.Int32
		q.Start(func(ctx context.Context, m Message, _ int) error {
			ran.Add(1)
			if m.EntryID == "slow" {
				close(started)
				<-release
			}
			return nil
		})
		if err := q.Send(t.Context(), Message{EntryID: "slow"}); err != nil {
			t.Fatal(err)
		}
		<-started
		closed := make(chan struct{})
		go func() { q.Close(); close(closed) }()
		select {
		case <-closed:
			t.Fatal("Close returned while a handler was running")
		case <-time.After(50 * time.Millisecond):
		}
		close(release)
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			t.Fatal("Close did not return once the handler finished")
		}
		_ = q.Send(t.Context(), Message{EntryID: "late"})
		time.Sleep(20 * time.Millisecond)
		if n := ran.Load(); n != 1 {
			t.Fatalf("%d handlers ran, want only the one before Close", n)
		}
	})
}
