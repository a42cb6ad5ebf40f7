package environment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/listing"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/store"
)

// Input is the body of a create request. Pointers tell absent from zero.
type Input struct {
	Name               *string         `json:"name"`
	Key                *string         `json:"key"`
	Color              *string         `json:"color"`
	DefaultTTL         *int            `json:"defaultTtl"`
	SecureMode         *bool           `json:"secureMode"`
	DefaultTrackEvents *bool           `json:"defaultTrackEvents"`
	ConfirmChanges     *bool           `json:"confirmChanges"`
	RequireComments    *bool           `json:"requireComments"`
	Tags               []string        `json:"tags"`
	Source             *Source         `json:"source"`
	Critical           *bool           `json:"critical"`
	ApprovalSettings   json.RawMessage `json:"approvalSettings"`
	ResourceApprovals  json.RawMessage `json:"resourceApprovalSettings"`
}

// Source names the environment whose settings a new one clones.
type Source struct {
	Key     string `json:"key"`
	Version *int64 `json:"version"`
}

// Projects is what the environment service needs to know of projects.
type Projects interface {
	// Guard returns a write that asserts the project exists unchanged, or a
	// not-found error when it does not.
	Guard(ctx context.Context, projectKey string) (store.Write, error)
}

// Service manages environments.
type Service struct {
	table    store.Table
	log      *audit.Log
	projects Projects
	// approvals is whether the approvals feature is on; off, approval
	// settings are neither shown nor patchable.
	approvals bool
	now       func() time.Time
	// shared keeps decoded environments for Shared; see there.
	shared *record.Memo[*Environment]
}

// NewService returns the environment service.
func NewService(table store.Table, log *audit.Log, projects Projects, approvals bool, now func() time.Time) *Service {
	return &Service{table: table, log: log, projects: projects, approvals: approvals, now: now, shared: record.NewMemo(decode)}
}

// ApprovalsEnabled reports whether approval settings are part of environments.
func (s *Service) ApprovalsEnabled() bool { return s.approvals }

// Build makes a new environment of projectKey from in, cloning source's
// settings first when given. field prefixes error messages (e.g.
// "environments[1]."), so a nested create names the right element.
func Build(projectKey string, in Input, source *Environment, field string, now time.Time) (*Environment, error) {
	if len(in.ApprovalSettings) > 0 && string(in.ApprovalSettings) != "null" ||
		len(in.ResourceApprovals) > 0 && string(in.ResourceApprovals) != "null" {
		return nil, fault.New(fault.Invalid, "field %q: approval settings cannot be set when an environment is created; set them with the update operation (PATCH) afterwards", field+"approvalSettings")
	}
	for name, missing := range map[string]bool{"name": in.Name == nil, "key": in.Key == nil, "color": in.Color == nil} {
		if missing {
			return nil, fault.New(fault.Invalid, "field %q is required", field+name)
		}
	}
	e := &Environment{
		ApprovalSettings:         DefaultApprovalSettings(),
		ResourceApprovalSettings: map[string]ApprovalSettings{},
		Tags:                     []string{},
	}
	if source != nil {
		*e = *source
		e.Tags = append([]string{}, source.Tags...)
		e.ApprovalSettings.RequiredApprovalTags = append([]string{}, source.ApprovalSettings.RequiredApprovalTags...)
	}
	e.ID, e.ProjectKey, e.Key, e.Name, e.Color = NewID(), projectKey, *in.Key, *in.Name, *in.Color
	e.APIKey, e.MobileKey = newSecret("sdk"), newSecret("mob")
	e.CreatedOn, e.Version = now.UnixMilli(), 1
	setIf(&e.DefaultTTL, in.DefaultTTL)
	setIf(&e.SecureMode, in.SecureMode)
	setIf(&e.DefaultTrackEvents, in.DefaultTrackEvents)
	setIf(&e.ConfirmChanges, in.ConfirmChanges)
	setIf(&e.RequireComments, in.RequireComments)
	setIf(&e.Critical, in.Critical)
	if in.Tags != nil {
		e.Tags = in.Tags
	}
	if err := e.validate(field); err != nil {
		return nil, err
	}
	return e, nil
}

func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// Put returns the write that stores e when no environment has its key.
func (e *Environment) Put(c store.Cond) (store.Write, error) {
	data, err := json.Marshal(e)
	if err != nil {
		return store.Write{}, fmt.Errorf("encode environment %q: %w", e.Key, err)
	}
	k := store.EnvironmentKey(e.ProjectKey, e.Key)
	return store.Put(store.Item{PK: k.PK, SK: k.SK, Version: e.Version, Data: data}, c), nil
}

// Resource is the environment's resource specifier.
func (e *Environment) Resource() string { return "proj/" + e.ProjectKey + ":env/" + e.Key }

// Href is the environment's API path.
func (e *Environment) Href() string { return Href(e.ProjectKey, e.Key) }

// Href is the API path of an environment.
func Href(projectKey, envKey string) string {
	return "/api/v2/projects/" + projectKey + "/environments/" + envKey
}

func parent(projectKey string) *audit.Parent {
	return &audit.Parent{Name: projectKey, Resource: "proj/" + projectKey, Href: "/api/v2/projects/" + projectKey}
}

// Create makes an environment in an existing project.
func (s *Service) Create(ctx context.Context, projectKey string, in Input) (*Environment, error) {
	guard, err := s.projects.Guard(ctx, projectKey)
	if err != nil {
		return nil, err
	}
	writes := []store.Write{guard}
	var source *Environment
	if in.Source != nil {
		if source, err = s.Get(ctx, projectKey, in.Source.Key); err != nil {
			return nil, fault.Wrap(err, fault.Invalid, "field \"source.key\": environment %q to clone from does not exist in project %q", in.Source.Key, projectKey)
		}
		if in.Source.Version != nil && *in.Source.Version != source.Version {
			return nil, fault.New(fault.OptimisticLock, "source environment %q is at version %d, not %d", source.Key, source.Version, *in.Source.Version)
		}
		// The clone must copy the source as it still is when the write lands.
		writes = append(writes, store.Check(store.EnvironmentKey(projectKey, source.Key), store.IfVersion(source.Version)))
	}
	e, err := Build(projectKey, in, source, "", s.now())
	if err != nil {
		return nil, err
	}
	if _, err := s.Get(ctx, projectKey, e.Key); fault.Is(err, fault.NotFound) {
		// A delete that stopped before its purge leaves segments behind.
		if err := s.purgeSegments(ctx, projectKey, e.Key); err != nil {
			return nil, err
		}
	}
	put, err := e.Put(store.IfNotExists())
	if err != nil {
		return nil, err
	}
	creds, err := e.CredentialWrites()
	if err != nil {
		return nil, err
	}
	writes = append(append(writes, put), creds...)
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: writes, Kind: "environment", Resource: e.Resource(), Actions: []string{"createEnvironment"},
		Name: e.Name, Href: e.Href(), TitleVerb: "created the environment", Parent: parent(projectKey), Current: e.redacted(),
	})
	var txErr *store.TxError
	if errors.As(err, &txErr) {
		switch txErr.Key {
		case put.Item.Key():
			return nil, fault.Wrap(err, fault.Conflict, "an environment with key %q already exists in project %q", e.Key, projectKey)
		case guard.Item.Key():
			return nil, fault.Wrap(err, fault.OptimisticLock, "project %q changed while the environment was created; try again", projectKey)
		default:
			return nil, fault.Wrap(err, fault.OptimisticLock, "source environment %q changed while it was cloned; try again", in.Source.Key)
		}
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}

// Get returns one environment in one read.
func (s *Service) Get(ctx context.Context, projectKey, envKey string) (*Environment, error) {
	if ValidKey("projectKey", projectKey) != nil || ValidKey("environmentKey", envKey) != nil {
		// No such key can exist; answering here keeps odd input away from the store.
		return nil, fault.New(fault.NotFound, "environment %q not found in project %q", envKey, projectKey)
	}
	it, err := s.table.Get(ctx, store.EnvironmentKey(projectKey, envKey))
	if errors.Is(err, store.ErrNotFound) {
		return nil, fault.Wrap(err, fault.NotFound, "environment %q not found in project %q", envKey, projectKey)
	}
	if err != nil {
		return nil, fmt.Errorf("load environment %q of project %q: %w", envKey, projectKey, err)
	}
	return decode(it)
}

// Shared is Get for readers that only read: an unchanged environment is
// decoded once per process (decoding was a third of a GET's handler time)
// and the value is shared between requests, so it must not be modified.
// The memo checks each read item's version and bytes, so a change by any
// writer is seen on the next read.
func (s *Service) Shared(ctx context.Context, projectKey, envKey string) (*Environment, error) {
	if ValidKey("projectKey", projectKey) != nil || ValidKey("environmentKey", envKey) != nil {
		return nil, fault.New(fault.NotFound, "environment %q not found in project %q", envKey, projectKey)
	}
	it, err := s.table.Get(ctx, store.EnvironmentKey(projectKey, envKey))
	if errors.Is(err, store.ErrNotFound) {
		return nil, fault.Wrap(err, fault.NotFound, "environment %q not found in project %q", envKey, projectKey)
	}
	if err != nil {
		return nil, fmt.Errorf("load environment %q of project %q: %w", envKey, projectKey, err)
	}
	return s.shared.Decode(it)
}

func decode(it store.Item) (*Environment, error) {
	var e Environment
	if err := json.Unmarshal(it.Data, &e); err != nil {
		return nil, fmt.Errorf("decode environment %s: %w", it.SK, err)
	}
	e.Version = it.Version
	return &e, nil
}

// ListQuery selects and orders a page of environments.
type ListQuery struct {
	Filter string
	Sort   string
	Offset int64
	Limit  int64
	// Visible, when set, keeps only what the caller may read, before
	// counting and paging: totalCount counts what a caller can page through.
	Visible func(*Environment) bool
}

// ListResult is one page and the number of environments that match.
type ListResult struct {
	Items      []*Environment
	TotalCount int64
}

// List reads the project and all its environments with one Query (the
// project item sorts just before its environments), then filters, sorts
// and cuts the page in memory: a project holds few environments.
func (s *Service) List(ctx context.Context, projectKey string, q ListQuery) (ListResult, error) {
	filter, err := listing.ParseFilter(q.Filter, "query", "tags", "critical")
	if err != nil {
		return ListResult{}, err
	}
	order, err := listing.ParseSort(q.Sort, "createdOn", "critical", "name")
	if err != nil {
		return ListResult{}, err
	}
	match, err := matcher(filter)
	if err != nil {
		return ListResult{}, err
	}
	if ValidKey("projectKey", projectKey) != nil {
		return ListResult{}, fault.New(fault.NotFound, "project %q not found", projectKey)
	}
	sq := store.Query{PK: store.ProjectPartition(projectKey), SKPrefix: store.ProjectAndEnvironmentsPrefix}
	projectSeen := false
	var all []*Environment
	for {
		page, err := s.table.Query(ctx, sq)
		if err != nil {
			return ListResult{}, fmt.Errorf("list environments of project %q: %w", projectKey, err)
		}
		for _, it := range page.Items {
			if it.Key() == store.ProjectKey(projectKey) {
				projectSeen = true
				continue
			}
			e, err := decode(it)
			if err != nil {
				return ListResult{}, err
			}
			if match(e) && (q.Visible == nil || q.Visible(e)) {
				all = append(all, e)
			}
		}
		if page.Cursor == "" {
			break
		}
		sq.Cursor = page.Cursor
	}
	if !projectSeen {
		return ListResult{}, fault.New(fault.NotFound, "project %q not found", projectKey)
	}
	sortEnvironments(all, order)
	return ListResult{Items: listing.Window(all, q.Offset, q.Limit), TotalCount: int64(len(all))}, nil
}

func matcher(f listing.Filter) (func(*Environment) bool, error) {
	tags, err := listing.HasTags(f, "tags", func(e *Environment) []string { return e.Tags })
	if err != nil {
		return nil, err
	}
	critical, err := listing.Choice(f, "critical",
		listing.Option[*Environment]{Value: "true", Keep: func(e *Environment) bool { return e.Critical }},
		listing.Option[*Environment]{Value: "false", Keep: func(e *Environment) bool { return !e.Critical }})
	if err != nil {
		return nil, err
	}
	query := listing.Text(f, "query", func(e *Environment) []string { return []string{e.Name, e.Key} })
	return listing.All(query, tags, critical), nil
}

// sortEnvironments orders by the given keys, then by creation and key so
// pages are stable.
func sortEnvironments(envs []*Environment, order []listing.SortKey) {
	order = append(order, listing.SortKey{Field: "createdOn"}, listing.SortKey{Field: "key"})
	sort.SliceStable(envs, func(i, j int) bool {
		a, b := envs[i], envs[j]
		for _, k := range order {
			c := compare(a, b, k.Field)
			if k.Desc {
				c = -c
			}
			if c != 0 {
				return c < 0
			}
		}
		return false
	})
}

func compare(a, b *Environment, field string) int {
	switch field {
	case "name":
		return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
	case "critical":
		return boolInt(a.Critical) - boolInt(b.Critical)
	case "createdOn":
		return int(sign(a.CreatedOn - b.CreatedOn))
	default:
		return strings.Compare(a.Key, b.Key)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func sign(n int64) int64 {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// Delete removes an environment.
func (s *Service) Delete(ctx context.Context, projectKey, envKey string) error {
	e, err := s.Get(ctx, projectKey, envKey)
	if err != nil {
		return err
	}
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{store.Delete(store.EnvironmentKey(projectKey, envKey), store.IfVersion(e.Version))},
		Kind:   "environment", Resource: e.Resource(), Actions: []string{"deleteEnvironment"},
		Name: e.Name, Href: e.Href(), TitleVerb: "deleted the environment", Parent: parent(projectKey), Previous: e.redacted(),
		Conflict: fmt.Sprintf("environment %q changed while it was deleted; try again", envKey),
	})
	if err != nil {
		return err
	}
	return s.purgeSegments(ctx, projectKey, envKey)
}

// purgeSegments deletes the segments of an environment that no longer
// exists, by their keys in the project's partition (package segment builds
// on this one), so that an environment created again with its key starts
// with none. Their reference markers stay: a big segment made again counts
// its generations on and never reads the old members.
func (s *Service) purgeSegments(ctx context.Context, projectKey, envKey string) error {
	for {
		page, err := s.table.Query(ctx, store.Query{PK: store.ProjectPartition(projectKey), SKPrefix: store.SegmentEnvPrefix(envKey), Limit: store.MaxWrites})
		if err != nil {
			return fmt.Errorf("list segments of deleted environment %q of project %q: %w", envKey, projectKey, err)
		}
		if len(page.Items) == 0 {
			return nil
		}
		writes := make([]store.Write, 0, len(page.Items))
		for _, it := range page.Items {
			writes = append(writes, store.Delete(it.Key(), store.Cond{}))
		}
		if err := s.table.Transact(ctx, writes); err != nil {
			return fmt.Errorf("delete segments of deleted environment %q of project %q: %w", envKey, projectKey, err)
		}
	}
}
