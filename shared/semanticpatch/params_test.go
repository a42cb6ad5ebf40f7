package semanticpatch_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/fault/faulttest"
	"github.com/flagplane/flagplane/shared/semanticpatch"
)

func TestParameterReaders(t *testing.T) {
	strs := []struct {
		name string
		raw  string
		want []string
		err  string
	}{
		{"an array of strings is read", `["a", "b"]`, []string{"a", "b"}, ""},
		{"a missing parameter is required", ``, nil, `instructions[2] (addTags): field "instructions[2].values" is required`},
		{"null is missing", `null`, nil, `"instructions[2].values" is required`},
		{"a string is not an array", `"a"`, nil, `"instructions[2].values" must be an array of strings`},
		{"numbers are not strings", `["a", 1]`, nil, `must be an array of strings`},
		{"an empty array holds nothing", `[]`, nil, `"instructions[2].values" must hold at least one value`},
		{"an empty string names its index", `["a", ""]`, nil, `"instructions[2].values[1]" must not be empty`},
	}
	for _, c := range strs {
		t.Run("Strings: "+c.name, func(t *testing.T) {
			got, err := semanticpatch.Strings(2, "addTags", json.RawMessage(c.raw), "values")
			check(t, err, c.err)
			if c.err == "" && !slices.Equal(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
	str := []struct {
		name, raw, want, err string
	}{
		{"a string is read", `"x"`, "x", ""},
		{"an empty string is a string", `""`, "", ""},
		{"a missing value is required", ``, "", `"instructions[0].value" is required`},
		{"a number is not a string", `7`, "", `"instructions[0].value" must be a string`},
	}
	for _, c := range str {
		t.Run("String: "+c.name, func(t *testing.T) {
			got, err := semanticpatch.String(0, "updateName", json.RawMessage(c.raw), "value")
			check(t, err, c.err)
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
	t.Run("AddStrings adds what the list does not hold, once, and RemoveStrings removes what it does", func(t *testing.T) {
		list := []string{"a"}
		if err := semanticpatch.AddStrings(0, "addTags", json.RawMessage(`["b", "a", "b"]`), "values", &list); err != nil || !slices.Equal(list, []string{"a", "b"}) {
			t.Fatalf("after add: %v, %v", list, err)
		}
		if err := semanticpatch.RemoveStrings(0, "removeTags", json.RawMessage(`["a", "z"]`), "values", &list); err != nil || !slices.Equal(list, []string{"b"}) {
			t.Fatalf("after remove: %v, %v", list, err)
		}
		err := semanticpatch.AddStrings(0, "addTags", json.RawMessage(`[]`), "values", &list)
		check(t, err, "must hold at least one value")
	})
	reorders := []struct {
		name string
		ids  []string
		want []string
		ok   bool
	}{
		{"every id once gives that order", []string{"c", "a", "b"}, []string{"c", "a", "b"}, true},
		{"a missing id is refused", []string{"c", "a"}, nil, false},
		{"an unknown id is refused", []string{"c", "a", "x"}, nil, false},
		{"an id twice is refused", []string{"c", "a", "a"}, nil, false},
	}
	for _, c := range reorders {
		t.Run("Reorder: "+c.name, func(t *testing.T) {
			got, ok := semanticpatch.Reorder([]string{"a", "b", "c"}, func(s string) string { return s }, c.ids)
			if ok != c.ok || !slices.Equal(got, c.want) {
				t.Errorf("got %v, %t; want %v, %t", got, ok, c.want, c.ok)
			}
		})
	}
}

// check fails unless err is nil when want is "", or a 400 saying want.
func check(tb testing.TB, err error, want string) {
	tb.Helper()
	if want == "" {
		if err != nil {
			tb.Fatal(err)
		}
		return
	}
	faulttest.Want(tb, err, fault.Invalid, want)
}
