package listing

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/flagplane/flagplane/shared/fault"
)

// A Term is one `field operator value` condition of a filter expression,
// the syntax LaunchDarkly's newer lists (segments) take:
// `tags anyOf ["beta","vip"]`, `query equals "toggle"`, `external exists true`.
type Term struct {
	Field, Op string
	// Values holds the value, or each element of a list value.
	Values []string
	// List tells a list value (`["a"]`) from a single one.
	List bool
}

// Expr is a parsed filter expression: terms joined by "," (and) and "|"
// (or), grouped by parentheses; "," binds tighter than "|".
type Expr struct {
	term *Term
	// any holds alternatives (|), all conjuncts (,); at most one is set.
	any, all []Expr
}

// Ops names, for each field a list accepts, the operators it takes.
type Ops map[string][]string

// ParseExpr reads raw with the fields and operators of ops; anything else
// is a 400 naming what is wrong. An empty raw is an expression that keeps
// everything.
func ParseExpr(raw string, ops Ops) (Expr, error) {
	p := &exprParser{src: raw, ops: ops}
	p.space()
	if p.pos == len(p.src) {
		return Expr{}, nil
	}
	e, err := p.or()
	if err != nil {
		return Expr{}, err
	}
	if p.pos < len(p.src) {
		return Expr{}, p.fail("unexpected %q", p.src[p.pos:])
	}
	return e, nil
}

// Build turns e into a predicate, term by term; term returns nil to keep
// every item. The predicate of an empty expression is nil.
func Build[T any](e Expr, term func(Term) (Predicate[T], error)) (Predicate[T], error) {
	if e.term != nil {
		return term(*e.term)
	}
	parts := e.all
	if len(e.any) > 0 {
		parts = e.any
	}
	if len(parts) == 0 {
		return nil, nil
	}
	ps := make([]Predicate[T], 0, len(parts))
	for _, part := range parts {
		p, err := Build(part, term)
		if err != nil {
			return nil, err
		}
		if p == nil {
			p = func(T) bool { return true }
		}
		ps = append(ps, p)
	}
	if len(e.any) > 0 {
		return func(item T) bool {
			return slices.ContainsFunc(ps, func(p Predicate[T]) bool { return p(item) })
		}, nil
	}
	return Predicate[T](All(ps...)), nil
}

type exprParser struct {
	src string
	pos int
	ops Ops
}

func (p *exprParser) fail(format string, args ...any) error {
	return fault.New(fault.Invalid, "query parameter \"filter\": "+format+" (the form is `field operator value`, joined by \",\" for and and \"|\" for or)", args...)
}

func (p *exprParser) space() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

func (p *exprParser) or() (Expr, error) {
	var alts []Expr
	for {
		e, err := p.and()
		if err != nil {
			return Expr{}, err
		}
		alts = append(alts, e)
		p.space()
		if p.pos >= len(p.src) || p.src[p.pos] != '|' {
			break
		}
		p.pos++
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return Expr{any: alts}, nil
}

func (p *exprParser) and() (Expr, error) {
	var parts []Expr
	for {
		e, err := p.operand()
		if err != nil {
			return Expr{}, err
		}
		parts = append(parts, e)
		p.space()
		if p.pos >= len(p.src) || p.src[p.pos] != ',' {
			break
		}
		p.pos++
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return Expr{all: parts}, nil
}

func (p *exprParser) operand() (Expr, error) {
	p.space()
	if p.pos < len(p.src) && p.src[p.pos] == '(' {
		p.pos++
		e, err := p.or()
		if err != nil {
			return Expr{}, err
		}
		p.space()
		if p.pos >= len(p.src) || p.src[p.pos] != ')' {
			return Expr{}, p.fail("a \"(\" is not closed")
		}
		p.pos++
		return e, nil
	}
	t, err := p.term()
	if err != nil {
		return Expr{}, err
	}
	return Expr{term: &t}, nil
}

// word reads up to the next space or delimiter.
func (p *exprParser) word() string {
	p.space()
	start := p.pos
	for p.pos < len(p.src) && !strings.ContainsRune(" \t,|()", rune(p.src[p.pos])) {
		p.pos++
	}
	return p.src[start:p.pos]
}

func (p *exprParser) term() (Term, error) {
	field := p.word()
	if field == "" {
		return Term{}, p.fail("a condition is missing")
	}
	allowed, ok := p.ops[field]
	if !ok {
		fields := make([]string, 0, len(p.ops))
		for f := range p.ops {
			fields = append(fields, f)
		}
		slices.Sort(fields)
		return Term{}, p.fail("field %q is not supported; use one of %s", field, strings.Join(fields, ", "))
	}
	op := p.word()
	if !slices.Contains(allowed, op) {
		return Term{}, p.fail("field %q takes the operator %s, not %q", field, strings.Join(allowed, " or "), op)
	}
	t := Term{Field: field, Op: op}
	values, list, err := p.value()
	if err != nil {
		return Term{}, err
	}
	if len(values) == 0 {
		return Term{}, p.fail("%s %s needs a value", field, op)
	}
	t.Values, t.List = values, list
	return t, nil
}

// value reads a JSON list of strings, a JSON string, or a bare word
// (true, a key).
func (p *exprParser) value() ([]string, bool, error) {
	p.space()
	if p.pos >= len(p.src) {
		return nil, false, nil
	}
	start := p.pos
	switch p.src[p.pos] {
	case '[', '"':
		dec := json.NewDecoder(strings.NewReader(p.src[p.pos:]))
		var v any
		if err := dec.Decode(&v); err != nil {
			return p.bareList(start)
		}
		p.pos += int(dec.InputOffset())
		switch x := v.(type) {
		case string:
			return []string{x}, false, nil
		case []any:
			out := make([]string, 0, len(x))
			for _, e := range x {
				s, ok := e.(string)
				if !ok {
					return nil, false, p.fail("the list %q must hold strings", p.src[start:p.pos])
				}
				out = append(out, s)
			}
			if len(out) == 0 {
				return nil, false, p.fail("the list %q is empty", p.src[start:p.pos])
			}
			return out, true, nil
		}
	}
	w := p.word()
	if w == "" {
		return nil, false, nil
	}
	return []string{w}, false, nil
}

// bareList reads a list of unquoted words, [beta, vip], as a client that
// skips the JSON quoting sends it.
func (p *exprParser) bareList(start int) ([]string, bool, error) {
	end := strings.IndexByte(p.src[start:], ']')
	if p.src[start] != '[' || end < 0 {
		return nil, false, p.fail("the value at %q is not a JSON string or list of strings", p.src[start:])
	}
	var out []string
	for _, w := range strings.Split(p.src[start+1:start+end], ",") {
		if w = strings.Trim(strings.TrimSpace(w), `"'`); w != "" {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return nil, false, p.fail("the list %q is empty", p.src[start:start+end+1])
	}
	p.pos = start + end + 1
	return out, true, nil
}
