// Package team holds teams: named groups of members that share custom
// roles and can be notified together.
package team

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/flagplane/flagplane/shared/record"
	"slices"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/store"
)

// Team is one team as stored.
type Team struct {
	Key            string   `json:"key"`
	Name           string   `json:"name"`
	Description    string   `json:"description"`
	CustomRoleKeys []string `json:"customRoleKeys"`
	MemberIDs      []string `json:"memberIds"`
	CreationDate   int64    `json:"_creationDate"`
	Version        int64    `json:"-"`
}

// Input is the body of a create request.
type Input struct {
	Key            *string  `json:"key"`
	Name           *string  `json:"name"`
	Description    string   `json:"description"`
	CustomRoleKeys []string `json:"customRoleKeys"`
	MemberIDs      []string `json:"memberIds"`
}

// Actions are the actions `_access` reports on a team.
var Actions = []string{"updateTeamName", "updateTeamDescription", "updateTeamCustomRoles", "updateTeamMembers", "deleteTeam"}

// patchable maps the fields a team patch may touch to their actions.
var patchable = map[string]string{
	"name":           "updateTeamName",
	"description":    "updateTeamDescription",
	"customRoleKeys": "updateTeamCustomRoles",
	"memberIds":      "updateTeamMembers",
}

// PatchActions returns the actions a JSON patch of a team performs.
func PatchActions(p patch.Patch) ([]string, error) { return p.Actions(patchable, "a team") }

// Href is a team's API path.
func Href(key string) string { return "/api/v2/teams/" + key }

func resource(key string) string { return "team/" + key }

func (t *Team) validate() error {
	if err := environment.ValidKey("key", t.Key); err != nil {
		return err
	}
	if err := environment.ValidName("name", t.Name); err != nil {
		return err
	}
	if len(t.Description) > 1024 {
		return fault.New(fault.Invalid, "field \"description\" must be at most 1024 characters")
	}
	for i, k := range t.CustomRoleKeys {
		if err := environment.ValidKey(fmt.Sprintf("customRoleKeys[%d]", i), k); err != nil {
			return err
		}
	}
	for i, id := range t.MemberIDs {
		if err := environment.ValidKey(fmt.Sprintf("memberIds[%d]", i), id); err != nil {
			return err
		}
	}
	return nil
}

func (t *Team) put(c store.Cond) (store.Write, error) {
	data, err := json.Marshal(t)
	if err != nil {
		return store.Write{}, fmt.Errorf("encode team %q: %w", t.Key, err)
	}
	k := store.TeamKey(t.Key)
	gpk, gsk := store.TeamIndexKeys(t.Key)
	return store.Put(store.Item{PK: k.PK, SK: k.SK, GSI1PK: gpk, GSI1SK: gsk, Version: t.Version, Data: data}, c), nil
}

// Service manages teams.
type Service struct {
	table store.Table
	log   *audit.Log
	now   func() time.Time
}

// NewService returns the team service.
func NewService(table store.Table, log *audit.Log) *Service {
	return &Service{table: table, log: log, now: time.Now}
}

// Create stores a new team.
func (s *Service) Create(ctx context.Context, in Input) (*Team, error) {
	if in.Key == nil || in.Name == nil {
		return nil, fault.New(fault.Invalid, "fields \"key\" and \"name\" are required")
	}
	t := &Team{Key: *in.Key, Name: *in.Name, Description: in.Description, CustomRoleKeys: nonNil(in.CustomRoleKeys),
		MemberIDs: nonNil(in.MemberIDs), CreationDate: s.now().UnixMilli(), Version: 1}
	if err := t.validate(); err != nil {
		return nil, err
	}
	put, err := t.put(store.IfNotExists())
	if err != nil {
		return nil, err
	}
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{put}, Kind: "team", Resource: resource(t.Key), Actions: []string{"createTeam"},
		Name: t.Name, Href: Href(t.Key), TitleVerb: "created the team", Current: t,
	})
	if errors.Is(err, store.ErrConditionFailed) {
		return nil, fault.Wrap(err, fault.Conflict, "a team with key %q already exists", t.Key)
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Get returns one team.
func (s *Service) Get(ctx context.Context, key string) (*Team, error) {
	if environment.ValidKey("teamKey", key) != nil {
		return nil, fault.New(fault.NotFound, "team %q not found", key)
	}
	return record.Load(ctx, s.table, store.TeamKey(key), fmt.Sprintf("team %q", key), decode)
}

func decode(it store.Item) (*Team, error) {
	var t Team
	if err := json.Unmarshal(it.Data, &t); err != nil {
		return nil, fmt.Errorf("decode team %s: %w", it.PK, err)
	}
	t.Version = it.Version
	return &t, nil
}

// List returns every team, ordered by key.
func (s *Service) List(ctx context.Context) ([]*Team, error) {
	return record.All(ctx, s.table, store.Query{Index: store.IndexGSI1, PK: store.TeamsIndexPK}, "teams", decode)
}

// RolesOf returns the custom role keys a member holds through its teams.
func (s *Service) RolesOf(ctx context.Context, memberID string) ([]string, error) {
	teams, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, t := range teams {
		if slices.Contains(t.MemberIDs, memberID) {
			keys = append(keys, t.CustomRoleKeys...)
		}
	}
	return keys, nil
}

// Patch applies a JSON patch to a team on the version it was read at.
func (s *Service) Patch(ctx context.Context, key string, p patch.Patch) (*Team, error) {
	if _, err := PatchActions(p); err != nil {
		return nil, err
	}
	old, err := s.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	var next Team
	if err := p.ApplyTo(old, &next); err != nil {
		return nil, err
	}
	next.Key, next.CreationDate = old.Key, old.CreationDate
	next.CustomRoleKeys, next.MemberIDs = nonNil(next.CustomRoleKeys), nonNil(next.MemberIDs)
	if err := next.validate(); err != nil {
		return nil, err
	}
	actions := patch.ChangedFields(old, &next, patchable)
	if len(actions) == 0 {
		return old, nil
	}
	next.Version = old.Version + 1
	put, err := next.put(store.IfVersion(old.Version))
	if err != nil {
		return nil, err
	}
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{put}, Kind: "team", Resource: resource(key), Actions: actions,
		Name: next.Name, Href: Href(key), TitleVerb: "updated the team", Comment: p.Comment,
		Previous: old, Current: &next, Delta: p.Raw,
		Conflict: fmt.Sprintf("team %q was changed by another request; read it again and retry", key),
	})
	if err != nil {
		return nil, err
	}
	return &next, nil
}

// Delete removes a team; its members lose the roles it gave them.
func (s *Service) Delete(ctx context.Context, key string) error {
	t, err := s.Get(ctx, key)
	if err != nil {
		return err
	}
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{store.Delete(store.TeamKey(key), store.IfVersion(t.Version))},
		Kind:   "team", Resource: resource(key), Actions: []string{"deleteTeam"},
		Name: t.Name, Href: Href(key), TitleVerb: "deleted the team", Previous: t,
		Conflict: fmt.Sprintf("team %q was changed by another request; try again", key),
	})
	return err
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
