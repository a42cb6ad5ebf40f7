// Package oauth holds OAuth 2.0 clients and the client_credentials grant
// (RFC 6749 §4.4) that exchanges a client's id and secret for a
// short-lived bearer access token.
//
// A client acts for the member who created it: the tokens it obtains carry
// that member's rights, capped by the built-in role the requested scope
// names (reader or writer). Only a SHA-256 hash of a client's secret is
// stored; the secret is shown once, when the client is made.
package oauth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/member"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/resource"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/token"
)

// Client is one OAuth 2.0 client. Its secret hash is kept out of its JSON
// form, so neither responses nor audit entries can carry it.
type Client struct {
	ID          string `json:"_clientId"`
	AccountID   string `json:"_accountId"`
	Name        string `json:"name"`
	Description string `json:"description"`
	RedirectURI string `json:"redirectUri"`
	// CreationDate is Unix milliseconds.
	CreationDate int64 `json:"_creationDate"`
	// MemberID is the member who created the client and for whom it acts.
	MemberID string `json:"_memberId"`
	Version  int64  `json:"-"`

	secretHash string
}

// stored is the stored form: the client and the hash of its secret.
type stored struct {
	Client
	SecretHash string `json:"secretHash"`
}

// Input is the body of a create request.
type Input struct {
	Name        *string `json:"name"`
	Description string  `json:"description"`
	RedirectURI *string `json:"redirectUri"`
}

// Creator is who creates a client: the calling member and their account.
type Creator struct {
	MemberID  string
	AccountID string
}

// Href is the client's API path.
func Href(id string) string { return CollectionHref + "/" + id }

// CollectionHref is the API path of the list of clients.
const CollectionHref = "/api/v2/oauth/clients"

// MaxDescription and MaxRedirectURI bound the free-text fields.
const (
	MaxDescription = 1024
	MaxRedirectURI = 2048
)

func (c *Client) validate() error {
	if err := environment.ValidName("name", c.Name); err != nil {
		return err
	}
	if len(c.Description) > MaxDescription {
		return fault.New(fault.Invalid, "field \"description\" must be at most %d characters", MaxDescription)
	}
	return ValidRedirectURI("redirectUri", c.RedirectURI)
}

// ValidRedirectURI accepts an absolute https URL, or an http URL whose host
// is a loopback address (127.0.0.0/8, ::1) or localhost (RFC 8252 §7.3),
// without userinfo or fragment (RFC 6749 §3.1.2).
func ValidRedirectURI(field, raw string) error {
	bad := func(why string) error {
		return fault.New(fault.Invalid, "field %q must be an absolute https URL (http only for a loopback host: 127.0.0.0/8, ::1 or localhost): %s", field, why)
	}
	if raw == "" {
		return fault.New(fault.Invalid, "field %q is required", field)
	}
	if len(raw) > MaxRedirectURI {
		return bad(fmt.Sprintf("it is longer than %d characters", MaxRedirectURI))
	}
	if strings.Contains(raw, "#") {
		return bad("it must not have a fragment (#...)")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad(fmt.Sprintf("%q is not a URL", raw))
	}
	if !u.IsAbs() || u.Opaque != "" || u.Host == "" {
		return bad(fmt.Sprintf("%q is not an absolute URL with a host", raw))
	}
	if u.User != nil {
		return bad("it must not carry a user name or password")
	}
	host := u.Hostname()
	if host == "" {
		return bad(fmt.Sprintf("%q has no host", raw))
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopback(host) {
			return nil
		}
		return bad(fmt.Sprintf("http is allowed only for a loopback host, not %q", host))
	default:
		return bad(fmt.Sprintf("scheme %q is not allowed", u.Scheme))
	}
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback()
}

func (c *Client) item() (store.Item, error) {
	data, err := json.Marshal(stored{Client: *c, SecretHash: c.secretHash})
	gpk, gsk := store.OAuthClientIndexKeys(c.ID)
	return store.Item{GSI1PK: gpk, GSI1SK: gsk, Data: data}, err
}

// kind describes OAuth clients to the resource kit.
var kind = resource.Kind[Client]{
	Audit: "oauth-client", Noun: "OAuth client", Created: "createOAuthClient", Deleted: "deleteOAuthClient",
	Patchable: patchable, Called: "an OAuth client",
	Item: (*Client).item, Decode: decode,
	Version: func(c *Client) int64 { return c.Version },
	Name:    func(c *Client) string { return c.Name },
}

// ref names the client with id; an id that is no canonical UUID names none.
func ref(id string) resource.Ref {
	return resource.Ref{Key: store.OAuthClientKey(id), What: fmt.Sprintf("OAuth client %q", id), Resource: "oauth-client/" + id, Href: Href(id),
		Malformed: !validID(id)}
}

func decode(it store.Item) (*Client, error) {
	var r stored
	if err := json.Unmarshal(it.Data, &r); err != nil {
		return nil, fmt.Errorf("decode OAuth client %s: %w", it.PK, err)
	}
	c := r.Client
	c.secretHash, c.Version = r.SecretHash, it.Version
	return &c, nil
}

// Members finds the member a client acts for.
type Members interface {
	Get(ctx context.Context, id string) (*member.Member, error)
}

// TokenTTL is how long an access token of the client_credentials grant lives.
const TokenTTL = time.Hour

// Service manages OAuth clients and exchanges their credentials for tokens.
type Service struct {
	table   store.Table
	clients resource.Kit[Client]
	members Members
	now     func() time.Time
}

// NewService returns the OAuth service.
func NewService(table store.Table, log *audit.Log, members Members, now func() time.Time) *Service {
	return &Service{table: table, clients: resource.New(&kind, table, log), members: members, now: now}
}

// NewSecret returns a fresh client secret: 32 random bytes, base64url.
func NewSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Create stores a new client acting for the creating member and returns it
// with its secret, which is not kept and cannot be read again.
func (s *Service) Create(ctx context.Context, by Creator, in Input) (*Client, string, error) {
	if by.MemberID == "" {
		return nil, "", fault.New(fault.Invalid, "an OAuth client acts for the member who creates it, and this access token belongs to no member (a service token): create the client with a member's token")
	}
	if in.Name == nil {
		return nil, "", fault.New(fault.Invalid, "field \"name\" is required")
	}
	if in.RedirectURI == nil {
		return nil, "", fault.New(fault.Invalid, "field \"redirectUri\" is required")
	}
	secret := NewSecret()
	c := &Client{ID: uuid.NewString(), AccountID: by.AccountID, Name: *in.Name, Description: in.Description,
		RedirectURI: *in.RedirectURI, CreationDate: s.now().UnixMilli(), MemberID: by.MemberID,
		secretHash: token.Hash(secret)}
	if err := c.validate(); err != nil {
		return nil, "", err
	}
	c, err := s.clients.Create(ctx, ref(c.ID), c, resource.Change{Exists: fmt.Sprintf("an OAuth client with id %q already exists; try again", c.ID)})
	if err != nil {
		return nil, "", err
	}
	return c, secret, nil
}

// validID is the form of every client id: a canonical UUID.
func validID(id string) bool {
	u, err := uuid.Parse(id)
	return err == nil && u.String() == id
}

// Get returns one client.
func (s *Service) Get(ctx context.Context, id string) (*Client, error) {
	return s.clients.Get(ctx, ref(id))
}

// List returns every client, ordered by id.
func (s *Service) List(ctx context.Context) ([]*Client, error) {
	return record.All(ctx, s.table, store.Query{Index: store.IndexGSI1, PK: store.OAuthClientsIndexPK}, "OAuth clients", decode)
}

// Actions are the actions `_access` reports on an OAuth client.
var Actions = []string{"updateName", "updateDescription", "updateRedirectUri", "deleteOAuthClient"}

// patchable maps the fields a client patch may touch to their actions.
var patchable = map[string]string{
	"name":        "updateName",
	"description": "updateDescription",
	"redirectUri": "updateRedirectUri",
}

// PatchActions returns the actions a JSON patch of a client performs.
func PatchActions(p patch.Patch) ([]string, error) { return kind.PatchActions(p) }

// Patch applies a JSON patch to a client on the version it was read at.
func (s *Service) Patch(ctx context.Context, id string, p patch.Patch) (*Client, error) {
	return s.clients.Patch(ctx, ref(id), p, func(old, next *Client) error {
		next.ID, next.AccountID, next.CreationDate, next.MemberID, next.secretHash = old.ID, old.AccountID, old.CreationDate, old.MemberID, old.secretHash
		return next.validate()
	})
}

// Delete removes a client: its credentials stop working at once. Access
// tokens it already obtained are not revoked; they expire within TokenTTL.
func (s *Service) Delete(ctx context.Context, id string) error {
	return s.clients.Delete(ctx, ref(id), resource.Change{})
}
