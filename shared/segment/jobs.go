package segment

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/resource"
	"github.com/flagplane/flagplane/shared/store"
)

// Imports and exports of big segments are jobs: a record in the table
// (store.BigSegmentJobKey) that a worker takes up, under a lease, and
// carries on from where the last run stopped. The request that starts one
// only stages its input (an import's keys, in the chunks of a batch) and
// answers; the worker (RunJobs: a timer in the local server, a scheduled
// function in AWS) does the rest, so a job survives the process that
// accepted it, and a run cut short by a crash or its budget is resumed by
// the next: membership writes are idempotent, an import's progress is
// saved after every chunk, and an export is simply written again.

// Job kinds and statuses (the reference's Import status enum; an export
// uses the same words).
const (
	JobImport = "import"
	JobExport = "export"

	StatusReady      = "ready"
	StatusInProgress = "in_progress"
	StatusComplete   = "complete"
	StatusStopped    = "stopped"

	ModeMerge   = "merge"
	ModeReplace = "replace"
)

// jobLease is how long a run holds a job: longer than any run's budget.
const jobLease = 20 * time.Minute

// uploadLock bounds how long an import whose upload never finished (the
// process died while reading it) keeps the segment's import lock.
const uploadLock = time.Hour

// Initiator is who started a job.
type Initiator struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

// File is an imported file and its status.
type File struct {
	Filename string `json:"filename"`
	Status   string `json:"status"`
}

// Job is one import or export of a big segment.
type Job struct {
	ID             string    `json:"id"`
	Kind           string    `json:"kind"`
	ProjectKey     string    `json:"projectKey"`
	EnvironmentKey string    `json:"environmentKey"`
	SegmentKey     string    `json:"segmentKey"`
	Generation     int       `json:"generation"`
	Mode           string    `json:"mode,omitempty"`
	Status         string    `json:"status"`
	CreationTime   int64     `json:"creationTime"`
	Initiator      Initiator `json:"initiator"`
	Files          []File    `json:"files,omitempty"`
	// Chunks is how many chunks are staged (an import's keys and the
	// removals its replace found; an export's CSV); Next the first an
	// import has not applied yet.
	Chunks int  `json:"chunks"`
	Next   int  `json:"next"`
	Swept  bool `json:"swept,omitempty"`
	// Keys counts the keys uploaded or exported.
	Keys       int    `json:"keys"`
	SizeBytes  int64  `json:"sizeBytes"`
	Error      string `json:"error,omitempty"`
	LeaseUntil int64  `json:"leaseUntil,omitempty"`

	ItemVersion int64 `json:"-"`
}

// Done reports whether the job has ended.
func (j *Job) Done() bool { return j.Status == StatusComplete || j.Status == StatusStopped }

// Href is the job's API path.
func (j *Job) Href() string {
	return Href(j.ProjectKey, j.EnvironmentKey, j.SegmentKey) + "/" + j.Kind + "s/" + j.ID
}

func (j *Job) key() store.Key {
	return store.BigSegmentJobKey(j.ProjectKey, j.EnvironmentKey, j.SegmentKey, j.Kind, j.ID)
}

func (j *Job) item() (store.Item, error) {
	data, err := json.Marshal(j)
	if err != nil {
		return store.Item{}, fmt.Errorf("encode %s %s: %w", j.Kind, j.ID, err)
	}
	k := j.key()
	it := store.Item{PK: k.PK, SK: k.SK, Version: j.ItemVersion + 1, Data: data}
	if !j.Done() {
		// Unfinished jobs are listed for the worker; a finished one leaves.
		it.GSI1PK, it.GSI1SK = store.BigSegmentJobsIndexPK, fmt.Sprintf("%013d#%s", j.CreationTime, j.ID)
	}
	return it, nil
}

// write stores j on the version it was read at.
func (j *Job) write() (store.Write, error) {
	it, err := j.item()
	if err != nil {
		return store.Write{}, err
	}
	c := store.IfVersion(j.ItemVersion)
	if j.ItemVersion == 0 {
		c = store.IfNotExists()
	}
	return store.Put(it, c), nil
}

func decodeJob(it store.Item) (*Job, error) {
	var j Job
	if err := json.Unmarshal(it.Data, &j); err != nil {
		return nil, fmt.Errorf("decode big segment job %s: %w", it.SK, err)
	}
	j.ItemVersion = it.Version
	return &j, nil
}

// save writes j and moves its version on.
func (s *Service) save(ctx context.Context, j *Job) error {
	w, err := j.write()
	if err != nil {
		return err
	}
	if err := s.table.Transact(ctx, []store.Write{w}); err != nil {
		if errors.Is(err, store.ErrConditionFailed) {
			return fault.Wrap(err, fault.OptimisticLock, "%s %s was changed by another run", j.Kind, j.ID)
		}
		return fmt.Errorf("save %s %s: %w", j.Kind, j.ID, err)
	}
	j.ItemVersion++
	return nil
}

// Job reads one import or export of a segment: 404 when there is none.
func (s *Service) Job(ctx context.Context, projectKey, envKey, segmentKey, kind, id string) (*Job, error) {
	k := store.BigSegmentJobKey(projectKey, envKey, segmentKey, kind, id)
	return record.Load(ctx, s.table, k, fmt.Sprintf("%s %q of segment %q", kind, id, segmentKey), decodeJob)
}

func initiator(ctx context.Context) Initiator {
	p, _ := identity.From(ctx)
	name := p.MemberEmail
	if name == "" {
		name = p.TokenName
	}
	return Initiator{Name: name, Email: p.MemberEmail}
}

// Upload is an import being received.
type Upload struct {
	s    *Service
	job  *Job
	lock store.Key
	lv   int64
	st   *stager
}

// BeginImport starts an import into big segment key: 409 while another
// import of the segment is unfinished.
func (s *Service) BeginImport(ctx context.Context, projectKey, envKey, key string) (*Upload, error) {
	seg, err := s.Big(ctx, projectKey, envKey, key, "")
	if err != nil {
		return nil, err
	}
	if err := s.checkApproval(ctx, seg); err != nil {
		return nil, err
	}
	now := s.now()
	j := &Job{ID: uuid.NewString(), Kind: JobImport, ProjectKey: projectKey, EnvironmentKey: envKey, SegmentKey: key,
		Generation: seg.Generation, Mode: ModeMerge, Status: StatusReady, CreationTime: now.UnixMilli(), Initiator: initiator(ctx)}
	u := &Upload{s: s, job: j, lock: store.BigSegmentJobKey(projectKey, envKey, key, "lock", JobImport), st: newStager(j.ID, 0, now)}
	// The lock names the import holding it; the import removes it when done.
	old, err := s.table.Get(ctx, u.lock)
	cond := store.IfNotExists()
	switch {
	case err == nil && (old.TTL == 0 || old.TTL > now.Unix()): // no TTL: a recorded import holds it
		var holder struct{ ID string }
		_ = json.Unmarshal(old.Data, &holder)
		return nil, fault.New(fault.Conflict, "import %s of segment %q is still in progress: wait until it completes", holder.ID, key)
	case err == nil:
		cond = store.IfVersion(old.Version) // an upload that died long ago
	case !errors.Is(err, store.ErrNotFound):
		return nil, fmt.Errorf("read import lock of segment %q: %w", key, err)
	}
	data, _ := json.Marshal(map[string]string{"ID": j.ID})
	u.lv = old.Version + 1
	lockItem := store.Item{PK: u.lock.PK, SK: u.lock.SK, Version: u.lv, TTL: now.Add(uploadLock).Unix(), Data: data}
	if err := s.table.Put(ctx, lockItem, cond); err != nil {
		if errors.Is(err, store.ErrConditionFailed) {
			return nil, fault.New(fault.Conflict, "another import of segment %q started at the same time", key)
		}
		return nil, fmt.Errorf("take import lock of segment %q: %w", key, err)
	}
	return u, nil
}

// headers are the first lines a CSV may have that name its column.
var headers = map[string]bool{"key": true, "keys": true, "contextkey": true, "context key": true, "userkey": true, "user key": true, "id": true}

// ReadCSV streams a CSV file of context keys (the first column of each
// line; a first line naming the column is skipped) into staged chunks,
// holding one chunk in memory.
func (u *Upload) ReadCSV(ctx context.Context, filename string, r io.Reader) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fault.New(fault.Invalid, "file %q is not CSV: %v", filename, err)
		}
		key := strings.TrimSpace(rec[0])
		if line == 1 {
			key = strings.TrimPrefix(key, "\ufeff") // a byte order mark
			if headers[strings.ToLower(key)] {
				continue
			}
		}
		if key == "" {
			continue
		}
		if len(key) > maxContextKey {
			return fault.New(fault.Invalid, "file %q, line %d: the key is longer than %d bytes", filename, line, maxContextKey)
		}
		u.st.add(store.BigSegmentIncluded, true, key)
		u.job.Keys++
		if ws := u.st.take(); len(ws) > 0 {
			if err := u.s.table.Transact(ctx, ws); err != nil {
				return fmt.Errorf("stage import %s: %w", u.job.ID, err)
			}
		}
	}
	u.st.flush()
	if ws := u.st.take(); len(ws) > 0 {
		if err := u.s.table.Transact(ctx, ws); err != nil {
			return fmt.Errorf("stage import %s: %w", u.job.ID, err)
		}
	}
	u.job.Files = append(u.job.Files, File{Filename: filename, Status: StatusReady})
	return nil
}

// Finish records the import, ready for the worker, in mode (merge when empty).
func (u *Upload) Finish(ctx context.Context, mode string) (*Job, error) {
	switch mode {
	case "":
	case ModeMerge, ModeReplace:
		u.job.Mode = mode
	default:
		return nil, fault.New(fault.Invalid, "field \"mode\" must be merge or replace, not %q", mode)
	}
	if len(u.job.Files) == 0 {
		return nil, fault.New(fault.Invalid, "field \"file\" is required: a CSV file of context keys")
	}
	if u.job.Keys == 0 && u.job.Mode == ModeMerge {
		return nil, fault.New(fault.Invalid, "the file holds no context keys")
	}
	u.job.Chunks = u.st.next
	w, err := u.job.write()
	if err != nil {
		return nil, err
	}
	// From now on the lock lasts until the job ends, however long it runs.
	data, _ := json.Marshal(map[string]string{"ID": u.job.ID})
	lock := store.Put(store.Item{PK: u.lock.PK, SK: u.lock.SK, Version: u.lv + 1, Data: data}, store.IfVersion(u.lv))
	if err := u.s.table.Transact(ctx, []store.Write{w, lock}); err != nil {
		return nil, fmt.Errorf("record import %s: %w", u.job.ID, err)
	}
	u.job.ItemVersion++
	return u.job, nil
}

// Abort releases the segment's import lock of an upload that failed.
func (u *Upload) Abort(ctx context.Context) {
	_ = u.s.table.Delete(context.WithoutCancel(ctx), u.lock, store.IfVersion(u.lv))
}

// StartExport records an export of big segment key for the worker.
func (s *Service) StartExport(ctx context.Context, projectKey, envKey, key string) (*Job, error) {
	seg, err := s.Big(ctx, projectKey, envKey, key, "")
	if err != nil {
		return nil, err
	}
	j := &Job{ID: uuid.NewString(), Kind: JobExport, ProjectKey: projectKey, EnvironmentKey: envKey, SegmentKey: key,
		Generation: seg.Generation, Status: StatusReady, CreationTime: s.now().UnixMilli(), Initiator: initiator(ctx)}
	if err := s.save(ctx, j); err != nil {
		return nil, err
	}
	return j, nil
}

// ExportFile writes the CSV of a complete export to w: one key per line.
func (s *Service) ExportFile(ctx context.Context, j *Job, w io.Writer) error {
	if j.Status != StatusComplete {
		return fault.New(fault.Conflict, "export %s is %s: its file is ready when the export is complete", j.ID, j.Status)
	}
	q := store.Query{PK: store.BigSegmentBatchPartition(j.ID)}
	return record.Each(ctx, s.table, q, "export "+j.ID, func(it store.Item) error {
		_, err := w.Write(it.Data)
		return err
	})
}

// RunJobs takes up every unfinished import and export in turn, within
// budget: what is left is resumed by the next run.
func (s *Service) RunJobs(ctx context.Context, budget time.Duration) error {
	deadline := s.now().Add(budget)
	jobs, err := record.All(ctx, s.table, store.Query{Index: store.IndexGSI1, PK: store.BigSegmentJobsIndexPK}, "big segment jobs", decodeJob)
	if err != nil {
		return err
	}
	var errs []error
	for _, listed := range jobs {
		if s.now().After(deadline) {
			break
		}
		// The index may lag: read the job itself.
		j, err := s.Job(ctx, listed.ProjectKey, listed.EnvironmentKey, listed.SegmentKey, listed.Kind, listed.ID)
		if err != nil {
			if !fault.Is(err, fault.NotFound) {
				errs = append(errs, err)
			}
			continue
		}
		if j.Done() || j.LeaseUntil > s.now().UnixMilli() {
			continue
		}
		j.LeaseUntil = s.now().Add(jobLease).UnixMilli()
		j.Status = StatusInProgress
		if err := s.save(ctx, j); err != nil {
			if fault.Is(err, fault.OptimisticLock) {
				continue // another run took it
			}
			errs = append(errs, err)
			continue
		}
		if err := s.runJob(ctx, j, deadline); err != nil {
			errs = append(errs, fmt.Errorf("%s %s of segment %q: %w", j.Kind, j.ID, j.SegmentKey, err))
			// The next run retries at once (a segment changed under the
			// import's final update, a store that failed), from the
			// progress saved.
			j.LeaseUntil = 0
			if err := s.save(context.WithoutCancel(ctx), j); err != nil && !fault.Is(err, fault.OptimisticLock) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// runJob works on a leased job until it ends or the deadline passes.
func (s *Service) runJob(ctx context.Context, j *Job, deadline time.Time) error {
	seg, err := s.Get(ctx, j.ProjectKey, j.EnvironmentKey, j.SegmentKey)
	if err == nil && seg.Generation != j.Generation {
		err = fault.New(fault.NotFound, "segment %q was deleted and created again", j.SegmentKey)
	}
	if fault.Is(err, fault.NotFound) {
		return s.stop(ctx, j, err)
	}
	if err != nil {
		return err
	}
	if j.Kind == JobExport {
		return s.runExport(ctx, seg, j)
	}
	return s.runImport(ctx, seg, j, deadline)
}

// stop ends a job that cannot go on, saying why.
func (s *Service) stop(ctx context.Context, j *Job, why error) error {
	j.Status, j.Error, j.LeaseUntil = StatusStopped, fault.MessageOf(why), 0
	for i := range j.Files {
		j.Files[i].Status = StatusStopped
	}
	if err := s.save(ctx, j); err != nil {
		return err
	}
	if j.Kind == JobImport {
		lock := store.BigSegmentJobKey(j.ProjectKey, j.EnvironmentKey, j.SegmentKey, "lock", JobImport)
		return s.table.Delete(ctx, lock, store.Cond{})
	}
	return nil
}

// runImport applies the staged chunks from j.Next on, then, for a
// replace, stages the removal of every included key the file did not
// have, applies those too, and ends with the segment's audited update
// (which also completes the job and releases the lock).
func (s *Service) runImport(ctx context.Context, seg *Segment, j *Job, deadline time.Time) error {
	for {
		for j.Next < j.Chunks {
			if s.now().After(deadline) {
				j.LeaseUntil = 0
				return s.save(ctx, j)
			}
			it, err := s.table.Get(ctx, store.BigSegmentBatchChunkKey(j.ID, j.Next))
			if err != nil {
				return fmt.Errorf("read chunk %d: %w", j.Next, err)
			}
			var c Chunk
			if err := json.Unmarshal(it.Data, &c); err != nil {
				return fmt.Errorf("decode chunk %d: %w", j.Next, err)
			}
			if err := s.transactEach(ctx, memberWrites(seg, c, j.ID)); err != nil {
				return err
			}
			j.Next++
			if err := s.save(ctx, j); err != nil {
				return err
			}
		}
		if j.Mode != ModeReplace || j.Swept {
			break
		}
		if err := s.sweep(ctx, seg, j); err != nil {
			return err
		}
	}
	done := *j
	done.Files = make([]File, len(j.Files))
	for i, f := range j.Files {
		done.Files[i] = File{Filename: f.Filename, Status: StatusComplete}
	}
	done.Status, done.LeaseUntil = StatusComplete, 0
	w, err := done.write()
	if err != nil {
		return err
	}
	lock := store.BigSegmentJobKey(j.ProjectKey, j.EnvironmentKey, j.SegmentKey, "lock", JobImport)
	ref := BatchRef{ID: j.ID, Chunks: j.Chunks, SegmentKey: seg.Key, Generation: seg.Generation, Included: j.Keys}
	_, err = s.commitMembers(ctx, seg, ref, resource.Change{Actions: []string{"updateIncluded"},
		Comment: fmt.Sprintf("import %s (%s) of %d keys", j.ID, j.Mode, j.Keys),
		Also:    []store.Write{w, store.Delete(lock, store.Cond{})}})
	return err
}

// sweep stages, after the chunks of a replacing import, the removal of
// every included key not stamped by it. A sweep cut short is done again
// from the same chunk number, overwriting what it had staged.
func (s *Service) sweep(ctx context.Context, seg *Segment, j *Job) error {
	st := newStager(j.ID, j.Chunks, s.now())
	err := EachMember(ctx, s.table, seg.ProjectKey, seg.EnvironmentKey, seg.Key, seg.Generation, store.BigSegmentIncluded, func(key string, it store.Item) error {
		var stamp struct {
			Import string `json:"import"`
		}
		_ = json.Unmarshal(it.Data, &stamp)
		if stamp.Import == j.ID {
			return nil
		}
		st.add(store.BigSegmentIncluded, false, key)
		if ws := st.take(); len(ws) > 0 {
			return s.table.Transact(ctx, ws)
		}
		return nil
	})
	if err != nil {
		return err
	}
	st.flush()
	if ws := st.take(); len(ws) > 0 {
		if err := s.table.Transact(ctx, ws); err != nil {
			return err
		}
	}
	j.Chunks, j.Swept = st.next, true
	return s.save(ctx, j)
}

// exportChunk is how many bytes of CSV one export item holds.
const exportChunk = 256 * 1024

// runExport writes the included keys as CSV chunks under the export's id.
func (s *Service) runExport(ctx context.Context, seg *Segment, j *Job) error {
	ttl := s.now().Add(batchTTL).Unix()
	var buf []byte
	n, keys := 0, 0
	var size int64
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		k := store.BigSegmentBatchChunkKey(j.ID, n)
		if err := s.table.Put(ctx, store.Item{PK: k.PK, SK: k.SK, TTL: ttl, Data: buf}, store.Cond{}); err != nil {
			return fmt.Errorf("write export chunk %d: %w", n, err)
		}
		size += int64(len(buf))
		n++
		buf = nil
		return nil
	}
	err := EachMember(ctx, s.table, seg.ProjectKey, seg.EnvironmentKey, seg.Key, seg.Generation, store.BigSegmentIncluded, func(key string, _ store.Item) error {
		buf = appendCSV(buf, key)
		keys++
		if len(buf) >= exportChunk {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return err
	}
	j.Chunks, j.Keys, j.SizeBytes, j.Status, j.LeaseUntil = n, keys, size, StatusComplete, 0
	return s.save(ctx, j)
}

// appendCSV appends key as one CSV line, quoted when it must be.
func appendCSV(buf []byte, key string) []byte {
	if strings.ContainsAny(key, "\",\r\n") || strings.TrimSpace(key) != key {
		return append(buf, `"`+strings.ReplaceAll(key, `"`, `""`)+"\"\n"...)
	}
	return append(buf, key+"\n"...)
}
