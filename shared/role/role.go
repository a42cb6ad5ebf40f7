// Package role holds custom roles: named sets of policy statements that
// tokens and members carry, and the service that manages them.
package role

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/resource"
	"github.com/flagplane/flagplane/shared/store"
)

// Role is one custom role as stored.
type Role struct {
	ID          string             `json:"_id"`
	Key         string             `json:"key"`
	Name        string             `json:"name"`
	Description string             `json:"description"`
	Policy      []policy.Statement `json:"policy"`
	// BasePermissions is what members holding only this role may do beyond
	// its statements: reader (read everything) or no_access.
	BasePermissions string `json:"basePermissions"`
	CreatedOn       int64  `json:"createdOn"`
	Version         int64  `json:"-"`
}

// Input is the body of a create request.
type Input struct {
	Key             *string            `json:"key"`
	Name            *string            `json:"name"`
	Description     string             `json:"description"`
	Policy          []policy.Statement `json:"policy"`
	BasePermissions string             `json:"basePermissions"`
}

// Grant is the role as policy evaluation uses it.
func (r *Role) Grant() policy.Grant { return policy.Grant{RoleName: r.Key, Statements: r.Policy} }

// Href is the role's API path.
func Href(key string) string { return "/api/v2/roles/" + key }

func (r *Role) validate() error {
	if err := environment.ValidKey("key", r.Key); err != nil {
		return err
	}
	if LooksLikeID(r.Key) {
		return fault.New(fault.Invalid, "field \"key\" must not have the form of a role _id (24 hex digits), so that a reference to a role by key or by _id is never ambiguous: %q", r.Key)
	}
	if err := environment.ValidName("name", r.Name); err != nil {
		return err
	}
	if len(r.Description) > 1024 {
		return fault.New(fault.Invalid, "field \"description\" must be at most 1024 characters")
	}
	if r.BasePermissions != "reader" && r.BasePermissions != "no_access" {
		return fault.New(fault.Invalid, "field \"basePermissions\" must be reader or no_access, not %q", r.BasePermissions)
	}
	if len(r.Policy) == 0 {
		return fault.New(fault.Invalid, "field \"policy\" needs at least one statement")
	}
	return policy.Validate(r.Policy)
}

func (r *Role) item() (store.Item, error) {
	data, err := json.Marshal(r)
	gpk, gsk := store.RoleIndexKeys(r.Key)
	return store.Item{GSI1PK: gpk, GSI1SK: gsk, Data: data}, err
}

// kind describes custom roles to the resource kit.
var kind = resource.Kind[Role]{
	Audit: "role", Noun: "custom role", Created: "createRole", Deleted: "deleteRole",
	Patchable: patchable, Called: "a custom role",
	Item: (*Role).item, Decode: decode,
	Version: func(r *Role) int64 { return r.Version },
	Name:    func(r *Role) string { return r.Name },
}

// ref names the role with key; a key of the wrong form names none.
func ref(key string) resource.Ref {
	return resource.Ref{Key: store.RoleKey(key), What: fmt.Sprintf("custom role %q", key), Resource: "role/" + key, Href: Href(key),
		Malformed: environment.ValidKey("customRoleKey", key) != nil}
}

// Service manages custom roles.
type Service struct {
	table store.Table
	roles resource.Kit[Role]
	now   func() time.Time
}

// NewService returns the role service.
func NewService(table store.Table, log *audit.Log, now func() time.Time) *Service {
	return &Service{table: table, roles: resource.New(&kind, table, log), now: now}
}

// Create stores a new role.
func (s *Service) Create(ctx context.Context, in Input) (*Role, error) {
	if in.Key == nil {
		return nil, fault.New(fault.Invalid, "field \"key\" is required")
	}
	if in.Name == nil {
		return nil, fault.New(fault.Invalid, "field \"name\" is required")
	}
	r := &Role{ID: environment.NewID(), Key: *in.Key, Name: *in.Name, Description: in.Description, Policy: in.Policy,
		BasePermissions: in.BasePermissions, CreatedOn: s.now().UnixMilli()}
	if r.BasePermissions == "" {
		r.BasePermissions = "reader"
	}
	if err := r.validate(); err != nil {
		return nil, err
	}
	ik := store.RoleIDKey(r.ID)
	pointer := store.Put(store.Item{PK: ik.PK, SK: ik.SK, Version: 1, Data: []byte(`{"key":"` + r.Key + `"}`)}, store.IfNotExists())
	return s.roles.Create(ctx, ref(r.Key), r, resource.Change{Also: []store.Write{pointer},
		Exists: fmt.Sprintf("a custom role with key %q already exists", r.Key)})
}

// Get returns one role.
func (s *Service) Get(ctx context.Context, key string) (*Role, error) {
	return s.roles.Get(ctx, ref(key))
}

func decode(it store.Item) (*Role, error) {
	var r Role
	if err := json.Unmarshal(it.Data, &r); err != nil {
		return nil, fmt.Errorf("decode custom role %s: %w", it.PK, err)
	}
	r.Version = it.Version
	return &r, nil
}

// List returns every role, ordered by key.
func (s *Service) List(ctx context.Context) ([]*Role, error) {
	return record.All(ctx, s.table, store.Query{Index: store.IndexGSI1, PK: store.RolesIndexPK}, "custom roles", decode)
}

// GetByRef returns the role a reference names: its key or its _id, as
// the reference's "custom role key or ID" path parameter takes either.
func (s *Service) GetByRef(ctx context.Context, ref string) (*Role, error) {
	found, err := s.Resolve(ctx, []string{ref})
	if err != nil {
		return nil, err
	}
	if found[0] == nil {
		return nil, fault.New(fault.NotFound, "custom role %q not found", ref)
	}
	return found[0], nil
}

// LooksLikeID reports whether ref has the form of a role _id (24 hex digits).
func LooksLikeID(ref string) bool {
	if len(ref) != 24 {
		return false
	}
	for _, c := range ref {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Resolve returns the role each reference names, in order, nil where none
// does. A reference is a role's _id or its key, as LaunchDarkly takes
// either wherever custom roles are named (no key has the form of an _id).
// Keys and _ids are read with consistent reads (an _id through its
// pointer item), so a role made a moment ago is found.
func (s *Service) Resolve(ctx context.Context, refs []string) ([]*Role, error) {
	out := make([]*Role, len(refs))
	var legacy map[string]*Role // by _id, for roles made before _id pointers existed
	for i, ref := range refs {
		r, err := s.byRef(ctx, ref)
		if err != nil {
			return nil, err
		}
		if r == nil && LooksLikeID(ref) {
			if legacy == nil {
				all, err := s.List(ctx)
				if err != nil {
					return nil, err
				}
				legacy = make(map[string]*Role, len(all))
				for _, r := range all {
					legacy[r.ID] = r
				}
			}
			r = legacy[ref]
		}
		out[i] = r
	}
	return out, nil
}

// byRef loads the role ref names through its _id pointer or its key; nil
// when neither names one.
func (s *Service) byRef(ctx context.Context, ref string) (*Role, error) {
	key := ref
	if LooksLikeID(ref) {
		// Without a pointer, ref is tried as a key: only a role made before
		// keys were kept from looking like _ids can have such a key.
		it, err := s.table.Get(ctx, store.RoleIDKey(ref))
		switch {
		case err == nil:
			var p struct {
				Key string `json:"key"`
			}
			if err := json.Unmarshal(it.Data, &p); err != nil {
				return nil, fmt.Errorf("decode custom role pointer %s: %w", it.PK, err)
			}
			key = p.Key
		case !errors.Is(err, store.ErrNotFound):
			return nil, fmt.Errorf("look up custom role %q: %w", ref, err)
		}
	}
	if environment.ValidKey("key", key) != nil {
		return nil, nil
	}
	r, err := s.Get(ctx, key)
	if fault.Is(err, fault.NotFound) {
		return nil, nil
	}
	return r, err
}

// Keys returns the key of the role each reference (an _id or a key) names,
// for fields that hold role keys (a member's customRoles, a team's
// customRoleKeys). A reference that names no role is a 400 naming
// field[index]; field is the name the client sent, e.g. "customRoles" or
// "[0].customRoles".
func (s *Service) Keys(ctx context.Context, field string, refs []string) ([]string, error) {
	found, err := s.Resolve(ctx, refs)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(refs))
	for i, r := range found {
		if r == nil {
			return nil, fault.New(fault.Invalid, "field %q: custom role %q does not exist", fmt.Sprintf("%s[%d]", field, i), refs[i])
		}
		keys[i] = r.Key
	}
	return keys, nil
}

// Grants returns the grants of the roles the references (_ids or keys)
// name, in order, and whether any of them lets its holder read by default
// (basePermissions reader). A reference whose role was deleted is skipped:
// losing a role only removes rights.
func (s *Service) Grants(ctx context.Context, refs []string) ([]policy.Grant, bool, error) {
	found, err := s.Resolve(ctx, refs)
	if err != nil {
		return nil, false, err
	}
	out := make([]policy.Grant, 0, len(refs))
	read := false
	for _, r := range found {
		if r == nil {
			continue
		}
		out = append(out, r.Grant())
		read = read || r.BasePermissions == "reader"
	}
	return out, read, nil
}

// Actions are the actions `_access` reports on a custom role.
var Actions = []string{"updateName", "updateDescription", "updatePolicy", "updateBasePermissions", "deleteRole"}

// patchable maps the fields a role patch may touch to their actions.
var patchable = map[string]string{
	"name":            "updateName",
	"description":     "updateDescription",
	"policy":          "updatePolicy",
	"basePermissions": "updateBasePermissions",
}

// PatchActions returns the actions a JSON patch of a role performs.
func PatchActions(p patch.Patch) ([]string, error) { return kind.PatchActions(p) }

// Patch applies a JSON patch to a role on the version it was read at.
func (s *Service) Patch(ctx context.Context, key string, p patch.Patch) (*Role, error) {
	return s.roles.Patch(ctx, ref(key), p, func(old, next *Role) error {
		next.ID, next.Key, next.CreatedOn = old.ID, old.Key, old.CreatedOn
		return next.validate()
	})
}

// Delete removes a role. Tokens and members that named it lose its rights.
func (s *Service) Delete(ctx context.Context, key string) error {
	r, err := s.Get(ctx, key)
	if err != nil {
		return err
	}
	return s.roles.Remove(ctx, ref(key), r, resource.Change{Also: []store.Write{store.Delete(store.RoleIDKey(r.ID), store.Cond{})}})
}
