package flag

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/listing"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/semanticpatch"
	"github.com/flagplane/flagplane/shared/store"
)

// Service manages flags.
type Service struct {
	table store.Table
	log   *audit.Log
	now   func() time.Time
	// approvalCheck, when set, may refuse a direct change to a flag's
	// targeting in one environment (see SetApprovalCheck).
	approvalCheck ApprovalCheck
	// decoded keeps flags decoded for lists (see listcache.go); projects
	// and envs the project and environments every flag read needs.
	decoded  *Decoded
	projects *record.Memo[*project.Project]
	envs     *record.Memo[*environment.Environment]
}

// ApprovalCheck decides whether f's targeting in envKey may be changed
// directly; an error (405 when approvals are required) refuses the change.
type ApprovalCheck func(ctx context.Context, projectKey, envKey string, f *Flag) error

// SetApprovalCheck installs the check run before every change to a flag's
// targeting in an environment, unless the context says the change comes
// from an approved request (WithoutApprovalCheck). Call it while wiring.
func (s *Service) SetApprovalCheck(c ApprovalCheck) { s.approvalCheck = c }

type approvedKey struct{}

// WithoutApprovalCheck marks ctx as carrying a change that needs no
// approval: an approval request being applied.
func WithoutApprovalCheck(ctx context.Context) context.Context {
	return context.WithValue(ctx, approvedKey{}, true)
}

// checkApprovals runs the approval check on every environment whose
// targeting differs between old and next.
func (s *Service) checkApprovals(ctx context.Context, old, next *Flag, envs []*environment.Environment) error {
	if s.approvalCheck == nil || ctx.Value(approvedKey{}) != nil {
		return nil
	}
	for _, e := range envs {
		if !sameTargeting(old.Env(e.Key), next.Env(e.Key)) {
			if err := s.approvalCheck(ctx, old.ProjectKey, e.Key, old); err != nil {
				return err
			}
		}
	}
	return nil
}

// NewService returns the flag service.
func NewService(table store.Table, log *audit.Log, now func() time.Time) *Service {
	return &Service{table: table, log: log, now: now, decoded: &Decoded{},
		projects: record.NewMemo(decodeProject), envs: record.NewMemo(decodeEnvironment)}
}

// Detail is a flag with every environment of its project, as the API shows it.
type Detail struct {
	Flag *Flag
	// Environments are the project's environments, ordered by key.
	Environments []*environment.Environment
}

// EnvView is the flag's targeting in envKey as the API shows it: the
// stored targeting, or the defaults of an environment never changed, at
// version 1 and modified when the flag was created.
func (f *Flag) EnvView(envKey string) *EnvConfig {
	c := *f.Env(envKey)
	c.Archived = f.Archived
	c.Version = max(c.Version, 1)
	c.LastModified = max(c.LastModified, f.CreationDate)
	if c.Targets == nil {
		c.Targets = []Target{}
	}
	if c.ContextTargets == nil {
		c.ContextTargets = []Target{}
	}
	if c.Rules == nil {
		c.Rules = []Rule{}
	}
	if c.Prerequisites == nil {
		c.Prerequisites = []Prerequisite{}
	}
	return &c
}

// Input is the body of a create request. Pointers tell absent from zero.
type Input struct {
	Key                    *string                 `json:"key"`
	Name                   *string                 `json:"name"`
	Description            string                  `json:"description"`
	Variations             []VariationInput        `json:"variations"`
	Defaults               *DefaultsInput          `json:"defaults"`
	Tags                   []string                `json:"tags"`
	Temporary              *bool                   `json:"temporary"`
	MaintainerID           string                  `json:"maintainerId"`
	ClientSideAvailability *ClientSideAvailability `json:"clientSideAvailability"`
	// IncludeInSnippet is the deprecated form of clientSideAvailability.usingEnvironmentId.
	IncludeInSnippet *bool `json:"includeInSnippet"`
	// IsFlagOn turns the new flag on in every environment.
	IsFlagOn         bool             `json:"isFlagOn"`
	CustomProperties CustomProperties `json:"customProperties"`
}

// VariationInput is one variation of a create request; ids are generated.
type VariationInput struct {
	Value       json.RawMessage `json:"value"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
}

// DefaultsInput are the defaults of a create request; both are required when given.
type DefaultsInput struct {
	OnVariation  *int `json:"onVariation"`
	OffVariation *int `json:"offVariation"`
}

// build makes a new flag of p from in.
func build(p *project.Project, envs []*environment.Environment, in Input, now time.Time) (*Flag, error) {
	if in.Key == nil {
		return nil, fault.New(fault.Invalid, "field \"key\" is required")
	}
	if in.Name == nil {
		return nil, fault.New(fault.Invalid, "field \"name\" is required")
	}
	f := &Flag{
		Key: *in.Key, Name: *in.Name, Description: in.Description, ProjectKey: p.Key,
		Version: 1, ItemVersion: 1, CreationDate: now.UnixMilli(), Tags: in.Tags, Temporary: true,
		MaintainerID: in.MaintainerID, Environments: map[string]*EnvConfig{}, CustomProperties: in.CustomProperties,
		ClientSideAvailability: ClientSideAvailability{
			UsingMobileKey:     p.DefaultClientSideAvailability.UsingMobileKey,
			UsingEnvironmentID: p.DefaultClientSideAvailability.UsingEnvironmentID,
		},
	}
	if f.Tags == nil {
		f.Tags = []string{}
	}
	if in.Temporary != nil {
		f.Temporary = *in.Temporary
	}
	if in.IncludeInSnippet != nil {
		f.ClientSideAvailability.UsingEnvironmentID = *in.IncludeInSnippet
	}
	if in.ClientSideAvailability != nil {
		f.ClientSideAvailability = *in.ClientSideAvailability
	}
	if in.Variations == nil {
		in.Variations = []VariationInput{{Value: json.RawMessage("true")}, {Value: json.RawMessage("false")}}
	}
	values := make([]json.RawMessage, len(in.Variations))
	for i, v := range in.Variations {
		if t := jsonType(v.Value); t == "" || t == "null" {
			return nil, fault.New(fault.Invalid, "field \"variations[%d].value\" is required and must not be null", i)
		}
		values[i] = compact(v.Value)
		f.Variations = append(f.Variations, Variation{ID: NewID(), Value: values[i], Name: v.Name, Description: v.Description})
	}
	f.Kind = kindOf(values)
	f.Defaults = Defaults{OnVariation: 0, OffVariation: max(len(f.Variations)-1, 0)}
	if d := in.Defaults; d != nil {
		if d.OnVariation == nil || d.OffVariation == nil {
			return nil, fault.New(fault.Invalid, "fields \"defaults.onVariation\" and \"defaults.offVariation\" are both required when \"defaults\" is given")
		}
		f.Defaults = Defaults{OnVariation: *d.OnVariation, OffVariation: *d.OffVariation}
	}
	if err := f.Check(); err != nil {
		return nil, err
	}
	if in.IsFlagOn {
		for _, e := range envs {
			c := f.Env(e.Key)
			c.On, c.Version, c.LastModified = true, 1, f.CreationDate
			f.Environments[e.Key] = c
		}
	}
	return f, nil
}

func parent(projectKey string) *audit.Parent {
	return &audit.Parent{Name: projectKey, Resource: "proj/" + projectKey, Href: project.Href(projectKey)}
}

// Create makes a flag in an existing project.
func (s *Service) Create(ctx context.Context, projectKey string, in Input) (*Detail, error) {
	p, envs, err := s.project(ctx, projectKey)
	if err != nil {
		return nil, err
	}
	f, err := build(p, envs, in, s.now())
	if err != nil {
		return nil, err
	}
	put, err := f.put(store.IfNotExists())
	if err != nil {
		return nil, err
	}
	guard := store.Check(store.ProjectKey(projectKey), store.IfVersion(p.Version))
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{guard, put}, Kind: "flag", Resource: f.Resource(""), Actions: []string{"createFlag"},
		Name: f.Name, Href: f.Href(), TitleVerb: "created the flag", Parent: parent(projectKey), Current: f,
	})
	var txErr *store.TxError
	if errors.As(err, &txErr) {
		if txErr.Key == put.Item.Key() {
			return nil, fault.Wrap(err, fault.Conflict, "a flag with key %q already exists in project %q", f.Key, projectKey)
		}
		return nil, fault.Wrap(err, fault.OptimisticLock, "project %q changed while the flag was created; try again", projectKey)
	}
	if err != nil {
		return nil, err
	}
	return &Detail{Flag: f, Environments: envs}, nil
}

// Get returns a flag and its project's environments: two reads, the flag
// item and one Query of the project and its environments. The flag comes
// through the list's decode memo (decoding was a fifth of a GET's cost), so
// it is shared: read it only; Load gives a flag of the caller's own.
func (s *Service) Get(ctx context.Context, projectKey, flagKey string) (*Detail, error) {
	what := fmt.Sprintf("flag %q in project %q", flagKey, projectKey)
	if environment.ValidKey("projectKey", projectKey) != nil || environment.ValidKey("featureFlagKey", flagKey) != nil {
		return nil, fault.New(fault.NotFound, "%s not found", what)
	}
	// As in List, the two reads go out together.
	var f *Flag
	var flagErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		f, flagErr = record.Load(ctx, s.table, store.FlagKey(projectKey, flagKey), what, s.decoded.Decode)
	}()
	_, envs, err := s.project(ctx, projectKey)
	<-done
	if flagErr != nil {
		return nil, flagErr
	}
	if err != nil {
		return nil, err
	}
	return &Detail{Flag: f, Environments: envs}, nil
}

// Load returns one flag as stored, in one read.
func (s *Service) Load(ctx context.Context, projectKey, flagKey string) (*Flag, error) {
	what := fmt.Sprintf("flag %q in project %q", flagKey, projectKey)
	if environment.ValidKey("projectKey", projectKey) != nil || environment.ValidKey("featureFlagKey", flagKey) != nil {
		// No such key can exist; answering here keeps odd input away from the store.
		return nil, fault.New(fault.NotFound, "%s not found", what)
	}
	return record.Load(ctx, s.table, store.FlagKey(projectKey, flagKey), what, decode)
}

// project reads a project and its environments with one Query; a missing
// project, or one being deleted, is not found.
func (s *Service) project(ctx context.Context, projectKey string) (*project.Project, []*environment.Environment, error) {
	if environment.ValidKey("projectKey", projectKey) != nil {
		return nil, nil, fault.New(fault.NotFound, "project %q not found", projectKey)
	}
	items, err := record.All(ctx, s.table, store.Query{PK: store.ProjectPartition(projectKey), SKPrefix: store.ProjectAndEnvironmentsPrefix},
		fmt.Sprintf("environments of project %q", projectKey), func(it store.Item) (store.Item, error) { return it, nil })
	if err != nil {
		return nil, nil, err
	}
	var p *project.Project
	var envs []*environment.Environment
	for _, it := range items {
		if it.Key() == store.ProjectKey(projectKey) {
			if p, err = s.projects.Decode(it); err != nil {
				return nil, nil, err
			}
			continue
		}
		e, err := s.envs.Decode(it)
		if err != nil {
			return nil, nil, err
		}
		envs = append(envs, e)
	}
	if p == nil || p.Deleting {
		return nil, nil, fault.New(fault.NotFound, "project %q not found", projectKey)
	}
	sort.Slice(envs, func(i, j int) bool { return envs[i].Key < envs[j].Key })
	return p, envs, nil
}

// decodeProject and decodeEnvironment read the items project reads; the
// values are shared through the service's memos: read them only.
func decodeProject(it store.Item) (*project.Project, error) {
	p := &project.Project{}
	if err := json.Unmarshal(it.Data, p); err != nil {
		return nil, fmt.Errorf("decode project %s: %w", it.PK, err)
	}
	p.Version = it.Version
	return p, nil
}

func decodeEnvironment(it store.Item) (*environment.Environment, error) {
	var e environment.Environment
	if err := json.Unmarshal(it.Data, &e); err != nil {
		return nil, fmt.Errorf("decode environment %s: %w", it.SK, err)
	}
	e.Version = it.Version
	return &e, nil
}

// Others returns every flag of the project, by key.
func (s *Service) Others(ctx context.Context, projectKey string) (Others, error) {
	flags, err := s.all(ctx, projectKey)
	if err != nil {
		return nil, err
	}
	out := make(Others, len(flags))
	for _, f := range flags {
		out[f.Key] = f
	}
	return out, nil
}

func (s *Service) all(ctx context.Context, projectKey string) ([]*Flag, error) {
	return record.All(ctx, s.table, store.Query{PK: store.ProjectPartition(projectKey), SKPrefix: store.FlagSKPrefix},
		fmt.Sprintf("flags of project %q", projectKey), decode)
}

func envKeys(envs []*environment.Environment) []string {
	out := make([]string, len(envs))
	for i, e := range envs {
		out[i] = e.Key
	}
	return out
}

// ListQuery selects and orders a page of flags.
type ListQuery struct {
	Filter string
	Sort   string
	Offset int64
	Limit  int64
	// NoEnvironments says the caller shows no environment of the flags
	// (LaunchDarkly's list without env): the list then reads the project
	// only to tell a project without flags from a missing one, and its
	// result carries no environments.
	NoEnvironments bool
}

// ListResult is one page, the number of flags that match, and the
// project's environments (none with ListQuery.NoEnvironments).
type ListResult struct {
	Items        []*Flag
	TotalCount   int64
	Environments []*environment.Environment
}

// List reads the project's environments (one Query) and its flags (one
// Query, paged by the store), then filters, sorts and cuts the page in memory.
// With q.NoEnvironments it reads the flags alone, and the project only when
// there are none.
func (s *Service) List(ctx context.Context, projectKey string, q ListQuery) (ListResult, error) {
	filter, err := listing.ParseFilter(q.Filter, "query", "tags", "archived", "state", "type", "maintainerId")
	if err != nil {
		return ListResult{}, err
	}
	order, err := listing.ParseSort(q.Sort, "creationDate", "key", "name")
	if err != nil {
		return ListResult{}, err
	}
	match, err := matcher(filter)
	if err != nil {
		return ListResult{}, err
	}
	if q.NoEnvironments {
		flags, err := s.onlyFlags(ctx, projectKey)
		if err != nil {
			return ListResult{}, err
		}
		return page(flags, match, order, q, nil), nil
	}
	// The two Queries do not depend on each other: on DynamoDB each is a
	// round trip, so they go out together and a list waits for one, not two.
	var flags []*Flag
	var flagsErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		flags, flagsErr = Shared(ctx, s.table, s.decoded, projectKey)
	}()
	_, envs, err := s.project(ctx, projectKey)
	<-done
	if err != nil {
		return ListResult{}, err
	}
	if flagsErr != nil {
		return ListResult{}, flagsErr
	}
	return page(flags, match, order, q, envs), nil
}

// onlyFlags reads the project's flags with one Query. A project has flags
// only while it exists, or while its delete runs (which removes them before
// the project item, as GET of an environment shows its environment until
// then), so only an empty answer needs the project read: to tell a project
// without flags from a missing one. On DynamoDB that spares a list the
// project's read; the flags are read as the table holds them in this
// request, never from a cache.
func (s *Service) onlyFlags(ctx context.Context, projectKey string) ([]*Flag, error) {
	if environment.ValidKey("projectKey", projectKey) != nil {
		return nil, fault.New(fault.NotFound, "project %q not found", projectKey)
	}
	flags, err := Shared(ctx, s.table, s.decoded, projectKey)
	if err != nil || len(flags) > 0 {
		return flags, err
	}
	if _, _, err := s.project(ctx, projectKey); err != nil {
		return nil, err
	}
	return flags, nil
}

// page keeps the flags match selects, in order, and cuts q's page.
func page(flags []*Flag, match func(*Flag) bool, order []listing.SortKey, q ListQuery, envs []*environment.Environment) ListResult {
	kept := flags[:0]
	for _, f := range flags {
		if match(f) {
			kept = append(kept, f)
		}
	}
	sortFlags(kept, order)
	return ListResult{Items: listing.Window(kept, q.Offset, q.Limit), TotalCount: int64(len(kept)), Environments: envs}
}

func matcher(f listing.Filter) (func(*Flag) bool, error) {
	type opt = listing.Option[*Flag]
	archived := func(fl *Flag) bool { return fl.Archived }
	live := func(fl *Flag) bool { return !fl.Archived }
	tags, err := listing.HasTags(f, "tags", func(fl *Flag) []string { return fl.Tags })
	if err != nil {
		return nil, err
	}
	byArchived, err := listing.Choice(f, "archived", opt{Value: "true", Keep: archived}, opt{Value: "false", Keep: live})
	if err != nil {
		return nil, err
	}
	byState, err := listing.Choice(f, "state", opt{Value: "live", Keep: live}, opt{Value: "archived", Keep: archived})
	if err != nil {
		return nil, err
	}
	byType, err := listing.Choice(f, "type",
		opt{Value: "temporary", Keep: func(fl *Flag) bool { return fl.Temporary }},
		opt{Value: "permanent", Keep: func(fl *Flag) bool { return !fl.Temporary }})
	if err != nil {
		return nil, err
	}
	return listing.All(
		listing.Text(f, "query", func(fl *Flag) []string { return []string{fl.Key, fl.Name} }),
		tags, byArchived, byState, byType,
		listing.Equals(f, "maintainerId", func(fl *Flag) string { return fl.MaintainerID }),
	), nil
}

// sortFlags orders by the given fields, then by creation date and key, so
// pages are stable.
func sortFlags(flags []*Flag, order []listing.SortKey) {
	order = append(order, listing.SortKey{Field: "creationDate"}, listing.SortKey{Field: "key"})
	sort.SliceStable(flags, func(i, j int) bool {
		a, b := flags[i], flags[j]
		for _, k := range order {
			var c int
			switch k.Field {
			case "name":
				c = strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
			case "creationDate":
				c = cmpInt(a.CreationDate, b.CreationDate)
			default:
				c = strings.Compare(a.Key, b.Key)
			}
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

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Delete removes a flag from every environment.
func (s *Service) Delete(ctx context.Context, projectKey, flagKey string) error {
	f, err := s.Load(ctx, projectKey, flagKey)
	if err != nil {
		return err
	}
	_, err = s.log.Commit(ctx, audit.Change{
		// The flag's release, if any, goes with it: else it would linger in its
		// pipeline's progressions, and a flag made again with the key would inherit it.
		Writes: []store.Write{store.Delete(store.FlagKey(projectKey, flagKey), store.IfVersion(f.ItemVersion)),
			store.Delete(store.ReleaseKey(projectKey, flagKey), store.Cond{})},
		Kind: "flag", Resource: f.Resource(""), Actions: []string{"deleteFlag"},
		Name: f.Name, Href: f.Href(), TitleVerb: "deleted the flag", Parent: parent(projectKey), Previous: f,
		Conflict: fmt.Sprintf("flag %q changed while it was deleted; try again", flagKey),
	})
	return err
}

// load reads a flag and its project's environments for a change.
func (s *Service) load(ctx context.Context, projectKey, flagKey string) (*Flag, []*environment.Environment, error) {
	d, err := s.Get(ctx, projectKey, flagKey)
	if err != nil {
		return nil, nil, err
	}
	return d.Flag, d.Environments, nil
}

// commit stores next over old (at the version old was read at) with the
// audit entry of the change, then returns next as the API shows it. extra
// writes join the same transaction; one whose condition fails is a 409
// conflict (not retried), any other failed condition a lost race.
func (s *Service) commit(ctx context.Context, old, next *Flag, envs []*environment.Environment, guards, extra []store.Write,
	actions []string, envKey, comment string, delta json.RawMessage) (*Detail, error) {
	if err := s.checkApprovals(ctx, old, next, envs); err != nil {
		return nil, err
	}
	segGuards, err := addedSegmentGuards(ctx, s.table, old, next)
	if err != nil {
		return nil, err
	}
	next.Version = old.Version + 1
	next.ItemVersion = old.ItemVersion + 1
	put, err := next.put(store.IfVersion(old.ItemVersion))
	if err != nil {
		return nil, err
	}
	writes := append(append(append(append([]store.Write(nil), guards...), segGuards...), put), extra...)
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: writes, Kind: "flag", Resource: next.Resource(envKey), Actions: actions,
		Name: next.Name, Href: next.Href(), TitleVerb: "updated the flag", Comment: comment,
		Parent: parent(next.ProjectKey), Previous: old, Current: next, Delta: delta,
	})
	var txErr *store.TxError
	if errors.As(err, &txErr) && slices.ContainsFunc(extra, func(w store.Write) bool { return w.Item.Key() == txErr.Key }) {
		return nil, fault.Wrap(err, fault.Conflict, "the change to flag %q was not made: a write joined to it (%s) no longer holds", next.Key, txErr.Key.SK)
	}
	if errors.As(err, &txErr) && slices.ContainsFunc(segGuards, func(w store.Write) bool { return w.Item.Key() == txErr.Key }) {
		// A segment the change starts using was deleted, or another change
		// started using it, meanwhile: read again, the change may hold.
		return nil, fault.Wrap(err, fault.OptimisticLock, "a segment flag %q starts using was deleted or changed by another request; read it again and retry", next.Key)
	}
	if errors.Is(err, store.ErrConditionFailed) {
		return nil, fault.Wrap(err, fault.OptimisticLock, "flag %q was changed by another request; read it again and retry", next.Key)
	}
	if err != nil {
		return nil, err
	}
	return &Detail{Flag: next, Environments: envs}, nil
}

// commitUnchanged commits extra writes for a patch that left the flag as
// it was, on the condition that the flag still is at the version read.
func (s *Service) commitUnchanged(ctx context.Context, old *Flag, envs []*environment.Environment, extra []store.Write,
	actions []string, comment string) (*Detail, error) {
	check := store.Check(store.FlagKey(old.ProjectKey, old.Key), store.IfVersion(old.ItemVersion))
	_, err := s.log.Commit(ctx, audit.Change{
		Writes: append([]store.Write{check}, extra...), Kind: "flag", Resource: old.Resource(""), Actions: actions,
		Name: old.Name, Href: old.Href(), TitleVerb: "applied a change that left unchanged the flag", Comment: comment,
		Parent: parent(old.ProjectKey), Previous: old, Current: old,
	})
	var txErr *store.TxError
	if errors.As(err, &txErr) && txErr.Key != check.Item.Key() {
		return nil, fault.Wrap(err, fault.Conflict, "the change to flag %q was not made: a write joined to it (%s) no longer holds", old.Key, txErr.Key.SK)
	}
	if errors.Is(err, store.ErrConditionFailed) {
		return nil, fault.Wrap(err, fault.OptimisticLock, "flag %q was changed by another request; read it again and retry", old.Key)
	}
	if err != nil {
		return nil, err
	}
	return &Detail{Flag: old, Environments: envs}, nil
}

// semanticRetries is how many times a semantic patch that lost a race is
// run again on the flag as the winner left it. Instructions say what to
// change, not which version they were written against, so running them
// again is what the client asked for; after the last try the answer is 409.
const semanticRetries = 4

// SemanticPatch applies a semantic patch to a flag: every instruction or
// none, environment-scoped ones in sp.EnvironmentKey (404 when the project
// has no such environment). The audit entry carries sp.Comment and no delta.
func (s *Service) SemanticPatch(ctx context.Context, projectKey, flagKey string, sp semanticpatch.Patch) (*Detail, error) {
	return s.SemanticPatchWith(ctx, projectKey, flagKey, sp)
}

// SemanticPatchWith is SemanticPatch with extra writes committed in the
// same transaction as the flag and its audit entry: an approval request
// marking itself applied, say, conditional on its version, so that of two
// concurrent applies exactly one changes the flag. When an extra write's
// condition fails nothing is written and the error is a 409 conflict. When
// the instructions leave the flag as it was, the extra writes are still
// committed (with an audit entry), on the flag's version read.
func (s *Service) SemanticPatchWith(ctx context.Context, projectKey, flagKey string, sp semanticpatch.Patch, extra ...store.Write) (*Detail, error) {
	if _, err := InstructionActions(sp.EnvironmentKey, sp.Instructions); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		d, err := s.semanticOnce(ctx, projectKey, flagKey, sp, extra)
		if err == nil || !fault.Is(err, fault.OptimisticLock) || attempt == semanticRetries {
			return d, err
		}
		time.Sleep(time.Duration(rand.IntN(5*(attempt+1))) * time.Millisecond)
	}
}

func (s *Service) semanticOnce(ctx context.Context, projectKey, flagKey string, sp semanticpatch.Patch, extra []store.Write) (*Detail, error) {
	old, envs, err := s.load(ctx, projectKey, flagKey)
	if err != nil {
		return nil, err
	}
	keys := envKeys(envs)
	if sp.EnvironmentKey != "" && !slices.Contains(keys, sp.EnvironmentKey) {
		return nil, fault.New(fault.NotFound, "environment %q not found in project %q", sp.EnvironmentKey, projectKey)
	}
	var others Others
	if NeedsOthers(sp.Instructions) {
		if others, err = s.Others(ctx, projectKey); err != nil {
			return nil, err
		}
	}
	next := old.Clone()
	next.keep(keys)
	actions, err := Apply(next, sp.EnvironmentKey, sp.Instructions, s.now(), others)
	if err != nil {
		return nil, err
	}
	kept := old.Clone()
	kept.keep(keys)
	if sameDocument(kept, next) {
		if len(extra) > 0 {
			return s.commitUnchanged(ctx, old, envs, extra, actions, sp.Comment)
		}
		return &Detail{Flag: old, Environments: envs}, nil
	}
	envKey := ""
	if EnvironmentScoped(sp.Instructions) {
		envKey = sp.EnvironmentKey
	}
	return s.commit(ctx, old, next, envs, prerequisiteGuards(old, next, others), extra, actions, envKey, sp.Comment, nil)
}

func sameDocument(a, b *Flag) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
