package token

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/role"
	"github.com/flagplane/flagplane/shared/store"
)

// Input is the body of a create request.
type Input struct {
	Name              string             `json:"name"`
	Description       string             `json:"description"`
	Role              string             `json:"role"`
	CustomRoleIDs     []string           `json:"customRoleIds"`
	InlineRole        []policy.Statement `json:"inlineRole"`
	ServiceToken      bool               `json:"serviceToken"`
	DefaultAPIVersion int                `json:"defaultApiVersion"`
	// Expiry is when the token stops working, in Unix milliseconds, as a
	// number or a numeric string (spec 2.10 shows it as a string); absent,
	// null or 0: never.
	Expiry json.RawMessage `json:"expiry"`
}

// ParseMillis reads a Unix-milliseconds timestamp sent as a JSON number or
// a numeric string (the spec shows some timestamps as strings, and a client
// may echo either form); null or absent is 0. Anything else is a 400
// naming field.
func ParseMillis(field string, raw json.RawMessage) (int64, error) {
	v := strings.TrimSpace(string(raw))
	if v == "" || v == "null" {
		return 0, nil
	}
	if strings.HasPrefix(v, `"`) {
		var str string
		if err := json.Unmarshal([]byte(v), &str); err != nil {
			return 0, fault.New(fault.Invalid, "field %q must be Unix milliseconds, as a number or a numeric string", field)
		}
		v = strings.TrimSpace(str)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fault.New(fault.Invalid, "field %q must be Unix milliseconds, as a number or a numeric string, not %s", field, string(raw))
	}
	return n, nil
}

// Service manages access tokens.
type Service struct {
	table  store.Table
	log    *audit.Log
	grants Grants
	authn  *Authenticator
	now    func() time.Time
}

// NewService returns the token service; grants loads custom roles, and
// authn (may be nil) forgets a token's cached rights when it changes.
func NewService(table store.Table, log *audit.Log, grants Grants, authn *Authenticator, now func() time.Time) *Service {
	return &Service{table: table, log: log, grants: grants, authn: authn, now: now}
}

func (s *Service) forget(hash string) {
	if s.authn != nil {
		s.authn.Forget(hash)
	}
}

// Actions are the actions `_access` reports on a token.
var Actions = []string{"updateTokenName", "updateTokenDescription", "updateTokenRole", "updateTokenCustomRoles",
	"updateTokenInlineRole", "updateTokenDefaultApiVersion", "resetAccessToken", "deleteAccessToken"}

// patchable maps the fields a token patch may touch to their actions.
var patchable = map[string]string{
	"name":              "updateTokenName",
	"description":       "updateTokenDescription",
	"role":              "updateTokenRole",
	"customRoleIds":     "updateTokenCustomRoles",
	"inlineRole":        "updateTokenInlineRole",
	"defaultApiVersion": "updateTokenDefaultApiVersion",
}

// PatchActions returns the actions a JSON patch of a token performs.
func PatchActions(p patch.Patch) ([]string, error) { return p.Actions(patchable, "an access token") }

// Href is a token's API path.
func Href(id string) string { return "/api/v2/tokens/" + id }

func resource(t Token) string {
	owner := t.MemberID
	if owner == "" {
		owner = "*"
	}
	return "member/" + owner + ":token/" + t.ID
}

// check validates the rights a token is to hold and that the caller holds
// them too: nobody makes or raises a token beyond their own rights.
func (s *Service) check(ctx context.Context, t Token) error {
	if strings.TrimSpace(t.Name) == "" || len(t.Name) > 256 {
		return fault.New(fault.Invalid, "field \"name\" must be 1 to 256 characters")
	}
	if len(t.Description) > 1024 {
		return fault.New(fault.Invalid, "field \"description\" must be at most 1024 characters")
	}
	if t.Role == "" && len(t.CustomRoleIDs) == 0 && len(t.InlineRole) == 0 {
		return fault.New(fault.Invalid, "a token needs a \"role\", \"customRoleIds\" or an \"inlineRole\"")
	}
	var wanted []policy.Grant
	if t.Role != "" {
		g, err := policy.BuiltIn(string(t.Role))
		if err != nil {
			return fault.New(fault.Invalid, "field \"role\" must be reader, writer, admin, owner or no_access, not %q", t.Role)
		}
		wanted = append(wanted, g)
	}
	for i, ref := range t.CustomRoleIDs {
		gs, _, err := s.grants.Roles(ctx, []string{ref})
		if err != nil {
			return err
		}
		if len(gs) == 0 {
			return fault.New(fault.Invalid, "field \"customRoleIds\"[%d]: custom role %q does not exist", i, ref)
		}
		wanted = append(wanted, gs...)
	}
	if len(t.InlineRole) > 0 {
		if err := policy.Validate(t.InlineRole); err != nil {
			return fault.Wrap(err, fault.Invalid, "field \"inlineRole\": %s", fault.MessageOf(err))
		}
		wanted = append(wanted, policy.Grant{RoleName: "inline", Statements: t.InlineRole})
	}
	if t.DefaultAPIVersion < 0 {
		return fault.New(fault.Invalid, "field \"defaultApiVersion\" must be a positive version such as %d", DefaultAPIVersion)
	}
	p, _ := identity.From(ctx)
	holder, ok := p.Rights.(*rights)
	if !ok {
		return fault.New(fault.Forbidden, "only an access token can make or change access tokens")
	}
	if err := policy.Covers(holder.own, wanted); err != nil {
		return fault.Wrap(err, fault.Forbidden, "the token would hold rights the caller does not: %s", fault.MessageOf(err))
	}
	// A member token acts within its member's rights; what it makes (a
	// service token belongs to no member) must stay within them too.
	if holder.member != nil {
		if err := policy.Covers(holder.memberGrants, wanted); err != nil {
			return fault.Wrap(err, fault.Forbidden, "the token would hold rights the caller's member does not: %s", fault.MessageOf(err))
		}
	}
	return nil
}

// IsAdmin reports whether the caller acts as an admin or owner: its token's
// role and, for a member token, its member's role.
func IsAdmin(p identity.Principal) bool {
	admin := func(r identity.Role) bool { return r == identity.RoleAdmin || r == identity.RoleOwner }
	return admin(p.Role) && (p.MemberID == "" || admin(p.MemberRole))
}

// Visible reports whether the caller may see t: its own member's tokens,
// or every token for an admin.
func Visible(p identity.Principal, t Token) bool {
	return IsAdmin(p) || t.MemberID != "" && t.MemberID == p.MemberID
}

// MaxCustomRoles bounds the custom roles one token holds.
const MaxCustomRoles = 100

// roleIDs turns custom role references (each a role's _id or key, as the
// reference's clients send either) into the roles' _ids, which a token
// stores and shows; a repeated role is kept once. A reference that names no
// role is a 400 naming its index.
func (s *Service) roleIDs(ctx context.Context, refs []string) ([]string, error) {
	if len(refs) > MaxCustomRoles {
		return nil, fault.New(fault.Invalid, "field \"customRoleIds\" holds %d custom roles, at most %d allowed", len(refs), MaxCustomRoles)
	}
	ids, err := s.grants.RoleIDs(ctx, refs)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(ids))
	for i, id := range ids {
		if id == "" {
			return nil, fault.New(fault.Invalid, "field \"customRoleIds\"[%d]: custom role %q does not exist", i, refs[i])
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

// shownWithIDs returns the tokens with their custom roles named by _id. A
// token made before tokens stored _ids may name roles by key; those that
// still exist are shown by _id (one lookup for all the tokens), the others
// as stored.
func (s *Service) shownWithIDs(ctx context.Context, tokens []Token) ([]Token, error) {
	var keys []string
	for _, t := range tokens {
		for _, ref := range t.CustomRoleIDs {
			if !role.LooksLikeID(ref) && !slices.Contains(keys, ref) {
				keys = append(keys, ref)
			}
		}
	}
	if len(keys) == 0 {
		return tokens, nil
	}
	ids, err := s.grants.RoleIDs(ctx, keys)
	if err != nil {
		return nil, err
	}
	idOf := make(map[string]string, len(keys))
	for i, k := range keys {
		if ids[i] != "" {
			idOf[k] = ids[i]
		}
	}
	out := make([]Token, len(tokens))
	for i, t := range tokens {
		shown := make([]string, len(t.CustomRoleIDs))
		for j, ref := range t.CustomRoleIDs {
			shown[j] = cmp.Or(idOf[ref], ref)
		}
		t.CustomRoleIDs = shown
		out[i] = t
	}
	return out, nil
}

// CreateFor issues a token for the caller: a member token of the caller's
// member, or a service token that belongs to no member.
func (s *Service) CreateFor(ctx context.Context, in Input) (Token, string, error) {
	p, _ := identity.From(ctx)
	ids, err := s.roleIDs(ctx, in.CustomRoleIDs)
	if err != nil {
		return Token{}, "", err
	}
	expiry, err := ParseMillis("expiry", in.Expiry)
	if err != nil {
		return Token{}, "", err
	}
	if expiry != 0 && expiry <= s.now().UnixMilli() {
		return Token{}, "", fault.New(fault.Invalid, "field \"expiry\" must be a future Unix time in milliseconds, not %d", expiry)
	}
	spec := Spec{Name: in.Name, Description: in.Description, Role: identity.Role(in.Role), CustomRoleIDs: ids,
		InlineRole: in.InlineRole, ServiceToken: in.ServiceToken, DefaultAPIVersion: in.DefaultAPIVersion, Expiry: expiry}
	if !in.ServiceToken {
		if p.MemberID == "" {
			return Token{}, "", fault.New(fault.Invalid, "the caller belongs to no member, so it cannot make a member token: set \"serviceToken\": true")
		}
		spec.MemberID = p.MemberID
	}
	t, value, writes, err := Issue(spec, p.AccountID, s.now())
	if err != nil {
		return Token{}, "", err
	}
	if err := s.check(ctx, t); err != nil {
		return Token{}, "", err
	}
	if _, err := s.log.Commit(ctx, CreateChange(t, writes)); err != nil {
		return Token{}, "", fmt.Errorf("create token %q: %w", t.Name, err)
	}
	return t, value, nil
}

// Get returns one token the caller may see, with when it was last used.
func (s *Service) Get(ctx context.Context, id string) (Token, error) {
	t, err := s.load(ctx, id)
	if err != nil {
		return Token{}, err
	}
	if p, _ := identity.From(ctx); !Visible(p, t) {
		return Token{}, fault.New(fault.NotFound, "access token %q not found", id)
	}
	if it, err := s.table.Get(ctx, lastUsedKey(id)); err == nil {
		t.LastUsed = decodeLastUsed(it)
	}
	shown, err := s.shownWithIDs(ctx, []Token{t})
	if err != nil {
		return Token{}, err
	}
	return shown[0], nil
}

// loadVisible is load, as not found for tokens the caller may not see.
func (s *Service) loadVisible(ctx context.Context, id string) (Token, error) {
	t, err := s.load(ctx, id)
	if err != nil {
		return Token{}, err
	}
	if p, _ := identity.From(ctx); !Visible(p, t) {
		return Token{}, fault.New(fault.NotFound, "access token %q not found", id)
	}
	return t, nil
}

func (s *Service) load(ctx context.Context, id string) (Token, error) {
	if id == "" || len(id) > 64 || strings.ContainsAny(id, "#\x00/") {
		return Token{}, fault.New(fault.NotFound, "access token %q not found", id)
	}
	return record.Load(ctx, s.table, store.TokenKey(id), fmt.Sprintf("access token %q", id), decode)
}

func decode(it store.Item) (Token, error) {
	var t Token
	if err := json.Unmarshal(it.Data, &t); err != nil {
		return Token{}, fmt.Errorf("decode access token %s: %w", it.PK, err)
	}
	t.Version = it.Version
	return t, nil
}

// List returns the caller's member tokens, or every token with all.
func (s *Service) List(ctx context.Context, all bool) ([]Token, error) {
	p, _ := identity.From(ctx)
	uses, err := record.All(ctx, s.table, store.Query{PK: store.MetaKey("").PK, SKPrefix: lastUsedPrefix}, "token use", func(it store.Item) (store.Item, error) { return it, nil })
	if err != nil {
		return nil, err
	}
	used := map[string]int64{}
	for _, it := range uses {
		used[strings.TrimPrefix(it.SK, lastUsedPrefix)] = decodeLastUsed(it)
	}
	stored, err := record.All(ctx, s.table, store.Query{Index: store.IndexGSI1, PK: store.TokensIndexPK}, "access tokens", decode)
	if err != nil {
		return nil, err
	}
	var out []Token
	for _, t := range stored {
		if all || t.MemberID != "" && t.MemberID == p.MemberID {
			t.LastUsed = used[t.ID]
			out = append(out, t)
		}
	}
	return s.shownWithIDs(ctx, out)
}

// Patch changes a token's name, description, rights or default version;
// its lookup item changes with it, atomically.
func (s *Service) Patch(ctx context.Context, id string, p patch.Patch) (Token, error) {
	if _, err := PatchActions(p); err != nil {
		return Token{}, err
	}
	old, err := s.loadVisible(ctx, id)
	if err != nil {
		return Token{}, err
	}
	// The patch applies to the token as clients see it: roles by _id.
	shown, err := s.shownWithIDs(ctx, []Token{old})
	if err != nil {
		return Token{}, err
	}
	old = shown[0]
	var next Token
	if err := p.ApplyTo(old.Public(), &next); err != nil {
		return Token{}, err
	}
	if !slices.Equal(next.CustomRoleIDs, old.CustomRoleIDs) {
		if next.CustomRoleIDs, err = s.roleIDs(ctx, next.CustomRoleIDs); err != nil {
			return Token{}, err
		}
	}
	next.ID, next.OwnerID, next.MemberID, next.ServiceToken = old.ID, old.OwnerID, old.MemberID, old.ServiceToken
	next.CreationDate, next.Expiry, next.Ending, next.Hash = old.CreationDate, old.Expiry, old.Ending, old.Hash
	next.GraceHash, next.GraceExpiry = old.GraceHash, old.GraceExpiry
	next.CustomRoleIDs = nonNil(next.CustomRoleIDs)
	if err := s.check(ctx, next); err != nil {
		return Token{}, err
	}
	actions := patch.ChangedFields(old.Public(), next.Public(), patchable)
	if len(actions) == 0 {
		return old, nil
	}
	next.LastModified, next.Version = s.now().UnixMilli(), old.Version+1
	writes, err := s.writes(ctx, next, store.IfVersion(old.Version))
	if err != nil {
		return Token{}, err
	}
	if next.GraceHash != "" {
		// The old value of a reset keeps working until its grace ends, with the token's current rights.
		grace := next
		grace.Expiry = next.GraceExpiry
		p, _ := identity.From(ctx)
		w, err := grace.lookupWrite(p.AccountID, next.GraceHash, store.Cond{})
		if err != nil {
			return Token{}, err
		}
		w.Item.TTL = time.UnixMilli(next.GraceExpiry).Unix() + 1
		writes = append(writes, w)
	}
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: writes, Kind: "token", Resource: resource(next), Actions: actions,
		Name: next.Name, Href: Href(id), TitleVerb: "updated the access token", Comment: p.Comment,
		Previous: old.Public(), Current: next.Public(), Delta: p.Raw,
		Conflict: fmt.Sprintf("access token %q was changed by another request; read it again and retry", id),
	})
	s.forget(old.Hash)
	s.forget(old.GraceHash)
	return next, err
}

// writes stores t and the lookup under its current hash.
func (s *Service) writes(ctx context.Context, t Token, c store.Cond) ([]store.Write, error) {
	p, _ := identity.From(ctx)
	data, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("encode access token: %w", err)
	}
	tk := store.TokenKey(t.ID)
	gpk, gsk := store.TokenIndexKeys(t.ID)
	lk, err := t.lookupWrite(p.AccountID, t.Hash, store.IfExists())
	if err != nil {
		return nil, err
	}
	return []store.Write{store.Put(store.Item{PK: tk.PK, SK: tk.SK, GSI1PK: gpk, GSI1SK: gsk, Version: t.Version, Data: data}, c), lk}, nil
}

// Delete removes a token; it stops working everywhere within CacheTTL.
func (s *Service) Delete(ctx context.Context, id string) error {
	t, err := s.loadVisible(ctx, id)
	if err != nil {
		return err
	}
	writes := []store.Write{
		store.Delete(store.TokenKey(id), store.IfVersion(t.Version)),
		store.Delete(store.TokenHashKey(t.Hash), store.Cond{}),
		store.Delete(lastUsedKey(id), store.Cond{}),
	}
	if t.GraceHash != "" {
		writes = append(writes, store.Delete(store.TokenHashKey(t.GraceHash), store.Cond{}))
	}
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: writes,
		Kind:   "token", Resource: resource(t), Actions: []string{"deleteAccessToken"},
		Name: t.Name, Href: Href(id), TitleVerb: "deleted the access token", Previous: t.Public(),
		Conflict: fmt.Sprintf("access token %q was changed by another request; try again", id),
	})
	s.forget(t.Hash)
	s.forget(t.GraceHash)
	return err
}

// Reset gives a token a new value. The old value stops working at once,
// or at oldExpiry (Unix ms) when that is in the future. Only a caller who
// holds the token's rights may reset it, since the answer carries the value.
func (s *Service) Reset(ctx context.Context, id string, oldExpiry int64) (Token, string, error) {
	old, err := s.loadVisible(ctx, id)
	if err != nil {
		return Token{}, "", err
	}
	if err := s.check(ctx, old); err != nil {
		return Token{}, "", err
	}
	now := s.now()
	if oldExpiry != 0 && oldExpiry <= now.UnixMilli() {
		return Token{}, "", fault.New(fault.Invalid, "query parameter \"expiry\" must be a future Unix time in milliseconds")
	}
	value := NewValue()
	next := old
	next.Hash, next.Ending = Hash(value), value[len(value)-4:]
	next.GraceHash, next.GraceExpiry = "", 0
	next.LastModified, next.Version = now.UnixMilli(), old.Version+1
	p, _ := identity.From(ctx)
	newLookup, err := next.lookupWrite(p.AccountID, next.Hash, store.IfNotExists())
	if err != nil {
		return Token{}, "", err
	}
	writes := []store.Write{newLookup}
	if old.GraceHash != "" {
		// A second reset ends the first one's grace.
		writes = append(writes, store.Delete(store.TokenHashKey(old.GraceHash), store.Cond{}))
	}
	if oldExpiry == 0 {
		writes = append(writes, store.Delete(store.TokenHashKey(old.Hash), store.Cond{}))
	} else {
		next.GraceHash, next.GraceExpiry = old.Hash, oldExpiry
		grace := next
		grace.Expiry = oldExpiry
		w, err := grace.lookupWrite(p.AccountID, old.Hash, store.Cond{})
		if err != nil {
			return Token{}, "", err
		}
		w.Item.TTL = time.UnixMilli(oldExpiry).Unix() + 1
		writes = append(writes, w)
	}
	data, err := json.Marshal(next)
	if err != nil {
		return Token{}, "", fmt.Errorf("encode access token: %w", err)
	}
	tk := store.TokenKey(id)
	gpk, gsk := store.TokenIndexKeys(id)
	writes = append([]store.Write{store.Put(store.Item{PK: tk.PK, SK: tk.SK, GSI1PK: gpk, GSI1SK: gsk, Version: next.Version, Data: data}, store.IfVersion(old.Version))}, writes...)
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: writes, Kind: "token", Resource: resource(next), Actions: []string{"resetAccessToken"},
		Name: next.Name, Href: Href(id), TitleVerb: "reset the access token", Previous: old.Public(), Current: next.Public(),
		Conflict: fmt.Sprintf("access token %q was changed by another request; try again", id),
	})
	if err != nil {
		return Token{}, "", err
	}
	s.forget(old.Hash)
	s.forget(old.GraceHash)
	return next, value, nil
}

// lastUsedPrefix starts the META items that remember when each token was
// last used; they live in META so that read-only functions may write them.
const lastUsedPrefix = "token-last-used#"

func lastUsedKey(id string) store.Key { return store.MetaKey(lastUsedPrefix + id) }

func decodeLastUsed(it store.Item) int64 {
	var v struct {
		At int64 `json:"at"`
	}
	_ = json.Unmarshal(it.Data, &v)
	return v.At
}

// LastUsedInterval bounds how often a token's lastUsed is written.
const LastUsedInterval = time.Minute

// memberLastSeenPrefix starts the META items that remember when a member
// was last seen: when one of its tokens was last used, and which. An item
// of a removed member is left behind and never read again.
const memberLastSeenPrefix = "member-last-seen#"

func memberLastSeenKey(id string) store.Key { return store.MetaKey(memberLastSeenPrefix + id) }

// LastSeen is when a member was last seen (Unix ms) and through which token.
type LastSeen struct {
	At      int64  `json:"at"`
	TokenID string `json:"tokenId"`
}

// MemberLastSeen returns when the member was last seen, and false when it
// never was (or not since flagplane began recording it).
func (s *Service) MemberLastSeen(ctx context.Context, memberID string) (LastSeen, bool, error) {
	it, err := s.table.Get(ctx, memberLastSeenKey(memberID))
	if errors.Is(err, store.ErrNotFound) {
		return LastSeen{}, false, nil
	}
	if err != nil {
		return LastSeen{}, false, fmt.Errorf("read when member %s was last seen: %w", memberID, err)
	}
	var v LastSeen
	if err := json.Unmarshal(it.Data, &v); err != nil {
		return LastSeen{}, false, fmt.Errorf("decode when member %s was last seen: %w", memberID, err)
	}
	return v, v.At > 0, nil
}

// MembersLastSeen returns when each member seen so far was last seen, by member id, with one Query.
func (s *Service) MembersLastSeen(ctx context.Context) (map[string]LastSeen, error) {
	items, err := record.All(ctx, s.table, store.Query{PK: store.MetaKey("").PK, SKPrefix: memberLastSeenPrefix}, "member last seen", func(it store.Item) (store.Item, error) { return it, nil })
	if err != nil {
		return nil, err
	}
	out := make(map[string]LastSeen, len(items))
	for _, it := range items {
		var v LastSeen
		if json.Unmarshal(it.Data, &v) == nil && v.At > 0 {
			out[strings.TrimPrefix(it.SK, memberLastSeenPrefix)] = v
		}
	}
	return out, nil
}

// touch records that token id (of member memberID, "" for a service token)
// was used, and so that its member was seen, at most once per
// LastUsedInterval per process, and never fails the request it rides on.
func (a *Authenticator) touch(ctx context.Context, id, memberID string, now time.Time) {
	a.mu.Lock()
	last, seen := a.touched[id]
	if seen && now.Sub(last) < LastUsedInterval {
		a.mu.Unlock()
		return
	}
	if len(a.touched) >= maxCached {
		a.touched = map[string]time.Time{}
	}
	a.touched[id] = now
	a.mu.Unlock()
	k := lastUsedKey(id)
	_ = a.table.Put(ctx, store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: []byte(fmt.Sprintf(`{"at":%d}`, now.UnixMilli()))}, store.Cond{})
	if memberID != "" {
		data, _ := json.Marshal(LastSeen{At: now.UnixMilli(), TokenID: id}) // two plain fields always encode
		mk := memberLastSeenKey(memberID)
		_ = a.table.Put(ctx, store.Item{PK: mk.PK, SK: mk.SK, Version: 1, Data: data}, store.Cond{})
	}
}
