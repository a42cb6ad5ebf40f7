package insight

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/resource"
	"github.com/flagplane/flagplane/shared/store"
)

// Limits of an insight group.
const (
	MaxNameLength         = 256
	MaxGroupApplications  = 100
	groupListDefaultLimit = 20
)

// Group is an insight group: the scores of one environment, for some or
// (ApplicationKeys empty) all applications.
type Group struct {
	Key             string   `json:"key"`
	Name            string   `json:"name"`
	ProjectKey      string   `json:"projectKey"`
	EnvironmentKey  string   `json:"environmentKey"`
	ApplicationKeys []string `json:"applicationKeys"`
	CreatedAt       int64    `json:"createdAt"`
	ItemVersion     int64    `json:"-"`
}

// GroupInput is the body of createInsightGroup.
type GroupInput struct {
	Name            string   `json:"name"`
	Key             string   `json:"key"`
	ProjectKey      string   `json:"projectKey"`
	EnvironmentKey  string   `json:"environmentKey"`
	ApplicationKeys []string `json:"applicationKeys"`
}

// GroupHref is the API path of an insight group.
func GroupHref(key string) string { return "/api/v2/engineering-insights/insights/groups/" + key }

// GroupResource is the resource specifier of an insight group.
func GroupResource(key string) string { return "insight-group/" + key }

var groupPatchable = map[string]string{
	"name": "updateInsightGroup", "applicationKeys": "updateInsightGroup",
	"projectKey": "updateInsightGroup", "environmentKey": "updateInsightGroup",
}

// GroupPatchActions returns the actions a JSON patch of an insight group performs.
func GroupPatchActions(p patch.Patch) ([]string, error) {
	return groupKind.PatchActions(p)
}

// check validates g's fields and that its environment exists.
func (s *Service) check(ctx context.Context, g *Group) error {
	if err := environment.ValidKey("key", g.Key); err != nil {
		return err
	}
	g.Name = strings.TrimSpace(g.Name)
	if g.Name == "" {
		return fault.New(fault.Invalid, "field \"name\" is required")
	}
	if len(g.Name) > MaxNameLength {
		return fault.New(fault.Invalid, "field \"name\" must be at most %d characters", MaxNameLength)
	}
	for _, f := range []struct{ name, v string }{{"projectKey", g.ProjectKey}, {"environmentKey", g.EnvironmentKey}} {
		if err := environment.ValidKey(f.name, f.v); err != nil {
			return err
		}
	}
	if len(g.ApplicationKeys) > MaxGroupApplications {
		return fault.New(fault.Invalid, "field \"applicationKeys\" may hold at most %d keys, got %d", MaxGroupApplications, len(g.ApplicationKeys))
	}
	for i, k := range g.ApplicationKeys {
		if err := environment.ValidKey(fmt.Sprintf("applicationKeys[%d]", i), k); err != nil {
			return err
		}
	}
	slices.Sort(g.ApplicationKeys)
	g.ApplicationKeys = slices.Compact(g.ApplicationKeys)
	if g.ApplicationKeys == nil {
		g.ApplicationKeys = []string{}
	}
	if _, err := s.envs.Get(ctx, g.ProjectKey, g.EnvironmentKey); err != nil {
		if fault.Is(err, fault.NotFound) {
			return fault.New(fault.Invalid, "fields \"projectKey\" and \"environmentKey\": environment %q of project %q does not exist", g.EnvironmentKey, g.ProjectKey)
		}
		return err
	}
	return nil
}

// groupKind describes insight groups to the resource kit.
var groupKind = resource.Kind[Group]{
	Audit: "insight-group", Noun: "insight group", Created: "createInsightGroup", Deleted: "deleteInsightGroup",
	Patchable: groupPatchable, Called: "an insight group",
	Item: func(g *Group) (store.Item, error) {
		data, err := json.Marshal(g)
		gpk, gsk := store.InsightGroupIndexKeys(g.Key)
		return store.Item{GSI1PK: gpk, GSI1SK: gsk, Data: data}, err
	},
	Decode:  decodeGroup,
	Version: func(g *Group) int64 { return g.ItemVersion },
	Name:    func(g *Group) string { return g.Name },
}

// groupRef names the insight group with key; a key of the wrong form names none.
func groupRef(key string) resource.Ref {
	return resource.Ref{Key: store.InsightGroupKey(key), What: fmt.Sprintf("insight group %q", key), Resource: GroupResource(key),
		Href: GroupHref(key), Malformed: environment.ValidKey("insightGroupKey", key) != nil}
}

func decodeGroup(it store.Item) (*Group, error) {
	var g Group
	if err := json.Unmarshal(it.Data, &g); err != nil {
		return nil, fmt.Errorf("decode insight group %s: %w", it.PK, err)
	}
	if g.ApplicationKeys == nil {
		g.ApplicationKeys = []string{}
	}
	g.ItemVersion = it.Version
	return &g, nil
}

// CreateGroup adds an insight group; its key must be new.
func (s *Service) CreateGroup(ctx context.Context, in GroupInput) (*Group, error) {
	g := &Group{Key: in.Key, Name: in.Name, ProjectKey: in.ProjectKey, EnvironmentKey: in.EnvironmentKey,
		ApplicationKeys: slices.Clone(in.ApplicationKeys), CreatedAt: s.now().UnixMilli()}
	if err := s.check(ctx, g); err != nil {
		return nil, err
	}
	return s.groups.Create(ctx, groupRef(g.Key), g, resource.Change{})
}

// Group returns one insight group.
func (s *Service) Group(ctx context.Context, key string) (*Group, error) {
	return s.groups.Get(ctx, groupRef(key))
}

// GroupQuery selects a page of insight groups.
type GroupQuery struct {
	Query  string // case-insensitive part of the name
	Sort   string // "", "name" or "-name"
	Offset int
	Limit  int
}

// Groups returns the groups the query selects and how many match in all.
func (s *Service) Groups(ctx context.Context, q GroupQuery) ([]*Group, int, error) {
	if q.Sort != "" && q.Sort != "name" && q.Sort != "-name" {
		return nil, 0, fault.New(fault.Invalid, "query parameter \"sort\" must be name or -name, not %q", q.Sort)
	}
	all, err := record.All(ctx, s.table, store.Query{Index: store.IndexGSI1, PK: store.InsightGroupsIndexPK}, "insight groups", decodeGroup)
	if err != nil {
		return nil, 0, err
	}
	needle := strings.ToLower(strings.TrimSpace(q.Query))
	kept := all[:0]
	for _, g := range all {
		if needle == "" || strings.Contains(strings.ToLower(g.Name), needle) {
			kept = append(kept, g)
		}
	}
	if q.Sort != "" {
		slices.SortStableFunc(kept, func(a, b *Group) int {
			c := strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
			if q.Sort == "-name" {
				c = -c
			}
			return c
		})
	}
	total := len(kept)
	if q.Limit <= 0 {
		q.Limit = groupListDefaultLimit
	}
	start := min(q.Offset, total)
	end := min(start+q.Limit, total)
	return kept[start:end], total, nil
}

// PatchGroup applies a JSON patch (/name, /applicationKeys, /projectKey,
// /environmentKey) to an insight group.
func (s *Service) PatchGroup(ctx context.Context, key string, p patch.Patch) (*Group, error) {
	return s.groups.Patch(ctx, groupRef(key), p, func(old, next *Group) error {
		next.Key, next.CreatedAt = old.Key, old.CreatedAt
		return s.check(ctx, next)
	})
}

// DeleteGroup removes an insight group.
func (s *Service) DeleteGroup(ctx context.Context, key string) error {
	return s.groups.Delete(ctx, groupRef(key), resource.Change{})
}
