// Package token issues access tokens and resolves a presented token to the
// principal it stands for. Only a SHA-256 hash of a token's value is
// stored; the value is shown once, when it is made.
package token

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/store"
)

// Token is an access token as stored (never with its value).
type Token struct {
	ID                string             `json:"_id"`
	OwnerID           string             `json:"ownerId,omitempty"`
	MemberID          string             `json:"memberId,omitempty"`
	Name              string             `json:"name"`
	Description       string             `json:"description"`
	CreationDate      int64              `json:"creationDate"`
	LastModified      int64              `json:"lastModified"`
	Role              identity.Role      `json:"role"`
	CustomRoleIDs     []string           `json:"customRoleIds"`
	InlineRole        []policy.Statement `json:"inlineRole"`
	ServiceToken      bool               `json:"serviceToken"`
	DefaultAPIVersion int                `json:"defaultApiVersion"`
	Expiry            int64              `json:"expiry,omitempty"`
	Ending            string             `json:"ending"`
	LastUsed          int64              `json:"lastUsed,omitempty"`
	// Hash finds the token's lookup item; it never leaves the table (see Public).
	Hash string `json:"hash,omitempty"`
	// GraceHash is the previous value's hash while a reset's grace period
	// (until GraceExpiry, Unix ms) lets it work; changes follow it too.
	GraceHash   string `json:"graceHash,omitempty"`
	GraceExpiry int64  `json:"graceExpiry,omitempty"`
	Version     int64  `json:"-"`
}

// Public is the token without its hash, for audit entries and responses.
func (t Token) Public() Token {
	t.Hash, t.GraceHash, t.GraceExpiry = "", "", 0
	return t
}

// lookup is the item found by a token's hash: what authentication needs, in one read.
type lookup struct {
	ID            string             `json:"id"`
	Name          string             `json:"name"`
	Role          identity.Role      `json:"role"`
	CustomRoleIDs []string           `json:"customRoleIds,omitempty"`
	InlineRole    []policy.Statement `json:"inlineRole,omitempty"`
	MemberID      string             `json:"memberId,omitempty"`
	ServiceToken  bool               `json:"serviceToken"`
	Ending        string             `json:"ending"`
	Expiry        int64              `json:"expiry,omitempty"`
	AccountID     string             `json:"accountId"`
}

// DefaultAPIVersion is the API version of a token that names none.
const DefaultAPIVersion = 20240415

// NewValue returns a fresh token value, api-<uuid v4>.
func NewValue() string { return "api-" + uuid.NewString() }

// Hash is the stored form of a token value.
func Hash(value string) string {
	sum := sha256.Sum256([]byte(value))
	return hex.EncodeToString(sum[:])
}

// Spec is what a new token is made from.
type Spec struct {
	Name          string
	Description   string
	Role          identity.Role
	CustomRoleIDs []string
	InlineRole    []policy.Statement
	ServiceToken  bool
	MemberID      string
	Expiry        int64 // Unix ms; 0 never
	// DefaultAPIVersion is the API version the token defaults to.
	DefaultAPIVersion int
}

// Issue builds a token from spec and the writes that store it. The value is
// returned only here.
func Issue(spec Spec, accountID string, now time.Time) (Token, string, []store.Write, error) {
	value := NewValue()
	ms := now.UnixMilli()
	t := Token{
		ID:                uuid.NewString(),
		MemberID:          spec.MemberID,
		OwnerID:           spec.MemberID,
		Name:              spec.Name,
		Description:       spec.Description,
		CustomRoleIDs:     nonNil(spec.CustomRoleIDs),
		InlineRole:        spec.InlineRole,
		CreationDate:      ms,
		LastModified:      ms,
		Role:              spec.Role,
		ServiceToken:      spec.ServiceToken,
		DefaultAPIVersion: cmp.Or(spec.DefaultAPIVersion, DefaultAPIVersion),
		Expiry:            spec.Expiry,
		Ending:            value[len(value)-4:],
		Hash:              Hash(value),
	}
	tokData, err := json.Marshal(t)
	if err != nil {
		return Token{}, "", nil, fmt.Errorf("encode token: %w", err)
	}
	lk, err := t.lookupWrite(accountID, t.Hash, store.IfNotExists())
	if err != nil {
		return Token{}, "", nil, err
	}
	tk := store.TokenKey(t.ID)
	gpk, gsk := store.TokenIndexKeys(t.ID)
	writes := []store.Write{
		store.Put(store.Item{PK: tk.PK, SK: tk.SK, GSI1PK: gpk, GSI1SK: gsk, Version: 1, Data: tokData}, store.IfNotExists()),
		lk,
	}
	return t, value, writes, nil
}

// lookupWrite stores what authentication needs under the hash of a value.
func (t Token) lookupWrite(accountID, hash string, c store.Cond) (store.Write, error) {
	data, err := json.Marshal(lookup{ID: t.ID, Name: t.Name, Role: t.Role, CustomRoleIDs: t.CustomRoleIDs, InlineRole: t.InlineRole,
		MemberID: t.MemberID, ServiceToken: t.ServiceToken, Ending: t.Ending, Expiry: t.Expiry, AccountID: accountID})
	if err != nil {
		return store.Write{}, fmt.Errorf("encode token lookup: %w", err)
	}
	hk := store.TokenHashKey(hash)
	return store.Put(store.Item{PK: hk.PK, SK: hk.SK, Version: 1, Data: data}, c), nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Create issues a token and commits it through the audit log.
func Create(ctx context.Context, log *audit.Log, spec Spec, accountID string) (Token, string, error) {
	t, value, writes, err := Issue(spec, accountID, time.Now())
	if err != nil {
		return Token{}, "", err
	}
	if _, err := log.Commit(ctx, CreateChange(t, writes)); err != nil {
		return Token{}, "", fmt.Errorf("create token %q: %w", spec.Name, err)
	}
	return t, value, nil
}

// CreateChange is the audited change that stores a newly issued token.
func CreateChange(t Token, writes []store.Write) audit.Change {
	return audit.Change{
		Writes: writes, Kind: "token", Resource: "member/*:token/" + t.ID, Actions: []string{"createAccessToken"},
		Name: t.Name, Href: "/api/v2/tokens/" + t.ID, TitleVerb: "created the access token", Current: t.Public(),
	}
}

// Grants loads what a caller's rights are built from besides the token itself.
type Grants interface {
	// Roles returns the grants of the custom roles the references (_ids or
	// keys) name (missing ones are skipped) and whether any lets its holder
	// read by default.
	Roles(ctx context.Context, refs []string) ([]policy.Grant, bool, error)
	// RoleIDs returns the _id of the custom role each reference (an _id or
	// a key) names, in order, "" where none does.
	RoleIDs(ctx context.Context, refs []string) ([]string, error)
	// Member returns a member's built-in role, custom role keys and email,
	// or an error wrapping fault.NotFound.
	Member(ctx context.Context, id string) (role string, customRoles []string, email string, err error)
}

// Authenticator resolves token values with one read, cached briefly so a
// warm process does not read the table on every request. The principal it
// caches holds the compiled rights, so a request never re-parses a policy.
type Authenticator struct {
	table  store.Table
	grants Grants
	ttl    time.Duration
	now    func() time.Time

	mu      sync.Mutex
	cache   map[string]cached
	touched map[string]time.Time
}

type cached struct {
	p       identity.Principal
	expiry  int64
	fetched time.Time
}

// CacheTTL is how long a resolved token is trusted without a read: a
// deleted token, or a changed role, takes effect everywhere within it.
const CacheTTL = 30 * time.Second

// maxCached bounds the cache; it is cleared when full.
const maxCached = 10000

// NewAuthenticator returns an Authenticator reading table; grants loads
// custom roles and members (nil: built-in roles and inline statements only).
func NewAuthenticator(table store.Table, grants Grants, now func() time.Time) *Authenticator {
	return &Authenticator{table: table, grants: grants, ttl: CacheTTL, now: now, cache: map[string]cached{}, touched: map[string]time.Time{}}
}

// Forget drops the cached principal of the token whose hash is h, so a
// change made in this process takes effect here at once.
func (a *Authenticator) Forget(h string) {
	a.mu.Lock()
	delete(a.cache, h)
	a.mu.Unlock()
}

// Authenticate returns the principal of value, or 401 unauthorized.
func (a *Authenticator) Authenticate(ctx context.Context, value string) (identity.Principal, error) {
	if !strings.HasPrefix(value, "api-") || len(value) > 200 {
		return identity.Principal{}, fault.New(fault.Unauthorized, "the access token is not valid")
	}
	h := Hash(value)
	now := a.now()
	a.mu.Lock()
	c, hit := a.cache[h]
	a.mu.Unlock()
	if !hit || now.Sub(c.fetched) > a.ttl {
		it, err := a.table.Get(ctx, store.TokenHashKey(h))
		if errors.Is(err, store.ErrNotFound) {
			return identity.Principal{}, fault.New(fault.Unauthorized, "the access token is not valid")
		}
		if err != nil {
			return identity.Principal{}, fmt.Errorf("look up access token: %w", err)
		}
		var rec lookup
		if err := json.Unmarshal(it.Data, &rec); err != nil {
			return identity.Principal{}, fmt.Errorf("decode access token lookup: %w", err)
		}
		p, err := a.resolve(ctx, rec)
		if err != nil {
			return identity.Principal{}, err
		}
		c = cached{p: p, expiry: rec.Expiry, fetched: now}
		a.mu.Lock()
		if len(a.cache) >= maxCached {
			a.cache = map[string]cached{}
		}
		a.cache[h] = c
		a.mu.Unlock()
	}
	if c.expiry > 0 && now.UnixMilli() >= c.expiry {
		return identity.Principal{}, fault.New(fault.Unauthorized, "the access token has expired")
	}
	if !strings.HasPrefix(c.p.TokenID, "oauth-") {
		a.touch(ctx, c.p.TokenID, c.p.MemberID, now)
	}
	return c.p, nil
}

// resolve builds the principal of a token: its own grants, and for a
// member token also its member's, which cap what the token may do.
func (a *Authenticator) resolve(ctx context.Context, rec lookup) (identity.Principal, error) {
	p := identity.Principal{
		TokenID: rec.ID, TokenName: rec.Name, TokenEnding: rec.Ending, ServiceToken: rec.ServiceToken,
		MemberID: rec.MemberID, Role: rec.Role, AccountID: rec.AccountID,
	}
	grants, read, err := a.grantsOf(ctx, string(rec.Role), rec.CustomRoleIDs, rec.InlineRole)
	if err != nil {
		return identity.Principal{}, fmt.Errorf("rights of token %s: %w", rec.ID, err)
	}
	own, tags, err := compile(grants)
	if err != nil {
		return identity.Principal{}, fmt.Errorf("rights of token %s: %w", rec.ID, err)
	}
	r := &rights{token: own, read: read, tags: tags, own: grants}
	if rec.MemberID != "" && a.grants != nil {
		role, custom, email, err := a.grants.Member(ctx, rec.MemberID)
		if fault.Is(err, fault.NotFound) {
			return identity.Principal{}, fault.New(fault.Unauthorized, "the access token's member no longer exists")
		}
		if err != nil {
			return identity.Principal{}, fmt.Errorf("member of token %s: %w", rec.ID, err)
		}
		mgrants, mread, err := a.grantsOf(ctx, role, custom, nil)
		if err != nil {
			return identity.Principal{}, fmt.Errorf("rights of member %s: %w", rec.MemberID, err)
		}
		mp, mtags, err := compile(mgrants)
		if err != nil {
			return identity.Principal{}, fmt.Errorf("rights of member %s: %w", rec.MemberID, err)
		}
		r.member, r.read, r.tags, r.memberGrants = mp, r.read && mread, r.tags || mtags, mgrants
		p.MemberEmail, p.MemberRole = email, identity.Role(role)
	}
	p.Rights = r
	return p, nil
}

// grantsOf collects a built-in role, custom roles and inline statements,
// and says whether reading is allowed where no statement decides: the
// built-in role may read, or (with no role, or no_access beside custom
// roles) a custom role's basePermissions is reader. no_access next to custom
// roles only means "nothing beyond them", so its deny-all is left out.
func (a *Authenticator) grantsOf(ctx context.Context, role string, customRoles []string, inline []policy.Statement) ([]policy.Grant, bool, error) {
	var grants []policy.Grant
	read := identity.Role(role).CanRead()
	custom := len(customRoles) > 0 || len(inline) > 0
	if role != "" && !(role == string(identity.RoleNoAccess) && custom) {
		g, err := policy.BuiltIn(role)
		if err != nil {
			return nil, false, err
		}
		grants = append(grants, g)
	}
	if len(customRoles) > 0 && a.grants != nil {
		cg, baseRead, err := a.grants.Roles(ctx, customRoles)
		if err != nil {
			return nil, false, err
		}
		grants = append(grants, cg...)
		read = read || baseRead
	}
	if len(inline) > 0 {
		grants = append(grants, policy.Grant{RoleName: "inline", Statements: inline})
	}
	return grants, read, nil
}

// compile turns grants into a policy and says whether any statement
// selects resources by tag.
func compile(grants []policy.Grant) (pol *policy.Policy, tags bool, err error) {
	for _, g := range grants {
		for _, st := range g.Statements {
			for _, spec := range append(append([]string(nil), st.Resources...), st.NotResources...) {
				tags = tags || strings.Contains(spec, ";")
			}
		}
	}
	pol, err = policy.Compile(grants)
	return pol, tags, err
}

// rights is a caller's compiled policy; a member token's is capped by its
// member's, so both must allow.
type rights struct {
	token, member *policy.Policy
	read          bool
	tags          bool
	// own are the token's own grants, and memberGrants its member's, for the
	// check that a token it makes holds no more than both.
	own, memberGrants []policy.Grant
}

// UsesTags reports whether any statement selects resources by tag, so the
// check knows to load the tags of the resource's project and environment.
func (r *rights) UsesTags() bool { return r.tags }

// Identity names these rights for caches of what they decide: the same
// value means the same decisions on every resource. The authenticator
// builds new rights whenever it reloads a token (at once when the token
// changes in this process, within its cache window otherwise), so a cache
// keyed by them lags a change no more than the decisions themselves do.
func (r *rights) Identity() any { return r }

func (r *rights) Decide(res policy.Resource, action string) policy.Decision {
	d := r.decide(r.token, res, action)
	if !d.Allowed || r.member == nil {
		return d
	}
	if md := r.decide(r.member, res, action); !md.Allowed {
		return md
	}
	return d
}

// decide lets reading through by default for roles that may read, unless a
// statement says otherwise.
func (r *rights) decide(p *policy.Policy, res policy.Resource, action string) policy.Decision {
	d := p.Evaluate(res, action)
	if action == identity.ViewAction && d.Reason == nil {
		d.Allowed = r.read
	}
	return d
}

func (r *rights) Access(res policy.Resource, actions []string) policy.Access {
	acc := policy.Access{Allowed: []policy.AccessEntry{}, Denied: []policy.AccessEntry{}}
	for _, a := range actions {
		d := r.Decide(res, a)
		e := policy.AccessEntry{Action: a, Reason: d.Reason}
		if d.Allowed {
			acc.Allowed = append(acc.Allowed, e)
		} else {
			acc.Denied = append(acc.Denied, e)
		}
	}
	return acc
}

// BuiltInRights are the rights of a built-in role alone, for callers that
// are not tokens (tests, the OAuth grant's scope cap).
func BuiltInRights(role identity.Role) (identity.Rights, error) {
	g, err := policy.BuiltIn(string(role))
	if err != nil {
		return nil, err
	}
	pol, err := policy.Compile([]policy.Grant{g})
	if err != nil {
		return nil, err
	}
	return &rights{token: pol, read: role.CanRead()}, nil
}

// IssueBearer makes a short-lived token that exists only as its lookup
// item, which the table expires by TTL: the access token of the OAuth
// client-credentials grant. It is never listed and cannot be patched; the
// value is returned once.
func IssueBearer(spec Spec, accountID string, now time.Time, ttl time.Duration) (string, store.Write, error) {
	value := NewValue()
	t := Token{
		ID: "oauth-" + uuid.NewString(), MemberID: spec.MemberID, Name: spec.Name, Role: spec.Role,
		CustomRoleIDs: spec.CustomRoleIDs, InlineRole: spec.InlineRole,
		Expiry: now.Add(ttl).UnixMilli(), Ending: value[len(value)-4:],
	}
	w, err := t.lookupWrite(accountID, Hash(value), store.IfNotExists())
	if err != nil {
		return "", store.Write{}, err
	}
	w.Item.TTL = now.Add(ttl).Unix()
	return value, w, nil
}
