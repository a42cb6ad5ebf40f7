package flag

import (
	"context"
	"fmt"
	"sync"

	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/store"
)

// Decoded keeps decoded flags. Lists and evaluation read every flag of a
// project, and decoding them was most of their cost; through Decoded an
// unchanged flag is decoded once per process and keeps its pointer, which
// callers use as the key of what they derive from it (list summaries, SDK
// models). Flags it returns are shared between requests: read them only.
// Its zero value is ready to use.
type Decoded struct {
	once sync.Once
	memo *record.Memo[*Flag]
}

// Decode returns the flag stored in it, decoding it only when it changed.
func (d *Decoded) Decode(it store.Item) (*Flag, error) {
	d.once.Do(func() { d.memo = record.NewMemo(decode) })
	return d.memo.Decode(it)
}

// Shared returns every flag of the project through d: shared, read-only
// values, for lists and evaluation.
func Shared(ctx context.Context, table store.Table, d *Decoded, projectKey string) ([]*Flag, error) {
	return record.All(ctx, table, store.Query{PK: store.ProjectPartition(projectKey), SKPrefix: store.FlagSKPrefix},
		fmt.Sprintf("flags of project %q", projectKey), d.Decode)
}
