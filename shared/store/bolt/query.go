package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	bbolt "go.etcd.io/bbolt"

	"github.com/flagplane/flagplane/shared/store"
)

// Query returns one page of q's partition in sort-key order (GSI1SK, then
// primary key, on the index). Page.Cursor is set only when an item follows.
func (t *Table) Query(ctx context.Context, q store.Query) (store.Page, error) {
	name := queryName(q)
	if err := ctx.Err(); err != nil {
		return store.Page{}, fmt.Errorf("query %s: %w", name, err)
	}
	if err := checkQuery(q); err != nil {
		return store.Page{}, fmt.Errorf("query %s: %w", name, err)
	}
	var after []byte // bucket key of the previous page's last item, exclusive
	if q.Cursor != "" {
		last, err := t.cursors.Decode(q, q.Cursor)
		if err != nil {
			return store.Page{}, fmt.Errorf("query %s: %w", name, err)
		}
		if err := checkCursorItem(q, last); err != nil {
			return store.Page{}, fmt.Errorf("query %s: %w", name, err)
		}
		if q.Index == store.IndexGSI1 {
			after = indexKey(last)
		} else {
			after = itemKey(last.Key())
		}
	}

	// Non-nil, like the DynamoDB backend's pages; room for a typical page
	// up front, since growing copies every item read so far.
	items := make([]store.Item, 0, min(max(q.Limit, 0)+1, 128))
	more := false
	err := t.db.View(func(tx *bbolt.Tx) error {
		bucket := bucketItems
		if q.Index == store.IndexGSI1 {
			bucket = bucketGSI1
		}
		primary := tx.Bucket(bucketItems)
		c := tx.Bucket(bucket).Cursor()
		lo, hi := scanRange(q)
		var k, v []byte
		if q.Descending {
			// Start at the greatest key below both the range end and the cursor.
			end := hi
			if after != nil && bytes.Compare(after, end) < 0 {
				end = after
			}
			if k, v = c.Seek(end); k == nil {
				k, v = c.Last()
			} else {
				k, v = c.Prev()
			}
		} else {
			// Start at the range start or just past the cursor, whichever is later;
			// key+NUL is the smallest key greater than key.
			start := lo
			if after != nil {
				if next := append(after[:len(after):len(after)], sep); bytes.Compare(next, start) > 0 {
					start = next
				}
			}
			k, v = c.Seek(start)
		}
		for ; k != nil; k, v = step(c, q.Descending) {
			sk, ok := sortKey(q, k)
			// The selected keys are contiguous, so the first one outside ends the scan.
			if !ok || !q.InRange(sk) {
				break
			}
			if q.Limit > 0 && len(items) == q.Limit {
				more = true
				break
			}
			it, err := readEntry(q, primary, k, v)
			if err != nil {
				return err
			}
			items = append(items, it)
		}
		return nil
	})
	if err != nil {
		return store.Page{}, fmt.Errorf("query %s: %w", name, err)
	}
	page := store.Page{Items: items}
	if more {
		page.Cursor = t.cursors.Encode(q, items[len(items)-1])
	}
	return page, nil
}

func step(c *bbolt.Cursor, descending bool) ([]byte, []byte) {
	if descending {
		return c.Prev()
	}
	return c.Next()
}

func queryName(q store.Query) string {
	if q.Index == "" {
		return q.PK
	}
	return q.Index + " " + q.PK
}

// checkQuery refuses what DynamoDB refuses, so both backends fail alike.
func checkQuery(q store.Query) error {
	switch {
	case q.Index != "" && q.Index != store.IndexGSI1:
		return fmt.Errorf("unknown index %q", q.Index)
	case q.PK == "":
		return errors.New("partition key must not be empty")
	case strings.IndexByte(q.PK, sep) >= 0:
		return errors.New("partition key must not contain NUL")
	case q.Limit < 0:
		return fmt.Errorf("limit %d is negative", q.Limit)
	}
	// Bounds out of order select nothing (store.Query.InRange), which the
	// scan finds on its own, as the DynamoDB backend returns an empty page.
	return nil
}

// checkCursorItem guards the layout against a signed cursor whose keys do not
// belong to q's partition; only a leaked secret could produce one.
func checkCursorItem(q store.Query, last store.Item) error {
	pk, sk := last.PK, last.SK
	if q.Index == store.IndexGSI1 {
		pk, sk = last.GSI1PK, last.GSI1SK
	}
	if pk != q.PK || checkKey(last.Key()) != nil || strings.IndexByte(sk, sep) >= 0 {
		return fmt.Errorf("decode cursor: %w", store.ErrBadCursor)
	}
	return nil
}

// partitionPrefix is the bucket key prefix shared by every entry of q's partition.
func partitionPrefix(q store.Query) []byte {
	return append([]byte(q.PK), sep)
}

// scanRange returns the bucket keys bounding q's selection: lo inclusive and
// hi exclusive. Entries between them may still fall outside (a longer sort
// key past SKTo on the table, say); the scan loop filters with q.InRange.
func scanRange(q store.Query) (lo, hi []byte) {
	p := partitionPrefix(q)
	if q.SKFrom == "" && q.SKTo == "" {
		from := append(p[:len(p):len(p)], q.SKPrefix...)
		return from, successor(from)
	}
	lo = append(p[:len(p):len(p)], q.SKFrom...)
	if q.SKTo == "" {
		return lo, successor(p)
	}
	hi = append(p[:len(p):len(p)], q.SKTo...)
	if q.Index == store.IndexGSI1 {
		// Index keys continue with NUL after GSI1SK; every entry with
		// GSI1SK <= SKTo sorts below SKTo followed by 0x01.
		return lo, append(hi, sep+1)
	}
	// Table keys end with SK; SKTo+NUL is the smallest key above SKTo.
	return lo, append(hi, sep)
}

// sortKey returns the sort key of bucket key k, and false when k is outside
// q's partition.
func sortKey(q store.Query, k []byte) (string, bool) {
	p := partitionPrefix(q)
	if !bytes.HasPrefix(k, p) {
		return "", false
	}
	rest := k[len(p):]
	if q.Index == store.IndexGSI1 {
		if i := bytes.IndexByte(rest, sep); i >= 0 {
			rest = rest[:i]
		}
	}
	return string(rest), true
}

// readEntry turns one bucket entry into an item, reading the item itself
// for index entries.
func readEntry(q store.Query, primary *bbolt.Bucket, k, v []byte) (store.Item, error) {
	if q.Index == "" {
		pk, sk, _ := bytes.Cut(k, []byte{sep})
		return decodeItem(store.Key{PK: string(pk), SK: string(sk)}, v)
	}
	_, _, key, err := splitIndexKey(k)
	if err != nil {
		return store.Item{}, err
	}
	v = primary.Get(itemKey(key))
	if v == nil {
		return store.Item{}, fmt.Errorf("index entry %q has no item", k)
	}
	return decodeItem(key, v)
}
