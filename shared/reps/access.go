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
