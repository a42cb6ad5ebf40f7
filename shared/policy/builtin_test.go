package policy

import (
	"fmt"
	"slices"
	"testing"

	"github.com/flagplane/flagplane/shared/fault"
)

// sampleResources builds one concrete resource per shape, with made-up keys.
func sampleResources(tb testing.TB) []Resource {
	tb.Helper()
	var out []Resource
	for _, s := range AllResources() {
		sp := mustParse(tb, s)
		var r Resource
		for i, seg := range sp.Segments {
			if i == 0 {
				r = NewResource(seg.Kind, "k"+seg.Kind)
			} else {
				r = r.Child(seg.Kind, "k"+seg.Kind)
			}
		}
		out = append(out, r)
	}
	return out
}

func TestAllResourcesHasOneValidSpecifierPerShape(t *testing.T) {
	all := AllResources()
	seen := map[string]bool{}
	for _, s := range all {
		sp := mustParse(t, s)
		if sp.String() != s {
			t.Errorf("%q is not canonical", s)
		}
		if seen[s] {
			t.Errorf("%q listed twice", s)
		}
		seen[s] = true
		for _, seg := range sp.Segments {
			if !IsKnownKind(seg.Kind) {
				t.Errorf("%q uses kind %q, missing from knownKinds", s, seg.Kind)
			}
		}
	}
	for _, want := range []string{"proj/*", "proj/*:env/*", "proj/*:env/*:flag/*", "proj/*:env/*:segment/*", "proj/*:flag/*", "member/*:token/*", "role/*", "webhook/*"} {
		if !seen[want] {
			t.Errorf("AllResources lacks %q", want)
		}
	}
	if err := Validate([]Statement{{Resources: all, Actions: []string{"*"}, Effect: Allow}}); err != nil {
		t.Errorf("AllResources does not fit in one statement: %v", err)
	}
}

func TestBuiltInRoles(t *testing.T) {
	token := NewResource("member", "m1").Child("token", "t1")
	tests := []struct {
		name    string
		role    string
		r       Resource
		action  string
		allowed bool
		effect  string // of the reason; "" for an implicit deny
	}{
		{"a reader cannot update a flag", Reader, shopFlag, "updateOn", false, ""},
		{"a reader cannot create a project", Reader, NewResource("proj", "new"), "createProject", false, ""},
		{"a writer can update a flag", Writer, shopFlag, "updateOn", true, Allow},
		{"a writer can create an environment", Writer, shopProd, "createEnvironment", true, Allow},
		{"a writer can manage webhooks", Writer, NewResource("webhook", "w1"), "updateName", true, Allow},
		{"a writer can manage integrations", Writer, NewResource("integration", "datadog"), "createIntegration", true, Allow},
		{"a writer cannot create a personal access token", Writer, token, "createAccessToken", false, ""},
		{"a writer cannot rename a token", Writer, token, "updateTokenName", false, ""},
		{"a writer cannot create a service token", Writer, NewResource("service-token", "t2"), "createAccessToken", false, ""},
		{"a writer cannot touch a custom role", Writer, NewResource("role", "flag-editor"), "updateName", false, ""},
		{"a writer cannot invite members", Writer, NewResource("member", "m2"), "createMember", false, ""},
		{"a writer cannot manage teams", Writer, NewResource("team", "qa-team"), "updateTeamMembers", false, ""},
		{"a writer cannot manage OAuth clients", Writer, NewResource("oauth-client", "c1"), "updateName", false, ""},
		{"an admin can create a token", Admin, token, "createAccessToken", true, Allow},
		{"an admin can edit a role", Admin, NewResource("role", "flag-editor"), "updatePolicy", true, Allow},
		{"an owner can update a flag", Owner, shopFlag, "updateOn", true, Allow},
		{"no_access cannot update a flag and says why", NoAccess, shopFlag, "updateOn", false, Deny},
		{"no_access cannot create a token and says why", NoAccess, token, "createAccessToken", false, Deny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := mustBuiltIn(t, tt.role)
			d := mustCompile(t, g).Evaluate(tt.r, tt.action)
			if d.Allowed != tt.allowed {
				t.Errorf("Allowed = %v, want %v", d.Allowed, tt.allowed)
			}
			switch {
			case tt.effect == "" && d.Reason != nil:
				t.Errorf("Reason = %+v, want nil", *d.Reason)
			case tt.effect != "" && (d.Reason == nil || d.Reason.Effect != tt.effect || d.Reason.RoleName != tt.role):
				t.Errorf("Reason = %+v, want a %s statement of role %s", d.Reason, tt.effect, tt.role)
			}
		})
	}
}

func TestBuiltInRolesOverEveryShape(t *testing.T) {
	account := func(r Resource) bool {
		for _, s := range r.Segments() {
			if slices.Contains(accountKinds, s.Kind) {
				return true
			}
		}
		return false
	}
	for _, r := range sampleResources(t) {
		for _, role := range []string{NoAccess, Reader, Writer, Admin, Owner} {
			want := role == Admin || role == Owner || role == Writer && !account(r)
			t.Run(role+" on "+r.String(), func(t *testing.T) {
				if got := mustCompile(t, mustBuiltIn(t, role)).Evaluate(r, "anyAction").Allowed; got != want {
					t.Errorf("Allowed = %v, want %v", got, want)
				}
			})
		}
	}
}

func TestBuiltInReturnsFreshSlices(t *testing.T) {
	a := mustBuiltIn(t, Admin)
	a.Statements[0].Resources[0] = "proj/changed"
	if b := mustBuiltIn(t, Admin); b.Statements[0].Resources[0] != "proj/*" {
		t.Errorf("BuiltIn shares storage between calls: %q", b.Statements[0].Resources[0])
	}
}

func TestUnknownRolesAreRefused(t *testing.T) {
	for _, role := range []string{"", "Admin", "superuser"} {
		t.Run(fmt.Sprintf("role %q is refused", role), func(t *testing.T) {
			if _, err := BuiltIn(role); !fault.Is(err, fault.Invalid) {
				t.Errorf("BuiltIn(%q) error = %v, want invalid", role, err)
			}
			if _, err := RoleRank(role); !fault.Is(err, fault.Invalid) {
				t.Errorf("RoleRank(%q) error = %v, want invalid", role, err)
			}
		})
	}
}

func TestRoleRankOrdersBuiltInRoles(t *testing.T) {
	order := []string{NoAccess, Reader, Writer, Admin, Owner}
	for i := 1; i < len(order); i++ {
		lo, err := RoleRank(order[i-1])
		if err != nil {
			t.Fatal(err)
		}
		hi, err := RoleRank(order[i])
		if err != nil {
			t.Fatal(err)
		}
		if lo >= hi {
			t.Errorf("RoleRank(%s)=%d is not below RoleRank(%s)=%d", order[i-1], lo, order[i], hi)
		}
	}
}
