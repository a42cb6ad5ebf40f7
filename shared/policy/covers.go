package policy

import (
	"slices"
	"strings"

	"github.com/flagplane/flagplane/shared/fault"
)

// Covers enforces "nobody can create a token with more rights than they
// hold": it returns nil when every right the wanted grants give is one the
// holder's grants give, and a 403 fault.Forbidden naming the first
// statement that is not covered otherwise (400 if wanted does not parse).
//
// Deciding inclusion of glob patterns in general is hard and easy to get
// wrong, so the check is deliberately conservative (it may refuse a token
// that would in fact be weaker) and sound (it never accepts a stronger one):
//
//   - deny statements in wanted are always fine: they only remove rights;
//   - a holder with an allow-everything statement (the admin/owner built-in:
//     allow "*" on every shape of AllResources) and no deny statement
//     anywhere covers everything;
//   - otherwise every allow statement of wanted must equal an allow
//     statement of the holder (lists compared as sets of canonical
//     entries), AND every deny statement of the holder must also be in
//     wanted, because the holder's denies limit the holder's allows and the
//     new token must not escape them.
func Covers(holder []Grant, wanted []Grant) error {
	type stmtRef struct {
		role  string
		index int
		key   string
	}
	var wantAllows []stmtRef
	wantDenies := map[string]bool{}
	for _, g := range wanted {
		if err := Validate(g.Statements); err != nil {
			return fault.New(fault.Invalid, "role %q: %s", g.RoleName, fault.MessageOf(err))
		}
		for i, st := range g.Statements {
			k := statementKey(st)
			if st.Effect == Deny {
				wantDenies[k] = true
			} else {
				wantAllows = append(wantAllows, stmtRef{g.RoleName, i, k})
			}
		}
	}
	if len(wantAllows) == 0 {
		return nil
	}

	holdAllows := map[string]bool{}
	var holdDenies []stmtRef
	everything := false
	for _, g := range holder {
		if err := Validate(g.Statements); err != nil {
			// The holder's own policy fails closed at evaluation, so the
			// holder holds no rights to pass on.
			return fault.New(fault.Forbidden, "the caller's role %q is not valid, so it grants nothing to pass on: %s", g.RoleName, fault.MessageOf(err))
		}
		for i, st := range g.Statements {
			k := statementKey(st)
			if st.Effect == Deny {
				holdDenies = append(holdDenies, stmtRef{g.RoleName, i, k})
				continue
			}
			holdAllows[k] = true
			if allowsEverything(st) {
				everything = true
			}
		}
	}
	if everything && len(holdDenies) == 0 {
		return nil
	}
	for _, w := range wantAllows {
		if !holdAllows[w.key] {
			return fault.New(fault.Forbidden, "role %q statement %d grants rights the caller does not hold (no identical allow statement among the caller's roles)", w.role, w.index)
		}
	}
	for _, d := range holdDenies {
		if !wantDenies[d.key] {
			return fault.New(fault.Forbidden, "the caller's role %q statement %d denies rights the new grants would allow; include that deny statement", d.role, d.index)
		}
	}
	return nil
}

// allowsEverything reports whether a valid allow statement allows every
// action on every resource shape of AllResources.
func allowsEverything(st Statement) bool {
	if len(st.Resources) == 0 || !slices.ContainsFunc(st.Actions, func(a string) bool { return collapseStars(a) == "*" }) {
		return false
	}
	have := map[string]bool{}
	for _, s := range st.Resources {
		sp, _ := parseSpecifier(s)
		have[sp.String()] = true
	}
	for _, s := range AllResources() {
		if !have[s] {
			return false
		}
	}
	return true
}

// statementKey is a canonical form of a valid statement: two statements
// with the same key have the same meaning (order and duplicates in lists,
// tag order and "**" do not matter).
func statementKey(st Statement) string {
	canon := func(list []string, f func(string) string) string {
		out := make([]string, len(list))
		for i, v := range list {
			out[i] = f(v)
		}
		slices.Sort(out)
		return strings.Join(slices.Compact(out), "\n")
	}
	spec := func(s string) string {
		sp, _ := parseSpecifier(s)
		return sp.String()
	}
	return strings.Join([]string{
		st.Effect,
		canon(st.Resources, spec),
		canon(st.NotResources, spec),
		canon(st.Actions, collapseStars),
		canon(st.NotActions, collapseStars),
	}, "\x00")
}
