// Package bolt is the embedded store.Table backend: one bbolt file holding
// the items, the GSI1 index and the cursor secret. It follows the DynamoDB
// backend's semantics so services behave the same on either.
package bolt

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bbolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/flagplane/flagplane/shared/store"
)

// LockTimeout is how long Open waits for another process to release the
// file before giving up.
const LockTimeout = time.Second

// ErrInUse is wrapped by Open's error when another process holds the file
// (bbolt takes an exclusive lock), so callers can say what to do instead.
var ErrInUse = errors.New("file is locked by another process")

// Table is a store.Table kept in one bbolt file. It is safe for concurrent
// use; bbolt serialises writers and lets readers run alongside.
type Table struct {
	db      *bbolt.DB
	path    string
	cursors *store.Cursors
	writes  *committer
}

var _ store.Table = (*Table)(nil)

// Open opens or creates the table file at path. The directory must exist.
// A file held open by another process makes Open fail after LockTimeout.
func Open(path string) (*Table, error) {
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("open store %s: %s is not a directory", path, dir)
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: LockTimeout})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("open store %s: %w (waited %s)", path, ErrInUse, LockTimeout)
	}
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	secret, err := initBuckets(db)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	cursors, err := store.NewCursors(secret)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return &Table{db: db, path: path, cursors: cursors, writes: &committer{db: db}}, nil
}

// initBuckets creates the buckets and, on first open, the cursor secret,
// which is kept in the file so cursors stay valid across restarts.
func initBuckets(db *bbolt.DB) ([]byte, error) {
	var secret []byte
	err := db.Update(func(tx *bbolt.Tx) error {
		for _, name := range [][]byte{bucketItems, bucketGSI1, bucketMeta} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("create bucket %s: %w", name, err)
			}
		}
		meta := tx.Bucket(bucketMeta)
		if s := meta.Get(metaCursorSecret); s != nil {
			secret = append([]byte{}, s...)
			return nil
		}
		secret = make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return fmt.Errorf("generate cursor secret: %w", err)
		}
		return meta.Put(metaCursorSecret, secret)
	})
	return secret, err
}

// Close releases the file. The Table must not be used afterwards.
func (t *Table) Close() error {
	if err := t.db.Close(); err != nil {
		return fmt.Errorf("close store %s: %w", t.path, err)
	}
	return nil
}

// Get returns the item with key k, or an error wrapping store.ErrNotFound.
func (t *Table) Get(ctx context.Context, k store.Key) (store.Item, error) {
	if err := ctx.Err(); err != nil {
		return store.Item{}, fmt.Errorf("get %s/%s: %w", k.PK, k.SK, err)
	}
	if err := checkKey(k); err != nil {
		return store.Item{}, fmt.Errorf("get: %w", err)
	}
	var it store.Item
	err := t.db.View(func(tx *bbolt.Tx) error {
		v := tx.Bucket(bucketItems).Get(itemKey(k))
		if v == nil {
			return store.ErrNotFound
		}
		var err error
		it, err = decodeItem(k, v)
		return err
	})
	if err != nil {
		return store.Item{}, fmt.Errorf("get %s/%s: %w", k.PK, k.SK, err)
	}
	return it, nil
}

// Put writes it when c holds, otherwise returns an error wrapping
// store.ErrConditionFailed.
func (t *Table) Put(ctx context.Context, it store.Item, c store.Cond) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("put %s/%s: %w", it.PK, it.SK, err)
	}
	if err := checkItem(it); err != nil {
		return fmt.Errorf("put: %w", err)
	}
	err := t.writes.update(func(tx *bbolt.Tx) error {
		old, exists, err := load(tx, it.Key())
		if err != nil {
			return refuse(err)
		}
		if err := holds(c, old, exists); err != nil {
			return refuse(err)
		}
		return put(tx, it, old, exists)
	})
	if err != nil {
		return fmt.Errorf("put %s/%s if %s: %w", it.PK, it.SK, c, err)
	}
	return nil
}

// Delete removes the item with key k when c holds. Deleting a missing item
// unconditionally is not an error, as in DynamoDB.
func (t *Table) Delete(ctx context.Context, k store.Key, c store.Cond) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("delete %s/%s: %w", k.PK, k.SK, err)
	}
	if err := checkKey(k); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	err := t.writes.update(func(tx *bbolt.Tx) error {
		old, exists, err := load(tx, k)
		if err != nil {
			return refuse(err)
		}
		if err := holds(c, old, exists); err != nil {
			return refuse(err)
		}
		return del(tx, old, exists)
	})
	if err != nil {
		return fmt.Errorf("delete %s/%s if %s: %w", k.PK, k.SK, c, err)
	}
	return nil
}

// Transact checks every condition, then applies every write, in one bolt
// transaction: either all writes happen or none. (The transaction may hold
// other callers' changes too; see committer.)
func (t *Table) Transact(ctx context.Context, ws []store.Write) error {
	if err := store.ValidateWrites(ws); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("transact: %w", err)
	}
	for i, w := range ws {
		var err error
		switch w.Kind {
		case store.OpPut:
			err = checkItem(w.Item)
		case store.OpDelete:
			err = checkKey(w.Item.Key())
		case store.OpCheck:
			err = checkKey(w.Item.Key())
			if err == nil && w.Cond.Kind == store.Always {
				// DynamoDB refuses a ConditionCheck without a condition.
				err = errors.New("a check needs a condition, not always")
			}
		default:
			err = fmt.Errorf("unknown operation %d", w.Kind)
		}
		if err != nil {
			return fmt.Errorf("transact write %d: %w", i, err)
		}
	}
	err := t.writes.update(func(tx *bbolt.Tx) error {
		type current struct {
			item   store.Item
			exists bool
		}
		olds := make([]current, len(ws))
		for i, w := range ws {
			old, exists, err := load(tx, w.Item.Key())
			if err != nil {
				return refuse(err)
			}
			if err := holds(w.Cond, old, exists); err != nil {
				if errors.Is(err, store.ErrConditionFailed) {
					return refuse(&store.TxError{Index: i, Key: w.Item.Key()})
				}
				return refuse(fmt.Errorf("write %d: %w", i, err))
			}
			olds[i] = current{old, exists}
		}
		// ValidateWrites refused duplicate keys, so no write below changes
		// an item another write's old state was read from.
		for i, w := range ws {
			var err error
			switch w.Kind {
			case store.OpPut:
				err = put(tx, w.Item, olds[i].item, olds[i].exists)
			case store.OpDelete:
				err = del(tx, olds[i].item, olds[i].exists)
			}
			if err != nil {
				return fmt.Errorf("write %d: %w", i, err)
			}
		}
		return nil
	})
	if err != nil {
		var txErr *store.TxError
		if errors.As(err, &txErr) {
			return txErr
		}
		return fmt.Errorf("transact: %w", err)
	}
	return nil
}

// load reads the current item with key k, if any.
func load(tx *bbolt.Tx, k store.Key) (store.Item, bool, error) {
	v := tx.Bucket(bucketItems).Get(itemKey(k))
	if v == nil {
		return store.Item{}, false, nil
	}
	it, err := decodeItem(k, v)
	return it, err == nil, err
}

// holds checks c against the current item; a failed condition wraps
// store.ErrConditionFailed.
func holds(c store.Cond, old store.Item, exists bool) error {
	var ok bool
	switch c.Kind {
	case store.Always:
		ok = true
	case store.NotExists:
		ok = !exists
	case store.Exists:
		ok = exists
	case store.VersionIs:
		ok = exists && old.Version == c.Version
	default:
		return fmt.Errorf("unknown condition %d", c.Kind)
	}
	if !ok {
		return store.ErrConditionFailed
	}
	return nil
}

// put stores it, replacing old, and moves its index entry.
func put(tx *bbolt.Tx, it, old store.Item, exists bool) error {
	gsi := tx.Bucket(bucketGSI1)
	if exists && inIndex(old) {
		if err := gsi.Delete(indexKey(old)); err != nil {
			return fmt.Errorf("unindex: %w", err)
		}
	}
	if err := tx.Bucket(bucketItems).Put(itemKey(it.Key()), encodeItem(it)); err != nil {
		return fmt.Errorf("store item: %w", err)
	}
	if inIndex(it) {
		if err := gsi.Put(indexKey(it), []byte{}); err != nil {
			return fmt.Errorf("index: %w", err)
		}
	}
	return nil
}

// del removes old and its index entry; a missing item is left alone.
func del(tx *bbolt.Tx, old store.Item, exists bool) error {
	if !exists {
		return nil
	}
	if inIndex(old) {
		if err := tx.Bucket(bucketGSI1).Delete(indexKey(old)); err != nil {
			return fmt.Errorf("unindex: %w", err)
		}
	}
	if err := tx.Bucket(bucketItems).Delete(itemKey(old.Key())); err != nil {
		return fmt.Errorf("remove item: %w", err)
	}
	return nil
}
