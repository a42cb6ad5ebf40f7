package featurestore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/jsondoc"
	"github.com/flagplane/flagplane/shared/sdkdata"
	"github.com/flagplane/flagplane/shared/store"
)

// The data kinds of the SDKs' persistent stores.
const (
	KindFeatures = "features"
	KindSegments = "segments"
)

// Item is one stored item: its version and its JSON as SDKs read it.
type Item struct {
	Version int
	JSON    []byte
}

// Store is one external persistent store, in the layout of LaunchDarkly's
// SDK integration for it. Implementations: redisstore, dynamostore.
type Store interface {
	// Items returns the stored items of a kind, by key.
	Items(ctx context.Context, kind string) (map[string]Item, error)
	// Put writes the item when the stored one is absent or has a lower
	// version (expect < 0: the SDK's own upsert rule), or, for expect >= 0,
	// only when the stored one has version expect. It reports whether it
	// wrote.
	Put(ctx context.Context, kind, key string, it Item, expect int) (bool, error)
	// Delete removes the item when the stored one has version expect.
	Delete(ctx context.Context, kind, key string, expect int) (bool, error)
	// MarkInitialized writes the key SDKs check to know the store was filled.
	MarkInitialized(ctx context.Context) error
	// SetSynchronizedOn writes the big segments' synchronized-on time (Unix ms).
	SetSynchronizedOn(ctx context.Context, ms int64) error
	// SynchronizedOn reads it; 0 when never written.
	SynchronizedOn(ctx context.Context) (int64, error)
	// WriteMembers adds the big segment ref ("<key>.g<generation>") to the
	// included (or excluded) set of each context key (on), or removes it,
	// as LaunchDarkly's big segment store integrations lay them out.
	WriteMembers(ctx context.Context, ref string, included, on bool, contextKeys []string) error
	// Probe writes a probe key, reads it back and removes it; an error
	// is a *StepError naming the step that failed.
	Probe(ctx context.Context) error
	// Close releases the connection.
	Close() error
}

// Timing of syncs.
const (
	// syncTimeout bounds one sync; leaseTTL outlives it, so a lease is
	// never taken over from a sync still writing. Waiting for the lease
	// and then syncing fits the delivery worker's 30 s (infra.WorkerTimeout);
	// a sync that cannot have the lease in time fails and the queue retries.
	syncTimeout = 15 * time.Second
	leaseTTL    = 20 * time.Second
	// leaseWait is how long a sync waits for another one to finish.
	leaseWait = 8 * time.Second
	// StaleAfter is when the SDKs call big segment data stale (their
	// default StaleAfter): a store whose synchronized-on time is older is
	// potentially stale.
	StaleAfter = 2 * time.Minute
	// maxErrors is how many recent errors a status keeps.
	maxErrors = 5
)

// StoreError is one failed sync or connection check.
type StoreError struct {
	StatusCode int    `json:"statusCode"`
	Message    string `json:"message"`
	Timestamp  int64  `json:"timestamp"`
}

// Status is a configuration's sync state, kept apart from it.
type Status struct {
	// LastSync is when the store was last written in full (Unix ms).
	LastSync int64 `json:"lastSync,omitempty,string"`
	// LastError is when the last sync or check failed (Unix ms).
	LastError int64 `json:"lastError,omitempty,string"`
	// Errors are the latest failures, newest first.
	Errors []StoreError `json:"errors"`
	// Items is how many items the last sync left in the store.
	Items int `json:"items"`
}

// Status returns the configuration's recorded sync state.
func (s *Service) Status(ctx context.Context, id string) (Status, error) {
	it, err := s.table.Get(ctx, store.FeatureStoreStatusKey(id))
	if errors.Is(err, store.ErrNotFound) {
		return Status{Errors: []StoreError{}}, nil
	}
	if err != nil {
		return Status{}, fmt.Errorf("load status of %s: %w", id, err)
	}
	var st Status
	if err := json.Unmarshal(it.Data, &st); err != nil {
		return Status{}, fmt.Errorf("decode status of %s: %w", id, err)
	}
	if st.Errors == nil {
		st.Errors = []StoreError{}
	}
	return st, nil
}

// record notes a sync's outcome in the status item.
func (s *Service) record(ctx context.Context, c *Config, items int, syncErr error) {
	st, err := s.Status(ctx, c.ID)
	if err != nil {
		s.logger.Warn("featurestore: read status", "config", c.ID, "err", err)
		st = Status{}
	}
	now := s.now().UnixMilli()
	if syncErr == nil {
		st.LastSync, st.Items = now, items
	} else {
		st.LastError = now
		st.Errors = append([]StoreError{{StatusCode: 503, Message: syncErr.Error(), Timestamp: now}}, st.Errors...)
		if len(st.Errors) > maxErrors {
			st.Errors = st.Errors[:maxErrors]
		}
	}
	data, err := json.Marshal(st)
	if err == nil {
		k := store.FeatureStoreStatusKey(c.ID)
		err = s.table.Put(ctx, store.Item{PK: k.PK, SK: k.SK, Data: data}, store.Cond{})
	}
	if err != nil {
		s.logger.Warn("featurestore: write status", "config", c.ID, "err", err)
	}
}

// Sync writes the configuration's store: for a delivery configuration
// the environment's flag data (every segment and flag SDKs receive,
// absent ones removed, then the initialized marker), for a big segment store the
// synchronized-on time. Syncs of one configuration never overlap (a lease
// in the table), and each reads the flag data after taking the lease, so
// a sync never writes an older state than the one before it. The outcome
// is recorded in the status; the error is also returned, so the outbox
// consumer retries.
func (s *Service) Sync(ctx context.Context, c *Config) error {
	ctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	items, err := s.sync(ctx, c)
	if err != nil {
		err = fmt.Errorf("sync %s store of %s/%s: %w", c.IntegrationKey, c.ProjectKey, c.EnvironmentKey, err)
		s.logger.Warn("featurestore: sync failed", "config", c.ID, "err", err)
	}
	s.record(context.WithoutCancel(ctx), c, items, err)
	if fault.Is(err, fault.NotFound) {
		return nil // the environment is gone: retrying cannot help, the status says why
	}
	return err
}

func (s *Service) sync(ctx context.Context, c *Config) (int, error) {
	st, err := s.open(ctx, c.IntegrationKey, c.Settings())
	if err != nil {
		return 0, err
	}
	defer st.Close()
	items := 0
	err = s.withLease(ctx, c.ID, func() error {
		if c.Capability == BigSegmentStore {
			var err error
			items, err = s.syncBigSegments(ctx, st, c)
			return err
		}
		// A deleted environment has no flag data: its store keeps the last set.
		if _, err := s.envs.Get(ctx, c.ProjectKey, c.EnvironmentKey); err != nil {
			return fmt.Errorf("read environment: %w", err)
		}
		snap, err := s.flags.Flags(ctx, sdkdata.EnvRef{ProjectKey: c.ProjectKey, EnvKey: c.EnvironmentKey})
		if err != nil {
			return fmt.Errorf("read flag data: %w", err)
		}
		want, err := flagItems(snap)
		if err != nil {
			return err
		}
		// Segments first: a flag that starts using a segment finds it in
		// the store (a segment goes only once no flag uses it).
		segs := segmentItems(snap)
		if err := write(ctx, st, KindSegments, segs); err != nil {
			return err
		}
		if err := write(ctx, st, KindFeatures, want); err != nil {
			return err
		}
		items = len(want) + len(segs)
		return st.MarkInitialized(ctx)
	})
	return items, err
}

// flagItems are the snapshot's flags as store items.
func flagItems(snap *sdkdata.Snapshot) (map[string]Item, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(snap.FlagsJSON(), &all); err != nil {
		return nil, fmt.Errorf("decode flag data: %w", err)
	}
	out := make(map[string]Item, len(all))
	for key, raw := range all {
		f, ok := snap.Flag(key)
		if !ok {
			continue
		}
		out[key] = Item{Version: f.Version, JSON: raw}
	}
	return out, nil
}

// segmentItems are the snapshot's segments as store items.
func segmentItems(snap *sdkdata.Snapshot) map[string]Item {
	segs := snap.Segments()
	out := make(map[string]Item, len(segs))
	for _, sg := range segs {
		out[sg.Key] = Item{Version: sg.Version, JSON: sg.JSON}
	}
	return out
}

// write makes the store's items of kind those of want. An item is written
// when the stored one is older (the SDKs' rule, so a concurrent writer's
// newer item wins), and, when the stored one is as new or newer but
// differs, only if it is still the one read: under the lease that is a
// flag deleted and created again, whose version starts over. Items want
// has not are removed the same way.
func write(ctx context.Context, st Store, kind string, want map[string]Item) error {
	have, err := st.Items(ctx, kind)
	if err != nil {
		return fmt.Errorf("read stored %s: %w", kind, err)
	}
	for key, it := range want {
		old, ok := have[key]
		if ok && old.Version == it.Version && bytes.Equal(old.JSON, it.JSON) {
			continue
		}
		expect := -1
		if ok && old.Version >= it.Version {
			expect = old.Version
		}
		if _, err := st.Put(ctx, kind, key, it, expect); err != nil {
			return fmt.Errorf("write %s %q: %w", kind, key, err)
		}
	}
	for key, old := range have {
		if _, ok := want[key]; ok {
			continue
		}
		if _, err := st.Delete(ctx, kind, key, old.Version); err != nil {
			return fmt.Errorf("remove %s %q: %w", kind, key, err)
		}
	}
	return nil
}

var errLeaseHeld = errors.New("lease held")

// withLease runs fn while holding the configuration's sync lease, waiting
// up to leaseWait for another holder. A crashed holder's lease expires.
func (s *Service) withLease(ctx context.Context, id string, fn func() error) error {
	k := store.FeatureStoreLeaseKey(id)
	deadline := s.now().Add(leaseWait)
	for {
		now := s.now()
		var version int64
		it, err := s.table.Get(ctx, k)
		switch {
		case errors.Is(err, store.ErrNotFound):
			version = 1
			err = s.table.Put(ctx, store.Item{PK: k.PK, SK: k.SK, Version: version, TTL: now.Add(leaseTTL).Unix()}, store.IfNotExists())
		case err != nil:
			return fmt.Errorf("read sync lease: %w", err)
		case it.TTL <= now.Unix():
			version = it.Version + 1
			err = s.table.Put(ctx, store.Item{PK: k.PK, SK: k.SK, Version: version, TTL: now.Add(leaseTTL).Unix()}, store.IfVersion(it.Version))
		default:
			err = errLeaseHeld
		}
		if err == nil {
			defer func() {
				if err := s.table.Delete(context.WithoutCancel(ctx), k, store.IfVersion(version)); err != nil && !errors.Is(err, store.ErrConditionFailed) {
					s.logger.Warn("featurestore: release sync lease", "config", id, "err", err)
				}
			}()
			return fn()
		}
		if !errors.Is(err, errLeaseHeld) && !errors.Is(err, store.ErrConditionFailed) {
			return fmt.Errorf("take sync lease: %w", err)
		}
		if s.now().After(deadline) {
			return errors.New("another sync of this configuration is still running")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Validation is the answer of a validate: what a connection, a write and
// a read back of a probe key gave.
type Validation struct {
	StatusCode   int    `json:"statusCode"`
	Error        string `json:"error,omitempty"`
	Timestamp    int64  `json:"timestamp"`
	ResponseBody string `json:"responseBody"`
}

// The steps of a probe, as a validate's answer names them.
const (
	StepConnect = "connect"
	StepWrite   = "write"
	StepRead    = "read"
	StepDelete  = "delete"
)

// StepError is a failure at one step of a probe.
type StepError struct {
	Step string
	Err  error
}

func (e *StepError) Error() string { return e.Step + ": " + e.Err.Error() }
func (e *StepError) Unwrap() error { return e.Err }

// stepFailures are what a validate answers per failed step: one message
// each, never the address dialled nor the error, so that validate does not
// tell a refused connection from a timeout or a closed port from a
// filtered one (it would be a port scanner). The log has the details.
var stepFailures = map[string]string{
	StepConnect: "the store could not be reached",
	StepWrite:   "the store did not accept the probe write",
	StepRead:    "the probe could not be read back",
	StepDelete:  "the probe could not be removed",
}

// Validate connects to the configuration's store, writes a probe key,
// reads it back and removes it, answering which step failed.
func (s *Service) Validate(ctx context.Context, c *Config) Validation {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	v := Validation{StatusCode: 200, Timestamp: s.now().UnixMilli(), ResponseBody: `{"ok":true}`}
	err := s.probe(ctx, c)
	if err == nil {
		return v
	}
	step := StepWrite
	if se := (*StepError)(nil); errors.As(err, &se) && stepFailures[se.Step] != "" {
		step = se.Step
	}
	s.logger.Warn("featurestore: validate failed", "config", c.ID, "step", step, "err", err)
	v.StatusCode = 503
	v.Error = step + ": " + stepFailures[step]
	v.ResponseBody = fmt.Sprintf(`{"ok":false,"step":%q}`, step)
	return v
}

func (s *Service) probe(ctx context.Context, c *Config) error {
	st, err := s.open(ctx, c.IntegrationKey, c.Settings())
	if err != nil {
		return &StepError{Step: StepConnect, Err: err}
	}
	defer st.Close()
	return st.Probe(ctx)
}

// BigSegmentStatus is a big segment store's `_status`.
type BigSegmentStatus struct {
	Available        bool                 `json:"available"`
	PotentiallyStale bool                 `json:"potentiallyStale"`
	LastSync         jsondoc.MillisString `json:"lastSync,omitempty"`
	LastError        jsondoc.MillisString `json:"lastError,omitempty"`
	Errors           []StoreError         `json:"errors"`
}

// BigSegmentStatus checks the store now: it is potentially stale when it
// does not answer, or its synchronized-on time is missing or older than
// StaleAfter (as the SDKs judge it), and available otherwise.
func (s *Service) BigSegmentStatus(ctx context.Context, c *Config) (BigSegmentStatus, error) {
	rec, err := s.Status(ctx, c.ID)
	if err != nil {
		return BigSegmentStatus{}, err
	}
	out := BigSegmentStatus{LastSync: jsondoc.MillisString(rec.LastSync), LastError: jsondoc.MillisString(rec.LastError), Errors: rec.Errors}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	now := s.now()
	synced, err := s.synchronizedOn(ctx, c)
	if err != nil {
		out.LastError = jsondoc.MillisString(now.UnixMilli())
		// Readers see it: as validate, no address and no kind of network failure.
		s.logger.Warn("featurestore: big segment store check failed", "config", c.ID, "err", err)
		out.Errors = append([]StoreError{{StatusCode: 503, Message: "connection check: " + stepFailures[StepConnect], Timestamp: now.UnixMilli()}}, out.Errors...)
		if len(out.Errors) > maxErrors {
			out.Errors = out.Errors[:maxErrors]
		}
		out.PotentiallyStale = true
		return out, nil
	}
	out.LastSync = jsondoc.MillisString(synced)
	out.PotentiallyStale = synced == 0 || now.Sub(time.UnixMilli(synced)) > StaleAfter
	// The reference's meaning: synchronized, and recently.
	out.Available = !out.PotentiallyStale
	return out, nil
}

func (s *Service) synchronizedOn(ctx context.Context, c *Config) (int64, error) {
	st, err := s.open(ctx, c.IntegrationKey, c.Settings())
	if err != nil {
		return 0, err
	}
	defer st.Close()
	return st.SynchronizedOn(ctx)
}

// dataKinds are the audit entry kinds whose changes can change the flag
// data SDKs receive.
var dataKinds = map[string]bool{"flag": true, "segment": true, "environment": true, "project": true}

// Wants says whether Consume has anything to do with an entry: a change
// of flag data or of a configuration. The fan-out queues no message for
// the others (most entries that are not flag changes).
func Wants(e audit.Entry) bool { return dataKinds[e.Kind] || e.Kind == "integration" }

// Consume is the outbox consumer: an entry changing flag data of a
// project syncs that project's delivery configurations (of the entry's
// environment when it names one); an entry creating or changing a
// configuration syncs it when it is on. Syncs are idempotent, so a
// redelivered entry only rewrites what changed since.
func (s *Service) Consume(ctx context.Context, e audit.Entry, _ int) error {
	var targets []*Config
	// An entry has one access per action, mostly on one resource: each
	// resource is looked up once.
	looked := map[string]bool{}
	for _, a := range e.Accesses {
		if looked[a.Resource] {
			continue
		}
		looked[a.Resource] = true
		proj, env, integration := parseResource(a.Resource)
		if proj == "" {
			continue
		}
		switch {
		case e.Kind == "integration" && integration != "":
			c, err := s.byResource(ctx, proj, env, integration)
			if err != nil {
				return err
			}
			if c != nil && c.On {
				targets = append(targets, c)
			}
		case dataKinds[e.Kind]:
			if env == "*" {
				env = ""
			}
			list, err := s.feedsOn(ctx, proj, env)
			if err != nil {
				return err
			}
			targets = append(targets, list...)
		}
	}
	seen := map[string]bool{}
	var errs []error
	if e.Kind == "segment" {
		errs = append(errs, s.consumeBigSegments(ctx, e))
	}
	for _, c := range targets {
		if seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		if err := s.Sync(ctx, c); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// byResource loads the configuration, of either capability, an
// integration resource names ("redis/<id>"), or nil when it is gone or not
// a store configuration of that environment.
func (s *Service) byResource(ctx context.Context, proj, env, integration string) (*Config, error) {
	key, id, ok := strings.Cut(integration, "/")
	if !ok || checkStore(key) != nil {
		return nil, nil
	}
	c, found, err := s.load(ctx, id)
	if err != nil || !found || c.ProjectKey != proj || c.EnvironmentKey != env || c.IntegrationKey != key {
		return nil, err
	}
	return c, nil
}

// parseResource reads project, environment and integration keys from a
// resource specifier such as proj/p:env/e:integration/redis/<id>.
func parseResource(res string) (proj, env, integration string) {
	for _, part := range strings.Split(res, ":") {
		kind, rest, _ := strings.Cut(part, "/")
		rest, _, _ = strings.Cut(rest, ";") // tags
		switch kind {
		case "proj":
			proj = rest
		case "env":
			env = rest
		case "integration":
			integration = rest
		}
	}
	if proj == "*" {
		proj = ""
	}
	return proj, env, integration
}

// RefreshBigSegments writes the synchronized-on time of every big segment
// store that is on: the SDKs call the data stale once it is older than
// StaleAfter, so it is refreshed well within that.
func (s *Service) RefreshBigSegments(ctx context.Context) error {
	list, err := s.List(ctx, BigSegmentStore, "", "")
	if err != nil {
		return err
	}
	// First the membership changes a sync left unfinished (bigsegments.go).
	errs := []error{s.continueBatches(ctx, s.now().Add(batchBudget))}
	for _, c := range list {
		if c.On {
			errs = append(errs, s.refreshBigSegments(ctx, c))
		}
	}
	return errors.Join(errs...)
}
