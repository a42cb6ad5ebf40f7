// Package member holds the account's members: who they are, their built-in
// role and custom roles, and the service that invites, lists, updates and
// removes them.
package member

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/resource"
	"github.com/flagplane/flagplane/shared/role"
	"github.com/flagplane/flagplane/shared/store"
)

// Member is one member of the account.
type Member struct {
	ID            string   `json:"_id"`
	Email         string   `json:"email"`
	FirstName     string   `json:"firstName"`
	LastName      string   `json:"lastName"`
	Role          string   `json:"role"`
	CustomRoles   []string `json:"customRoles"`
	PendingInvite bool     `json:"_pendingInvite"`
	Verified      bool     `json:"_verified"`
	CreationDate  int64    `json:"_creationDate"`
	Version       int64    `json:"-"`
}

// Roles a member may hold; owner only through the bootstrap.
var assignable = map[string]bool{"reader": true, "writer": true, "admin": true, "no_access": true}

// Invite is one element of an invite request.
type Invite struct {
	Email       *string  `json:"email"`
	FirstName   string   `json:"firstName"`
	LastName    string   `json:"lastName"`
	Role        string   `json:"role"`
	CustomRoles []string `json:"customRoles"`
}

// MaxInvites bounds one invite request, which is one atomic write.
const MaxInvites = 24

// Href is the member's API path.
func Href(id string) string { return "/api/v2/members/" + id }

// kind describes members to the resource kit; audit entries name a member by its email.
var kind = resource.Kind[Member]{
	Audit: "member", Noun: "member", Deleted: "deleteMember",
	Patchable: patchable, Called: "a member",
	Item: func(m *Member) (store.Item, error) {
		data, err := json.Marshal(m)
		gpk, gsk := store.MemberIndexKeys(m.Email, m.ID)
		return store.Item{GSI1PK: gpk, GSI1SK: gsk, Data: data}, err
	},
	Decode:  decode,
	Version: func(m *Member) int64 { return m.Version },
	Name:    func(m *Member) string { return m.Email },
}

// ref names the member with id; an id of the wrong form names none.
func ref(id string) resource.Ref {
	return resource.Ref{Key: store.MemberKey(id), What: fmt.Sprintf("member %q", id), Resource: "member/" + id, Href: Href(id),
		Malformed: environment.ValidKey("id", id) != nil}
}

// NormalizeEmail is the form used for uniqueness: trimmed, lower case.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

func (m *Member) validate(prefix string) error {
	addr, err := mail.ParseAddress(m.Email)
	if err != nil || addr.Address != m.Email || len(m.Email) > 254 {
		return fault.New(fault.Invalid, "field %q must be an email address, not %q", prefix+"email", m.Email)
	}
	if m.Role != "owner" && !assignable[m.Role] {
		return fault.New(fault.Invalid, "field %q must be reader, writer, admin or no_access, not %q", prefix+"role", m.Role)
	}
	if len(m.FirstName) > 256 || len(m.LastName) > 256 {
		return fault.New(fault.Invalid, "fields %q and %q must be at most 256 characters", prefix+"firstName", prefix+"lastName")
	}
	for i, k := range m.CustomRoles {
		if err := environment.ValidKey(fmt.Sprintf("%scustomRoles[%d]", prefix, i), k); err != nil {
			return err
		}
	}
	return nil
}

// Writes stores a new member and reserves its email.
func (m *Member) Writes() ([]store.Write, error) { return m.writes(store.IfNotExists()) }

// writes stores m and reserves its email.
func (m *Member) writes(c store.Cond) ([]store.Write, error) {
	data, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode member %q: %w", m.ID, err)
	}
	k := store.MemberKey(m.ID)
	gpk, gsk := store.MemberIndexKeys(m.Email, m.ID)
	ek := store.MemberEmailKey(m.Email)
	return []store.Write{
		store.Put(store.Item{PK: k.PK, SK: k.SK, GSI1PK: gpk, GSI1SK: gsk, Version: m.Version, Data: data}, c),
		store.Put(store.Item{PK: ek.PK, SK: ek.SK, Version: 1, Data: []byte(`{"memberId":"` + m.ID + `"}`)}, store.IfNotExists()),
	}, nil
}

// Service manages members.
type Service struct {
	table   store.Table
	log     *audit.Log
	members resource.Kit[Member]
	roles   *role.Service
	now     func() time.Time
}

// NewService returns the member service; roles resolves the custom roles
// members are given.
func NewService(table store.Table, log *audit.Log, roles *role.Service, now func() time.Time) *Service {
	return &Service{table: table, log: log, members: resource.New(&kind, table, log), roles: roles, now: now}
}

// MaxCustomRoles bounds the custom roles one member holds.
const MaxCustomRoles = 100

// roleKeys turns the custom roles given to a member, each a role's key or
// _id (the reference takes either), into keys, which members hold and
// show; a role named twice is kept once. A role that does not exist is a
// 400 naming field[index].
func (s *Service) roleKeys(ctx context.Context, field string, refs []string) ([]string, error) {
	if len(refs) == 0 {
		return []string{}, nil
	}
	if len(refs) > MaxCustomRoles {
		return nil, fault.New(fault.Invalid, "field %q holds %d custom roles, at most %d allowed", field, len(refs), MaxCustomRoles)
	}
	keys, err := s.roles.Keys(ctx, field, refs)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out, nil
}

// New builds a member from an invite (the bootstrap uses it for the owner).
func New(in Invite, prefix string, now time.Time) (*Member, error) {
	if in.Email == nil {
		return nil, fault.New(fault.Invalid, "field %q is required", prefix+"email")
	}
	m := &Member{ID: environment.NewID(), Email: NormalizeEmail(*in.Email), FirstName: in.FirstName, LastName: in.LastName,
		Role: in.Role, CustomRoles: in.CustomRoles, PendingInvite: true, CreationDate: now.UnixMilli(), Version: 1}
	if m.Role == "" {
		m.Role = "reader"
		if len(m.CustomRoles) > 0 {
			m.Role = "no_access"
		}
	}
	if m.CustomRoles == nil {
		m.CustomRoles = []string{}
	}
	if m.Role == "owner" {
		return nil, fault.New(fault.Invalid, "field %q: the owner role cannot be given by invitation", prefix+"role")
	}
	return m, m.validate(prefix)
}

// Invite adds members, all or none.
func (s *Service) Invite(ctx context.Context, invites []Invite) ([]*Member, error) {
	if len(invites) == 0 || len(invites) > MaxInvites {
		return nil, fault.New(fault.Invalid, "an invite request holds 1 to %d members, not %d", MaxInvites, len(invites))
	}
	now := s.now()
	var members []*Member
	var writes []store.Write
	seen := map[string]bool{}
	for i, in := range invites {
		m, err := New(in, fmt.Sprintf("[%d].", i), now)
		if err != nil {
			return nil, err
		}
		if m.CustomRoles, err = s.roleKeys(ctx, fmt.Sprintf("[%d].customRoles", i), m.CustomRoles); err != nil {
			return nil, err
		}
		if seen[m.Email] {
			return nil, fault.New(fault.Invalid, "field \"[%d].email\": %q is invited twice", i, m.Email)
		}
		seen[m.Email] = true
		ws, err := m.writes(store.IfNotExists())
		if err != nil {
			return nil, err
		}
		members = append(members, m)
		writes = append(writes, ws...)
	}
	names := make([]string, len(members))
	for i, m := range members {
		names[i] = m.Email
	}
	_, err := s.log.Commit(ctx, audit.Change{
		Writes: writes, Kind: "member", Resource: "member/*", Actions: []string{"createMember"},
		Name: strings.Join(names, ", "), Href: "/api/v2/members", TitleVerb: "invited", Current: members,
	})
	var txErr *store.TxError
	if errors.As(err, &txErr) && txErr.Index < len(writes) {
		return nil, fault.Wrap(err, fault.Conflict, "a member with email %q already exists", strings.TrimPrefix(txErr.Key.PK, "MEMBEREMAIL#"))
	}
	if err != nil {
		return nil, err
	}
	return members, nil
}

// Get returns one member.
func (s *Service) Get(ctx context.Context, id string) (*Member, error) {
	return s.members.Get(ctx, ref(id))
}

func decode(it store.Item) (*Member, error) {
	var m Member
	if err := json.Unmarshal(it.Data, &m); err != nil {
		return nil, fmt.Errorf("decode member %s: %w", it.PK, err)
	}
	m.Version = it.Version
	return &m, nil
}

// List returns every member, ordered by email.
func (s *Service) List(ctx context.Context) ([]*Member, error) {
	return record.All(ctx, s.table, store.Query{Index: store.IndexGSI1, PK: store.MembersIndexPK}, "members", decode)
}

// Actions are the actions `_access` reports on a member.
var Actions = []string{"updateMemberRole", "updateMemberName", "deleteMember"}

// patchable maps the fields a member patch may touch to their actions.
var patchable = map[string]string{
	"role":        "updateMemberRole",
	"customRoles": "updateMemberRole",
	"firstName":   "updateMemberName",
	"lastName":    "updateMemberName",
}

// PatchActions returns the actions a JSON patch of a member performs.
func PatchActions(p patch.Patch) ([]string, error) { return kind.PatchActions(p) }

// Patch applies a JSON patch to a member. The owner's role cannot change,
// and nobody becomes owner.
func (s *Service) Patch(ctx context.Context, id string, p patch.Patch) (*Member, error) {
	return s.members.Patch(ctx, ref(id), p, func(old, next *Member) error {
		next.ID, next.Email, next.CreationDate, next.PendingInvite, next.Verified = old.ID, old.Email, old.CreationDate, old.PendingInvite, old.Verified
		if next.CustomRoles == nil {
			next.CustomRoles = []string{}
		}
		if !slices.Equal(next.CustomRoles, old.CustomRoles) {
			if err := next.validate(""); err != nil {
				return err
			}
			keys, err := s.roleKeys(ctx, "customRoles", next.CustomRoles)
			if err != nil {
				return err
			}
			next.CustomRoles = keys
		}
		if old.Role == "owner" && next.Role != "owner" {
			return fault.New(fault.Invalid, "the owner's role cannot be changed")
		}
		if old.Role != "owner" && next.Role == "owner" {
			return fault.New(fault.Invalid, "field \"role\": the owner role cannot be given")
		}
		return next.validate("")
	})
}

// Delete removes a member and frees the email; the owner cannot be removed.
//
// extra are writes committed in the same transaction: the member's teams
// without it, say, so no team names a member that is gone. When one's
// condition fails (the team changed meanwhile) nothing is written: 409.
func (s *Service) Delete(ctx context.Context, id string, extra ...store.Write) error {
	m, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	if m.Role == "owner" {
		return fault.New(fault.Invalid, "the account owner cannot be removed")
	}
	return s.members.Remove(ctx, ref(id), m, resource.Change{
		Also: append([]store.Write{store.Delete(store.MemberEmailKey(m.Email), store.Cond{})}, extra...), TitleVerb: "removed the member",
	})
}
