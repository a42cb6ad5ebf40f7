package audit

import (
	"testing"

	"github.com/flagplane/flagplane/shared/policy"
)

func TestMatcher(t *testing.T) {
	flagsOfProd := []policy.Statement{{Resources: []string{"proj/*:env/production:flag/*"}, Actions: []string{"*"}, Effect: "allow"}}
	entry := func(resources ...string) Entry {
		var e Entry
		for _, r := range resources {
			e.Accesses = append(e.Accesses, Access{Action: "updateOn", Resource: r})
		}
		return e
	}
	for _, tc := range []struct {
		name  string
		stmts []policy.Statement
		entry Entry
		want  bool
	}{
		{"an entry whose access the statements allow is kept", flagsOfProd, entry("proj/p:env/production:flag/f"), true},
		{"one allowed access of several is enough", flagsOfProd, entry("proj/p:env/test:flag/f", "proj/p:env/production:flag/f"), true},
		{"an entry of another environment is dropped", flagsOfProd, entry("proj/p:env/test:flag/f"), false},
		{"an access whose resource does not parse is passed over", flagsOfProd, entry("proj/p:"), false},
		{"a deny wins over an allow", append([]policy.Statement{{Resources: []string{"proj/p:env/*:flag/f"}, Actions: []string{"*"}, Effect: "deny"}}, flagsOfProd...),
			entry("proj/p:env/production:flag/f"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			match, err := Matcher(tc.stmts)
			if err != nil {
				t.Fatal(err)
			}
			if got := match(tc.entry); got != tc.want {
				t.Errorf("kept %v, want %v", got, tc.want)
			}
		})
	}
}
