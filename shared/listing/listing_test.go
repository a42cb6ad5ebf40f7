package listing_test

import (
	"cmp"
	"slices"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/listing"
)

func TestSort(t *testing.T) {
	type item struct {
		name string
		at   int
	}
	items := []item{{"b", 2}, {"a", 2}, {"c", 1}, {"a", 1}}
	by := map[string]func(a, b item) int{
		"name": func(a, b item) int { return strings.Compare(a.name, b.name) },
		"at":   func(a, b item) int { return cmp.Compare(a.at, b.at) },
	}
	for _, c := range []struct {
		name, sort string
		want       []item
	}{
		{"no order keeps the items as they are", "", []item{{"b", 2}, {"a", 2}, {"c", 1}, {"a", 1}}},
		{"one field orders by it, stably", "name", []item{{"a", 2}, {"a", 1}, {"b", 2}, {"c", 1}}},
		{"a minus descends", "-name", []item{{"c", 1}, {"b", 2}, {"a", 2}, {"a", 1}}},
		{"a later field breaks ties", "name,at", []item{{"a", 1}, {"a", 2}, {"b", 2}, {"c", 1}}},
		{"each field has its own direction", "-at,name", []item{{"a", 2}, {"b", 2}, {"a", 1}, {"c", 1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			order, err := listing.ParseSort(c.sort, "name", "at")
			if err != nil {
				t.Fatal(err)
			}
			got := slices.Clone(items)
			listing.Sort(got, order, by)
			if !slices.Equal(got, c.want) {
				t.Errorf("sorted %v, want %v", got, c.want)
			}
		})
	}
}
