package flag

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/store"
)

// SegmentsUsed are the keys of the segments the flag's rules in envKey
// match (segmentMatch clauses), each once, in the order they appear.
func SegmentsUsed(f *Flag, envKey string) []string {
	c, ok := f.Environments[envKey]
	if !ok || c == nil {
		return nil
	}
	var out []string
	for _, r := range c.Rules {
		out = appendSegments(out, r.Clauses)
	}
	return out
}

func appendSegments(out []string, clauses []Clause) []string {
	for _, cl := range clauses {
		if cl.Op != "segmentMatch" {
			continue
		}
		for _, v := range cl.Values {
			var key string
			if json.Unmarshal(v, &key) == nil && !slices.Contains(out, key) {
				out = append(out, key)
			}
		}
	}
	return out
}

// SegmentGuards are the writes that make a change which starts using the
// segments keys of an environment safe against their deletion: each
// segment must exist when the change commits (a 400 naming the first
// missing one otherwise), and its reference marker (store.SegmentRefKey)
// is bumped, so a delete that looked for users before this change fails
// its check and sees it when tried again.
func SegmentGuards(ctx context.Context, table store.Table, projectKey, envKey string, keys []string) ([]store.Write, error) {
	var out []store.Write
	for _, key := range keys {
		sk := store.SegmentKey(projectKey, envKey, key)
		if _, err := table.Get(ctx, sk); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return nil, fault.New(fault.Invalid, "segment %q does not exist in environment %q: a segmentMatch clause must name a segment of the environment", key, envKey)
			}
			return nil, fmt.Errorf("read segment %q: %w", key, err)
		}
		mk := store.SegmentRefKey(projectKey, envKey, key)
		it, err := table.Get(ctx, mk)
		switch {
		case errors.Is(err, store.ErrNotFound):
			// A segment written before markers existed: start one.
			out = append(out, store.Put(store.Item{PK: mk.PK, SK: mk.SK, Version: 1, Data: []byte(`{"generation":1}`)}, store.IfNotExists()))
		case err != nil:
			return nil, fmt.Errorf("read marker of segment %q: %w", key, err)
		default:
			it.Version++
			out = append(out, store.Put(it, store.IfVersion(it.Version-1)))
		}
		out = append(out, store.Check(sk, store.IfExists()))
	}
	return out, nil
}

// addedSegmentGuards are the SegmentGuards of every environment whose
// targeting in next matches segments old did not: every change to a
// flag goes through commit, which adds them, so no caller can start using
// a segment that does not exist or is being deleted.
func addedSegmentGuards(ctx context.Context, table store.Table, old, next *Flag) ([]store.Write, error) {
	var out []store.Write
	for _, envKey := range sortedKeys(next.Environments) {
		var added []string
		before := SegmentsUsed(old, envKey)
		for _, key := range SegmentsUsed(next, envKey) {
			if !slices.Contains(before, key) {
				added = append(added, key)
			}
		}
		guards, err := SegmentGuards(ctx, table, next.ProjectKey, envKey, added)
		if err != nil {
			return nil, err
		}
		out = append(out, guards...)
	}
	return out, nil
}
