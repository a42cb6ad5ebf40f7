package policy

import (
	"slices"

	"github.com/flagplane/flagplane/shared/fault"
)

// Grant is one source of statements a caller holds: a built-in role (see
// BuiltIn), a custom role, or a token's inline role (named e.g. "inline").
// RoleName is what `_access` reasons report as `role_name`.
type Grant struct {
	RoleName   string
	Statements []Statement
}

// Reason is the statement that decided an action, with the role it came
// from: the AccessReason of spec 2.1. A statement's resources are cut to
// the one specifier that matched, so a reason names what decided without
// repeating a built-in role's specifier for every resource shape. Reasons
// returned by a Policy are shared between calls; treat them as read-only.
type Reason struct {
	Statement
	RoleName string `json:"role_name"`
}

// Decision is the outcome of one (resource, action) check. Reason is the
// deciding statement, or nil when nothing applied (implicit deny).
type Decision struct {
	Allowed bool
	Reason  *Reason
}

// AccessEntry is one action of an `_access` object. Reason is nil for an
// implicit deny and then marshals as `"reason": null`: the key is always
// present (the reference marks it required) and null says honestly that no
// statement decided, rather than inventing one.
type AccessEntry struct {
	Action string  `json:"action"`
	Reason *Reason `json:"reason"`
}

// Access is the `_access` object of a resource response: the actions the
// caller may and may not perform on it, in the order they were asked. Both
// lists marshal as arrays, never null.
type Access struct {
	Allowed []AccessEntry `json:"allowed"`
	Denied  []AccessEntry `json:"denied"`
}

// Policy is a caller's grants compiled for evaluation: specifiers parsed
// once, reasons built once, so that a request does no parsing and, for a
// single action, no allocation. A Policy is immutable and safe for
// concurrent use.
type Policy struct {
	stmts []compiled
}

type compiled struct {
	deny      bool
	resources []Specifier // the non-empty one of resources/notResources
	notRes    bool        // resources holds notResources
	actions   []string    // the non-empty one of actions/notActions, stars collapsed
	notAct    bool
	// reasons[i] is the reason when resources[i] matched; a notResources
	// statement has one reason, the whole statement.
	reasons []*Reason
}

// Compile validates and pre-parses grants, in order. An invalid statement
// is a 400 naming the role, so a stored role that no longer parses is
// reported rather than silently skipped (skipping a deny would widen rights).
func Compile(grants []Grant) (*Policy, error) {
	n := 0
	for _, g := range grants {
		n += len(g.Statements)
	}
	p := &Policy{stmts: make([]compiled, 0, n)}
	for _, g := range grants {
		if err := Validate(g.Statements); err != nil {
			return nil, fault.New(fault.Invalid, "role %q: %s", g.RoleName, fault.MessageOf(err))
		}
		for _, st := range g.Statements {
			p.stmts = append(p.stmts, compileStatement(g.RoleName, st))
		}
	}
	return p, nil
}

// compileStatement assumes st is valid.
func compileStatement(role string, st Statement) compiled {
	c := compiled{deny: st.Effect == Deny}
	reason := func(resources, notResources []string) *Reason {
		return &Reason{RoleName: role, Statement: Statement{
			Resources:    resources,
			NotResources: slices.Clone(notResources),
			Actions:      slices.Clone(st.Actions),
			NotActions:   slices.Clone(st.NotActions),
			Effect:       st.Effect,
		}}
	}
	specs := st.Resources
	if len(specs) == 0 {
		specs, c.notRes = st.NotResources, true
		c.reasons = []*Reason{reason(nil, st.NotResources)}
	}
	for _, s := range specs {
		sp, _ := parseSpecifier(s)
		c.resources = append(c.resources, sp)
		if !c.notRes {
			c.reasons = append(c.reasons, reason([]string{s}, nil))
		}
	}
	acts := st.Actions
	if len(acts) == 0 {
		acts, c.notAct = st.NotActions, true
	}
	for _, a := range acts {
		c.actions = append(c.actions, collapseStars(a))
	}
	return c
}

// applies reports whether the statement applies to action on r, with the
// reason to give when it decides.
func (c *compiled) applies(r Resource, action string) (*Reason, bool) {
	// Actions first: they are short strings and rule out more statements.
	hit := false
	for _, a := range c.actions {
		if globMatch(a, action) {
			hit = true
			break
		}
	}
	if hit == c.notAct {
		return nil, false
	}
	for i := range c.resources {
		if c.resources[i].Matches(r) {
			if c.notRes {
				return nil, false
			}
			return c.reasons[i], true
		}
	}
	if c.notRes {
		return c.reasons[0], true
	}
	return nil, false
}

// Evaluate decides one action on r: any applying deny wins, else the first
// applying allow, else an implicit deny with a nil Reason. A nil Policy
// denies everything.
func (p *Policy) Evaluate(r Resource, action string) Decision {
	if p == nil {
		return Decision{}
	}
	var allow *Reason
	for i := range p.stmts {
		c := &p.stmts[i]
		reason, ok := c.applies(r, action)
		if !ok {
			continue
		}
		if c.deny {
			return Decision{Allowed: false, Reason: reason}
		}
		if allow == nil {
			allow = reason
		}
	}
	if allow != nil {
		return Decision{Allowed: true, Reason: allow}
	}
	return Decision{}
}

// Access evaluates each action on r and sorts them into allowed and denied,
// keeping the order of actions within each list.
func (p *Policy) Access(r Resource, actions []string) Access {
	// One backing array for both lists: two slices that cannot outgrow
	// their halves, one allocation per call, and never a null in JSON.
	n := len(actions)
	buf := make([]AccessEntry, 2*n)
	out := Access{Allowed: buf[:0:n], Denied: buf[n : n : 2*n]}
	for _, a := range actions {
		d := p.Evaluate(r, a)
		e := AccessEntry{Action: a, Reason: d.Reason}
		if d.Allowed {
			out.Allowed = append(out.Allowed, e)
		} else {
			out.Denied = append(out.Denied, e)
		}
	}
	return out
}

// Evaluate compiles grants and decides one action. It fails closed: if a
// grant does not compile, the action is denied with no reason. Prefer
// Compile once per caller and (*Policy).Evaluate per check.
func Evaluate(grants []Grant, r Resource, action string) Decision {
	p, err := Compile(grants)
	if err != nil {
		return Decision{}
	}
	return p.Evaluate(r, action)
}

// AccessFor compiles grants and builds the `_access` object for r (it is
// not called Access because the type of the result is). Like Evaluate it
// fails closed: grants that do not compile deny every action.
func AccessFor(grants []Grant, r Resource, actions []string) Access {
	p, _ := Compile(grants)
	return p.Access(r, actions)
}
