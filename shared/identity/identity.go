// Package identity describes who is calling: the principal resolved from
// the access token of a request, carried in the request context.
package identity

import (
	"context"

	"github.com/flagplane/flagplane/shared/policy"
)

// Role is a built-in role of a token or member.
type Role string

const (
	RoleReader   Role = "reader"
	RoleWriter   Role = "writer"
	RoleAdmin    Role = "admin"
	RoleOwner    Role = "owner"
	RoleNoAccess Role = "no_access"
)

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
	// MemberRole is the built-in role of the token's member; empty for service tokens.
	MemberRole Role
	Role       Role
	AccountID  string
	// Rights decides what the caller may do; nil means nothing.
	Rights Rights
}

// ViewAction is the action of reading inside a project. It is allowed by
// default to every role but no_access; statements may still deny or allow it.
const ViewAction = "viewProject"

// Rights answers whether the caller may perform an action on a resource,
// and builds the `_access` object of a resource for the caller.
type Rights interface {
	Decide(r policy.Resource, action string) policy.Decision
	Access(r policy.Resource, actions []string) policy.Access
}

// Decide is p.Rights.Decide, denying everything when p has no rights.
func (p Principal) Decide(r policy.Resource, action string) policy.Decision {
	if p.Rights == nil {
		return policy.Decision{}
	}
	return p.Rights.Decide(r, action)
}

// Access is p.Rights.Access, denying every action when p has no rights.
func (p Principal) Access(r policy.Resource, actions []string) policy.Access {
	if p.Rights == nil {
		denied := make([]policy.AccessEntry, len(actions))
		for i, a := range actions {
			denied[i] = policy.AccessEntry{Action: a}
		}
		return policy.Access{Allowed: []policy.AccessEntry{}, Denied: denied}
	}
	return p.Rights.Access(r, actions)
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
