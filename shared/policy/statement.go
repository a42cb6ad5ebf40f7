package policy

import (
	"fmt"

	"github.com/flagplane/flagplane/shared/fault"
)

// Effects of a statement.
const (
	Allow = "allow"
	Deny  = "deny"
)

// Limits on a statement list. They bound the work of every request that
// evaluates the list, whatever a role author writes.
const (
	MaxStatements     = 100
	MaxEntriesPerList = 100
)

// Statement is one policy statement, as stored in custom roles, token inline
// roles and webhook filters (spec 2.21). Exactly one of Resources and
// NotResources, and exactly one of Actions and NotActions, is non-empty.
type Statement struct {
	Resources    []string `json:"resources"`
	NotResources []string `json:"notResources,omitempty"`
	Actions      []string `json:"actions"`
	NotActions   []string `json:"notActions,omitempty"`
	Effect       string   `json:"effect"`
}

// Validate checks a statement list as a client sent it. Errors are 400
// fault.Invalid naming the statement (0-based index), the field and the
// entry, e.g.
//
//	statement 2: field "resources"[1]: resource specifier "proj/a:env": segment 2 "env": missing "/" ...
//
// so a client can find the mistake in a long role document.
func Validate(stmts []Statement) error {
	if len(stmts) > MaxStatements {
		return fault.New(fault.Invalid, "at most %d statements are allowed, got %d", MaxStatements, len(stmts))
	}
	for i, st := range stmts {
		if err := validateStatement(st); err != "" {
			return fault.New(fault.Invalid, "statement %d: %s", i, err)
		}
	}
	return nil
}

// validateStatement returns "" or what is wrong with st.
func validateStatement(st Statement) string {
	if st.Effect != Allow && st.Effect != Deny {
		return fmt.Sprintf(`field "effect": %s must be "allow" or "deny"`, quoteShort(st.Effect))
	}
	if msg := exactlyOne("resources", st.Resources, "notResources", st.NotResources); msg != "" {
		return msg
	}
	if msg := exactlyOne("actions", st.Actions, "notActions", st.NotActions); msg != "" {
		return msg
	}
	for _, f := range []struct {
		name   string
		values []string
		check  func(string) string
	}{
		{"resources", st.Resources, checkSpecifier},
		{"notResources", st.NotResources, checkSpecifier},
		{"actions", st.Actions, checkAction},
		{"notActions", st.NotActions, checkAction},
	} {
		if len(f.values) > MaxEntriesPerList {
			return fmt.Sprintf("field %q: at most %d entries are allowed, got %d", f.name, MaxEntriesPerList, len(f.values))
		}
		for j, v := range f.values {
			if msg := f.check(v); msg != "" {
				return fmt.Sprintf("field %q[%d]: %s", f.name, j, msg)
			}
		}
	}
	return ""
}

func exactlyOne(a string, av []string, b string, bv []string) string {
	switch {
	case len(av) == 0 && len(bv) == 0:
		return fmt.Sprintf("fields %q and %q: one of them must be non-empty", a, b)
	case len(av) > 0 && len(bv) > 0:
		return fmt.Sprintf("fields %q and %q: only one of them may be set", a, b)
	}
	return ""
}

func checkSpecifier(s string) string {
	if _, reason := parseSpecifier(s); reason != "" {
		return fmt.Sprintf("resource specifier %s: %s", quoteShort(s), reason)
	}
	return ""
}

// checkAction accepts "*" or an action name of ASCII letters and digits
// with optional "*" globs ("update*", "*Flag").
func checkAction(a string) string {
	if a == "" {
		return "action is empty"
	}
	if len(a) > MaxSpecifierBytes {
		return fmt.Sprintf("action is %d bytes, more than the limit of %d", len(a), MaxSpecifierBytes)
	}
	for i := 0; i < len(a); i++ {
		c := a[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '*') {
			return fmt.Sprintf(`action %s contains %q; actions are letters and digits with optional "*" globs`, quoteShort(a), c)
		}
	}
	return ""
}
