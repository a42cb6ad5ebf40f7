// Package catalog lists every operation of the API. The local server, each
// Lambda's router, the infrastructure routes and authorization are all
// derived from this one list, so they cannot drift apart.
package catalog

import (
	"fmt"
	"sort"
)

// Scope is the token scope an operation needs.
type Scope string

const (
	Read  Scope = "read"
	Write Scope = "write"
)

// Operation is one method and path of the API.
type Operation struct {
	// ID is the operation id of the reference API (camelCase).
	ID string
	// Group is the resource group; each group is one Lambda function.
	Group string
	// Method is the HTTP method in upper case.
	Method string
	// Path is the route pattern with {name} segments, starting with /api/v2
	// (Public operations may live elsewhere, e.g. /trust/oauth/token, /healthz).
	Path string
	// Beta operations require the header SVC-API-Version: beta.
	Beta bool
	// Scope is read for operations that change nothing, write otherwise.
	Scope Scope
	// Resource is the resource specifier the operation acts on, with {param}
	// segments filled from the path: "proj/{projectKey}:env/{environmentKey}".
	// For a create it names the new resource ("proj/{projectKey}:env/*" when
	// the key is in the body). Empty only for a Public operation that acts on
	// no resource (the health check).
	Resource string
	// Action is the policy action the operation performs, e.g.
	// "createEnvironment"; "viewProject" for reads inside a project; empty
	// for account-level reads, which every role but no_access may make.
	Action string
	// BodyActions marks updates whose actions follow from the body (the
	// paths of a JSON patch, the kinds of semantic-patch instructions); the
	// handler's resource kind supplies them and Action is the fallback.
	BodyActions bool
	// Public operations take no access token; the operation authenticates
	// its caller itself (the OAuth token endpoint checks client credentials).
	Public bool
	// LocalOnly operations are served by the local server alone; the stack
	// routes no request to them (API Gateway and Lambda hold no long-lived
	// streams, and API Gateway routes no REPORT method).
	LocalOnly bool
	// Console operations serve the web console (its page and files), not
	// the API: routed like every operation (locally and by API Gateway),
	// they are Public and left out of what describes or counts the API
	// (the OpenAPI document, API, LaunchDarkly's client coverage).
	Console bool
}

// Pattern is the operation's http.ServeMux pattern, e.g. "GET /api/v2/projects".
// The root path is the root alone ("GET /{$}"): ServeMux's "/" would match
// every path, and unknown paths must stay the API's 404.
func (o Operation) Pattern() string {
	if o.Path == "/" {
		return o.Method + " /{$}"
	}
	return o.Method + " " + o.Path
}

// All returns every operation, ordered by group then path then method.
func All() []Operation {
	out := append([]Operation(nil), operations...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Method < b.Method
	})
	return out
}

// API returns the operations of the API: every operation but the
// console's, in All's order.
func API() []Operation {
	var out []Operation
	for _, op := range All() {
		if !op.Console {
			out = append(out, op)
		}
	}
	return out
}

// Groups returns the names of all groups, sorted.
func Groups() []string {
	seen := map[string]bool{}
	var out []string
	for _, op := range operations {
		if !seen[op.Group] {
			seen[op.Group] = true
			out = append(out, op.Group)
		}
	}
	sort.Strings(out)
	return out
}

// Group returns the operations of one group, or an error naming an unknown group.
func Group(name string) ([]Operation, error) {
	var out []Operation
	for _, op := range All() {
		if op.Group == name {
			out = append(out, op)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("catalog has no group %q", name)
	}
	return out, nil
}

// ByID returns the operation with the id.
func ByID(id string) (Operation, bool) {
	for _, op := range operations {
		if op.ID == id {
			return op, true
		}
	}
	return Operation{}, false
}
