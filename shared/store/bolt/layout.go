package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/flagplane/flagplane/shared/store"
)

// On-disk layout. Keys join their parts with NUL, the smallest byte, so a
// bucket's byte order is the order of the parts compared one by one, exactly
// like DynamoDB compares string keys (bytewise on UTF-8). That only holds
// when no part contains NUL, which validation refuses.
var (
	// bucketItems maps PK NUL SK to an encoded item.
	bucketItems = []byte("items")
	// bucketGSI1 maps GSI1PK NUL GSI1SK NUL PK NUL SK to nothing; the item is
	// read from bucketItems, so the index can never hold a stale copy.
	bucketGSI1 = []byte("gsi1")
	// bucketMeta holds backend settings such as the cursor secret.
	bucketMeta = []byte("meta")

	metaCursorSecret = []byte("cursor-secret")
)

const sep = 0x00

// DynamoDB's limits, enforced here too so code that works on the embedded
// backend does not fail only once it runs against DynamoDB.
const (
	maxPartitionKey = 2048
	maxSortKey      = 1024
	maxItemSize     = 400 * 1024
)

// itemKey is the bucketItems key of k.
func itemKey(k store.Key) []byte {
	b := make([]byte, 0, len(k.PK)+1+len(k.SK))
	b = append(b, k.PK...)
	b = append(b, sep)
	return append(b, k.SK...)
}

// inIndex reports whether it has a GSI1 entry. DynamoDB leaves an item out of
// a sparse index unless both of the index's key attributes are present.
func inIndex(it store.Item) bool { return it.GSI1PK != "" && it.GSI1SK != "" }

// indexKey is the bucketGSI1 key of it; ties on GSI1SK sort by primary key.
func indexKey(it store.Item) []byte {
	b := make([]byte, 0, len(it.GSI1PK)+len(it.GSI1SK)+len(it.PK)+len(it.SK)+3)
	b = append(b, it.GSI1PK...)
	b = append(b, sep)
	b = append(b, it.GSI1SK...)
	b = append(b, sep)
	b = append(b, it.PK...)
	b = append(b, sep)
	return append(b, it.SK...)
}

// splitIndexKey undoes indexKey.
func splitIndexKey(k []byte) (gsi1pk, gsi1sk string, key store.Key, err error) {
	parts := strings.SplitN(string(k), string(rune(sep)), 4)
	if len(parts) != 4 {
		return "", "", store.Key{}, fmt.Errorf("corrupt index key %q", k)
	}
	return parts[0], parts[1], store.Key{PK: parts[2], SK: parts[3]}, nil
}

// Value format: a format byte, then Version and TTL as varints, GSI1PK and
// GSI1SK as length-prefixed strings, and Data as the rest. PK and SK live in
// the key only.
const formatV1 = 1

func encodeItem(it store.Item) []byte {
	b := make([]byte, 0, 1+2*binary.MaxVarintLen64+2*binary.MaxVarintLen64+len(it.GSI1PK)+len(it.GSI1SK)+len(it.Data))
	b = append(b, formatV1)
	b = binary.AppendVarint(b, it.Version)
	b = binary.AppendVarint(b, it.TTL)
	b = binary.AppendUvarint(b, uint64(len(it.GSI1PK)))
	b = append(b, it.GSI1PK...)
	b = binary.AppendUvarint(b, uint64(len(it.GSI1SK)))
	b = append(b, it.GSI1SK...)
	return append(b, it.Data...)
}

var errCorrupt = errors.New("corrupt item value")

// decodeItem copies everything out of v, which bolt only keeps valid for
// the life of the transaction.
func decodeItem(k store.Key, v []byte) (store.Item, error) {
	it := store.Item{PK: k.PK, SK: k.SK}
	if len(v) == 0 || v[0] != formatV1 {
		return store.Item{}, fmt.Errorf("item %s/%s: %w: unknown format", k.PK, k.SK, errCorrupt)
	}
	v = v[1:]
	var n int
	if it.Version, n = binary.Varint(v); n <= 0 {
		return store.Item{}, fmt.Errorf("item %s/%s: %w: version", k.PK, k.SK, errCorrupt)
	}
	v = v[n:]
	if it.TTL, n = binary.Varint(v); n <= 0 {
		return store.Item{}, fmt.Errorf("item %s/%s: %w: ttl", k.PK, k.SK, errCorrupt)
	}
	v = v[n:]
	for _, dst := range []*string{&it.GSI1PK, &it.GSI1SK} {
		l, n := binary.Uvarint(v)
		if n <= 0 || uint64(len(v)-n) < l {
			return store.Item{}, fmt.Errorf("item %s/%s: %w: index keys", k.PK, k.SK, errCorrupt)
		}
		*dst = string(v[n : n+int(l)])
		v = v[n+int(l):]
	}
	it.Data = append([]byte{}, v...)
	return it, nil
}

// checkKey refuses keys DynamoDB refuses, and NUL, which the layout reserves.
func checkKey(k store.Key) error {
	switch {
	case k.PK == "" || k.SK == "":
		return fmt.Errorf("key %q/%q: partition and sort key must not be empty", k.PK, k.SK)
	case len(k.PK) > maxPartitionKey:
		return fmt.Errorf("key %.32q...: partition key has %d bytes, at most %d allowed", k.PK, len(k.PK), maxPartitionKey)
	case len(k.SK) > maxSortKey:
		return fmt.Errorf("key %s/%.32q...: sort key has %d bytes, at most %d allowed", k.PK, k.SK, len(k.SK), maxSortKey)
	case strings.IndexByte(k.PK, sep) >= 0 || strings.IndexByte(k.SK, sep) >= 0:
		return fmt.Errorf("key %q/%q: keys must not contain NUL", k.PK, k.SK)
	}
	return nil
}

// checkItem applies checkKey to the item and its index keys, and DynamoDB's
// item size limit (approximately: attribute names plus values).
func checkItem(it store.Item) error {
	if err := checkKey(it.Key()); err != nil {
		return err
	}
	if it.GSI1PK != "" || it.GSI1SK != "" {
		switch {
		case len(it.GSI1PK) > maxPartitionKey || len(it.GSI1SK) > maxSortKey:
			return fmt.Errorf("item %s/%s: index keys too long", it.PK, it.SK)
		case strings.IndexByte(it.GSI1PK, sep) >= 0 || strings.IndexByte(it.GSI1SK, sep) >= 0:
			return fmt.Errorf("item %s/%s: index keys must not contain NUL", it.PK, it.SK)
		}
	}
	size := len(store.AttrPK) + len(it.PK) + len(store.AttrSK) + len(it.SK) +
		len(store.AttrGSI1PK) + len(it.GSI1PK) + len(store.AttrGSI1SK) + len(it.GSI1SK) +
		len(store.AttrVersion) + 21 + len(store.AttrTTL) + 21 + len(store.AttrData) + len(it.Data)
	if size > maxItemSize {
		return fmt.Errorf("item %s/%s: about %d bytes, at most %d allowed", it.PK, it.SK, size, maxItemSize)
	}
	return nil
}

// successor returns the smallest key greater than every key starting with
// prefix, or nil when there is none (prefix is all 0xff).
func successor(prefix []byte) []byte {
	b := append([]byte{}, prefix...)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] != 0xff {
			b[i]++
			return b[:i+1]
		}
	}
	return nil
}
