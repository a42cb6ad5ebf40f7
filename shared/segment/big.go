package segment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/resource"
	"github.com/flagplane/flagplane/shared/store"
)

// Big segments keep their members apart from the segment item (see
// store.BigSegmentMemberKey): one item per context key and list, written
// unconditionally, so every membership write is idempotent and a write
// cut short can simply be done again. Every change stages the keys it
// changed in a batch (store.BigSegmentBatchChunkKey) and ends with the
// segment's audited update, whose delta names the batch: the big segment
// store integrations' outbox consumer writes the batch to the SDKs' stores.

// maxContextKey bounds a context key written to a big segment: the sort
// key of its item must stay far below DynamoDB's 1,024 bytes.
const maxContextKey = 512

// batchTTL is how long a staged batch is kept: the stores' syncs read it
// within minutes; a week covers a store integration that was failing.
const batchTTL = 7 * 24 * time.Hour

// maxChunkBytes bounds the keys of one staged chunk item (DynamoDB items
// hold at most 400 KB).
const maxChunkBytes = 256 * 1024

// maxAlso is how many membership and batch writes ride in the segment's
// own audited transaction (with the segment item, the audit entry and its
// outbox record, within store.MaxWrites); a larger change is written in
// chunks first and the audited update comes last.
const maxAlso = store.MaxWrites - 10

// Membership reads whether contextKey is on the lists of generation of
// big segment segmentKey: evaluation's big segment provider reads it
// (evaluation.Memberships). A key on neither list is not an error.
func (s *Service) Membership(ctx context.Context, projectKey, envKey, segmentKey string, generation int, contextKey string) (included, excluded bool, err error) {
	for _, l := range []struct {
		list string
		on   *bool
	}{{store.BigSegmentIncluded, &included}, {store.BigSegmentExcluded, &excluded}} {
		_, err := s.table.Get(ctx, store.BigSegmentMemberKey(projectKey, envKey, segmentKey, generation, l.list, contextKey))
		switch {
		case err == nil:
			*l.on = true
		case !errors.Is(err, store.ErrNotFound):
			return false, false, fmt.Errorf("read membership of %q in big segment %q: %w", contextKey, segmentKey, err)
		}
	}
	return included, excluded, nil
}

// Big reads a segment that must be a big segment of contexts of kind
// (any kind when empty): 400 otherwise.
func (s *Service) Big(ctx context.Context, projectKey, envKey, key, kind string) (*Segment, error) {
	seg, err := s.Get(ctx, projectKey, envKey, key)
	if err != nil {
		return nil, err
	}
	if !seg.Unbounded {
		return nil, fault.New(fault.Invalid, "segment %q is not a big segment: its targets are its included and excluded lists, changed by a patch", key)
	}
	if kind != "" && seg.UnboundedContextKind != kind {
		return nil, fault.New(fault.Invalid, "big segment %q holds contexts of kind %q, not %q: use its /contexts operations", key, seg.UnboundedContextKind, kind)
	}
	return seg, nil
}

// KeyChanges are keys added to and removed from one list.
type KeyChanges struct {
	Add    []string `json:"add"`
	Remove []string `json:"remove"`
}

// TargetChanges is the body of updateBigSegmentTargets (the reference's
// SegmentUserState).
type TargetChanges struct {
	Included *KeyChanges `json:"included"`
	Excluded *KeyChanges `json:"excluded"`
}

// Actions are the actions the changes perform.
func (t TargetChanges) Actions() []string {
	var out []string
	if t.Included != nil && len(t.Included.Add)+len(t.Included.Remove) > 0 {
		out = append(out, "updateIncluded")
	}
	if t.Excluded != nil && len(t.Excluded.Add)+len(t.Excluded.Remove) > 0 {
		out = append(out, "updateExcluded")
	}
	return out
}

// Chunk is one staged slice of a batch: keys put on (On) or taken off a list.
type Chunk struct {
	List string   `json:"list"`
	On   bool     `json:"on"`
	Keys []string `json:"keys"`
}

// BatchRef names a staged batch: the delta of the audit entry of a big
// segment's membership change.
type BatchRef struct {
	ID         string `json:"id"`
	Chunks     int    `json:"chunks"`
	SegmentKey string `json:"segmentKey"`
	Generation int    `json:"generation"`
	Included   int    `json:"included"`
	Excluded   int    `json:"excluded"`
}

// Ref is the batch's segment as the SDKs' big segment stores name it.
func (b BatchRef) Ref() string { return StoreRef(b.SegmentKey, b.Generation) }

// StoreRef is a big segment generation as LaunchDarkly's SDKs name it in
// their big segment stores: "<key>.g<generation>".
func StoreRef(key string, generation int) string { return fmt.Sprintf("%s.g%d", key, generation) }

type batchDelta struct {
	BigSegmentBatch *BatchRef `json:"bigSegmentBatch"`
}

// BatchOf reads the batch an audit entry's delta names, if any.
func BatchOf(e audit.Entry) (BatchRef, bool) {
	if e.Kind != kind.Audit || len(e.Delta) == 0 || e.Delta[0] != '{' {
		return BatchRef{}, false
	}
	var d batchDelta
	if json.Unmarshal(e.Delta, &d) != nil || d.BigSegmentBatch == nil || d.BigSegmentBatch.ID == "" {
		return BatchRef{}, false
	}
	return *d.BigSegmentBatch, true
}

// Chunks calls fn with the chunks of batch id from chunk from on, in order.
func Chunks(ctx context.Context, table store.Table, id string, from int, fn func(n int, c Chunk) error) error {
	q := store.Query{PK: store.BigSegmentBatchPartition(id), SKFrom: store.BigSegmentBatchChunkKey(id, from).SK}
	for {
		page, err := table.Query(ctx, q)
		if err != nil {
			return fmt.Errorf("read batch %s: %w", id, err)
		}
		for _, it := range page.Items {
			var n int
			if _, err := fmt.Sscanf(it.SK, "%d", &n); err != nil {
				return fmt.Errorf("batch %s: chunk %q: %w", id, it.SK, err)
			}
			var c Chunk
			if err := json.Unmarshal(it.Data, &c); err != nil {
				return fmt.Errorf("batch %s: decode chunk %d: %w", id, n, err)
			}
			if err := fn(n, c); err != nil {
				return err
			}
		}
		if page.Cursor == "" {
			return nil
		}
		q.Cursor = page.Cursor
	}
}

// stager cuts keys into chunks of a batch.
type stager struct {
	id    string
	ttl   int64
	next  int
	cur   Chunk
	bytes int
	out   []store.Write
}

func newStager(id string, next int, now time.Time) *stager {
	return &stager{id: id, next: next, ttl: now.Add(batchTTL).Unix()}
}

// add appends key to the chunk of (list, on), cutting a chunk when the
// list changes or the chunk is full.
func (st *stager) add(list string, on bool, key string) {
	if len(st.cur.Keys) > 0 && (st.cur.List != list || st.cur.On != on || st.bytes+len(key) > maxChunkBytes) {
		st.flush()
	}
	st.cur.List, st.cur.On = list, on
	st.cur.Keys = append(st.cur.Keys, key)
	st.bytes += len(key) + 3
}

// flush turns the current chunk into a write.
func (st *stager) flush() {
	if len(st.cur.Keys) == 0 {
		return
	}
	data, _ := json.Marshal(st.cur)
	k := store.BigSegmentBatchChunkKey(st.id, st.next)
	st.out = append(st.out, store.Put(store.Item{PK: k.PK, SK: k.SK, TTL: st.ttl, Data: data}, store.Cond{}))
	st.next++
	st.cur, st.bytes = Chunk{}, 0
}

// take returns the chunk writes flushed so far.
func (st *stager) take() []store.Write {
	out := st.out
	st.out = nil
	return out
}

// memberWrites are the idempotent writes that put keys on a list
// (stamped with stamp, which a replacing import sweeps by) or take them off.
func memberWrites(seg *Segment, c Chunk, stamp string) []store.Write {
	data := []byte(`{}`)
	if stamp != "" {
		data, _ = json.Marshal(map[string]string{"import": stamp})
	}
	seen := make(map[string]bool, len(c.Keys))
	out := make([]store.Write, 0, len(c.Keys))
	for _, key := range c.Keys {
		if seen[key] {
			continue // one transaction may not touch an item twice
		}
		seen[key] = true
		k := store.BigSegmentMemberKey(seg.ProjectKey, seg.EnvironmentKey, seg.Key, seg.Generation, c.List, key)
		if c.On {
			out = append(out, store.Put(store.Item{PK: k.PK, SK: k.SK, Data: data}, store.Cond{}))
		} else {
			out = append(out, store.Delete(k, store.Cond{}))
		}
	}
	return out
}

// transactEach commits ws in transactions of store.MaxWrites. They are
// unconditional and idempotent: a failure part way leaves some written,
// and writing them again is harmless.
func (s *Service) transactEach(ctx context.Context, ws []store.Write) error {
	for len(ws) > 0 {
		n := min(len(ws), store.MaxWrites)
		if err := s.table.Transact(ctx, ws[:n]); err != nil {
			return fmt.Errorf("write big segment members: %w", err)
		}
		ws = ws[n:]
	}
	return nil
}

func checkKeys(field string, keys []string) error {
	for i, k := range keys {
		if strings.TrimSpace(k) == "" {
			return fault.New(fault.Invalid, "field %q: key %d is empty", field, i)
		}
		if len(k) > maxContextKey {
			return fault.New(fault.Invalid, "field %q: key %d is longer than %d bytes", field, i, maxContextKey)
		}
	}
	return nil
}

// UpdateTargets adds keys to and removes keys from the included and
// excluded lists of big segment key, whose contexts must be of kind (any
// when empty); one audit entry on the segment, actions updateIncluded
// and/or updateExcluded.
func (s *Service) UpdateTargets(ctx context.Context, projectKey, envKey, key, kind string, t TargetChanges) error {
	actions := t.Actions()
	if len(actions) == 0 {
		return fault.New(fault.Invalid, "the body changes nothing: give included or excluded keys to add or remove")
	}
	lists := []struct {
		field string
		list  string
		ch    *KeyChanges
	}{{"included", store.BigSegmentIncluded, t.Included}, {"excluded", store.BigSegmentExcluded, t.Excluded}}
	for _, l := range lists {
		if l.ch == nil {
			continue
		}
		if err := checkKeys(l.field+".add", l.ch.Add); err != nil {
			return err
		}
		if err := checkKeys(l.field+".remove", l.ch.Remove); err != nil {
			return err
		}
		added := make(map[string]bool, len(l.ch.Add))
		for _, k := range l.ch.Add {
			added[k] = true
		}
		for _, k := range l.ch.Remove {
			if added[k] {
				return fault.New(fault.Invalid, "field %q: key %q is both added and removed", l.field, k)
			}
		}
	}
	seg, err := s.Big(ctx, projectKey, envKey, key, kind)
	if err != nil {
		return err
	}
	if err := s.checkApproval(ctx, seg); err != nil {
		return err
	}
	ref := BatchRef{ID: uuid.NewString(), SegmentKey: seg.Key, Generation: seg.Generation}
	st := newStager(ref.ID, 0, s.now())
	var members []store.Write
	for _, l := range lists {
		if l.ch == nil {
			continue
		}
		for _, on := range []bool{true, false} {
			keys := l.ch.Add
			if !on {
				keys = l.ch.Remove
			}
			for _, k := range keys {
				st.add(l.list, on, k)
			}
			c := Chunk{List: l.list, On: on, Keys: keys}
			members = append(members, memberWrites(seg, c, "")...)
		}
		if l.list == store.BigSegmentIncluded {
			ref.Included = len(l.ch.Add) + len(l.ch.Remove)
		} else {
			ref.Excluded = len(l.ch.Add) + len(l.ch.Remove)
		}
	}
	st.flush()
	chunks := st.take()
	ref.Chunks = st.next
	all := append(members, chunks...)
	change := resource.Change{Actions: actions}
	if len(all) <= maxAlso {
		change.Also = all
	} else if err := s.transactEach(ctx, all); err != nil {
		// Members and the batch are written before the audited update: a
		// crash in between leaves members without their entry, and the
		// request, answered with an error, is done again identically.
		return err
	}
	// Membership writes are idempotent: a change of the segment between
	// the read and the commit (another targets update) is retried on the
	// segment read again, unless it is a new generation.
	for attempt := 1; ; attempt++ {
		_, err = s.commitMembers(ctx, seg, ref, change)
		if err == nil || !fault.Is(err, fault.OptimisticLock) || attempt == 3 {
			return err
		}
		if seg, err = s.Big(ctx, projectKey, envKey, key, kind); err != nil {
			return err
		}
		if seg.Generation != ref.Generation {
			return fault.New(fault.Conflict, "segment %q was deleted and created again during the change; send it again", key)
		}
	}
}

// commitMembers is the audited update of a membership change: the segment's
// version moves (SDKs and the audit log see a change), the entry's delta
// names the staged batch.
func (s *Service) commitMembers(ctx context.Context, seg *Segment, ref BatchRef, c resource.Change) (*Segment, error) {
	delta, err := json.Marshal(batchDelta{BigSegmentBatch: &ref})
	if err != nil {
		return nil, err
	}
	c.Delta = delta
	c.TitleVerb = "updated the targets of the big segment"
	next := seg.Clone()
	return s.update(WithoutApprovalCheck(ctx), seg, next, c)
}

// EachMember calls fn with every key on list of the big segment
// generation, shard by shard (keys are not in one order).
func EachMember(ctx context.Context, table store.Table, projectKey, envKey, segmentKey string, generation int, list string, fn func(key string, it store.Item) error) error {
	prefix := store.BigSegmentListPrefix(list)
	for shard := 0; shard < store.BigSegmentShards; shard++ {
		q := store.Query{PK: store.BigSegmentPartition(projectKey, envKey, segmentKey, generation, shard), SKPrefix: prefix}
		for {
			page, err := table.Query(ctx, q)
			if err != nil {
				return fmt.Errorf("read members of big segment %q: %w", segmentKey, err)
			}
			for _, it := range page.Items {
				if err := fn(strings.TrimPrefix(it.SK, prefix), it); err != nil {
					return err
				}
			}
			if page.Cursor == "" {
				break
			}
			q.Cursor = page.Cursor
		}
	}
	return nil
}
