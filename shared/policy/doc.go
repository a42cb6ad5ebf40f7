// Package policy is flagplane's access-control engine: it parses policy
// statements (the `resources`/`notResources`, `actions`/`notActions`,
// `effect` shape of LaunchDarkly's custom roles), matches them against the
// concrete resource a request touches, and explains every decision with the
// statement that made it (the `_access` object of every response).
//
// The package is pure domain code: no HTTP, no storage. The API layer
// builds a Resource for each operation (NewResource("proj", key).Child(...)),
// names the action(s) the operation performs (createFlag, updateName, ...),
// and asks a compiled Policy. Compiling once per token keeps string parsing
// out of the request path.
//
// # Resource specifiers
//
// A specifier is one or more segments joined by ":", each `kind/name` with
// an optional `;tag,tag` list:
//
//	proj/shop;mobile,web:env/production;critical:flag/new-checkout
//
// Kinds are lower-case letters, digits and "-" so that a new kind of
// resource needs no code change here. Names may use "*" globs ("*",
// "prod-*", "*-eu"); a "*" matches any run of characters, including none,
// but never crosses a ":" because each segment is matched on its own. Tags
// are literal. Escaping is not supported: a name or tag cannot contain ":",
// ";", "/" or ",", and such input is refused rather than guessed at.
//
// # Tags match any-of
//
// When a pattern segment carries tags, the resource segment must carry AT
// LEAST ONE of them: `env/*;production,staging` reads "environments tagged
// production or staging". Any-of is what the comma suggests to most readers,
// and "all of" can still be written as separate deny/allow statements,
// whereas any-of with all-of semantics would need one statement per tag.
//
// # Evaluation
//
// A statement applies to (resource, action) when its resource side matches
// (some `resources` entry matches, or no `notResources` entry matches) and
// its action side matches (same with actions/notActions). Across all the
// grants of a caller, any applying deny wins; otherwise the first applying
// allow (grants in order, statements in order) allows; otherwise the action
// is denied implicitly, with no reason. Read operations are gated by the
// token's role scope, not by statements: statements speak write actions.
package policy
