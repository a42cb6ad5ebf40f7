// Package store holds the single-table item model and the Table interface
// that every backend (DynamoDB, embedded bbolt) implements.
//
// Every resource is one Item: a partition key, a sort key, optional keys
// for the one generic secondary index, a version for optimistic locking,
// an optional expiry and the resource's JSON document.
package store

import (
	"context"
	"errors"
	"fmt"
)

// Item is one row of the table.
type Item struct {
	PK string
	SK string
	// GSI1PK and GSI1SK place the item in IndexGSI1; when either is empty
	// the item is not in the index.
	GSI1PK string
	GSI1SK string
	// Version is the optimistic-locking counter; backends store it as is.
	Version int64
	// TTL is the Unix time in seconds after which the table may remove the
	// item; 0 never. Removal is lazy (DynamoDB takes up to days) and no
	// backend hides expired items: readers compare TTL with the clock.
	TTL int64
	// Data is the resource document, usually JSON.
	Data []byte
}

// Key names one item.
type Key struct {
	PK string
	SK string
}

// Key returns the primary key of the item.
func (it Item) Key() Key { return Key{PK: it.PK, SK: it.SK} }

// CondKind says what must hold for a write to happen.
type CondKind int

const (
	// Always writes unconditionally.
	Always CondKind = iota
	// NotExists requires that no item has the key.
	NotExists
	// Exists requires that an item has the key.
	Exists
	// VersionIs requires that the item exists with Version equal to Cond.Version.
	VersionIs
)

// Cond is the condition of one write.
type Cond struct {
	Kind    CondKind
	Version int64
}

// IfNotExists, IfExists and IfVersion build the common conditions.
func IfNotExists() Cond       { return Cond{Kind: NotExists} }
func IfExists() Cond          { return Cond{Kind: Exists} }
func IfVersion(v int64) Cond  { return Cond{Kind: VersionIs, Version: v} }
func (c Cond) String() string { return condNames[c.Kind] }

var condNames = map[CondKind]string{Always: "always", NotExists: "not-exists", Exists: "exists", VersionIs: "version"}

// OpKind is what one write in a transaction does.
type OpKind int

const (
	// OpPut creates or replaces Item.
	OpPut OpKind = iota
	// OpDelete removes the item with Item's key.
	OpDelete
	// OpCheck writes nothing; it only asserts Cond on Item's key.
	OpCheck
)

// Write is one element of an atomic multi-item write.
type Write struct {
	Kind OpKind
	Item Item
	Cond Cond
}

// Put, Delete and Check build Writes.
func Put(it Item, c Cond) Write { return Write{Kind: OpPut, Item: it, Cond: c} }
func Delete(k Key, c Cond) Write {
	return Write{Kind: OpDelete, Item: Item{PK: k.PK, SK: k.SK}, Cond: c}
}
func Check(k Key, c Cond) Write { return Write{Kind: OpCheck, Item: Item{PK: k.PK, SK: k.SK}, Cond: c} }

// MaxWrites is the most items one Transact call may touch (DynamoDB's limit).
const MaxWrites = 100

// Query selects items of one partition, in sort-key order.
type Query struct {
	// Index is "" for the table or IndexGSI1.
	Index string
	// PK is the partition key value (GSI1PK when Index is IndexGSI1).
	PK string
	// SKPrefix keeps sort keys that begin with it. Ignored when a bound is set.
	SKPrefix string
	// SKFrom and SKTo bound the sort key, both inclusive; empty means open.
	// SKFrom above SKTo selects nothing.
	SKFrom string
	SKTo   string
	// Limit is the most items returned; 0 means no limit (backends may still page).
	Limit int
	// Cursor continues a previous query; it must come from the same query.
	Cursor string
	// Descending walks the sort key from high to low.
	Descending bool
	// Eventual lets DynamoDB answer a table Query from an eventually
	// consistent read, at half the read units: a write may take a moment
	// to show. For readers that read back over what they might have
	// missed (the change feed); index reads are always eventual.
	Eventual bool
}

// Page is one result of a Query. Cursor is empty when nothing follows. A
// page cut short by DynamoDB's 1 MB response limit may hold fewer than
// Limit items and still carry a cursor.
type Page struct {
	Items  []Item
	Cursor string
}

// Table is the storage every service uses.
type Table interface {
	// Get returns the item or an error wrapping ErrNotFound.
	Get(ctx context.Context, k Key) (Item, error)
	// Put writes one item when c holds; otherwise an error wrapping ErrConditionFailed.
	Put(ctx context.Context, it Item, c Cond) error
	// Delete removes one item when c holds; deleting a missing item with Always is not an error.
	Delete(ctx context.Context, k Key, c Cond) error
	// Query returns one page of a partition. Reads of IndexGSI1 are
	// eventually consistent on DynamoDB: a write may take a moment to show.
	Query(ctx context.Context, q Query) (Page, error)
	// Transact applies all writes or none. When a condition fails the error wraps
	// ErrConditionFailed and is a *TxError saying which write failed.
	Transact(ctx context.Context, ws []Write) error
}

// ErrNotFound is returned (wrapped) when an item does not exist.
var ErrNotFound = errors.New("item not found")

// ErrConditionFailed is returned (wrapped) when a write's condition did not hold.
var ErrConditionFailed = errors.New("condition failed")

// ErrConflict is returned (wrapped) when a transaction lost to a concurrent
// one touching the same items; nothing was written and a retry may succeed.
var ErrConflict = errors.New("concurrent transaction conflict")

// ErrBadCursor is returned (wrapped) when a cursor was altered or belongs to another query.
var ErrBadCursor = errors.New("invalid cursor")

// TxError tells which write of a transaction failed its condition.
type TxError struct {
	Index int // position in the writes; -1 when the backend cannot tell
	Key   Key
}

func (e *TxError) Error() string {
	return fmt.Sprintf("transaction write %d (%s/%s): %v", e.Index, e.Key.PK, e.Key.SK, ErrConditionFailed)
}

// Unwrap lets errors.Is(err, ErrConditionFailed) hold.
func (e *TxError) Unwrap() error { return ErrConditionFailed }

// ValidateWrites checks what every backend refuses alike, before touching data.
func ValidateWrites(ws []Write) error {
	if len(ws) == 0 {
		return errors.New("transaction has no writes")
	}
	if len(ws) > MaxWrites {
		return fmt.Errorf("transaction has %d writes, at most %d allowed", len(ws), MaxWrites)
	}
	seen := make(map[Key]bool, len(ws))
	for i, w := range ws {
		k := w.Item.Key()
		if k.PK == "" || k.SK == "" {
			return fmt.Errorf("transaction write %d has an empty key", i)
		}
		if seen[k] {
			return fmt.Errorf("transaction touches %s/%s twice", k.PK, k.SK)
		}
		if w.Kind == OpCheck && w.Cond.Kind == Always {
			return fmt.Errorf("transaction write %d checks %s/%s without a condition", i, k.PK, k.SK)
		}
		seen[k] = true
	}
	return nil
}
