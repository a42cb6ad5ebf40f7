// Package token issues access tokens and resolves a presented token to the
// principal it stands for. Only a SHA-256 hash of a token's value is
// stored; the value is shown once, when it is made.
package token

import (
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
	"github.com/flagplane/flagplane/shared/store"
)

// Token is an access token as stored (never with its value).
type Token struct {
	ID                string        `json:"_id"`
	OwnerID           string        `json:"ownerId,omitempty"`
	MemberID          string        `json:"memberId,omitempty"`
	Name              string        `json:"name"`
	Description       string        `json:"description,omitempty"`
	CreationDate      int64         `json:"creationDate"`
	LastModified      int64         `json:"lastModified"`
	Role              identity.Role `json:"role"`
	ServiceToken      bool          `json:"serviceToken"`
	DefaultAPIVersion int           `json:"defaultApiVersion"`
	Expiry            int64         `json:"expiry,omitempty"`
	Ending            string        `json:"ending"`
	// Hash finds the token's lookup item; it never leaves the table (see Public).
	Hash string `json:"hash,omitempty"`
}

// Public is the token without its hash, for audit entries and responses.
func (t Token) Public() Token {
	t.Hash = ""
	return t
}

// lookup is the item found by a token's hash: what authentication needs, in one read.
type lookup struct {
	ID           string        `json:"id"`
	Name         string        `json:"name"`
	Role         identity.Role `json:"role"`
	MemberID     string        `json:"memberId,omitempty"`
	ServiceToken bool          `json:"serviceToken"`
	Ending       string        `json:"ending"`
	Expiry       int64         `json:"expiry,omitempty"`
	AccountID    string        `json:"accountId"`
}

// NewValue returns a fresh token value, api-<uuid v4>.
func NewValue() string { return "api-" + uuid.NewString() }

// Hash is the stored form of a token value.
func Hash(value string) string {
	sum := sha256.Sum256([]byte(value))
	return hex.EncodeToString(sum[:])
}

// Spec is what a new token is made from.
type Spec struct {
	Name         string
	Role         identity.Role
	ServiceToken bool
	MemberID     string
	Expiry       int64 // Unix ms; 0 never
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
		CreationDate:      ms,
		LastModified:      ms,
		Role:              spec.Role,
		ServiceToken:      spec.ServiceToken,
		DefaultAPIVersion: 20240415,
		Expiry:            spec.Expiry,
		Ending:            value[len(value)-4:],
		Hash:              Hash(value),
	}
	tokData, err := json.Marshal(t)
	if err != nil {
		return Token{}, "", nil, fmt.Errorf("encode token: %w", err)
	}
	lkData, err := json.Marshal(lookup{ID: t.ID, Name: t.Name, Role: t.Role, MemberID: t.MemberID,
		ServiceToken: t.ServiceToken, Ending: t.Ending, Expiry: t.Expiry, AccountID: accountID})
	if err != nil {
		return Token{}, "", nil, fmt.Errorf("encode token lookup: %w", err)
	}
	tk, hk := store.TokenKey(t.ID), store.TokenHashKey(t.Hash)
	gpk, gsk := store.TokenIndexKeys(t.ID)
	writes := []store.Write{
		store.Put(store.Item{PK: tk.PK, SK: tk.SK, GSI1PK: gpk, GSI1SK: gsk, Version: 1, Data: tokData}, store.IfNotExists()),
		store.Put(store.Item{PK: hk.PK, SK: hk.SK, Version: 1, Data: lkData}, store.IfNotExists()),
	}
	return t, value, writes, nil
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

// Authenticator resolves token values with one read, cached briefly so a
// warm process does not read the table on every request.
type Authenticator struct {
	table store.Table
	ttl   time.Duration
	now   func() time.Time

	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	rec     lookup
	fetched time.Time
}

// CacheTTL is how long a resolved token is trusted without a read; a
// deleted token stops working in other processes within this time.
const CacheTTL = 30 * time.Second

// maxCached bounds the cache; it is cleared when full.
const maxCached = 10000

// NewAuthenticator returns an Authenticator reading table.
func NewAuthenticator(table store.Table) *Authenticator {
	return &Authenticator{table: table, ttl: CacheTTL, now: time.Now, cache: map[string]cached{}}
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
		c = cached{fetched: now}
		if err := json.Unmarshal(it.Data, &c.rec); err != nil {
			return identity.Principal{}, fmt.Errorf("decode access token lookup: %w", err)
		}
		a.mu.Lock()
		if len(a.cache) >= maxCached {
			a.cache = map[string]cached{}
		}
		a.cache[h] = c
		a.mu.Unlock()
	}
	if c.rec.Expiry > 0 && now.UnixMilli() >= c.rec.Expiry {
		return identity.Principal{}, fault.New(fault.Unauthorized, "the access token has expired")
	}
	return identity.Principal{
		TokenID: c.rec.ID, TokenName: c.rec.Name, TokenEnding: c.rec.Ending, ServiceToken: c.rec.ServiceToken,
		MemberID: c.rec.MemberID, Role: c.rec.Role, AccountID: c.rec.AccountID,
	}, nil
}
