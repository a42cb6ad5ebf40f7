// Package team holds teams: named groups of members that share custom
// roles and can be notified together.
package team

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/member"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/resource"
	"github.com/flagplane/flagplane/shared/role"
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
	// LastModified is when the team last changed (Unix ms); 0 on teams
	// stored before it was kept, which read it as their creation date.
	LastModified int64 `json:"_lastModified,omitempty"`
	Version      int64 `json:"-"`
}

// Modified is when the team last changed.
func (t *Team) Modified() int64 { return cmp.Or(t.LastModified, t.CreationDate) }

// Input is the body of a create request. Members are named as the
// reference names them (memberIDs) or as flagplane shows them (memberIds);
// custom roles by key or _id.
type Input struct {
	Key            *string  `json:"key"`
	Name           *string  `json:"name"`
	Description    string   `json:"description"`
	CustomRoleKeys []string `json:"customRoleKeys"`
	MemberIDs      []string `json:"memberIds"`
	MemberIDsAlias []string `json:"memberIDs"`
	// PermissionGrants and RoleAttributes are the reference's; flagplane
	// models neither, so a create that sets them is refused, not half done.
	PermissionGrants []json.RawMessage          `json:"permissionGrants"`
	RoleAttributes   map[string]json.RawMessage `json:"roleAttributes"`
}

// Limits of one team, which is one item.
const (
	MaxMembers     = 1000
	MaxCustomRoles = 100
)

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
func PatchActions(p patch.Patch) ([]string, error) { return kind.PatchActions(p) }

// Href is a team's API path.
func Href(key string) string { return "/api/v2/teams/" + key }

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
	if len(t.CustomRoleKeys) > MaxCustomRoles {
		return fault.New(fault.Invalid, "field \"customRoleKeys\" holds %d custom roles, at most %d allowed", len(t.CustomRoleKeys), MaxCustomRoles)
	}
	if len(t.MemberIDs) > MaxMembers {
		return fault.New(fault.Invalid, "field \"memberIds\" holds %d members, at most %d allowed", len(t.MemberIDs), MaxMembers)
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

func (t *Team) item() (store.Item, error) {
	data, err := json.Marshal(t)
	if err != nil {
		return store.Item{}, fmt.Errorf("encode team %q: %w", t.Key, err)
	}
	k := store.TeamKey(t.Key)
	gpk, gsk := store.TeamIndexKeys(t.Key)
	return store.Item{PK: k.PK, SK: k.SK, GSI1PK: gpk, GSI1SK: gsk, Data: data}, nil
}

// kind describes teams to the resource kit.
var kind = resource.Kind[Team]{
	Audit: "team", Noun: "team", Created: "createTeam", Deleted: "deleteTeam",
	Patchable: patchable, Called: "a team",
	Item: (*Team).item, Decode: decode,
	Version: func(t *Team) int64 { return t.Version },
	Name:    func(t *Team) string { return t.Name },
}

// ref names the team with key; a key of the wrong form names none.
func ref(key string) resource.Ref {
	return resource.Ref{Key: store.TeamKey(key), What: fmt.Sprintf("team %q", key), Resource: "team/" + key, Href: Href(key),
		Malformed: environment.ValidKey("teamKey", key) != nil}
}

// Service manages teams.
type Service struct {
	teams   resource.Kit[Team]
	roles   *role.Service
	members *member.Service
	now     func() time.Time
}

// NewService returns the team service; roles and members resolve the
// custom roles and members a team names.
func NewService(table store.Table, log *audit.Log, roles *role.Service, members *member.Service, now func() time.Time) *Service {
	return &Service{teams: resource.New(&kind, table, log), roles: roles, members: members, now: now}
}

// directory is what a change's references resolve to, read before the
// change is applied: the key of each custom role reference (a key or an
// _id) that names a role, and which member ids name members.
type directory struct {
	roleKey map[string]string
	member  map[string]bool
}

// lookup resolves role references and member ids, each once: roles with
// consistent reads of their keys or _id pointers; members from one list of
// all members when there are many, and otherwise (or when the list, which
// may lag a moment on DynamoDB, lacks one) one consistent read each. The
// reads stop at the first member that does not exist, which fails the
// change anyway: later ids are left unknown (false).
func (s *Service) lookup(ctx context.Context, roleRefs, memberIDs []string) (directory, error) {
	d := directory{roleKey: map[string]string{}, member: map[string]bool{}}
	refs := unique(roleRefs)
	found, err := s.roles.Resolve(ctx, refs)
	if err != nil {
		return d, err
	}
	for i, r := range found {
		if r != nil {
			d.roleKey[refs[i]] = r.Key
		}
	}
	ids := unique(memberIDs)
	listed := map[string]bool{}
	if len(ids) > manyMembers {
		all, err := s.members.List(ctx)
		if err != nil {
			return d, err
		}
		for _, m := range all {
			listed[m.ID] = true
		}
	}
	for _, id := range ids {
		if listed[id] {
			d.member[id] = true
			continue
		}
		_, err := s.members.Get(ctx, id)
		if fault.Is(err, fault.NotFound) {
			break
		}
		if err != nil {
			return d, err
		}
		d.member[id] = true
	}
	return d, nil
}

// manyMembers is how many member ids a change may name before they are
// checked against one list of all members rather than read one by one.
const manyMembers = 10

// resolveRefs turns next's custom role references into keys and checks
// that every role and member it adds to old's exists (one a team already
// names is kept even if it has since been deleted, so an unrelated change
// never fails on it); each role and member is kept once. An unknown one is
// a 400 naming rolesField[i] or membersField[i].
func (s *Service) resolveRefs(ctx context.Context, old, next *Team, rolesField, membersField string) error {
	var newRoles, newMembers []string
	for _, ref := range next.CustomRoleKeys {
		if !slices.Contains(old.CustomRoleKeys, ref) {
			newRoles = append(newRoles, ref)
		}
	}
	for _, id := range next.MemberIDs {
		if !slices.Contains(old.MemberIDs, id) {
			newMembers = append(newMembers, id)
		}
	}
	d, err := s.lookup(ctx, newRoles, newMembers)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(next.CustomRoleKeys))
	for i, ref := range next.CustomRoleKeys {
		key := ref
		if !slices.Contains(old.CustomRoleKeys, ref) {
			var ok bool
			if key, ok = d.roleKey[ref]; !ok {
				return fault.New(fault.Invalid, "field %q: custom role %q does not exist", fmt.Sprintf("%s[%d]", rolesField, i), ref)
			}
		}
		if !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
	}
	ids := make([]string, 0, len(next.MemberIDs))
	for i, id := range next.MemberIDs {
		if !slices.Contains(old.MemberIDs, id) && !d.member[id] {
			return fault.New(fault.Invalid, "field %q: member %q does not exist", fmt.Sprintf("%s[%d]", membersField, i), id)
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	next.CustomRoleKeys, next.MemberIDs = keys, ids
	return nil
}

// Create stores a new team.
func (s *Service) Create(ctx context.Context, in Input) (*Team, error) {
	if in.Key == nil || in.Name == nil {
		return nil, fault.New(fault.Invalid, "fields \"key\" and \"name\" are required")
	}
	if len(in.PermissionGrants) > 0 {
		return nil, fault.New(fault.Invalid, "field \"permissionGrants\": permission grants (such as team maintainers) are not modelled by flagplane; give members rights through the team's custom roles")
	}
	if len(in.RoleAttributes) > 0 {
		return nil, fault.New(fault.Invalid, "field \"roleAttributes\": role attributes are not modelled by flagplane")
	}
	membersField, memberIDs := "memberIds", in.MemberIDs
	if len(in.MemberIDsAlias) > 0 {
		if len(in.MemberIDs) > 0 {
			return nil, fault.New(fault.Invalid, "give the team's members once: as \"memberIDs\" or as \"memberIds\", not both")
		}
		membersField, memberIDs = "memberIDs", in.MemberIDsAlias
	}
	now := s.now().UnixMilli()
	t := &Team{Key: *in.Key, Name: *in.Name, Description: in.Description, CustomRoleKeys: nonNil(in.CustomRoleKeys),
		MemberIDs: nonNil(memberIDs), CreationDate: now, LastModified: now}
	if err := t.validate(); err != nil {
		return nil, err
	}
	if err := s.resolveRefs(ctx, &Team{}, t, "customRoleKeys", membersField); err != nil {
		return nil, err
	}
	return s.teams.Create(ctx, ref(t.Key), t, resource.Change{Exists: fmt.Sprintf("a team with key %q already exists", t.Key)})
}

// Get returns one team.
func (s *Service) Get(ctx context.Context, key string) (*Team, error) {
	return s.teams.Get(ctx, ref(key))
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
	return record.All(ctx, s.teams.Table, store.Query{Index: store.IndexGSI1, PK: store.TeamsIndexPK}, "teams", decode)
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
	return s.teams.Patch(ctx, ref(key), p, func(old, next *Team) error {
		next.Key, next.CreationDate, next.LastModified = old.Key, old.CreationDate, s.now().UnixMilli()
		next.CustomRoleKeys, next.MemberIDs = nonNil(next.CustomRoleKeys), nonNil(next.MemberIDs)
		if err := next.validate(); err != nil {
			return err
		}
		return s.resolveRefs(ctx, old, next, "customRoleKeys", "memberIds")
	})
}

// update writes next over old on old's version, through the audit log; c
// brings the actions and comment of the change.
func (s *Service) update(ctx context.Context, old, next *Team, c resource.Change) (*Team, error) {
	next.LastModified = s.now().UnixMilli()
	return s.teams.Update(ctx, ref(old.Key), old, next, c)
}

// Delete removes a team; its members lose the roles it gave them.
func (s *Service) Delete(ctx context.Context, key string) error {
	return s.teams.Delete(ctx, ref(key), resource.Change{})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// unique returns s without repeats, in order.
func unique(s []string) []string {
	out := make([]string, 0, len(s))
	for _, v := range s {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// WithoutMember returns the writes that take a member out of every team
// it is on, each conditional on the team's version read, for the member's
// removal to commit with it.
func (s *Service) WithoutMember(ctx context.Context, memberID string) ([]store.Write, error) {
	teams, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	var writes []store.Write
	now := s.now().UnixMilli()
	for _, t := range teams {
		if !slices.Contains(t.MemberIDs, memberID) {
			continue
		}
		next := *t
		next.MemberIDs = slices.DeleteFunc(slices.Clone(t.MemberIDs), func(id string) bool { return id == memberID })
		next.LastModified = now
		it, err := next.item()
		if err != nil {
			return nil, err
		}
		it.Version = t.Version + 1
		writes = append(writes, store.Put(it, store.IfVersion(t.Version)))
	}
	return writes, nil
}

// Roles returns the custom roles the team gives its members, in the
// team's order; a role deleted since it was given is left out.
func (s *Service) Roles(ctx context.Context, t *Team) ([]*role.Role, error) {
	found, err := s.roles.Resolve(ctx, t.CustomRoleKeys)
	if err != nil {
		return nil, err
	}
	out := make([]*role.Role, 0, len(found))
	for _, r := range found {
		if r != nil {
			out = append(out, r)
		}
	}
	return out, nil
}
