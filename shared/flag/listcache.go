package flag

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/store"
)

// maxDecoded bounds the flags a process keeps decoded for lists.
const maxDecoded = 20000

// Decoded keeps decoded flags by item key, with the stored bytes they were
// decoded from. Lists and evaluation read every flag of a project, and
// decoding them was most of their cost; an unchanged flag (the same
// bytes, compared in full, so a flag deleted and created again is never
// mistaken for the old one) is decoded once per process, and keeps its
// pointer, which callers may use as a cache key for what they derive from
// it. Flags it returns are shared between requests: read them only.
type Decoded struct {
	mu sync.Mutex
	m  map[string]decodedFlag
}

type decodedFlag struct {
	data []byte
	f    *Flag
}

// Decode returns the flag stored in it, decoding it only when it changed.
func (c *Decoded) Decode(it store.Item) (*Flag, error) {
	key := it.PK + "\x00" + it.SK
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if ok && e.f.ItemVersion == it.Version && bytes.Equal(e.data, it.Data) {
		return e.f, nil
	}
	f, err := decode(it)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxDecoded {
		c.m = make(map[string]decodedFlag) // dropping all is rare and cheap to recover from
	}
	c.m[key] = decodedFlag{data: bytes.Clone(it.Data), f: f}
	c.mu.Unlock()
	return f, nil
}

// Shared returns every flag of the project through d: shared, read-only
// values, for lists and evaluation.
func Shared(ctx context.Context, table store.Table, d *Decoded, projectKey string) ([]*Flag, error) {
	return record.All(ctx, table, store.Query{PK: store.ProjectPartition(projectKey), SKPrefix: store.FlagSKPrefix},
		fmt.Sprintf("flags of project %q", projectKey), d.Decode)
}
