package usage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/store"
)

// sdkChunk is how many SDKs one snapshot item holds (about 300 bytes
// each, well under DynamoDB's 400 KB item limit).
const sdkChunk = 500

// snapshotTTL lets the table drop chunks a crash left unreferenced.
const snapshotTTL = 3 * 24 * time.Hour

// sdkSnapshot is the pointer to the snapshot in use.
type sdkSnapshot struct {
	Generation string `json:"generation"` // the hour it was taken, yyyymmddhh
	Chunks     int    `json:"chunks"`
	At         int64  `json:"at"`
}

// SnapshotSDKs takes the hour's snapshot of the SDKs seen in the 24 hours
// before now, unless this hour's exists: the new chunks first, then the
// pointer, then the old chunks go. A crash between leaves the old
// snapshot in use (and chunks the TTL removes).
func (r *Rollup) SnapshotSDKs(ctx context.Context) error {
	now := r.now().UTC()
	gen := now.Format(hourLayout)
	cur, version, err := currentSnapshot(ctx, r.table)
	if err != nil {
		return err
	}
	if cur.Generation == gen {
		return nil
	}
	seen, err := SeenSDKs(ctx, r.table, now, SDKFilter{})
	if err != nil {
		return err
	}
	chunks := 0
	for start := 0; start == 0 || start < len(seen); start += sdkChunk {
		data, err := json.Marshal(seen[start:min(start+sdkChunk, len(seen))])
		if err != nil {
			return fmt.Errorf("encode SDK snapshot: %w", err)
		}
		k := store.UsageSDKsChunkKey(gen, chunks)
		if err := r.table.Put(ctx, store.Item{PK: k.PK, SK: k.SK, Version: 1, TTL: now.Add(snapshotTTL).Unix(), Data: data}, store.Cond{}); err != nil {
			return fmt.Errorf("write SDK snapshot: %w", err)
		}
		chunks++
	}
	doc, _ := json.Marshal(sdkSnapshot{Generation: gen, Chunks: chunks, At: now.UnixMilli()})
	k := store.UsageSDKsCurrentKey()
	cond := store.IfNotExists()
	if version > 0 {
		cond = store.IfVersion(version)
	}
	if err := r.table.Put(ctx, store.Item{PK: k.PK, SK: k.SK, Version: version + 1, Data: doc}, cond); err != nil {
		if errors.Is(err, store.ErrConditionFailed) {
			return nil // a concurrent run took its snapshot; its chunks are as good
		}
		return fmt.Errorf("point to SDK snapshot %s: %w", gen, err)
	}
	return record.Each(ctx, r.table, store.Query{PK: store.UsageSDKsPartition}, "SDK snapshots", func(it store.Item) error {
		if it.SK == k.SK || strings.HasPrefix(it.SK, gen+"#") {
			return nil
		}
		if err := r.table.Delete(ctx, it.Key(), store.Cond{}); err != nil {
			return fmt.Errorf("drop old SDK snapshot %s: %w", it.SK, err)
		}
		return nil
	})
}

func currentSnapshot(ctx context.Context, table store.Table) (sdkSnapshot, int64, error) {
	it, err := table.Get(ctx, store.UsageSDKsCurrentKey())
	if errors.Is(err, store.ErrNotFound) {
		return sdkSnapshot{}, 0, nil
	}
	if err != nil {
		return sdkSnapshot{}, 0, fmt.Errorf("read SDK snapshot pointer: %w", err)
	}
	var s sdkSnapshot
	if err := json.Unmarshal(it.Data, &s); err != nil {
		return sdkSnapshot{}, 0, fmt.Errorf("decode SDK snapshot pointer: %w", err)
	}
	return s, it.Version, nil
}

// SnapshotSDKsSeen reads the rollup's latest snapshot, filtered: a Get and
// one Query. Before the first snapshot it reads the SDKs seen within
// SDKWindow before now from the SDK partition itself (one Query), so SDKs
// show before the first rollup ran.
func SnapshotSDKsSeen(ctx context.Context, table store.Table, now time.Time, f SDKFilter) ([]SeenSDK, error) {
	cur, _, err := currentSnapshot(ctx, table)
	if err != nil {
		return nil, err
	}
	out := []SeenSDK{}
	if cur.Generation == "" {
		live, err := SeenSDKs(ctx, table, now, f)
		return append(out, live...), err
	}
	err = record.Each(ctx, table, store.Query{PK: store.UsageSDKsPartition, SKPrefix: cur.Generation + "#"}, "SDK snapshot "+cur.Generation, func(it store.Item) error {
		var chunk []SeenSDK
		if err := json.Unmarshal(it.Data, &chunk); err != nil {
			return fmt.Errorf("decode SDK snapshot %s: %w", it.SK, err)
		}
		for _, s := range chunk {
			if f.keeps(s) {
				out = append(out, s)
			}
		}
		return nil
	})
	return out, err
}
