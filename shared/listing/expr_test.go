package listing_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/listing"
)

type exprItem struct {
	key  string
	tags []string
	big  bool
}

var exprOps = listing.Ops{"tags": {"anyOf"}, "query": {"equals"}, "unbounded": {"equals"}}

func exprTerm(t listing.Term) (listing.Predicate[exprItem], error) {
	switch t.Field {
	case "tags":
		return func(i exprItem) bool {
			return slices.ContainsFunc(i.tags, func(tag string) bool { return slices.Contains(t.Values, tag) })
		}, nil
	case "query":
		return func(i exprItem) bool {
			return slices.ContainsFunc(t.Values, func(q string) bool { return strings.Contains(i.key, q) })
		}, nil
	default:
		want := t.Values[0] == "true"
		return func(i exprItem) bool { return i.big == want }, nil
	}
}

func TestParseExpr(t *testing.T) {
	items := []exprItem{
		{"alpha", []string{"beta"}, false},
		{"bravo", []string{"vip"}, true},
		{"charlie", nil, false},
		{"alpha-big", []string{"vip", "beta"}, true},
	}
	for _, c := range []struct {
		name, raw string
		want      []string
	}{
		{"an empty filter keeps everything", "", []string{"alpha", "bravo", "charlie", "alpha-big"}},
		{"a JSON list matches any of its values", `tags anyOf ["beta","nope"]`, []string{"alpha", "alpha-big"}},
		{"a list of bare words reads like the JSON one", `tags anyOf [vip, nope]`, []string{"bravo", "alpha-big"}},
		{"a quoted string is one value", `query equals "alpha"`, []string{"alpha", "alpha-big"}},
		{"a bare word is one value", `unbounded equals true`, []string{"bravo", "alpha-big"}},
		{"a comma requires both sides", `query equals "alpha",unbounded equals false`, []string{"alpha"}},
		{"a bar accepts either side", `query equals "charlie"|unbounded equals true`, []string{"bravo", "charlie", "alpha-big"}},
		{"a comma binds tighter than a bar", `query equals "charlie"|unbounded equals true,tags anyOf ["beta"]`, []string{"charlie", "alpha-big"}},
		{"parentheses group", `(query equals "charlie"|unbounded equals true),tags anyOf ["vip"]`, []string{"bravo", "alpha-big"}},
		{"commas and bars inside a value are part of it", `query equals "a,b|c"`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := listing.ParseExpr(c.raw, exprOps)
			if err != nil {
				t.Fatal(err)
			}
			keep, err := listing.Build(e, exprTerm)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, i := range items {
				if keep == nil || keep(i) {
					got = append(got, i.key)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("kept %v, want %v", got, c.want)
			}
		})
	}
}

func TestParseExprRefusals(t *testing.T) {
	for _, c := range []struct {
		name, raw, want string
	}{
		{"an unknown field is named with the ones there are", `color equals "red"`, `field "color" is not supported; use one of query, tags, unbounded`},
		{"a wrong operator is named with the right one", `tags equals "beta"`, `field "tags" takes the operator anyOf, not "equals"`},
		{"a missing value is refused", `query equals`, `query equals needs a value`},
		{"an open parenthesis is refused", `(query equals "a"`, `a "(" is not closed`},
		{"a list of numbers is refused", `tags anyOf [1,2]`, `must hold strings`},
		{"an empty list is refused", `tags anyOf []`, `is empty`},
		{"a dangling comma is refused", `query equals "a",`, `a condition is missing`},
		{"text after the expression is refused", `query equals "a")`, `unexpected ")"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := listing.ParseExpr(c.raw, exprOps)
			if !fault.Is(err, fault.Invalid) || !strings.Contains(fault.MessageOf(err), c.want) {
				t.Errorf("got %v, want a 400 saying %q", err, c.want)
			}
		})
	}
}
