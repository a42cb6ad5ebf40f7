// Package project holds projects: their fields and rules, and the service
// that creates (with environments), lists, reads, patches and deletes them.
package project

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/resource"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/jsondoc"
	"github.com/flagplane/flagplane/shared/listing"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/store"
)

// ClientSideAvailability says which client-side SDKs see new flags by default.
type ClientSideAvailability struct {
	UsingMobileKey     bool `json:"usingMobileKey"`
	UsingEnvironmentID bool `json:"usingEnvironmentId"`
}

// Project is one project as stored.
type Project struct {
	ID                            string                 `json:"_id"`
	Key                           string                 `json:"key"`
	Name                          string                 `json:"name"`
	Tags                          []string               `json:"tags"`
	IncludeInSnippetByDefault     bool                   `json:"includeInSnippetByDefault"`
	DefaultClientSideAvailability ClientSideAvailability `json:"defaultClientSideAvailability"`
	DefaultReleasePipelineKey     string                 `json:"defaultReleasePipelineKey,omitempty"`
	CreatedOn                     int64                  `json:"createdOn"`
	// Deleting marks a project whose contents are being removed; it reads as not found.
	Deleting bool  `json:"deleting,omitempty"`
	Version  int64 `json:"-"`
}

// Input is the body of a create request.
type Input struct {
	Key                           *string                 `json:"key"`
	Name                          *string                 `json:"name"`
	Tags                          []string                `json:"tags"`
	IncludeInSnippetByDefault     *bool                   `json:"includeInSnippetByDefault"`
	DefaultClientSideAvailability *ClientSideAvailability `json:"defaultClientSideAvailability"`
	// Environments stay raw until each is decoded on its own, so an error can name its index.
	Environments []json.RawMessage `json:"environments"`
}

// Limits of a project create.
const (
	// MaxEnvironmentsOnCreate keeps the create within one atomic write.
	MaxEnvironmentsOnCreate = 20
)

// defaultEnvironments are created when a new project names none.
func defaultEnvironments() []environment.Input {
	mk := func(key, name, color string) environment.Input {
		return environment.Input{Key: &key, Name: &name, Color: &color}
	}
	return []environment.Input{mk("test", "Test", "F5A623"), mk("production", "Production", "417505")}
}

func (p *Project) validate() error {
	if err := environment.ValidKey("key", p.Key); err != nil {
		return err
	}
	if err := environment.ValidName("name", p.Name); err != nil {
		return err
	}
	if p.DefaultReleasePipelineKey != "" {
		if err := environment.ValidKey("defaultReleasePipelineKey", p.DefaultReleasePipelineKey); err != nil {
			return err
		}
	}
	return environment.ValidTags("tags", p.Tags)
}

func (p *Project) item() (store.Item, error) {
	data, err := json.Marshal(p)
	k := store.ProjectKey(p.Key)
	gpk, gsk := store.ProjectIndexKeys(p.Key)
	return store.Item{PK: k.PK, SK: k.SK, GSI1PK: gpk, GSI1SK: gsk, Data: data}, err
}

// put writes p at its version under c, for writes the kit does not make.
func (p *Project) put(c store.Cond) (store.Write, error) {
	it, err := p.item()
	if err != nil {
		return store.Write{}, fmt.Errorf("encode project %q: %w", p.Key, err)
	}
	it.Version = p.Version
	return store.Put(it, c), nil
}

// kind describes projects to the resource kit. A delete marks the project
// first (see Delete), so the kit creates, reads and patches them.
var kind = resource.Kind[Project]{
	Audit: "project", Noun: "project", Created: "createProject", Deleted: "deleteProject",
	Patchable: patchable, Called: "a project",
	Item: (*Project).item, Decode: decode,
	Version: func(p *Project) int64 { return p.Version },
	Name:    func(p *Project) string { return p.Name },
}

// ref names the project with key; no project has a key of the wrong form.
func ref(key string) resource.Ref {
	return resource.Ref{Key: store.ProjectKey(key), What: fmt.Sprintf("project %q", key), Resource: "proj/" + key, Href: Href(key),
		Malformed: environment.ValidKey("projectKey", key) != nil}
}

// Href is a project's API path.
func Href(key string) string { return "/api/v2/projects/" + key }

// DefaultPipelineWrite is the write that makes pipelineKey p's default
// release pipeline, on the version p was read at (for the release pipeline
// service, which writes it with the pipeline it creates).
func DefaultPipelineWrite(p *Project, pipelineKey string) (store.Write, error) {
	next := *p
	next.DefaultReleasePipelineKey, next.Version = pipelineKey, p.Version+1
	return next.put(store.IfVersion(p.Version))
}

// Service manages projects.
type Service struct {
	table    store.Table
	log      *audit.Log
	projects resource.Kit[Project]
	now      func() time.Time
}

// NewService returns the project service.
func NewService(table store.Table, log *audit.Log, now func() time.Time) *Service {
	return &Service{table: table, log: log, projects: resource.New(&kind, table, log), now: now}
}

// Create makes a project and its environments (two defaults when none are given) atomically.
func (s *Service) Create(ctx context.Context, in Input) (*Project, []*environment.Environment, error) {
	if in.Key == nil {
		return nil, nil, fault.New(fault.Invalid, "field \"key\" is required")
	}
	if in.Name == nil {
		return nil, nil, fault.New(fault.Invalid, "field \"name\" is required")
	}
	now := s.now()
	p := &Project{ID: environment.NewID(), Key: *in.Key, Name: *in.Name, Tags: in.Tags, CreatedOn: now.UnixMilli(),
		DefaultClientSideAvailability: ClientSideAvailability{UsingEnvironmentID: false, UsingMobileKey: true}}
	if p.Tags == nil {
		p.Tags = []string{}
	}
	if in.IncludeInSnippetByDefault != nil {
		p.IncludeInSnippetByDefault = *in.IncludeInSnippetByDefault
	}
	if in.DefaultClientSideAvailability != nil {
		p.DefaultClientSideAvailability = *in.DefaultClientSideAvailability
	}
	if err := p.validate(); err != nil {
		return nil, nil, err
	}
	inputs := defaultEnvironments()
	if in.Environments != nil {
		inputs = make([]environment.Input, len(in.Environments))
		for i, raw := range in.Environments {
			field := fmt.Sprintf("environments[%d].", i)
			if err := jsondoc.UnmarshalField(raw, &inputs[i], field); err != nil {
				return nil, nil, err
			}
			if inputs[i].Source != nil {
				return nil, nil, fault.New(fault.Invalid, "field %q: a new project has no environment to clone from; create the environment after the project to use source", field+"source")
			}
		}
	}
	if len(inputs) > MaxEnvironmentsOnCreate {
		return nil, nil, fault.New(fault.Invalid, "field \"environments\" holds %d environments, at most %d may be created with a project", len(inputs), MaxEnvironmentsOnCreate)
	}
	var writes []store.Write
	envs := make([]*environment.Environment, 0, len(inputs))
	seen := map[string]bool{}
	for i, ei := range inputs {
		// One millisecond apart, so lists sorted by creation keep the order given.
		e, err := environment.Build(p.Key, ei, nil, fmt.Sprintf("environments[%d].", i), now.Add(time.Duration(i)*time.Millisecond))
		if err != nil {
			return nil, nil, err
		}
		if seen[e.Key] {
			return nil, nil, fault.New(fault.Invalid, "field \"environments[%d].key\": key %q is used twice", i, e.Key)
		}
		seen[e.Key] = true
		w, err := e.Put(store.IfNotExists())
		if err != nil {
			return nil, nil, err
		}
		creds, err := e.CredentialWrites()
		if err != nil {
			return nil, nil, err
		}
		envs = append(envs, e)
		writes = append(append(writes, w), creds...)
	}
	p, err := s.projects.Create(ctx, ref(p.Key), p, resource.Change{Also: writes, Exists: fmt.Sprintf("a project with key %q already exists", p.Key)})
	if err != nil {
		return nil, nil, err
	}
	return p, envs, nil
}

// Get returns a project; a project being deleted is not found.
func (s *Service) Get(ctx context.Context, key string) (*Project, error) {
	p, err := s.load(ctx, key)
	if err != nil {
		return nil, err
	}
	if p.Deleting {
		return nil, fault.New(fault.NotFound, "project %q not found", key)
	}
	return p, nil
}

func (s *Service) load(ctx context.Context, key string) (*Project, error) {
	return s.projects.Get(ctx, ref(key))
}

func decode(it store.Item) (*Project, error) {
	var p Project
	if err := json.Unmarshal(it.Data, &p); err != nil {
		return nil, fmt.Errorf("decode project %s: %w", it.PK, err)
	}
	p.Version = it.Version
	return &p, nil
}

// Guard asserts, inside another resource's write, that the project still
// exists unchanged (so it cannot be deleted underneath the write).
func (s *Service) Guard(ctx context.Context, key string) (store.Write, error) {
	p, err := s.Get(ctx, key)
	if err != nil {
		return store.Write{}, err
	}
	return store.Check(store.ProjectKey(key), store.IfVersion(p.Version)), nil
}

// ListQuery selects a page of projects.
type ListQuery struct {
	Filter string
	Sort   string
	Offset int64
	Limit  int64
	// Visible, when set, keeps only what the caller may read, before
	// counting and paging: totalCount counts what a caller can page through.
	Visible func(*Project) bool
}

// ListResult is one page and the number of projects that match.
type ListResult struct {
	Items      []*Project
	TotalCount int64
}

// List reads the project index and filters, sorts and pages in memory.
func (s *Service) List(ctx context.Context, q ListQuery) (ListResult, error) {
	filter, err := listing.ParseFilter(q.Filter, "query", "tags", "keys")
	if err != nil {
		return ListResult{}, err
	}
	order, err := listing.ParseSort(q.Sort, "name", "createdOn")
	if err != nil {
		return ListResult{}, err
	}
	match, err := matcher(filter)
	if err != nil {
		return ListResult{}, err
	}
	stored, err := record.All(ctx, s.table, store.Query{Index: store.IndexGSI1, PK: store.ProjectsIndexPK}, "projects", decode)
	if err != nil {
		return ListResult{}, err
	}
	var all []*Project
	for _, p := range stored {
		if !p.Deleting && match(p) && (q.Visible == nil || q.Visible(p)) {
			all = append(all, p)
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		for _, k := range order {
			var c int
			if k.Field == "name" {
				c = strings.Compare(strings.ToLower(all[i].Name), strings.ToLower(all[j].Name))
			} else {
				c = int(all[i].CreatedOn - all[j].CreatedOn)
			}
			if k.Desc {
				c = -c
			}
			if c != 0 {
				return c < 0
			}
		}
		return all[i].Key < all[j].Key
	})
	return ListResult{Items: listing.Window(all, q.Offset, q.Limit), TotalCount: int64(len(all))}, nil
}

func matcher(f listing.Filter) (func(*Project) bool, error) {
	tags, err := listing.HasTags(f, "tags", func(p *Project) []string { return p.Tags })
	if err != nil {
		return nil, err
	}
	var keys listing.Predicate[*Project]
	if raw, ok := f["keys"]; ok {
		keys = func(p *Project) bool { return slices.Contains(strings.Split(raw, "|"), p.Key) }
	}
	query := listing.Text(f, "query", func(p *Project) []string { return []string{p.Name, p.Key} })
	return listing.All(query, tags, keys), nil
}

// Actions are the actions `_access` reports on a project, decided on
// proj/<key>. It also reports the creates inside the project, each decided
// where its POST checks it (with the new key in place of *):
// CreateEnvironment on proj/<key>:env/*, CreateFlag on proj/<key>:env/*:flag/*.
var Actions = []string{"deleteProject", "updateProjectName", "updateTags", "updateIncludeInSnippetByDefault",
	"updateClientSideAvailability", "updateDefaultReleasePipeline"}

// The creates a project's `_access` reports (see Actions).
const (
	CreateEnvironment = "createEnvironment"
	CreateFlag        = "createFlag"
)

// patchable maps the fields a project patch may touch to their actions.
var patchable = map[string]string{
	"name":                          "updateProjectName",
	"tags":                          "updateTags",
	"includeInSnippetByDefault":     "updateIncludeInSnippetByDefault",
	"defaultClientSideAvailability": "updateClientSideAvailability",
	"defaultReleasePipelineKey":     "updateDefaultReleasePipeline",
}

// PatchActions returns the actions a JSON patch of a project performs.
func PatchActions(p patch.Patch) ([]string, error) { return kind.PatchActions(p) }

// Patch applies a JSON patch to a project on the version it was read at.
// A replace that changes nothing is dropped first (patch.WithoutNoOps), so
// a read-only field sent back as read is no error; nothing is stored
// unless the whole patch applies and the result is valid.
func (s *Service) Patch(ctx context.Context, key string, p patch.Patch) (*Project, error) {
	old, err := s.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(old)
	if err != nil {
		return nil, fmt.Errorf("encode project %q to patch: %w", key, err)
	}
	p = p.WithoutNoOps(raw)
	if _, err := PatchActions(p); err != nil {
		return nil, err
	}
	var next Project
	if err := p.ApplyTo(old, &next); err != nil {
		return nil, err
	}
	if next.Tags == nil {
		next.Tags = []string{}
	}
	next.ID, next.Key, next.CreatedOn, next.Deleting = old.ID, old.Key, old.CreatedOn, false
	if err := next.validate(); err != nil {
		return nil, err
	}
	actions := kind.Changed(old, &next)
	if len(actions) == 0 {
		return old, nil
	}
	var also []store.Write
	if next.DefaultReleasePipelineKey != old.DefaultReleasePipelineKey {
		check, err := s.defaultPipelineCheck(ctx, key, next.DefaultReleasePipelineKey)
		if err != nil {
			return nil, err
		}
		also = append(also, check)
	}
	return s.projects.Update(ctx, ref(key), old, &next, resource.Change{Actions: actions, Comment: p.Comment, Delta: p.Raw, Also: also})
}

// defaultPipelineCheck refuses a default release pipeline that does not
// exist (400) and returns the check that it still exists when the project
// is written (a delete of it in between makes the patch a 409).
func (s *Service) defaultPipelineCheck(ctx context.Context, key, pipelineKey string) (store.Write, error) {
	k := store.ReleasePipelineKey(key, pipelineKey)
	if pipelineKey == "" {
		return store.Write{}, fault.New(fault.Invalid, "field \"defaultReleasePipelineKey\": a project with a default release pipeline keeps one; name another pipeline")
	}
	if _, err := s.table.Get(ctx, k); errors.Is(err, store.ErrNotFound) {
		return store.Write{}, fault.New(fault.Invalid, "field \"defaultReleasePipelineKey\": release pipeline %q not found in project %q", pipelineKey, key)
	} else if err != nil {
		return store.Write{}, fmt.Errorf("read release pipeline %q: %w", pipelineKey, err)
	}
	return store.Check(k, store.IfExists()), nil
}

// Delete removes a project and everything under it. It first marks the
// project as deleting (audited), then removes its partition in batches, then
// the project item. A crash part-way leaves the mark; calling Delete again
// finishes the work.
func (s *Service) Delete(ctx context.Context, key string) error {
	p, err := s.load(ctx, key)
	if err != nil {
		return err
	}
	if !p.Deleting {
		marked := *p
		marked.Deleting, marked.Version = true, p.Version+1
		put, err := marked.put(store.IfVersion(p.Version))
		if err != nil {
			return err
		}
		_, err = s.log.Commit(ctx, audit.Change{
			Writes: []store.Write{put}, Kind: "project", Resource: ref(key).Resource, Actions: []string{"deleteProject"},
			Name: p.Name, Href: Href(key), TitleVerb: "deleted the project", Previous: p,
			Conflict: fmt.Sprintf("project %q was changed by another request; try again", key),
		})
		if err != nil {
			return err
		}
	}
	return s.purge(ctx, key)
}

// purge deletes every item of the project's partition, the project item
// last, but for segment reference markers: they count the generations of
// each segment key, so a big segment of a project made again with the key
// never reads the members of the old one (members are kept by generation).
func (s *Service) purge(ctx context.Context, key string) error {
	pk := store.ProjectPartition(key)
	self := store.ProjectKey(key)
	for cursor := ""; ; {
		page, err := s.table.Query(ctx, store.Query{PK: pk, Limit: store.MaxWrites, Cursor: cursor})
		if err != nil {
			return fmt.Errorf("list contents of project %q: %w", key, err)
		}
		var writes []store.Write
		for _, it := range page.Items {
			if it.Key() != self && !store.IsSegmentRef(it.SK) {
				writes = append(writes, store.Delete(it.Key(), store.Cond{}))
			}
		}
		if len(writes) > 0 {
			if err := s.table.Transact(ctx, writes); err != nil {
				return fmt.Errorf("delete contents of project %q: %w", key, err)
			}
		}
		if cursor = page.Cursor; cursor == "" {
			break
		}
	}
	if err := s.table.Delete(ctx, self, store.Cond{}); err != nil {
		return fmt.Errorf("delete project %q: %w", key, err)
	}
	return nil
}
