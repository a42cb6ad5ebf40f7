// Package identity describes who is calling: the principal resolved from
// the access token of a request, carried in the request context.
package identity

import "context"

// Role is a built-in role of a token or member.
type Role string

const (
	RoleReader   Role = "reader"
	RoleWriter   Role = "writer"
	RoleAdmin    Role = "admin"
	RoleOwner    Role = "owner"
	RoleNoAccess Role = "no_access"
)

// CanWrite reports whether the role may call write operations.
func (r Role) CanWrite() bool { return r == RoleWriter || r == RoleAdmin || r == RoleOwner }

// CanRead reports whether the role may call read operations.
func (r Role) CanRead() bool { return r != RoleNoAccess && r != "" }

// Principal is the caller of one request.
type Principal struct {
	TokenID      string
	TokenName    string
	TokenEnding  string // last characters of the token value, safe to show
	ServiceToken bool
	MemberID     string
	MemberEmail  string
	Role         Role
	AccountID    string
}

type ctxKey struct{}

// With returns a context carrying p.
func With(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// From returns the principal of ctx; ok is false for unauthenticated contexts.
func From(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(ctxKey{}).(Principal)
	return p, ok
}
