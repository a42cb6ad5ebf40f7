package featurestore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/store"
)

// Big segment store integrations hold, per context key, the sets of big
// segment generations ("<key>.g<generation>") that include and exclude it,
// keyed by the hash LaunchDarkly's SDKs look up (HashContextKey), and the
// synchronized-on time. Every membership change (a targets update, an
// import) is a staged batch named by the segment's audit entry: the
// outbox consumer writes it to every big segment store of the environment
// that is on, chunk by chunk, saving how far it got, so a sync cut short
// (its budget, a crash, a store that failed) resumes where it stopped when
// the queue delivers the entry again. Set-add and set-remove are
// idempotent, so a chunk written twice changes nothing.

// HashContextKey is how the SDKs' big segment stores key a context: the
// base64 (standard, padded) SHA-256 of its key.
func HashContextKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return base64.StdEncoding.EncodeToString(h[:])
}

// batchBudget bounds the time one delivery of an entry, or one refresh,
// spends writing batches, within the 30 s of the worker running it; the
// refresh worker (every minute) carries on what is left, from the saved
// chunk.
const batchBudget = 20 * time.Second

// memberPage is how many keys a full sync hands a store at once.
const memberPage = 1000

// consumeBigSegments writes the batch a big segment's audit entry names
// to the environment's big segment stores that are on.
func (s *Service) consumeBigSegments(ctx context.Context, e audit.Entry) error {
	b, ok := segment.BatchOf(e)
	if !ok {
		return nil
	}
	deadline := s.now().Add(batchBudget)
	var errs []error
	for _, a := range e.Accesses {
		proj, env, _ := parseResource(a.Resource)
		if proj == "" || env == "" || env == "*" {
			continue
		}
		list, err := s.List(ctx, BigSegmentStore, proj, env)
		if err != nil {
			return err
		}
		for _, c := range list {
			if c.On {
				errs = append(errs, s.syncBatch(ctx, c, b, deadline))
			}
		}
		break // one environment per segment entry
	}
	return errors.Join(errs...)
}

// progress is how far a store has written a batch.
type progress struct {
	Batch segment.BatchRef `json:"batch"`
	Next  int              `json:"next"`
}

// syncBatch writes batch b to c's store from the chunk last saved on,
// until deadline, then sets the synchronized-on time. A batch left
// unfinished is listed for the refresh worker (continueBatches); that is
// not an error: the entry's delivery is done.
func (s *Service) syncBatch(ctx context.Context, c *Config, b segment.BatchRef, deadline time.Time) error {
	pk := store.BigSegmentSyncKey(c.ID, b.ID)
	p := progress{Batch: b}
	switch it, err := s.table.Get(ctx, pk); {
	case err == nil:
		if err := json.Unmarshal(it.Data, &p); err != nil {
			return fmt.Errorf("decode big segment sync progress: %w", err)
		}
	case !errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("read big segment sync progress: %w", err)
	}
	if p.Next >= b.Chunks {
		return nil
	}
	st, err := s.open(ctx, c.IntegrationKey, c.Settings())
	if err != nil {
		s.record(ctx, c, 0, err)
		return err
	}
	defer st.Close()
	save := func(done bool) error {
		data, _ := json.Marshal(p)
		it := store.Item{PK: pk.PK, SK: pk.SK, TTL: s.now().Add(7 * 24 * time.Hour).Unix(), Data: data}
		if !done {
			it.GSI1PK, it.GSI1SK = store.BigSegmentSyncsIndexPK, c.ID+"#"+b.ID
		}
		if err := s.table.Put(ctx, it, store.Cond{}); err != nil {
			return fmt.Errorf("save big segment sync progress: %w", err)
		}
		return nil
	}
	errStop := errors.New("budget spent")
	err = segment.Chunks(ctx, s.table, b.ID, p.Next, func(n int, ch segment.Chunk) error {
		if n >= b.Chunks {
			return errStop // never more than the entry names
		}
		if err := st.WriteMembers(ctx, b.Ref(), ch.List == store.BigSegmentIncluded, ch.On, ch.Keys); err != nil {
			return fmt.Errorf("write chunk %d of batch %s: %w", n, b.ID, err)
		}
		p.Next = n + 1
		if s.now().After(deadline) {
			return errStop
		}
		// Saved every few chunks, and whenever the budget ends.
		if p.Next%4 == 0 {
			return save(false)
		}
		return nil
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	done := err == nil && p.Next >= b.Chunks
	// Also after a failed write: the redelivery resumes after the chunks written.
	if serr := save(done); err == nil {
		err = serr
	}
	if err == nil && done {
		err = st.SetSynchronizedOn(ctx, s.now().UnixMilli())
	}
	if err != nil {
		err = fmt.Errorf("sync big segment %s to %s store %s: %w", b.Ref(), c.IntegrationKey, c.ID, err)
		s.record(context.WithoutCancel(ctx), c, 0, err)
	}
	return err
}

// continueBatches carries on the unfinished batch syncs, until deadline.
func (s *Service) continueBatches(ctx context.Context, deadline time.Time) error {
	pending, err := record.All(ctx, s.table, store.Query{Index: store.IndexGSI1, PK: store.BigSegmentSyncsIndexPK},
		"unfinished big segment syncs", func(it store.Item) (store.Item, error) { return it, nil })
	if err != nil {
		return err
	}
	var errs []error
	for _, it := range pending {
		if s.now().After(deadline) {
			break
		}
		var p progress
		if err := json.Unmarshal(it.Data, &p); err != nil {
			errs = append(errs, fmt.Errorf("decode big segment sync progress %s: %w", it.SK, err))
			continue
		}
		id := strings.TrimPrefix(it.PK, store.BigSegmentSyncKey("", "").PK)
		c, found, err := s.load(ctx, id)
		switch {
		case err != nil:
			errs = append(errs, err)
		case !found || !c.On:
			// Gone or off: its next sync (on create, on turn-on) writes every member.
			errs = append(errs, s.table.Delete(ctx, it.Key(), store.IfVersion(it.Version)))
		default:
			errs = append(errs, s.syncBatch(ctx, c, p.Batch, deadline))
		}
	}
	return errors.Join(errs...)
}

// syncBigSegments writes every member of every big segment of the
// environment to a big segment store, then its synchronized-on time: a
// store integration's first sync (and any after it is turned on or
// changed). Members removed while the store was not synced stay in it
// until a change of theirs is written.
func (s *Service) syncBigSegments(ctx context.Context, st Store, c *Config) (int, error) {
	segs, err := segment.Shared(ctx, s.table, segment.NewDecoded(), c.ProjectKey, c.EnvironmentKey)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, seg := range segs {
		if !seg.Unbounded {
			continue
		}
		ref := segment.StoreRef(seg.Key, seg.Generation)
		for _, list := range []string{store.BigSegmentIncluded, store.BigSegmentExcluded} {
			var keys []string
			flush := func() error {
				if len(keys) == 0 {
					return nil
				}
				err := st.WriteMembers(ctx, ref, list == store.BigSegmentIncluded, true, keys)
				n += len(keys)
				keys = keys[:0]
				return err
			}
			err := segment.EachMember(ctx, s.table, c.ProjectKey, c.EnvironmentKey, seg.Key, seg.Generation, list, func(key string, _ store.Item) error {
				keys = append(keys, key)
				if len(keys) >= memberPage {
					return flush()
				}
				return nil
			})
			if err == nil {
				err = flush()
			}
			if err != nil {
				return n, fmt.Errorf("write members of big segment %s: %w", ref, err)
			}
		}
	}
	return n, st.SetSynchronizedOn(ctx, s.now().UnixMilli())
}

// refreshBigSegments rewrites a big segment store's synchronized-on time
// (not its members), under the sync lease, and records the outcome.
func (s *Service) refreshBigSegments(ctx context.Context, c *Config) error {
	ctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	st, err := s.open(ctx, c.IntegrationKey, c.Settings())
	if err == nil {
		err = s.withLease(ctx, c.ID, func() error { return st.SetSynchronizedOn(ctx, s.now().UnixMilli()) })
		st.Close()
	}
	if err != nil {
		err = fmt.Errorf("refresh %s big segment store of %s/%s: %w", c.IntegrationKey, c.ProjectKey, c.EnvironmentKey, err)
	}
	status, _ := s.Status(ctx, c.ID)
	s.record(context.WithoutCancel(ctx), c, status.Items, err)
	return err
}
