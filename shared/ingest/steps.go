package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/flagplane/flagplane/shared/store"
)

// progress names the payload whose steps writeSteps marks.
type progress struct {
	envID, payloadID string
	// ttl is when the marks may go (Unix seconds): with the payload's own.
	ttl int64
}

func (pr *progress) key(step string) store.Key {
	return store.PayloadStepKey(pr.envID, pr.payloadID, step)
}

// stepChunk is how many changes one step commits: a transaction's
// limit, less the step's mark.
const stepChunk = store.MaxWrites - 1

// outcome carries what a step's merges found (which instances they
// created, which values) across a delivery again: note encodes it for
// the step's mark, recall reads it back when the step is skipped, and
// forget drops what an attempt that did not land recorded.
type outcome struct {
	forget func(chunk []change)
	note   func(chunk []change) ([]byte, error)
	recall func(chunk []change, data []byte) error
}

// writeSteps writes changes in chunks of stepChunk, each chunk in one
// commit (a transaction on DynamoDB and bolt) with its mark, so a chunk
// counts exactly once however often the payload is delivered, and
// whether a delivery stopped before, inside or after the commit: a mark
// that exists says the chunk landed, and the chunk is skipped. The chunks
// must be cut the same way on every delivery: changes come in an order
// that depends only on the payload and on the outcomes of earlier steps,
// which the marks keep. Without progress (a payload without id), the
// changes are written unmarked.
//
// A chunk's items and its mark cannot be written apart, in either order,
// safely: mark first and a crash loses the counts, counts first and a
// retry adds them again. That is why a chunk is a transaction even on
// DynamoDB, where single puts would cost half.
func (a *Aggregator) writeSteps(ctx context.Context, pr *progress, step string, changes []change, out *outcome) error {
	if pr == nil {
		return a.write(ctx, changes)
	}
	for i, start := 0, 0; start < len(changes); i, start = i+1, start+stepChunk {
		chunk := changes[start:min(start+stepChunk, len(changes))]
		mark := pr.key(step + "/" + strconv.Itoa(i))
		var err error
		for attempt := 0; attempt < maxAttempts; attempt++ {
			if err = writeStep(ctx, a.table, mark, pr.ttl, chunk, out); err == nil || !lostRace(err) || !backOff(ctx, attempt) {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("write step %s of payload %q: %w", mark.SK, pr.payloadID, err)
		}
	}
	return nil
}

// writeStep commits chunk with its mark, unless the mark exists; a mark
// written meanwhile by a concurrent delivery fails the commit's condition,
// and the next attempt finds it.
func writeStep(ctx context.Context, table store.Table, mark store.Key, ttl int64, chunk []change, out *outcome) error {
	if out != nil {
		out.forget(chunk)
	}
	it, err := table.Get(ctx, mark)
	if err == nil {
		if out == nil {
			return nil
		}
		return out.recall(chunk, it.Data)
	}
	if !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("read step mark %s: %w", mark.SK, err)
	}
	writes, err := mergeWrites(ctx, table, chunk)
	if err != nil {
		return err
	}
	data := []byte("{}")
	if out != nil {
		if data, err = out.note(chunk); err != nil {
			return err
		}
	}
	writes = append(writes, store.Put(store.Item{PK: mark.PK, SK: mark.SK, Version: 1, TTL: ttl, Data: data}, store.IfNotExists()))
	return commit(ctx, table, writes)
}

// fateNote is what an instance write found, as a step's mark keeps it.
type fateNote struct {
	New  bool    `json:"new,omitempty"`
	From *string `json:"from,omitempty"`
	To   string  `json:"to,omitempty"`
}

// fateOutcome keeps which instances of a chunk were created or moved
// from one application to another: the context count, the references
// and the attribute index follow from them.
func (b *batch) fateOutcome() *outcome {
	id := func(c change) string { return strings.TrimPrefix(c.key.SK, store.ContextInstancePrefix) }
	return &outcome{
		forget: func(chunk []change) {
			b.mu.Lock()
			defer b.mu.Unlock()
			for _, c := range chunk {
				delete(b.fates, id(c))
			}
		},
		note: func(chunk []change) ([]byte, error) {
			b.mu.Lock()
			defer b.mu.Unlock()
			notes := map[string]fateNote{}
			for _, c := range chunk {
				if f := b.fates[id(c)]; f.isNew || f.fromApp != nil {
					notes[id(c)] = fateNote{New: f.isNew, From: f.fromApp, To: f.toApp}
				}
			}
			data, err := json.Marshal(notes)
			if err != nil {
				return nil, fmt.Errorf("encode instance fates: %w", err)
			}
			return data, nil
		},
		recall: func(_ []change, data []byte) error {
			var notes map[string]fateNote
			if err := json.Unmarshal(data, &notes); err != nil {
				return fmt.Errorf("decode instance fates: %w", err)
			}
			for instance, n := range notes {
				b.setFate(instance, instanceFate{isNew: n.New, fromApp: n.From, toApp: n.To})
			}
			return nil
		},
	}
}

// newValueOutcome keeps which values of a chunk were stored for the first
// time: their attribute names count them.
func (b *batch) newValueOutcome() *outcome {
	return &outcome{
		forget: func(chunk []change) {
			for _, c := range chunk {
				b.noteValue(b.values[c.key].name, c.key, false)
			}
		},
		note: func(chunk []change) ([]byte, error) {
			b.mu.Lock()
			defer b.mu.Unlock()
			var created []store.Key
			for _, c := range chunk {
				if b.newValues[b.values[c.key].name][c.key] {
					created = append(created, c.key)
				}
			}
			data, err := json.Marshal(created)
			if err != nil {
				return nil, fmt.Errorf("encode new attribute values: %w", err)
			}
			return data, nil
		},
		recall: func(_ []change, data []byte) error {
			var created []store.Key
			if err := json.Unmarshal(data, &created); err != nil {
				return fmt.Errorf("decode new attribute values: %w", err)
			}
			for _, vk := range created {
				if d := b.values[vk]; d != nil {
					b.noteValue(d.name, vk, true)
				}
			}
			return nil
		},
	}
}
