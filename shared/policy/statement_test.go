package policy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/fault"
)

func allowAll(resources ...string) Statement {
	return Statement{Resources: resources, Actions: []string{"*"}, Effect: Allow}
}

func repeat(n int, s string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestValidateAcceptsWellFormedStatements(t *testing.T) {
	tests := []struct {
		name  string
		stmts []Statement
	}{
		{"no statements at all", nil},
		{"an allow on resources and actions", []Statement{allowAll("proj/*:env/*:flag/*")}},
		{"a deny on notResources and notActions", []Statement{{NotResources: []string{"proj/shop"}, NotActions: []string{"update*"}, Effect: Deny}}},
		{"action globs and exact names", []Statement{{Resources: []string{"proj/*"}, Actions: []string{"createEnvironment", "update*", "*Flag", "*"}, Effect: Allow}}},
		{"exactly the limits on statements and entries", repeat100()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := Validate(tt.stmts); err != nil {
				t.Fatalf("Validate: %v", err)
			}
		})
	}
}

// repeat100 is MaxStatements statements, each with MaxEntriesPerList entries per list.
func repeat100() []Statement {
	out := make([]Statement, MaxStatements)
	for i := range out {
		out[i] = Statement{Resources: repeat(MaxEntriesPerList, "proj/*"), Actions: repeat(MaxEntriesPerList, "*"), Effect: Allow}
	}
	return out
}

func TestValidateNamesTheStatementAndField(t *testing.T) {
	ok := allowAll("proj/*")
	tests := []struct {
		name  string
		stmts []Statement
		want  string
	}{
		{"an unknown effect is refused", []Statement{ok, {Resources: []string{"proj/*"}, Actions: []string{"*"}, Effect: "permit"}},
			`statement 1: field "effect": "permit" must be "allow" or "deny"`},
		{"effects are lower case", []Statement{{Resources: []string{"proj/*"}, Actions: []string{"*"}, Effect: "Allow"}},
			`statement 0: field "effect": "Allow" must be "allow" or "deny"`},
		{"a statement needs resources or notResources", []Statement{{Actions: []string{"*"}, Effect: Allow}},
			`statement 0: fields "resources" and "notResources": one of them must be non-empty`},
		{"resources and notResources cannot both be set", []Statement{{Resources: []string{"proj/*"}, NotResources: []string{"proj/a"}, Actions: []string{"*"}, Effect: Allow}},
			`statement 0: fields "resources" and "notResources": only one of them may be set`},
		{"a statement needs actions or notActions", []Statement{{Resources: []string{"proj/*"}, Effect: Deny}},
			`statement 0: fields "actions" and "notActions": one of them must be non-empty`},
		{"actions and notActions cannot both be set", []Statement{{Resources: []string{"proj/*"}, Actions: []string{"*"}, NotActions: []string{"deleteFlag"}, Effect: Deny}},
			`statement 0: fields "actions" and "notActions": only one of them may be set`},
		{"a bad specifier is named by field and index", []Statement{ok, ok, {Resources: []string{"proj/*", "proj/a:env"}, Actions: []string{"*"}, Effect: Allow}},
			`statement 2: field "resources"[1]: resource specifier "proj/a:env": segment 2 "env": missing "/" between kind and name (write kind/name, e.g. proj/*)`},
		{"a bad notResources entry is named too", []Statement{{NotResources: []string{"Proj/a"}, Actions: []string{"*"}, Effect: Deny}},
			`statement 0: field "notResources"[0]: resource specifier "Proj/a": segment 1 "Proj/a": kind "Proj" must be lower-case letters, digits and "-", starting with a letter`},
		{"an action with punctuation is refused", []Statement{{Resources: []string{"proj/*"}, Actions: []string{"update*", "update-color"}, Effect: Allow}},
			`statement 0: field "actions"[1]: action "update-color" contains '-'; actions are letters and digits with optional "*" globs`},
		{"an empty notActions entry is refused", []Statement{{Resources: []string{"proj/*"}, NotActions: []string{""}, Effect: Allow}},
			`statement 0: field "notActions"[0]: action is empty`},
		{"more than 100 statements are refused", make([]Statement, MaxStatements+1),
			`at most 100 statements are allowed, got 101`},
		{"more than 100 resources are refused", []Statement{{Resources: repeat(MaxEntriesPerList+1, "proj/*"), Actions: []string{"*"}, Effect: Allow}},
			`statement 0: field "resources": at most 100 entries are allowed, got 101`},
		{"more than 100 actions are refused", []Statement{{Resources: []string{"proj/*"}, Actions: repeat(MaxEntriesPerList+1, "*"), Effect: Allow}},
			`statement 0: field "actions": at most 100 entries are allowed, got 101`},
		{"a specifier over 1,000 bytes is refused without echoing it whole", []Statement{{Resources: []string{"proj/" + strings.Repeat("a", 2000)}, Actions: []string{"*"}, Effect: Allow}},
			`statement 0: field "resources"[0]: resource specifier "proj/` + strings.Repeat("a", 75) + `"...: is 2005 bytes, more than the limit of 1000`},
		{"an action over 1,000 bytes is refused", []Statement{{Resources: []string{"proj/*"}, Actions: []string{strings.Repeat("a", 1001)}, Effect: Allow}},
			`statement 0: field "actions"[0]: action is 1001 bytes, more than the limit of 1000`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.stmts)
			if err == nil {
				t.Fatal("Validate accepted it")
			}
			if !fault.Is(err, fault.Invalid) {
				t.Errorf("code = %s, want %s", fault.CodeOf(err), fault.Invalid)
			}
			if got := fault.MessageOf(err); got != tt.want {
				t.Errorf("message\n got: %s\nwant: %s", got, tt.want)
			}
		})
	}
}

func TestStatementJSON(t *testing.T) {
	tests := []struct {
		name string
		st   Statement
		want string
	}{
		{"not- fields are left out when empty", allowAll("proj/*"),
			`{"resources":["proj/*"],"actions":["*"],"effect":"allow"}`},
		{"not- fields are written when set", Statement{NotResources: []string{"proj/a"}, NotActions: []string{"deleteFlag"}, Effect: Deny},
			`{"resources":null,"notResources":["proj/a"],"actions":null,"notActions":["deleteFlag"],"effect":"deny"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.st)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("got %s, want %s", b, tt.want)
			}
		})
	}
}
