package sdkcontext

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/store"
)

// Service reads what SDK events recorded about contexts, edits context
// kinds and deletes context instances (both through the audited commit).
type Service struct {
	table    store.Table
	log      *audit.Log
	projects *project.Service
	envs     *environment.Service
	now      func() time.Time
}

// NewService reads and edits over table.
func NewService(table store.Table, log *audit.Log, projects *project.Service, envs *environment.Service, now func() time.Time) *Service {
	return &Service{table: table, log: log, projects: projects, envs: envs, now: now}
}

// Environment returns the environment whose contexts are asked for.
func (s *Service) Environment(ctx context.Context, projectKey, envKey string) (*environment.Environment, error) {
	return s.envs.Get(ctx, projectKey, envKey)
}

// Kinds lists a project's context kinds, the built-in user kind included.
func (s *Service) Kinds(ctx context.Context, projectKey string) ([]Kind, error) {
	p, err := s.projects.Get(ctx, projectKey)
	if err != nil {
		return nil, err
	}
	q := store.Query{PK: store.ProjectPartition(projectKey), SKPrefix: store.ContextKindPrefix}
	out, err := record.All(ctx, s.table, q, fmt.Sprintf("context kinds of %q", projectKey), func(it store.Item) (Kind, error) {
		var k Kind
		if err := json.Unmarshal(it.Data, &k); err != nil {
			return Kind{}, fmt.Errorf("decode context kind %s: %w", it.SK, err)
		}
		return k, nil
	})
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(out, func(k Kind) bool { return k.Key == "user" }) {
		out = append([]Kind{{Key: "user", Name: "user", Description: "", Version: 1, CreationDate: p.CreatedOn,
			LastModified: p.CreatedOn, CreatedFrom: FromDefault}}, out...)
	}
	return out, nil
}

// kindPattern is the form of every context kind, defined in a project or
// named in targeting.
var kindPattern = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// MaxKindLength bounds the key of a context kind a project defines.
const MaxKindLength = 64

// IsKind reports whether s has the form of a context kind: letters,
// digits, '.', '_' or '-', and not "kind" or "multi", which the context
// format reserves. Length bounds are the caller's: a project's kinds have
// MaxKindLength, targeting may name kinds SDKs send.
func IsKind(s string) bool { return kindPattern.MatchString(s) && s != "kind" && s != "multi" }

// KindInput is the body of putContextKind.
type KindInput struct {
	Name            *string `json:"name"`
	Description     *string `json:"description"`
	HideInTargeting *bool   `json:"hideInTargeting"`
	Archived        *bool   `json:"archived"`
	Version         *int64  `json:"version"`
}

// PutKind creates or replaces a context kind; true when it was created.
func (s *Service) PutKind(ctx context.Context, projectKey, key string, in KindInput) (Kind, bool, error) {
	if !IsKind(key) || len(key) > MaxKindLength {
		return Kind{}, false, fault.New(fault.Invalid, "context kind key %q must be 1 to 64 letters, digits, '.', '_' or '-', and not \"kind\" or \"multi\"", key)
	}
	if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
		return Kind{}, false, fault.New(fault.Invalid, "field \"name\" is required")
	}
	guard, err := s.projects.Guard(ctx, projectKey)
	if err != nil {
		return Kind{}, false, err
	}
	k := store.ContextKindKey(projectKey, key)
	now := s.now().UnixMilli()
	next := Kind{Key: key, CreationDate: now, CreatedFrom: FromAPI}
	var prev *Kind
	// The item's version (which ingestion moves with lastSeen) guards the
	// write; the kind's own version counts its edits.
	cond, itemVersion := store.IfNotExists(), int64(1)
	it, err := s.table.Get(ctx, k)
	switch {
	case err == nil:
		var old Kind
		if err := json.Unmarshal(it.Data, &old); err != nil {
			return Kind{}, false, fmt.Errorf("decode context kind %q: %w", key, err)
		}
		prev, next = &old, old
		cond, itemVersion = store.IfVersion(it.Version), it.Version+1
	case !errors.Is(err, store.ErrNotFound):
		return Kind{}, false, fmt.Errorf("load context kind %q: %w", key, err)
	}
	next.Name, next.LastModified = *in.Name, now
	if in.Description != nil {
		next.Description = *in.Description
	}
	if in.HideInTargeting != nil {
		next.HideInTargeting = *in.HideInTargeting
	}
	if in.Archived != nil {
		next.Archived = *in.Archived
	}
	next.Version = 1
	if prev != nil {
		next.Version = prev.Version + 1
	}
	if in.Version != nil {
		next.Version = max(*in.Version, next.Version)
	}
	data, err := json.Marshal(next)
	if err != nil {
		return Kind{}, false, fmt.Errorf("encode context kind %q: %w", key, err)
	}
	verb := "created the context kind"
	if prev != nil {
		verb = "updated the context kind"
	}
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{guard, store.Put(store.Item{PK: k.PK, SK: k.SK, Version: itemVersion, Data: data}, cond)},
		Kind:   "context-kind", Resource: "proj/" + projectKey + ":context-kind/" + key, Actions: []string{"updateContextKind"},
		Name: next.Name, Href: "/api/v2/projects/" + projectKey + "/context-kinds/" + key, TitleVerb: verb,
		Parent:   &audit.Parent{Name: projectKey, Resource: "proj/" + projectKey, Href: "/api/v2/projects/" + projectKey},
		Previous: prev, Current: next,
		Conflict: fmt.Sprintf("context kind %q was changed by another request; try again", key),
	})
	if err != nil {
		return Kind{}, false, err
	}
	return next, prev == nil, nil
}

// Page is one page of context instances.
type Page struct {
	Items []*Instance
	// Cursor continues the list; empty at its end.
	Cursor string
	// Total is the number of instances that match.
	Total int64
}

// Filter selects instances: only by application today.
type Filter struct {
	ApplicationID string
	Kind          string
}

func (f Filter) match(in *Instance) bool {
	if f.ApplicationID != "" && in.ApplicationID != f.ApplicationID {
		return false
	}
	if f.Kind != "" && !slices.ContainsFunc(in.Kinds, func(k string) bool { return strings.HasPrefix(k, f.Kind+":") }) {
		return false
	}
	return true
}

// ByContext lists the instances holding the individual context kind/key,
// newest first, with their total (one context is part of few instances,
// so they are all read and the page cut in memory).
func (s *Service) ByContext(ctx context.Context, envID, kind, key string, f Filter, limit int, cursor string) (Page, error) {
	q := store.Query{PK: store.ContextPartition(envID), SKPrefix: store.ContextRefPrefix(kind, Hash(key))}
	refs, err := record.All(ctx, s.table, q, fmt.Sprintf("instances of %s:%s", kind, key), func(it store.Item) (Ref, error) {
		var ref Ref
		if err := json.Unmarshal(it.Data, &ref); err != nil {
			return Ref{}, fmt.Errorf("decode context reference: %w", err)
		}
		return ref, nil
	})
	if err != nil {
		return Page{}, err
	}
	var all []*Instance
	for _, ref := range refs {
		in, err := s.Instance(ctx, envID, ref.ID)
		if fault.Is(err, fault.NotFound) {
			continue // deleted
		}
		if err != nil {
			return Page{}, err
		}
		if f.match(in) {
			all = append(all, in)
		}
	}
	slices.SortFunc(all, func(a, b *Instance) int {
		if a.LastSeen != b.LastSeen {
			if a.LastSeen > b.LastSeen {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	return cutPage(all, limit, cursor)
}

// cutPage cuts an in-memory list: the cursor is the id of the last instance shown.
func cutPage(all []*Instance, limit int, cursor string) (Page, error) {
	start := 0
	if cursor != "" {
		i := slices.IndexFunc(all, func(in *Instance) bool { return in.ID == cursor })
		if i < 0 {
			return Page{}, fault.New(fault.Invalid, "continuationToken %q is not an instance of this list", cursor)
		}
		start = i + 1
	}
	end := min(start+limit, len(all))
	p := Page{Items: all[start:end], Total: int64(len(all))}
	if end < len(all) {
		p.Cursor = all[end-1].ID
	}
	return p, nil
}

// Instance returns one context instance; a missing one is a NotFound error.
func (s *Service) Instance(ctx context.Context, envID, id string) (*Instance, error) {
	return record.Load(ctx, s.table, store.ContextInstanceKey(envID, id), fmt.Sprintf("context instance %q", id), func(it store.Item) (*Instance, error) {
		var in Instance
		if err := json.Unmarshal(it.Data, &in); err != nil {
			return nil, fmt.Errorf("decode context instance %q: %w", id, err)
		}
		return &in, nil
	})
}

// Search lists an environment's instances in id order, filtered; the
// cursor is the store's, so a page is one Query (plus more when a filter
// drops items).
func (s *Service) Search(ctx context.Context, envID string, f Filter, limit int, cursor string, total bool) (Page, error) {
	q := store.Query{PK: store.ContextPartition(envID), SKPrefix: store.ContextInstancePrefix, Limit: limit, Cursor: cursor}
	var out Page
	for {
		page, err := s.table.Query(ctx, q)
		if errors.Is(err, store.ErrBadCursor) {
			return Page{}, fault.Wrap(err, fault.Invalid, "continuationToken is not valid for this search")
		}
		if err != nil {
			return Page{}, fmt.Errorf("search context instances: %w", err)
		}
		for _, it := range page.Items {
			var in Instance
			if err := json.Unmarshal(it.Data, &in); err != nil {
				return Page{}, fmt.Errorf("decode context instance %s: %w", it.SK, err)
			}
			if f.match(&in) && len(out.Items) < limit {
				out.Items = append(out.Items, &in)
			}
		}
		out.Cursor = page.Cursor
		if page.Cursor == "" || len(out.Items) >= limit {
			break
		}
		q.Cursor = page.Cursor
	}
	if total {
		n, err := s.total(ctx, envID, f)
		if err != nil {
			return Page{}, err
		}
		out.Total = n
	}
	return out, nil
}

// total is the number of instances matching f: one read of the count item
// (kept by ingestion and deletes) unless f selects a kind, which is counted
// by walking the environment's instances.
func (s *Service) total(ctx context.Context, envID string, f Filter) (int64, error) {
	if f.Kind != "" {
		return s.count(ctx, envID, f)
	}
	it, err := s.table.Get(ctx, store.ContextCountKey(envID))
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("load context count: %w", err)
	}
	var c Count
	if err := json.Unmarshal(it.Data, &c); err != nil {
		return 0, fmt.Errorf("decode context count: %w", err)
	}
	if f.ApplicationID != "" {
		return c.ByApp[f.ApplicationID], nil
	}
	return c.Total, nil
}

// uncount takes a deleted instance out of the count, retrying when
// ingestion changed the count meanwhile.
func (s *Service) uncount(ctx context.Context, envID, appID string) error {
	k := store.ContextCountKey(envID)
	for attempt := 0; attempt < 8; attempt++ {
		it, err := s.table.Get(ctx, k)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("load context count: %w", err)
		}
		c := Count{ByApp: map[string]int64{}}
		if err := json.Unmarshal(it.Data, &c); err != nil {
			return fmt.Errorf("decode context count: %w", err)
		}
		if c.ByApp == nil {
			c.ByApp = map[string]int64{}
		}
		c.Add(Count{Total: -1, ByApp: map[string]int64{appID: -1}})
		data, err := json.Marshal(c)
		if err != nil {
			return fmt.Errorf("encode context count: %w", err)
		}
		err = s.table.Put(ctx, store.Item{PK: k.PK, SK: k.SK, Version: it.Version + 1, Data: data}, store.IfVersion(it.Version))
		if !errors.Is(err, store.ErrConditionFailed) {
			return err
		}
	}
	return fmt.Errorf("context count kept changing; not updated")
}

// count walks the environment's instances to count those that match.
func (s *Service) count(ctx context.Context, envID string, f Filter) (int64, error) {
	var n int64
	err := record.Each(ctx, s.table, store.Query{PK: store.ContextPartition(envID), SKPrefix: store.ContextInstancePrefix}, "context instances", func(it store.Item) error {
		var in Instance
		if json.Unmarshal(it.Data, &in) == nil && f.match(&in) {
			n++
		}
		return nil
	})
	return n, err
}

// DeleteInstance removes a context instance and its references, audited.
func (s *Service) DeleteInstance(ctx context.Context, env *environment.Environment, id string) error {
	it, err := s.table.Get(ctx, store.ContextInstanceKey(env.ID, id))
	if errors.Is(err, store.ErrNotFound) {
		return fault.Wrap(err, fault.NotFound, "context instance %q not found in environment %q", id, env.Key)
	}
	if err != nil {
		return fmt.Errorf("load context instance %q: %w", id, err)
	}
	var in Instance
	if err := json.Unmarshal(it.Data, &in); err != nil {
		return fmt.Errorf("decode context instance %q: %w", id, err)
	}
	writes := []store.Write{store.Delete(it.Key(), store.IfVersion(it.Version))}
	for _, kk := range in.Kinds {
		kind, key, _ := strings.Cut(kk, ":")
		writes = append(writes, store.Delete(store.ContextRefKey(env.ID, kind, Hash(key), id), store.Cond{}))
	}
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: writes, Kind: "context-instance", Resource: env.Resource(), Actions: []string{"deleteContextInstance"},
		Name: id, Href: env.Href() + "/context-instances/" + id, TitleVerb: "deleted the context instance",
		Parent:   &audit.Parent{Name: env.Name, Resource: env.Resource(), Href: env.Href()},
		Previous: &in, Conflict: fmt.Sprintf("context instance %q changed while it was deleted; try again", id),
	})
	if err != nil {
		return err
	}
	// After the commit: a count off by one is better than refusing the delete.
	return s.uncount(ctx, env.ID, in.ApplicationID)
}

// AttrNames lists the indexed attribute names, by kind (kind "" for all).
func (s *Service) AttrNames(ctx context.Context, envID, kind string) ([]AttrName, error) {
	prefix := store.ContextAttrNamePrefix
	if kind != "" {
		prefix += kind + "#"
	}
	return record.All(ctx, s.table, store.Query{PK: store.ContextAttrPartition(envID), SKPrefix: prefix}, "attribute names", func(it store.Item) (AttrName, error) {
		var n AttrName
		if err := json.Unmarshal(it.Data, &n); err != nil {
			return AttrName{}, fmt.Errorf("decode attribute name %s: %w", it.SK, err)
		}
		return n, nil
	})
}

// AttrValues lists the indexed values of one attribute, every kind (or one).
func (s *Service) AttrValues(ctx context.Context, envID, name, kind string) ([]AttrValue, error) {
	prefix := store.ContextAttrValuePrefix(Hash(name))
	if kind != "" {
		prefix += kind + "#"
	}
	q := store.Query{PK: store.ContextAttrPartition(envID), SKPrefix: prefix}
	return record.All(ctx, s.table, q, fmt.Sprintf("values of attribute %q", name), func(it store.Item) (AttrValue, error) {
		var v AttrValue
		if err := json.Unmarshal(it.Data, &v); err != nil {
			return AttrValue{}, fmt.Errorf("decode attribute value %s: %w", it.SK, err)
		}
		return v, nil
	})
}
