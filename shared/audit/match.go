package audit

import "github.com/flagplane/flagplane/shared/policy"

// Matcher compiles policy statements into a filter of entries that keeps
// an entry when they allow one of its accesses: what a webhook's
// statements select, and what an audit log search asks for.
func Matcher(stmts []policy.Statement) (func(Entry) bool, error) {
	pol, err := policy.Compile([]policy.Grant{{RoleName: "statements", Statements: stmts}})
	if err != nil {
		return nil, err
	}
	return func(e Entry) bool {
		for _, a := range e.Accesses {
			r, ok := policy.ResourceOf(a.Resource)
			if ok && pol.Evaluate(r, a.Action).Allowed {
				return true
			}
		}
		return false
	}, nil
}
