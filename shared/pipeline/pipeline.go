// Package pipeline holds release pipelines (beta): the ordered phases, each
// a set of audiences in the project's environments, that a flag's release
// moves through; a project's limit of 20 pipelines and its default; and the
// flags' releases through a pipeline.
package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/store"
)

// MaxPerProject is the most pipelines a project holds (spec 9.1).
const MaxPerProject = 20

// maxAttempts bounds how often a create or delete is tried again after
// losing a race on the project's pipeline count.
const maxAttempts = 100

// Audience is one environment's part of a phase.
type Audience struct {
	Name           string          `json:"name"`
	EnvironmentKey string          `json:"environmentKey"`
	SegmentKeys    []string        `json:"segmentKeys,omitempty"`
	Configuration  json.RawMessage `json:"configuration,omitempty"`
}

// Phase is one step of a pipeline.
type Phase struct {
	ID            string          `json:"id"`
	Name          string          `json:"name"`
	Audiences     []Audience      `json:"audiences"`
	Configuration json.RawMessage `json:"configuration,omitempty"`
}

// Pipeline is one release pipeline as stored.
type Pipeline struct {
	ProjectKey  string   `json:"projectKey"`
	Key         string   `json:"key"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Phases      []Phase  `json:"phases"`
	Tags        []string `json:"tags"`
	CreatedAt   int64    `json:"createdAt"`
	IsLegacy    bool     `json:"isLegacy"`
	Version     int64    `json:"-"`
}

// PhaseInput is a phase in a create or replace body.
type PhaseInput struct {
	Name          string          `json:"name"`
	Audiences     []Audience      `json:"audiences"`
	Configuration json.RawMessage `json:"configuration"`
}

// Input is the body of a create (Key, IsProjectDefault and IsLegacy) or a
// replace (the rest).
type Input struct {
	Key              string       `json:"key"`
	Name             string       `json:"name"`
	Description      string       `json:"description"`
	Phases           []PhaseInput `json:"phases"`
	Tags             []string     `json:"tags"`
	IsProjectDefault bool         `json:"isProjectDefault"`
	IsLegacy         bool         `json:"isLegacy"`
}

// Actions are the actions `_access` reports on a pipeline.
var Actions = []string{"updateReleasePipeline", "deleteReleasePipeline"}

// Href is a pipeline's API path.
func Href(projectKey, key string) string {
	return project.Href(projectKey) + "/release-pipelines/" + key
}

// Resource is a pipeline's resource specifier.
func Resource(projectKey, key string) string {
	return "proj/" + projectKey + ":release-pipeline/" + key
}

// Service manages release pipelines and flag releases.
type Service struct {
	table    store.Table
	log      *audit.Log
	projects *project.Service
	envs     *environment.Service
	flags    *flag.Service
	now      func() time.Time
}

// NewService returns the release pipeline service.
func NewService(table store.Table, log *audit.Log, projects *project.Service, envs *environment.Service, flags *flag.Service, now func() time.Time) *Service {
	return &Service{table: table, log: log, projects: projects, envs: envs, flags: flags, now: now}
}

// phases checks the input phases and returns them with ids (kept by
// position from old), plus the writes that keep what they name in place
// until the commit: every named environment must still exist, and every
// segment an audience names must exist in the audience's environment
// (flag.SegmentGuards, which also moves the segment's reference marker, so
// a delete of the segment racing this write fails). Each environment and
// each segment is read once, however many audiences name it.
func (s *Service) phases(ctx context.Context, projectKey string, in []PhaseInput, old []Phase) ([]Phase, []store.Write, error) {
	if len(in) == 0 {
		return nil, nil, fault.New(fault.Invalid, "field \"phases\" is required and must hold at least one phase")
	}
	out := make([]Phase, len(in))
	var checks []store.Write
	seen := map[string]bool{}
	for i, p := range in {
		field := fmt.Sprintf("phases[%d]", i)
		if strings.TrimSpace(p.Name) == "" {
			return nil, nil, fault.New(fault.Invalid, "field %q is required", field+".name")
		}
		if p.Audiences == nil {
			return nil, nil, fault.New(fault.Invalid, "field %q is required", field+".audiences")
		}
		id := uuid.NewString()
		if i < len(old) {
			id = old[i].ID
		}
		out[i] = Phase{ID: id, Name: p.Name, Audiences: p.Audiences, Configuration: p.Configuration}
		for j, a := range p.Audiences {
			af := fmt.Sprintf("%s.audiences[%d]", field, j)
			if strings.TrimSpace(a.Name) == "" {
				return nil, nil, fault.New(fault.Invalid, "field %q is required", af+".name")
			}
			if a.EnvironmentKey == "" {
				return nil, nil, fault.New(fault.Invalid, "field %q is required", af+".environmentKey")
			}
			if !seen[a.EnvironmentKey] {
				if _, err := s.envs.Get(ctx, projectKey, a.EnvironmentKey); err != nil {
					if fault.Is(err, fault.NotFound) {
						return nil, nil, fault.New(fault.Invalid, "field %q: environment %q not found in project %q", af+".environmentKey", a.EnvironmentKey, projectKey)
					}
					return nil, nil, err
				}
				seen[a.EnvironmentKey] = true
				checks = append(checks, store.Check(store.EnvironmentKey(projectKey, a.EnvironmentKey), store.IfExists()))
			}
			guards, err := s.audienceSegments(ctx, projectKey, af, a, seen)
			if err != nil {
				return nil, nil, err
			}
			checks = append(checks, guards...)
		}
	}
	if len(checks) > maxChecks {
		return nil, nil, fault.New(fault.Invalid, "field \"phases\": the audiences name %d environments and segments in all, at most %d fit the one write that keeps them in place", len(checks), maxChecks)
	}
	return out, checks, nil
}

// maxChecks bounds the environment and segment checks of one pipeline
// write, which share its transaction with the pipeline, its count, the
// project and the audit entry (a segment takes two: exists, marker).
const maxChecks = store.MaxWrites - 10

// audienceSegments checks the segments audience a (at field af) names, in
// its environment, and returns their guards; seen, shared across the
// pipeline, keeps a segment named twice from being guarded twice (two
// writes to one marker in one transaction would fail it).
func (s *Service) audienceSegments(ctx context.Context, projectKey, af string, a Audience, seen map[string]bool) ([]store.Write, error) {
	var out []store.Write
	for k, key := range a.SegmentKeys {
		sf := fmt.Sprintf("%s.segmentKeys[%d]", af, k)
		if environment.ValidKey(sf, key) != nil {
			return nil, fault.New(fault.Invalid, "field %q: %q is not a segment key", sf, key)
		}
		if slices.Index(a.SegmentKeys, key) < k {
			return nil, fault.New(fault.Invalid, "field %q repeats segment %q", sf, key)
		}
		id := "segment\x00" + a.EnvironmentKey + "\x00" + key
		if seen[id] {
			continue
		}
		seen[id] = true
		guards, err := flag.SegmentGuards(ctx, s.table, projectKey, a.EnvironmentKey, []string{key})
		if fault.Is(err, fault.Invalid) {
			return nil, fault.New(fault.Invalid, "field %q: segment %q does not exist in environment %q of project %q", sf, key, a.EnvironmentKey, projectKey)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, guards...)
	}
	return out, nil
}

func (s *Service) validate(p *Pipeline) error {
	if err := environment.ValidKey("key", p.Key); err != nil {
		return err
	}
	if err := environment.ValidName("name", p.Name); err != nil {
		return err
	}
	if len(p.Description) > 1024 {
		return fault.New(fault.Invalid, "field \"description\" must be at most 1024 characters")
	}
	if p.Tags == nil {
		p.Tags = []string{}
	}
	return environment.ValidTags("tags", p.Tags)
}

func (p *Pipeline) put(c store.Cond) (store.Write, error) {
	data, err := json.Marshal(p)
	if err != nil {
		return store.Write{}, fmt.Errorf("encode release pipeline %q: %w", p.Key, err)
	}
	k := store.ReleasePipelineKey(p.ProjectKey, p.Key)
	return store.Put(store.Item{PK: k.PK, SK: k.SK, Version: p.Version, Data: data}, c), nil
}

func decode(it store.Item) (*Pipeline, error) {
	var p Pipeline
	if err := json.Unmarshal(it.Data, &p); err != nil {
		return nil, fmt.Errorf("decode release pipeline %s/%s: %w", it.PK, it.SK, err)
	}
	p.Version = it.Version
	return &p, nil
}

// count is the project's pipeline count and the version of its item (0 when absent).
type count struct {
	N       int   `json:"n"`
	Version int64 `json:"-"`
}

func (s *Service) count(ctx context.Context, projectKey string) (count, error) {
	it, err := s.table.Get(ctx, store.ReleasePipelineCountKey(projectKey))
	if errors.Is(err, store.ErrNotFound) {
		return count{}, nil
	}
	if err != nil {
		return count{}, fmt.Errorf("read release pipeline count of project %q: %w", projectKey, err)
	}
	var c count
	if err := json.Unmarshal(it.Data, &c); err != nil {
		return count{}, fmt.Errorf("decode release pipeline count of project %q: %w", projectKey, err)
	}
	c.Version = it.Version
	return c, nil
}

// countPut writes n as the new count on the version c was read at.
func countPut(projectKey string, c count, n int) store.Write {
	data, _ := json.Marshal(count{N: n})
	k := store.ReleasePipelineCountKey(projectKey)
	cond := store.IfVersion(c.Version)
	if c.Version == 0 {
		cond = store.IfNotExists()
	}
	return store.Put(store.Item{PK: k.PK, SK: k.SK, Version: c.Version + 1, Data: data}, cond)
}

// raced says whether a commit failed only because something it read changed.
func raced(err error) bool {
	return errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrConflict)
}

func backoff(attempt int) {
	time.Sleep(time.Duration(1+rand.IntN(1+min(attempt, 10)*2)) * time.Millisecond)
}

// Create stores a new pipeline. The first pipeline of a project, or one
// created with isProjectDefault, becomes the project's default. The count
// item is written in the same transaction on the version it was read at,
// so concurrent creates never take a project past MaxPerProject; a create
// that loses that race reads again and retries.
func (s *Service) Create(ctx context.Context, projectKey string, in Input) (*Pipeline, error) {
	for attempt := 0; attempt < maxAttempts; attempt++ {
		p, err := s.tryCreate(ctx, projectKey, in)
		if err == nil || !raced(err) {
			return p, err
		}
		backoff(attempt)
	}
	return nil, fault.New(fault.OptimisticLock, "release pipelines of project %q are being changed by many requests; try again", projectKey)
}

func (s *Service) tryCreate(ctx context.Context, projectKey string, in Input) (*Pipeline, error) {
	proj, err := s.projects.Get(ctx, projectKey)
	if err != nil {
		return nil, err
	}
	p := &Pipeline{ProjectKey: projectKey, Key: in.Key, Name: in.Name, Description: in.Description, Tags: in.Tags,
		CreatedAt: s.now().UnixMilli(), IsLegacy: in.IsLegacy, Version: 1}
	if err := s.validate(p); err != nil {
		return nil, err
	}
	phases, checks, err := s.phases(ctx, projectKey, in.Phases, nil)
	if err != nil {
		return nil, err
	}
	p.Phases = phases
	if _, err := s.table.Get(ctx, store.ReleasePipelineKey(projectKey, p.Key)); err == nil {
		return nil, fault.New(fault.Conflict, "release pipeline %q already exists in project %q", p.Key, projectKey)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("read release pipeline %q: %w", p.Key, err)
	}
	c, err := s.count(ctx, projectKey)
	if err != nil {
		return nil, err
	}
	if c.N >= MaxPerProject {
		return nil, fault.New(fault.Invalid, "project %q already holds %d release pipelines, the most allowed", projectKey, MaxPerProject)
	}
	put, err := p.put(store.IfNotExists())
	if err != nil {
		return nil, err
	}
	writes := append([]store.Write{put, countPut(projectKey, c, c.N+1)}, checks...)
	actions := []string{"createReleasePipeline"}
	if c.N == 0 || in.IsProjectDefault || proj.DefaultReleasePipelineKey == "" {
		w, err := project.DefaultPipelineWrite(proj, p.Key)
		if err != nil {
			return nil, err
		}
		writes = append(writes, w)
		actions = append(actions, "updateDefaultReleasePipeline")
	} else {
		writes = append(writes, store.Check(store.ProjectKey(projectKey), store.IfVersion(proj.Version)))
	}
	if _, err := s.log.Commit(ctx, audit.Change{
		Writes: writes, Kind: "release-pipeline", Resource: Resource(projectKey, p.Key), Actions: actions,
		Name: p.Name, Href: Href(projectKey, p.Key), TitleVerb: "created the release pipeline", Current: p,
		Parent: &audit.Parent{Name: proj.Name, Resource: "proj/" + projectKey, Href: project.Href(projectKey)},
	}); err != nil {
		return nil, err
	}
	return p, nil
}

// Get returns one pipeline.
func (s *Service) Get(ctx context.Context, projectKey, key string) (*Pipeline, error) {
	what := fmt.Sprintf("release pipeline %q in project %q", key, projectKey)
	if environment.ValidKey("projectKey", projectKey) != nil || environment.ValidKey("pipelineKey", key) != nil {
		return nil, fault.New(fault.NotFound, "%s not found", what)
	}
	return record.Load(ctx, s.table, store.ReleasePipelineKey(projectKey, key), what, decode)
}

// ListQuery selects pipelines: Query matches key, name and description
// (case-insensitive); Env keeps pipelines with an audience in that environment.
type ListQuery struct {
	Query string
	Env   string
}

// List returns the project's pipelines in key order, with the project (for its default).
func (s *Service) List(ctx context.Context, projectKey string, q ListQuery) ([]*Pipeline, *project.Project, error) {
	proj, err := s.projects.Get(ctx, projectKey)
	if err != nil {
		return nil, nil, err
	}
	all, err := record.All(ctx, s.table, store.Query{PK: store.ProjectPartition(projectKey), SKPrefix: store.ReleasePipelineSKPrefix},
		fmt.Sprintf("release pipelines of project %q", projectKey), decode)
	if err != nil {
		return nil, nil, err
	}
	out := all[:0]
	for _, p := range all {
		if q.matches(p) {
			out = append(out, p)
		}
	}
	return out, proj, nil
}

func (q ListQuery) matches(p *Pipeline) bool {
	if q.Query != "" {
		needle := strings.ToLower(q.Query)
		if !strings.Contains(strings.ToLower(p.Key), needle) && !strings.Contains(strings.ToLower(p.Name), needle) &&
			!strings.Contains(strings.ToLower(p.Description), needle) {
			return false
		}
	}
	if q.Env != "" {
		for _, ph := range p.Phases {
			for _, a := range ph.Audiences {
				if a.EnvironmentKey == q.Env {
					return true
				}
			}
		}
		return false
	}
	return true
}

// Replace replaces a pipeline's name, description, tags and phases on the
// version it was read at. Phases keep their ids by position.
func (s *Service) Replace(ctx context.Context, projectKey, key string, in Input) (*Pipeline, error) {
	old, err := s.Get(ctx, projectKey, key)
	if err != nil {
		return nil, err
	}
	next := *old
	next.Name, next.Description, next.Tags = in.Name, in.Description, in.Tags
	if err := s.validate(&next); err != nil {
		return nil, err
	}
	phases, checks, err := s.phases(ctx, projectKey, in.Phases, old.Phases)
	if err != nil {
		return nil, err
	}
	next.Phases = phases
	next.Version = old.Version + 1
	put, err := next.put(store.IfVersion(old.Version))
	if err != nil {
		return nil, err
	}
	if _, err := s.log.Commit(ctx, audit.Change{
		Writes: append([]store.Write{put}, checks...), Kind: "release-pipeline", Resource: Resource(projectKey, key),
		Actions: []string{"updateReleasePipeline"}, Name: next.Name, Href: Href(projectKey, key),
		TitleVerb: "updated the release pipeline", Previous: old, Current: &next,
		Conflict: fmt.Sprintf("release pipeline %q was changed by another request (or an environment it names was deleted); read it again and retry", key),
	}); err != nil {
		return nil, err
	}
	return &next, nil
}

// maxReleasesOnDelete bounds the flag releases a delete removes with the
// pipeline (one transaction).
const maxReleasesOnDelete = store.MaxWrites - 6

// Delete removes a pipeline and the flag releases through it. The
// project's default pipeline cannot be deleted (409): make another pipeline
// the default first, as the reference says.
func (s *Service) Delete(ctx context.Context, projectKey, key string) error {
	for attempt := 0; attempt < maxAttempts; attempt++ {
		err := s.tryDelete(ctx, projectKey, key)
		if err == nil || !raced(err) {
			return err
		}
		backoff(attempt)
	}
	return fault.New(fault.OptimisticLock, "release pipelines of project %q are being changed by many requests; try again", projectKey)
}

func (s *Service) tryDelete(ctx context.Context, projectKey, key string) error {
	p, err := s.Get(ctx, projectKey, key)
	if err != nil {
		return err
	}
	proj, err := s.projects.Get(ctx, projectKey)
	if err != nil {
		return err
	}
	if proj.DefaultReleasePipelineKey == key {
		return fault.New(fault.Conflict, "release pipeline %q is the default of project %q and cannot be deleted; make another pipeline the default first (the project's defaultReleasePipelineKey)", key, projectKey)
	}
	c, err := s.count(ctx, projectKey)
	if err != nil {
		return err
	}
	releases, err := s.releasesOf(ctx, projectKey, key)
	if err != nil {
		return err
	}
	if len(releases) > maxReleasesOnDelete {
		return fault.New(fault.Conflict, "release pipeline %q holds %d flag releases; at most %d can be removed with it", key, len(releases), maxReleasesOnDelete)
	}
	writes := []store.Write{
		store.Delete(store.ReleasePipelineKey(projectKey, key), store.IfVersion(p.Version)),
		countPut(projectKey, c, max(c.N-1, 0)),
		// The default cannot move to this pipeline while it is deleted.
		store.Check(store.ProjectKey(projectKey), store.IfVersion(proj.Version)),
	}
	for _, r := range releases {
		writes = append(writes, store.Delete(store.ReleaseKey(projectKey, r.FlagKey), store.IfVersion(r.Version)))
	}
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: writes, Kind: "release-pipeline", Resource: Resource(projectKey, key), Actions: []string{"deleteReleasePipeline"},
		Name: p.Name, Href: Href(projectKey, key), TitleVerb: "deleted the release pipeline", Previous: p,
	})
	return err
}
