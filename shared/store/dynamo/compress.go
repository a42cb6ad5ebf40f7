package dynamo

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"sync"
)

// DynamoDB bills writes per started KB and reads per started 4 KB of item
// size, and an audit entry (a resource before and after) or a flag with
// several environments is mostly repeated JSON. Item data of at least
// deflateMin bytes is stored deflated, under its own attribute, when that
// is smaller; items written before, or too small to gain, keep plain data.
const (
	// attrDataDeflated holds item data compressed with raw DEFLATE (RFC 1951).
	attrDataDeflated = "dz"
	deflateMin       = 400
)

var (
	deflaters = sync.Pool{New: func() any {
		w, _ := flate.NewWriter(io.Discard, flate.DefaultCompression)
		return w
	}}
	inflaters = sync.Pool{New: func() any { return flate.NewReader(bytes.NewReader(nil)) }}
)

// deflate returns data compressed, or nil when compression does not make it
// smaller by at least a tenth.
func deflate(data []byte) []byte {
	if len(data) < deflateMin {
		return nil
	}
	var buf bytes.Buffer
	buf.Grow(len(data) / 2)
	w := deflaters.Get().(*flate.Writer)
	defer deflaters.Put(w)
	w.Reset(&buf)
	if _, err := w.Write(data); err != nil {
		return nil
	}
	if err := w.Close(); err != nil {
		return nil
	}
	if buf.Len() > len(data)-len(data)/10 {
		return nil
	}
	return buf.Bytes()
}

// inflateCache keeps the data of deflated items recently read, keyed by the
// deflated bytes themselves, so it can never answer stale data: lists read
// every flag of a project on each call, and inflating them again each time
// would cost more than decoding the JSON the callers' memos already skip.
// Callers treat item data as read-only, so entries are shared.
type inflateCache struct {
	mu    sync.Mutex
	data  map[string][]byte
	bytes int
}

// inflateCacheBytes bounds the cache (keys and values); when full it starts over.
const inflateCacheBytes = 32 << 20

func (c *inflateCache) inflate(z []byte) ([]byte, error) {
	if c == nil {
		return inflate(z)
	}
	c.mu.Lock()
	data, ok := c.data[string(z)]
	c.mu.Unlock()
	if ok {
		return data, nil
	}
	data, err := inflate(z)
	if err != nil {
		return nil, err
	}
	data = data[:len(data):len(data)]
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.data == nil || c.bytes+len(z)+len(data) > inflateCacheBytes {
		c.data, c.bytes = map[string][]byte{}, 0
	}
	c.data[string(z)] = data
	c.bytes += len(z) + len(data)
	return data, nil
}

// inflate reverses deflate.
func inflate(z []byte) ([]byte, error) {
	r := inflaters.Get().(io.ReadCloser)
	defer inflaters.Put(r)
	if err := r.(flate.Resetter).Reset(bytes.NewReader(z), nil); err != nil {
		return nil, fmt.Errorf("inflate item data: %w", err)
	}
	var out bytes.Buffer
	out.Grow(len(z) * 4)
	if _, err := out.ReadFrom(r); err != nil {
		return nil, fmt.Errorf("inflate item data: %w", err)
	}
	return out.Bytes(), nil
}
