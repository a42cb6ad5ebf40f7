package releasepolicy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/google/uuid"
)

// Service creates, reads, replaces, orders and deletes release policies.
// Every write is conditional on what it read: a policy's version, and for
// creates, deletes and orders the version of the project's policy set, so
// a create racing an order makes one of them 409, never a half-ordered set.
type Service struct {
	table    store.Table
	log      *audit.Log
	projects *project.Service
}

// NewService works over table, auditing through log.
func NewService(table store.Table, log *audit.Log, projects *project.Service) *Service {
	return &Service{table: table, log: log, projects: projects}
}

func parent(projectKey string) *audit.Parent {
	return &audit.Parent{Name: projectKey, Resource: "proj/" + projectKey, Href: "/api/v2/projects/" + projectKey}
}

func decode(it store.Item) (*Policy, error) {
	var p Policy
	if err := json.Unmarshal(it.Data, &p); err != nil {
		return nil, fmt.Errorf("decode release policy %s: %w", it.SK, err)
	}
	p.Version = it.Version
	return &p, nil
}

// Get returns one policy; a missing project or policy is a 404.
func (s *Service) Get(ctx context.Context, projectKey, key string) (*Policy, error) {
	if _, err := s.projects.Get(ctx, projectKey); err != nil {
		return nil, err
	}
	return record.Load(ctx, s.table, store.ReleasePolicyKey(projectKey, key), fmt.Sprintf("release policy %q", key), decode)
}

// List returns a project's policies by rank (then key).
func (s *Service) List(ctx context.Context, projectKey string) ([]*Policy, error) {
	if _, err := s.projects.Get(ctx, projectKey); err != nil {
		return nil, err
	}
	out, err := s.list(ctx, projectKey)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Service) list(ctx context.Context, projectKey string) ([]*Policy, error) {
	out, err := record.All(ctx, s.table, store.Query{PK: store.ProjectPartition(projectKey), SKPrefix: store.ReleasePolicyPrefix},
		fmt.Sprintf("release policies of project %q", projectKey), decode)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b *Policy) int {
		if a.Rank != b.Rank {
			return a.Rank - b.Rank
		}
		return strings.Compare(a.Key, b.Key)
	})
	return out, nil
}

// setGuard reads the project's policy set item and returns the write that
// moves it on, conditional on the version read.
func (s *Service) setGuard(ctx context.Context, projectKey string) (store.Write, error) {
	k := store.ReleasePolicySetKey(projectKey)
	it, err := s.table.Get(ctx, k)
	cond, version := store.IfNotExists(), int64(0)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return store.Write{}, fmt.Errorf("load release policy set of project %q: %w", projectKey, err)
	default:
		cond, version = store.IfVersion(it.Version), it.Version
	}
	return store.Put(store.Item{PK: k.PK, SK: k.SK, Version: version + 1, Data: []byte("{}")}, cond), nil
}

// checkScope makes sure every environment of the scope exists, and returns
// writes that keep them from disappearing under the commit.
func (s *Service) checkScope(ctx context.Context, projectKey string, sc *Scope) ([]store.Write, error) {
	if sc == nil {
		return nil, nil
	}
	var out []store.Write
	for i, env := range sc.EnvironmentKeys {
		k := store.EnvironmentKey(projectKey, env)
		if err := environment.ValidKey(fmt.Sprintf("scope.environmentKeys[%d]", i), env); err != nil {
			return nil, err
		}
		if _, err := s.table.Get(ctx, k); errors.Is(err, store.ErrNotFound) {
			return nil, fault.New(fault.Invalid, "field \"scope.environmentKeys[%d]\": environment %q does not exist in project %q", i, env, projectKey)
		} else if err != nil {
			return nil, fmt.Errorf("load environment %q of project %q: %w", env, projectKey, err)
		}
		out = append(out, store.Check(k, store.IfExists()))
	}
	return out, nil
}

func (p *Policy) put(projectKey string, c store.Cond) (store.Write, error) {
	data, err := json.Marshal(p)
	if err != nil {
		return store.Write{}, fmt.Errorf("encode release policy %q: %w", p.Key, err)
	}
	k := store.ReleasePolicyKey(projectKey, p.Key)
	return store.Put(store.Item{PK: k.PK, SK: k.SK, Version: p.Version, Data: data}, c), nil
}

// Create adds a policy ranked after every other of the project.
func (s *Service) Create(ctx context.Context, projectKey string, in Input) (*Policy, error) {
	if err := environment.ValidKey("key", in.Key); err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	guard, err := s.projects.Guard(ctx, projectKey)
	if err != nil {
		return nil, err
	}
	scope, err := s.checkScope(ctx, projectKey, in.Scope)
	if err != nil {
		return nil, err
	}
	set, err := s.setGuard(ctx, projectKey)
	if err != nil {
		return nil, err
	}
	all, err := s.list(ctx, projectKey)
	if err != nil {
		return nil, err
	}
	for _, p := range all {
		if p.Key == in.Key {
			return nil, fault.New(fault.Conflict, "release policy %q already exists in project %q", in.Key, projectKey)
		}
	}
	if len(all) >= MaxPerProject {
		return nil, fault.New(fault.Invalid, "project %q already has %d release policies, the most it may hold", projectKey, MaxPerProject)
	}
	rank := 1
	if len(all) > 0 {
		rank = all[len(all)-1].Rank + 1
	}
	p := &Policy{ID: uuid.NewString(), Key: in.Key, Name: in.Name, Rank: rank, ReleaseMethod: in.ReleaseMethod, Scope: in.Scope,
		GuardedReleaseConfig: in.GuardedReleaseConfig, ProgressiveReleaseConfig: in.ProgressiveReleaseConfig, Version: 1}
	put, err := p.put(projectKey, store.IfNotExists())
	if err != nil {
		return nil, err
	}
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: append([]store.Write{put, set, guard}, scope...),
		Kind:   "release-policy", Resource: Resource(projectKey, p.Key), Actions: []string{"createReleasePolicy"},
		Name: p.Name, Href: Href(projectKey, p.Key), TitleVerb: "created the release policy", Parent: parent(projectKey), Current: p,
		Conflict: fmt.Sprintf("the release policies of project %q were changed by another request (or release policy %q was created); read them again and retry", projectKey, p.Key),
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Replace sets every field of a policy but its key, id and rank.
func (s *Service) Replace(ctx context.Context, projectKey, key string, in Input) (*Policy, error) {
	if in.Key != "" && in.Key != key {
		return nil, fault.New(fault.Invalid, "field \"key\" is %q but the path names release policy %q: a key cannot change", in.Key, key)
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	old, err := s.Get(ctx, projectKey, key)
	if err != nil {
		return nil, err
	}
	guard, err := s.projects.Guard(ctx, projectKey)
	if err != nil {
		return nil, err
	}
	scope, err := s.checkScope(ctx, projectKey, in.Scope)
	if err != nil {
		return nil, err
	}
	next := &Policy{ID: old.ID, Key: old.Key, Name: in.Name, Rank: old.Rank, ReleaseMethod: in.ReleaseMethod, Scope: in.Scope,
		GuardedReleaseConfig: in.GuardedReleaseConfig, ProgressiveReleaseConfig: in.ProgressiveReleaseConfig, Version: old.Version + 1}
	put, err := next.put(projectKey, store.IfVersion(old.Version))
	if err != nil {
		return nil, err
	}
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: append([]store.Write{put, guard}, scope...),
		Kind:   "release-policy", Resource: Resource(projectKey, key), Actions: []string{"updateReleasePolicy"},
		Name: next.Name, Href: Href(projectKey, key), TitleVerb: "updated the release policy", Parent: parent(projectKey),
		Previous: old, Current: next,
		Conflict: fmt.Sprintf("release policy %q was changed by another request; read it again and retry", key),
	})
	if err != nil {
		return nil, err
	}
	return next, nil
}

// Delete removes a policy; the others keep their ranks.
func (s *Service) Delete(ctx context.Context, projectKey, key string) error {
	old, err := s.Get(ctx, projectKey, key)
	if err != nil {
		return err
	}
	set, err := s.setGuard(ctx, projectKey)
	if err != nil {
		return err
	}
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{store.Delete(store.ReleasePolicyKey(projectKey, key), store.IfVersion(old.Version)), set},
		Kind:   "release-policy", Resource: Resource(projectKey, key), Actions: []string{"deleteReleasePolicy"},
		Name: old.Name, Href: Href(projectKey, key), TitleVerb: "deleted the release policy", Parent: parent(projectKey), Previous: old,
		Conflict: fmt.Sprintf("release policy %q or the release policies of project %q were changed by another request; try again", key, projectKey),
	})
	return err
}

// Order ranks the project's policies 1, 2, ... in the order of keys, which
// must name each of them exactly once. One transaction writes every policy,
// each conditional on the version read, and on the policy set as read: a
// concurrent create, delete or replace makes it 409 and changes nothing.
func (s *Service) Order(ctx context.Context, projectKey string, keys []string) ([]*Policy, error) {
	if _, err := s.projects.Get(ctx, projectKey); err != nil {
		return nil, err
	}
	// The set's version is read before the policies: a create or delete
	// after this read moves it, and the commit's condition fails.
	set, err := s.setGuard(ctx, projectKey)
	if err != nil {
		return nil, err
	}
	all, err := s.list(ctx, projectKey)
	if err != nil {
		return nil, err
	}
	byKey := make(map[string]*Policy, len(all))
	for _, p := range all {
		byKey[p.Key] = p
	}
	seen := make(map[string]bool, len(keys))
	var unknown, repeated, missing []string
	for _, k := range keys {
		switch {
		case seen[k]:
			repeated = append(repeated, k)
		case byKey[k] == nil:
			unknown = append(unknown, k)
		}
		seen[k] = true
	}
	for _, p := range all {
		if !seen[p.Key] {
			missing = append(missing, p.Key)
		}
	}
	var problems []string
	if len(unknown) > 0 {
		problems = append(problems, "unknown keys: "+strings.Join(unknown, ", "))
	}
	if len(repeated) > 0 {
		problems = append(problems, "repeated keys: "+strings.Join(repeated, ", "))
	}
	if len(missing) > 0 {
		problems = append(problems, "missing keys: "+strings.Join(missing, ", "))
	}
	if len(problems) > 0 {
		return nil, fault.New(fault.Invalid, "the body must list every release policy of project %q exactly once; %s", projectKey, strings.Join(problems, "; "))
	}
	before := make([]string, len(all))
	for i, p := range all {
		before[i] = p.Key
	}
	out := make([]*Policy, len(keys))
	writes := []store.Write{store.Check(store.ReleasePolicySetKey(projectKey), set.Cond)}
	changed := false
	for i, k := range keys {
		old := byKey[k]
		next := *old
		next.Rank, next.Version = i+1, old.Version+1
		out[i] = &next
		if next.Rank == old.Rank {
			writes = append(writes, store.Check(store.ReleasePolicyKey(projectKey, k), store.IfVersion(old.Version)))
			out[i].Version = old.Version
			continue
		}
		put, err := next.put(projectKey, store.IfVersion(old.Version))
		if err != nil {
			return nil, err
		}
		writes, changed = append(writes, put), true
	}
	if !changed {
		return out, nil // already in this order: nothing to write or audit
	}
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: writes, Kind: "release-policy", Resource: Resource(projectKey, "*"), Actions: []string{"updateReleasePolicyRank"},
		Name: "release policies of " + projectKey, Href: ListHref(projectKey), TitleVerb: "reordered the", Parent: parent(projectKey),
		Previous: before, Current: keys,
		Conflict: fmt.Sprintf("the release policies of project %q were changed by another request; read them again and retry", projectKey),
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
