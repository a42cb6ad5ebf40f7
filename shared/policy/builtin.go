package policy

import (
	"slices"
	"strings"

	"github.com/flagplane/flagplane/shared/fault"
)

// Built-in role names, as tokens and members carry them.
const (
	NoAccess = "no_access"
	Reader   = "reader"
	Writer   = "writer"
	Admin    = "admin"
	Owner    = "owner"
)

// rank orders built-in roles by what they may do.
var rank = map[string]int{NoAccess: 0, Reader: 1, Writer: 2, Admin: 3, Owner: 4}

// RoleRank orders built-in roles: no_access < reader < writer < admin <
// owner. It lets the token layer refuse a token whose built-in role is
// above its creator's without evaluating statements. Unknown role: 400.
func RoleRank(role string) (int, error) {
	r, ok := rank[role]
	if !ok {
		return 0, unknownRole(role)
	}
	return r, nil
}

func unknownRole(role string) error {
	return fault.New(fault.Invalid, "role %s is not one of no_access, reader, writer, admin, owner", quoteShort(role))
}

// shapes lists every resource shape the API builds, as kind paths from the
// outermost container in. Because a specifier matches only resources of its
// own depth, "everything" is one wildcard specifier per shape; a new kind of
// resource is one new line here. The layout follows LaunchDarkly where it
// has one:
//
//   - projects hold environments and the project-wide kinds (release
//     pipelines and policies, context kinds, AI Configs, metrics, layers,
//     views) and project-wide flag settings (proj/*:flag/*, for operations
//     that are not per environment such as creating or renaming a flag);
//   - environments hold per-environment flag configuration, segments,
//     experiments, holdouts, warehouse destinations;
//   - integrations are named by integration key (`integration/datadog`),
//     with the configuration's tags on the segment; per project
//     (flag import) and per environment (big segment stores, delivery
//     configurations) they nest under proj/ and env/;
//   - personal access tokens belong to their member (member/*:token/*),
//     service tokens are top level (service-token/*), as are members, roles,
//     teams, webhooks, Relay Proxy configurations, applications, code
//     reference repositories, templates and OAuth clients.
var shapes = [][]string{
	{"proj"},
	{"proj", "env"},
	{"proj", "env", "flag"},
	{"proj", "env", "segment"},
	{"proj", "env", "experiment"},
	{"proj", "env", "holdout"},
	{"proj", "env", "destination"},
	{"proj", "env", "integration"},
	{"proj", "env", "adaptive-trigger"},
	// An AI Config in one environment: approval requests for AI Configs act there.
	{"proj", "env", "aiconfig"},
	{"proj", "flag"},
	{"proj", "release-pipeline"},
	{"proj", "release-policy"},
	{"proj", "context-kind"},
	{"proj", "aiconfig"},
	{"proj", "ai-model-config"},
	{"proj", "insight-repository"},
	{"proj", "metric"},
	{"proj", "layer"},
	{"proj", "view"},
	{"proj", "integration"},
	{"member"},
	{"member", "token"},
	{"service-token"},
	{"role"},
	{"team"},
	{"oauth-client"},
	{"webhook"},
	{"integration"},
	{"relay-proxy-config"},
	{"application"},
	{"code-reference-repository"},
	{"template"},
	{"deployment"},
	{"insight-group"},
	{"insight"},
	{"usage"},
	{"auditlog"},
}

// accountKinds are the kinds a writer may not manage: who can act, and how.
var accountKinds = []string{"member", "token", "service-token", "role", "team", "oauth-client"}

// AllResources returns one wildcard specifier per resource shape the API
// has (see shapes), e.g. "proj/*", "proj/*:env/*:flag/*", "member/*:token/*".
func AllResources() []string {
	return wildcards(func([]string) bool { return true })
}

func wildcards(keep func(kinds []string) bool) []string {
	out := make([]string, 0, len(shapes))
	for _, kinds := range shapes {
		if !keep(kinds) {
			continue
		}
		parts := make([]string, len(kinds))
		for i, k := range kinds {
			parts[i] = k + "/*"
		}
		out = append(out, strings.Join(parts, ":"))
	}
	return out
}

// BuiltIn returns the statements a built-in role stands for, so that the
// evaluator and `_access` treat built-in and custom roles alike:
//
//   - reader: no statements; every write is implicitly denied (reads are
//     gated by the token's scope, not by statements);
//   - writer: allow "*" on every shape except those touching account
//     management (member, token, service-token, role, team, oauth-client);
//   - admin, owner: allow "*" on every shape;
//   - no_access: deny "*" on every shape, so `_access` names the reason.
//
// Each call returns fresh slices. Unknown role: 400.
func BuiltIn(role string) (Grant, error) {
	switch role {
	case Reader:
		return Grant{RoleName: role, Statements: []Statement{}}, nil
	case Writer:
		res := wildcards(func(kinds []string) bool {
			return !slices.ContainsFunc(kinds, func(k string) bool { return slices.Contains(accountKinds, k) })
		})
		return Grant{RoleName: role, Statements: []Statement{{Resources: res, Actions: []string{"*"}, Effect: Allow}}}, nil
	case Admin, Owner:
		return Grant{RoleName: role, Statements: []Statement{{Resources: AllResources(), Actions: []string{"*"}, Effect: Allow}}}, nil
	case NoAccess:
		return Grant{RoleName: role, Statements: []Statement{{Resources: AllResources(), Actions: []string{"*"}, Effect: Deny}}}, nil
	}
	return Grant{}, unknownRole(role)
}
