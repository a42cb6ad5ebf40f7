package sdkcontext

import "testing"

func TestIsKind(t *testing.T) {
	for _, c := range []struct {
		name string
		kind string
		want bool
	}{
		{"a plain kind is one", "org", true},
		{"letters, digits, dot, underscore and dash are allowed", "Org_2.eu-west", true},
		{"the empty string is none", "", false},
		{"\"kind\" is reserved by the context format", "kind", false},
		{"\"multi\" is reserved by the context format", "multi", false},
		{"a colon is not allowed", "org:eu", false},
		{"a space is not allowed", "my org", false},
		{"a '#', which separates key parts in the table, is not allowed", "org#1", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := IsKind(c.kind); got != c.want {
				t.Fatalf("IsKind(%q) = %v, want %v", c.kind, got, c.want)
			}
		})
	}
}
