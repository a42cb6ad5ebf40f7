package segment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/pipeline"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/resource"
	"github.com/flagplane/flagplane/shared/store"
)

// Environments finds the environment segments belong to;
// environment.Service does, with a 404 for a missing one.
type Environments interface {
	Get(ctx context.Context, projectKey, envKey string) (*environment.Environment, error)
}

// ApprovalCheck decides whether a segment of envKey may be changed
// directly; an error (403 when approvals are required) refuses the change.
type ApprovalCheck func(ctx context.Context, projectKey, envKey string, s *Segment) error

// Service manages segments.
type Service struct {
	table store.Table
	kit   resource.Kit[Segment]
	envs  Environments
	now   func() time.Time
	// decoded keeps segments decoded for the SDK payload and lists;
	// flags the flags read to find a segment's users.
	decoded *record.Memo[*Segment]
	flags   *flag.Decoded

	approvalCheck ApprovalCheck
}

// NewService returns the segment service.
func NewService(table store.Table, log *audit.Log, envs Environments, now func() time.Time) *Service {
	return &Service{table: table, kit: resource.New(&kind, table, log), envs: envs, now: now,
		decoded: record.NewMemo(decode), flags: &flag.Decoded{}}
}

// SetApprovalCheck installs the check run before every direct change to a
// segment, unless the context says the change comes from an approved
// request (WithoutApprovalCheck). Call it while wiring.
func (s *Service) SetApprovalCheck(c ApprovalCheck) { s.approvalCheck = c }

type approvedKey struct{}

// WithoutApprovalCheck marks ctx as carrying a change that needs no
// approval: an approval request being applied, or an expiry.
func WithoutApprovalCheck(ctx context.Context) context.Context {
	return context.WithValue(ctx, approvedKey{}, true)
}

func (s *Service) checkApproval(ctx context.Context, seg *Segment) error {
	if s.approvalCheck == nil || ctx.Value(approvedKey{}) != nil {
		return nil
	}
	return s.approvalCheck(ctx, seg.ProjectKey, seg.EnvironmentKey, seg)
}

// marker is the segment's reference marker (store.SegmentRefKey): it
// outlives the segment, counting its generations, and every flag change
// that starts using the segment bumps its version.
type marker struct {
	Generation int `json:"generation"`
}

func parent(projectKey, envKey string) *audit.Parent {
	return &audit.Parent{Name: envKey, Resource: fmt.Sprintf("proj/%s:env/%s", projectKey, envKey),
		Href: "/api/v2/projects/" + projectKey + "/environments/" + envKey}
}

// Create stores a new segment in the environment: 404 when the
// environment does not exist, 409 when the key is taken.
func (s *Service) Create(ctx context.Context, projectKey, envKey string, in Input) (*Segment, error) {
	if _, err := s.envs.Get(ctx, projectKey, envKey); err != nil {
		return nil, err
	}
	now := s.now().UnixMilli()
	seg := &Segment{
		Key: in.Key, Name: in.Name, Description: in.Description, Tags: in.Tags,
		CreationDate: now, LastModifiedDate: now, Version: 1, Salt: in.Key,
		Unbounded: in.Unbounded, UnboundedContextKind: in.UnboundedContextKind,
		ProjectKey: projectKey, EnvironmentKey: envKey,
	}
	if seg.Unbounded && seg.UnboundedContextKind == "" {
		seg.UnboundedContextKind = UserKind
	}
	seg.normalize()
	if err := seg.Check(); err != nil {
		return nil, err
	}
	mk := store.SegmentRefKey(projectKey, envKey, in.Key)
	m, mv, err := s.marker(ctx, mk)
	if err != nil {
		return nil, err
	}
	m.Generation++
	seg.Generation = m.Generation
	markerWrite, err := putMarker(mk, m, mv)
	if err != nil {
		return nil, err
	}
	if err := s.checkApproval(ctx, seg); err != nil {
		return nil, err
	}
	// The environment must still be there when the segment lands: its
	// delete purges the segments it sees, and would miss this one.
	envGuard := store.Check(store.EnvironmentKey(projectKey, envKey), store.IfExists())
	created, err := s.kit.Create(ctx, ref(projectKey, envKey, in.Key), seg, resource.Change{
		Also: []store.Write{markerWrite, envGuard}, Parent: parent(projectKey, envKey),
		Exists: fmt.Sprintf("segment %q already exists in environment %q", in.Key, envKey),
	})
	if fault.Is(err, fault.Conflict) {
		if _, envErr := s.envs.Get(ctx, projectKey, envKey); envErr != nil {
			return nil, envErr
		}
	}
	return created, err
}

// marker reads a segment's reference marker and its version (0 when none).
func (s *Service) marker(ctx context.Context, k store.Key) (marker, int64, error) {
	var m marker
	it, err := s.table.Get(ctx, k)
	if errors.Is(err, store.ErrNotFound) {
		return m, 0, nil
	}
	if err != nil {
		return m, 0, fmt.Errorf("read segment marker %s: %w", k.SK, err)
	}
	if err := json.Unmarshal(it.Data, &m); err != nil {
		return m, 0, fmt.Errorf("decode segment marker %s: %w", k.SK, err)
	}
	return m, it.Version, nil
}

// putMarker writes m at the version after v, on the condition that it is
// still at v (absent when v is 0).
func putMarker(k store.Key, m marker, v int64) (store.Write, error) {
	data, err := json.Marshal(m)
	if err != nil {
		return store.Write{}, err
	}
	c := store.IfVersion(v)
	if v == 0 {
		c = store.IfNotExists()
	}
	return store.Put(store.Item{PK: k.PK, SK: k.SK, Version: v + 1, Data: data}, c), nil
}

// Get reads one segment; 404 names it and where it was looked for.
func (s *Service) Get(ctx context.Context, projectKey, envKey, key string) (*Segment, error) {
	return s.kit.Get(ctx, ref(projectKey, envKey, key))
}

// All returns every segment of the environment, decoded once per change
// and shared: read them only. A missing environment has none.
func (s *Service) All(ctx context.Context, projectKey, envKey string) ([]*Segment, error) {
	return Shared(ctx, s.table, s.decoded, projectKey, envKey)
}

// Decoded keeps segments decoded across reads (see record.Memo).
type Decoded = record.Memo[*Segment]

// NewDecoded returns an empty Decoded.
func NewDecoded() *Decoded { return record.NewMemo(decode) }

// Shared returns every segment of one environment through d, ordered by
// key: shared, read-only values, for the SDK payload and evaluation.
func Shared(ctx context.Context, table store.Table, d *Decoded, projectKey, envKey string) ([]*Segment, error) {
	return record.All(ctx, table, store.Query{PK: store.ProjectPartition(projectKey), SKPrefix: store.SegmentEnvPrefix(envKey)},
		fmt.Sprintf("segments of environment %q of project %q", envKey, projectKey), d.Decode)
}

// Patch applies a JSON patch to a segment, on the version it is read at.
func (s *Service) Patch(ctx context.Context, projectKey, envKey, key string, p patch.Patch) (*Segment, error) {
	r := ref(projectKey, envKey, key)
	if _, err := s.kit.PatchActions(p); err != nil {
		return nil, err
	}
	old, err := s.kit.Get(ctx, r)
	if err != nil {
		return nil, err
	}
	var next Segment
	if err := p.ApplyTo(old, &next); err != nil {
		return nil, err
	}
	return s.update(ctx, old, &next, resource.Change{Comment: p.Comment, Delta: delta(p.Raw)})
}

// maxDelta is the largest patch an audit entry keeps as its delta.
const maxDelta = 64 * 1024

func delta(raw json.RawMessage) json.RawMessage {
	if len(raw) > maxDelta {
		return nil
	}
	return raw
}

// Change reads a segment, lets change edit a copy, and stores the copy on
// the version read: the path of semantic patches, approvals and expiries.
// c.Actions, when empty, are those of the fields that changed.
func (s *Service) Change(ctx context.Context, projectKey, envKey, key string, change func(next *Segment) error, c resource.Change) (*Segment, error) {
	old, err := s.Get(ctx, projectKey, envKey, key)
	if err != nil {
		return nil, err
	}
	next := old.Clone()
	if err := change(next); err != nil {
		return nil, err
	}
	return s.update(ctx, old, next, c)
}

// update stores next over old: what a change may not touch is put back,
// next is checked, and nothing is written when no field changed.
func (s *Service) update(ctx context.Context, old, next *Segment, c resource.Change) (*Segment, error) {
	next.Key, next.ProjectKey, next.EnvironmentKey = old.Key, old.ProjectKey, old.EnvironmentKey
	next.CreationDate, next.Salt, next.Generation = old.CreationDate, old.Salt, old.Generation
	next.Unbounded, next.UnboundedContextKind, next.Deleted = old.Unbounded, old.UnboundedContextKind, old.Deleted
	next.Version, next.LastModifiedDate, next.ItemVersion = old.Version, old.LastModifiedDate, old.ItemVersion
	next.normalize()
	actions := c.Actions
	if len(actions) == 0 {
		actions = s.kit.Changed(old, next)
	}
	if len(actions) == 0 && len(c.Also) == 0 {
		return old, nil
	}
	if len(actions) == 0 {
		actions = []string{"updateSegment"}
	}
	if err := next.Check(); err != nil {
		return nil, err
	}
	var added []string
	for _, k := range next.SegmentsUsed() {
		if !slices.Contains(old.SegmentsUsed(), k) {
			added = append(added, k)
		}
	}
	guards, err := flag.SegmentGuards(ctx, s.table, old.ProjectKey, old.EnvironmentKey, added)
	if err != nil {
		return nil, err
	}
	c.Also = append(append([]store.Write(nil), c.Also...), guards...)
	if err := s.checkApproval(ctx, old); err != nil {
		return nil, err
	}
	next.Version = old.Version + 1
	next.LastModifiedDate = max(s.now().UnixMilli(), old.LastModifiedDate)
	c.Actions = actions
	if c.Parent == nil {
		c.Parent = parent(old.ProjectKey, old.EnvironmentKey)
	}
	return s.kit.Update(ctx, ref(old.ProjectKey, old.EnvironmentKey, old.Key), old, next, c)
}

// FlagRef names a flag that uses a segment.
type FlagRef struct {
	Key  string
	Name string
}

// Users returns the flags of the project whose targeting in the
// environment matches the segment, ordered by key, and the segments of the
// environment whose rules match it.
func (s *Service) Users(ctx context.Context, projectKey, envKey, key string) ([]FlagRef, []string, error) {
	flags, err := flag.Shared(ctx, s.table, s.flags, projectKey)
	if err != nil {
		return nil, nil, err
	}
	var out []FlagRef
	for _, f := range flags {
		if slices.Contains(flag.SegmentsUsed(f, envKey), key) {
			out = append(out, FlagRef{Key: f.Key, Name: f.Name})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	segs, err := s.All(ctx, projectKey, envKey)
	if err != nil {
		return nil, nil, err
	}
	var bySegments []string
	for _, other := range segs {
		if other.Key != key && slices.Contains(other.SegmentsUsed(), key) {
			bySegments = append(bySegments, other.Key)
		}
	}
	return out, bySegments, nil
}

// SegmentsUsed are the keys of the segments the segment's rules match.
func (s *Segment) SegmentsUsed() []string {
	var out []string
	for _, r := range s.Rules {
		for _, c := range r.Clauses {
			if c.Op != "segmentMatch" {
				continue
			}
			for _, v := range c.Values {
				var key string
				if json.Unmarshal(v, &key) == nil && !slices.Contains(out, key) {
					out = append(out, key)
				}
			}
		}
	}
	return out
}

// Delete removes a segment no flag, no other segment and no release
// audience (pipeline or active release) uses: 409 naming them otherwise.
// A flag or pipeline that starts using the segment while it is deleted
// bumps its marker, and the delete is refused.
func (s *Service) Delete(ctx context.Context, projectKey, envKey, key string) error {
	r := ref(projectKey, envKey, key)
	old, err := s.kit.Get(ctx, r)
	if err != nil {
		return err
	}
	mk := store.SegmentRefKey(projectKey, envKey, key)
	_, mv, err := s.marker(ctx, mk)
	if err != nil {
		return err
	}
	flags, segs, err := s.Users(ctx, projectKey, envKey, key)
	if err != nil {
		return err
	}
	// Release audiences name segments too: a segment they name stays, so
	// that no audience ever names a missing segment.
	pipelines, releases, err := pipeline.SegmentUsers(ctx, s.table, projectKey, envKey, key)
	if err != nil {
		return err
	}
	if len(flags) > 0 || len(segs) > 0 || len(pipelines) > 0 || len(releases) > 0 {
		var names []string
		for _, f := range flags {
			names = append(names, fmt.Sprintf("flag %q", f.Key))
		}
		for _, k := range segs {
			names = append(names, fmt.Sprintf("segment %q", k))
		}
		for _, k := range pipelines {
			names = append(names, fmt.Sprintf("release pipeline %q", k))
		}
		for _, k := range releases {
			names = append(names, fmt.Sprintf("the release of flag %q", k))
		}
		return fault.New(fault.Conflict, "segment %q is in use in environment %q by %s: remove it from their rules or audiences first", key, envKey, strings.Join(names, ", "))
	}
	if err := s.checkApproval(ctx, old); err != nil {
		return err
	}
	guard := store.Check(mk, store.IfVersion(mv))
	if mv == 0 {
		guard = store.Check(mk, store.IfNotExists())
	}
	return s.kit.Remove(ctx, r, old, resource.Change{Also: []store.Write{guard}, Parent: parent(projectKey, envKey)})
}
