package bolt

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"github.com/flagplane/flagplane/shared/store"
)

// holdCommitter starts a change that blocks the committer until the
// returned release is called, so the changes queued meanwhile share the
// next transaction.
func holdCommitter(tb testing.TB, c *committer) (release func(), done <-chan error) {
	tb.Helper()
	started, gate := make(chan struct{}), make(chan struct{})
	result := make(chan error, 1)
	go func() {
		result <- c.update(func(*bbolt.Tx) error {
			close(started)
			<-gate
			return nil
		})
	}()
	<-started
	return func() { close(gate) }, result
}

// queued waits until n changes are queued behind the one in flight.
func queued(c *committer, n int) {
	for {
		c.mu.Lock()
		l := len(c.queue)
		c.mu.Unlock()
		if l >= n {
			return
		}
	}
}

// fileTx is the id of the file's last committed transaction: each commit
// adds one.
func fileTx(tb testing.TB, tbl *Table) int {
	tb.Helper()
	var id int
	if err := tbl.db.View(func(tx *bbolt.Tx) error { id = int(tx.ID()); return nil }); err != nil {
		tb.Fatal(err)
	}
	return id
}

func TestGroupCommit(t *testing.T) {
	t.Run("changes queued during a commit share the next transaction and are each answered", func(t *testing.T) {
		tbl := openTemp(t)
		before := fileTx(t, tbl)
		release, first := holdCommitter(t, tbl.writes)
		const n = 10
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = tbl.Put(t.Context(), store.Item{PK: "p", SK: fmt.Sprint(i), Data: []byte(`{}`)}, store.IfNotExists())
			}()
		}
		queued(tbl.writes, n)
		release()
		wg.Wait()
		if err := <-first; err != nil {
			t.Fatal(err)
		}
		for i, err := range errs {
			if err != nil {
				t.Errorf("put %d: %v", i, err)
			}
		}
		page, err := tbl.Query(t.Context(), store.Query{PK: "p"})
		if err != nil || len(page.Items) != n {
			t.Fatalf("stored %d items (%v), want %d", len(page.Items), err, n)
		}
		// The held change's commit, then one for the ten.
		if commits := fileTx(t, tbl) - before; commits != 2 {
			t.Errorf("%d commits for the held change and %d puts queued together, want 2", commits, n)
		}
	})

	t.Run("of two creates of one key in a transaction the second is refused and the first stands", func(t *testing.T) {
		tbl := openTemp(t)
		release, first := holdCommitter(t, tbl.writes)
		errs := make(chan error, 2)
		for _, data := range []string{`{"a":1}`, `{"a":2}`} {
			go func() {
				errs <- tbl.Put(t.Context(), store.Item{PK: "p", SK: "k", Data: []byte(data)}, store.IfNotExists())
			}()
		}
		queued(tbl.writes, 2)
		release()
		<-first
		var refused, stored int
		for range 2 {
			err := <-errs
			switch {
			case err == nil:
				stored++
			case errors.Is(err, store.ErrConditionFailed):
				refused++
			default:
				t.Fatalf("unexpected error: %v", err)
			}
		}
		if stored != 1 || refused != 1 {
			t.Fatalf("%d stored and %d refused, want one of each", stored, refused)
		}
		if _, err := tbl.Get(t.Context(), store.Key{PK: "p", SK: "k"}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a change failing after it wrote is rolled back alone and the others commit", func(t *testing.T) {
		tbl := openTemp(t)
		release, first := holdCommitter(t, tbl.writes)
		broken := errors.New("disk on fire")
		bad := make(chan error, 1)
		go func() {
			bad <- tbl.writes.update(func(tx *bbolt.Tx) error {
				if err := put(tx, store.Item{PK: "p", SK: "bad", Data: []byte(`{}`)}, store.Item{}, false); err != nil {
					return err
				}
				return broken
			})
		}()
		queued(tbl.writes, 1)
		good := make(chan error, 1)
		go func() {
			good <- tbl.Put(t.Context(), store.Item{PK: "p", SK: "good", Data: []byte(`{}`)}, store.Cond{})
		}()
		queued(tbl.writes, 2)
		release()
		<-first
		if err := <-bad; !errors.Is(err, broken) {
			t.Fatalf("the failing change got %v, want its own error", err)
		}
		if err := <-good; err != nil {
			t.Fatalf("the good change got %v", err)
		}
		if _, err := tbl.Get(t.Context(), store.Key{PK: "p", SK: "good"}); err != nil {
			t.Fatalf("the good change is not stored: %v", err)
		}
		if _, err := tbl.Get(t.Context(), store.Key{PK: "p", SK: "bad"}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the failed change's write is visible: %v", err)
		}
	})
}
