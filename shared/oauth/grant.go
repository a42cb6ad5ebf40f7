package oauth

import (
	"context"
	"crypto/subtle"
	"fmt"
	"strings"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/token"
)

// Error codes of RFC 6749 §5.2 the token endpoint answers with.
const (
	InvalidRequest       = "invalid_request"
	InvalidClient        = "invalid_client"
	UnauthorizedClient   = "unauthorized_client"
	UnsupportedGrantType = "unsupported_grant_type"
	InvalidScope         = "invalid_scope"
)

// Error is a token request refused as RFC 6749 §5.2 describes.
type Error struct {
	Code        string
	Description string
}

func (e *Error) Error() string { return e.Code + ": " + e.Description }

func refuse(code, format string, args ...any) *Error {
	return &Error{Code: code, Description: fmt.Sprintf(format, args...)}
}

// GrantClientCredentials is the one grant type the token endpoint serves.
const GrantClientCredentials = "client_credentials"

// Scopes a token may be requested with; each names the built-in role that
// caps the token. DefaultScope applies when the request names none.
const (
	ScopeReader  = "reader"
	ScopeWriter  = "writer"
	DefaultScope = ScopeReader
)

// TokenRequest is a parsed client_credentials request: the grant type, the
// authenticated client's credentials, however they were sent, and the scope.
type TokenRequest struct {
	GrantType    string
	ClientID     string
	ClientSecret string
	Scope        string
}

// Issued is a successful token response.
type Issued struct {
	AccessToken string
	TokenType   string
	ExpiresIn   int64 // seconds
	Scope       string
}

// dummyHash is compared with when the client does not exist, so an unknown
// id costs the same as a wrong secret.
var dummyHash = token.Hash("no such client")

// Token runs the client_credentials grant (RFC 6749 §4.4): it checks the
// grant type and scope, authenticates the client by its secret in constant
// time, and issues a bearer token that acts for the client's member, capped
// by the scope's built-in role. Refusals are *Error; anything else is an
// internal failure.
func (s *Service) Token(ctx context.Context, req TokenRequest) (Issued, error) {
	switch req.GrantType {
	case "":
		return Issued{}, refuse(InvalidRequest, "parameter grant_type is required; this server supports %s", GrantClientCredentials)
	case GrantClientCredentials:
	default:
		return Issued{}, refuse(UnsupportedGrantType, "grant_type %q is not supported; this server supports only %s", Clip(req.GrantType), GrantClientCredentials)
	}
	scope := strings.TrimSpace(req.Scope)
	switch scope {
	case "":
		scope = DefaultScope
	case ScopeReader, ScopeWriter:
	default:
		return Issued{}, refuse(InvalidScope, "scope %q is not one of %s or %s (request one)", Clip(req.Scope), ScopeReader, ScopeWriter)
	}
	c, err := s.authenticate(ctx, req.ClientID, req.ClientSecret)
	if err != nil {
		return Issued{}, err
	}
	if _, err := s.members.Get(ctx, c.MemberID); fault.Is(err, fault.NotFound) {
		return Issued{}, refuse(UnauthorizedClient, "the member who created this client is no longer a member of the account; a member must create a new client")
	} else if err != nil {
		return Issued{}, fmt.Errorf("member of OAuth client %s: %w", c.ID, err)
	}
	now := s.now()
	value, w, err := token.IssueBearer(token.Spec{Name: "oauth:" + c.ID, Role: identity.Role(scope), MemberID: c.MemberID}, c.AccountID, now, TokenTTL)
	if err != nil {
		return Issued{}, err
	}
	if err := s.table.Put(ctx, w.Item, w.Cond); err != nil {
		return Issued{}, fmt.Errorf("store access token of OAuth client %s: %w", c.ID, err)
	}
	return Issued{AccessToken: value, TokenType: "Bearer", ExpiresIn: int64(TokenTTL.Seconds()), Scope: scope}, nil
}

// authenticate finds the client and checks its secret; every failure is
// the same invalid_client, so a caller learns nothing about which part was wrong.
func (s *Service) authenticate(ctx context.Context, id, secret string) (*Client, error) {
	if id == "" || secret == "" {
		return nil, refuse(InvalidClient, "client authentication is required: send client_id and client_secret with HTTP Basic authentication or as form parameters")
	}
	failed := refuse(InvalidClient, "client authentication failed: unknown client or wrong secret")
	c, err := s.Get(ctx, id)
	want := dummyHash
	switch {
	case err == nil:
		want = c.secretHash
	case !fault.Is(err, fault.NotFound):
		return nil, err
	}
	match := subtle.ConstantTimeCompare([]byte(token.Hash(secret)), []byte(want)) == 1
	if err != nil || !match {
		return nil, failed
	}
	return c, nil
}

// Clip shortens a value echoed in an error description.
func Clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
