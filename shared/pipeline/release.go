package pipeline

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/store"
)

// ReleaseAudience is a pipeline audience as a flag's release holds it.
type ReleaseAudience struct {
	ID string `json:"id"`
	Audience
}

// ReleasePhase is a pipeline phase as a flag's release holds it.
type ReleasePhase struct {
	ID             string            `json:"id"`
	Name           string            `json:"name"`
	Complete       bool              `json:"complete"`
	Started        bool              `json:"started,omitempty"`
	CreationDate   int64             `json:"creationDate"`
	StartedDate    int64             `json:"startedDate,omitempty"`
	CompletionDate int64             `json:"completionDate,omitempty"`
	Audiences      []ReleaseAudience `json:"audiences"`
	Configuration  json.RawMessage   `json:"configuration,omitempty"`
}

// Release is a flag's passage through a pipeline: a copy of the
// pipeline's phases taken when the flag was added, each marked complete
// or not.
type Release struct {
	ProjectKey  string         `json:"projectKey"`
	FlagKey     string         `json:"flagKey"`
	PipelineKey string         `json:"pipelineKey"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	VariationID string         `json:"variationId,omitempty"`
	Phases      []ReleasePhase `json:"phases"`
	CreatedAt   int64          `json:"createdAt"`
	Version     int64          `json:"-"`
}

// ActivePhase is the first phase not complete ("" when all are).
func (r *Release) ActivePhase() string {
	for _, p := range r.Phases {
		if !p.Complete {
			return p.ID
		}
	}
	return ""
}

// CompletedAt is when the last phase completed, 0 while the release is active.
func (r *Release) CompletedAt() int64 {
	if len(r.Phases) == 0 || r.ActivePhase() != "" {
		return 0
	}
	return r.Phases[len(r.Phases)-1].CompletionDate
}

// ReleaseHref is the API path of a flag's release.
func ReleaseHref(projectKey, flagKey string) string {
	return project.Href(projectKey) + "/flags/" + flagKey + "/release"
}

// ReleaseInput is the body of createReleaseForFlag.
type ReleaseInput struct {
	ReleasePipelineKey string `json:"releasePipelineKey"`
	ReleaseVariationID string `json:"releaseVariationId"`
}

func decodeRelease(it store.Item) (*Release, error) {
	var r Release
	if err := json.Unmarshal(it.Data, &r); err != nil {
		return nil, fmt.Errorf("decode release %s/%s: %w", it.PK, it.SK, err)
	}
	r.Version = it.Version
	return &r, nil
}

// CreateRelease adds a flag to a pipeline. A flag is in at most one active
// release: adding it again while its release is active is a conflict; a
// completed release is replaced. The pipeline and flag must not change
// while the release is written.
func (s *Service) CreateRelease(ctx context.Context, projectKey, flagKey string, in ReleaseInput) (*Release, error) {
	f, err := s.flags.Load(ctx, projectKey, flagKey)
	if err != nil {
		return nil, err
	}
	if in.ReleasePipelineKey == "" {
		return nil, fault.New(fault.Invalid, "field \"releasePipelineKey\" is required")
	}
	p, err := s.Get(ctx, projectKey, in.ReleasePipelineKey)
	if fault.Is(err, fault.NotFound) {
		return nil, fault.New(fault.Invalid, "field \"releasePipelineKey\": release pipeline %q not found in project %q", in.ReleasePipelineKey, projectKey)
	}
	if err != nil {
		return nil, err
	}
	if in.ReleaseVariationID != "" {
		found := false
		for _, v := range f.Variations {
			found = found || v.ID == in.ReleaseVariationID
		}
		if !found {
			return nil, fault.New(fault.Invalid, "field \"releaseVariationId\": flag %q has no variation %q", flagKey, in.ReleaseVariationID)
		}
	}
	cond := store.IfNotExists()
	var old *Release
	old, err = s.Release(ctx, projectKey, flagKey)
	switch {
	case err == nil && old.ActivePhase() != "":
		return nil, fault.New(fault.Conflict, "flag %q is already being released through pipeline %q", flagKey, old.PipelineKey)
	case err == nil:
		cond = store.IfVersion(old.Version)
	case !fault.Is(err, fault.NotFound):
		return nil, err
	default:
		old = nil
	}
	now := s.now().UnixMilli()
	r := &Release{ProjectKey: projectKey, FlagKey: flagKey, PipelineKey: p.Key, Name: p.Name, Description: p.Description,
		VariationID: in.ReleaseVariationID, CreatedAt: now, Version: 1}
	if old != nil {
		r.Version = old.Version + 1
	}
	for _, ph := range p.Phases {
		rp := ReleasePhase{ID: ph.ID, Name: ph.Name, CreationDate: now, Configuration: ph.Configuration, Audiences: []ReleaseAudience{}}
		for _, a := range ph.Audiences {
			rp.Audiences = append(rp.Audiences, ReleaseAudience{ID: uuid.NewString(), Audience: a})
		}
		r.Phases = append(r.Phases, rp)
	}
	data, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode release of flag %q: %w", flagKey, err)
	}
	k := store.ReleaseKey(projectKey, flagKey)
	writes := []store.Write{
		store.Put(store.Item{PK: k.PK, SK: k.SK, Version: r.Version, Data: data}, cond),
		store.Check(store.ReleasePipelineKey(projectKey, p.Key), store.IfVersion(p.Version)),
		store.Check(store.FlagKey(projectKey, flagKey), store.IfExists()),
	}
	var previous any
	if old != nil {
		previous = old
	}
	if _, err := s.log.Commit(ctx, audit.Change{
		Writes: writes, Kind: "flag", Resource: "proj/" + projectKey + ":env/*:flag/" + flagKey, Actions: []string{"createRelease"},
		Name: f.Name, Href: ReleaseHref(projectKey, flagKey), TitleVerb: "added the flag to release pipeline " + p.Name + ":",
		Previous: previous, Current: r,
		Conflict: fmt.Sprintf("the release of flag %q or pipeline %q was changed by another request; try again", flagKey, p.Key),
	}); err != nil {
		return nil, err
	}
	return r, nil
}

// Release returns a flag's release.
func (s *Service) Release(ctx context.Context, projectKey, flagKey string) (*Release, error) {
	return record.Load(ctx, s.table, store.ReleaseKey(projectKey, flagKey), fmt.Sprintf("release of flag %q in project %q", flagKey, projectKey), decodeRelease)
}

// releasesOf returns the releases through one pipeline, in flag key order.
func (s *Service) releasesOf(ctx context.Context, projectKey, pipelineKey string) ([]*Release, error) {
	all, err := record.All(ctx, s.table, store.Query{PK: store.ProjectPartition(projectKey), SKPrefix: store.ReleaseSKPrefix},
		fmt.Sprintf("releases of project %q", projectKey), decodeRelease)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, r := range all {
		if r.PipelineKey == pipelineKey {
			out = append(out, r)
		}
	}
	return out, nil
}

// ProgressionQuery filters progressions: Status is "", "active" or
// "completed"; ActivePhase keeps releases active on that phase.
type ProgressionQuery struct {
	Status      string
	ActivePhase string
}

// Progressions returns the pipeline, every release through it, and the
// releases q keeps.
func (s *Service) Progressions(ctx context.Context, projectKey, pipelineKey string, q ProgressionQuery) (p *Pipeline, all, kept []*Release, err error) {
	switch {
	case q.Status != "" && q.Status != "active" && q.Status != "completed":
		return nil, nil, nil, fault.New(fault.Invalid, "filter \"status\" must be active or completed, not %q", q.Status)
	case q.Status == "completed" && q.ActivePhase != "":
		return nil, nil, nil, fault.New(fault.Invalid, "filters \"status:completed\" and \"activePhaseId\" select disjoint releases; use one")
	}
	if p, err = s.Get(ctx, projectKey, pipelineKey); err != nil {
		return nil, nil, nil, err
	}
	if all, err = s.releasesOf(ctx, projectKey, pipelineKey); err != nil {
		return nil, nil, nil, err
	}
	for _, r := range all {
		active := r.ActivePhase()
		switch {
		case q.Status == "active" && active == "", q.Status == "completed" && active != "":
		case q.ActivePhase != "" && active != q.ActivePhase:
		default:
			kept = append(kept, r)
		}
	}
	return p, all, kept, nil
}
