// Package infra describes the deployment. The CDK stack (the
// infrastructure issue) builds on these derivations, so its routes and
// functions come from the catalog and can never drift from the code.
package infra

import (
	"github.com/flagplane/flagplane/shared/catalog"
)

// Route is one API Gateway HTTP API route and the function that serves it.
type Route struct {
	// Key is the route key, e.g. "GET /api/v2/projects/{projectKey}".
	Key string
	// Function is the name of the group's function (its folder under functions/).
	Function string
}

// MaxRoutes is API Gateway's default limit of routes per HTTP API.
const MaxRoutes = 300

// Routes returns one route per catalog operation, bar the local-only ones
// (the SDK stream and the REPORT forms, which API Gateway cannot serve).
func Routes() []Route {
	ops := catalog.All()
	out := make([]Route, 0, len(ops))
	for _, op := range ops {
		if op.LocalOnly {
			continue
		}
		out = append(out, Route{Key: op.Method + " " + op.Path, Function: op.Group})
	}
	return out
}

// Functions returns the name of every resource-group function.
func Functions() []string { return catalog.Groups() }
