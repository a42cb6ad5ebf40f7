package reps

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/policy"
)

// Access is the caller's `_access` object on a resource: which of actions
// its rights allow there.
func Access(r *http.Request, res policy.Resource, actions []string) policy.Access {
	p, _ := identity.From(r.Context())
	return p.Access(res, actions)
}

// On is actions decided on one resource, a part of an `_access` object
// whose actions are not all checked on the same resource.
type On struct {
	Resource policy.Resource
	Actions  []string
}

// AccessOn is the caller's `_access` object made of parts: each part's
// actions decided on its resource, as the operation performing the action
// checks it (a project's createFlag on proj/<p>:env/*:flag/*, not on
// proj/<p>, since statements match resources segment for segment).
func AccessOn(r *http.Request, parts ...On) policy.Access {
	if len(parts) == 1 {
		return Access(r, parts[0].Resource, parts[0].Actions)
	}
	p, _ := identity.From(r.Context())
	out := policy.Access{Allowed: []policy.AccessEntry{}, Denied: []policy.AccessEntry{}}
	for _, part := range parts {
		a := p.Access(part.Resource, part.Actions)
		out.Allowed = append(out.Allowed, a.Allowed...)
		out.Denied = append(out.Denied, a.Denied...)
	}
	return out
}
