package bolt

import (
	"errors"
	"sync"

	bbolt "go.etcd.io/bbolt"
)

// A commit of the data file costs two fsyncs (pages, then the meta page),
// a few milliseconds on common disks, and bbolt runs one write transaction
// at a time: one commit per write would cap every writer together at a few
// hundred writes a second. Writers that arrive while a commit is in flight
// are therefore committed together in the next transaction (group commit).
// Each write is still acknowledged only after the transaction holding it is
// on disk, and a lone writer waits for nobody.

// change is one write's work inside a transaction. It reads and checks
// first; when a check fails it returns a refusal having written nothing,
// so the writes of the others in its transaction stand.
type change func(tx *bbolt.Tx) error

// refusal marks an error a change returned before writing anything.
type refusal struct{ err error }

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// refuse wraps err as a refusal, for a change's check phase.
func refuse(err error) error {
	if err == nil {
		return nil
	}
	return &refusal{err: err}
}

// pending is a change waiting for its transaction, and where its result goes.
type pending struct {
	do   change
	done chan error
}

// committer gathers concurrent changes into shared transactions.
type committer struct {
	db      *bbolt.DB
	mu      sync.Mutex
	queue   []pending
	running bool
}

// update runs do in a write transaction, usually shared with other
// changes, and returns once that transaction is committed (or do failed).
// A refusal is returned as the error it wraps.
func (c *committer) update(do change) error {
	p := pending{do: do, done: make(chan error, 1)}
	c.mu.Lock()
	c.queue = append(c.queue, p)
	if !c.running {
		c.running = true
		go c.lead()
	}
	c.mu.Unlock()
	return <-p.done
}

// lead commits the queue, batch after batch, until it is empty. One runs
// at a time; changes queued while it commits go into its next batch.
func (c *committer) lead() {
	for {
		c.mu.Lock()
		batch := c.queue
		c.queue = nil
		if len(batch) == 0 {
			c.running = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		c.commit(batch)
	}
}

// commit runs batch in one transaction. A change refused is answered with
// its refusal and the rest go on; any other error rolls the transaction
// back, and then each change runs in a transaction of its own, so a
// failure is reported to the change that caused it and no other.
func (c *committer) commit(batch []pending) {
	results := make([]error, len(batch))
	err := c.db.Update(func(tx *bbolt.Tx) error {
		for i, p := range batch {
			err := p.do(tx)
			var r *refusal
			if errors.As(err, &r) {
				results[i] = r.err
				continue
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		for i, p := range batch {
			p.done <- results[i]
		}
		return
	}
	if len(batch) == 1 {
		batch[0].done <- err
		return
	}
	for _, p := range batch {
		p.done <- unwrapRefusal(c.db.Update(p.do))
	}
}

// unwrapRefusal returns the error a refusal wraps, or err itself.
func unwrapRefusal(err error) error {
	var r *refusal
	if errors.As(err, &r) {
		return r.err
	}
	return err
}
