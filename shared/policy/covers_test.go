package policy

import (
	"testing"

	"github.com/flagplane/flagplane/shared/fault"
)

func TestCovers(t *testing.T) {
	projA := Statement{Resources: []string{"proj/a:env/*:flag/*", "proj/a"}, Actions: []string{"update*", "createFlag"}, Effect: Allow}
	projAReordered := Statement{Resources: []string{"proj/a", "proj/a:env/*:flag/*", "proj/a"}, Actions: []string{"createFlag", "update**"}, Effect: Allow}
	projB := Statement{Resources: []string{"proj/b"}, Actions: []string{"*"}, Effect: Allow}
	denyProd := Statement{Resources: []string{"proj/*:env/production:flag/*"}, Actions: []string{"*"}, Effect: Deny}
	taggedXY := Statement{Resources: []string{"proj/*;x,y"}, Actions: []string{"*"}, Effect: Allow}
	taggedYX := Statement{Resources: []string{"proj/*;y,x"}, Actions: []string{"*"}, Effect: Allow}

	admin := mustBuiltIn(t, Admin)
	owner := mustBuiltIn(t, Owner)
	writer := mustBuiltIn(t, Writer)
	reader := mustBuiltIn(t, Reader)
	noAccess := mustBuiltIn(t, NoAccess)

	tests := []struct {
		name   string
		holder []Grant
		wanted []Grant
		code   fault.Code // "" when covered
		msg    string
	}{
		{"wanting nothing is always covered", nil, nil, "", ""},
		{"a reader may create a reader token", []Grant{reader}, []Grant{reader}, "", ""},
		{"deny statements alone are always covered", []Grant{reader}, []Grant{{"inline", []Statement{denyProd}}}, "", ""},
		{"an identical allow is covered", []Grant{{"team-a", []Statement{projA}}}, []Grant{{"inline", []Statement{projA}}}, "", ""},
		{"list order, duplicates and star runs do not matter", []Grant{{"team-a", []Statement{projA}}}, []Grant{{"inline", []Statement{projAReordered}}}, "", ""},
		{"tag order does not matter", []Grant{{"r", []Statement{taggedXY}}}, []Grant{{"inline", []Statement{taggedYX}}}, "", ""},
		{"an allow from any of the holder's roles is covered", []Grant{{"team-a", []Statement{projA}}, {"team-b", []Statement{projB}}}, []Grant{{"inline", []Statement{projB}}}, "", ""},
		{"a writer may create a writer token", []Grant{writer}, []Grant{writer}, "", ""},
		{"an admin may pass on anything", []Grant{admin}, []Grant{{"inline", []Statement{projA, projB}}, owner}, "", ""},
		{"an owner may pass on an admin grant", []Grant{owner}, []Grant{admin}, "", ""},
		{"an allow the holder lacks is refused", []Grant{{"team-a", []Statement{projA}}}, []Grant{{"inline", []Statement{projA, projB}}},
			fault.Forbidden, `role "inline" statement 1 grants rights the caller does not hold (no identical allow statement among the caller's roles)`},
		{"a reader may not create a writer token", []Grant{reader}, []Grant{writer},
			fault.Forbidden, `role "writer" statement 0 grants rights the caller does not hold (no identical allow statement among the caller's roles)`},
		{"a writer may not create an admin token", []Grant{writer}, []Grant{admin},
			fault.Forbidden, `role "admin" statement 0 grants rights the caller does not hold (no identical allow statement among the caller's roles)`},
		{"a narrower allow is refused because inclusion is checked conservatively", []Grant{writer}, []Grant{{"inline", []Statement{projB}}},
			fault.Forbidden, `role "inline" statement 0 grants rights the caller does not hold (no identical allow statement among the caller's roles)`},
		{"dropping the holder's deny is refused", []Grant{{"r", []Statement{projA, denyProd}}}, []Grant{{"inline", []Statement{projA}}},
			fault.Forbidden, `the caller's role "r" statement 1 denies rights the new grants would allow; include that deny statement`},
		{"keeping the holder's deny is covered", []Grant{{"r", []Statement{projA, denyProd}}}, []Grant{{"inline", []Statement{projA, denyProd}}}, "", ""},
		{"an admin with a deny elsewhere is no longer all-powerful", []Grant{admin, {"guard", []Statement{denyProd}}}, []Grant{{"inline", []Statement{projB}}},
			fault.Forbidden, `role "inline" statement 0 grants rights the caller does not hold (no identical allow statement among the caller's roles)`},
		{"an admin with a deny may pass on admin with the deny", []Grant{admin, {"guard", []Statement{denyProd}}}, []Grant{admin, {"inline", []Statement{denyProd}}}, "", ""},
		{"no_access passes on nothing", []Grant{noAccess}, []Grant{{"inline", []Statement{projA}}},
			fault.Forbidden, `role "inline" statement 0 grants rights the caller does not hold (no identical allow statement among the caller's roles)`},
		{"an allow effect differing from a holder's deny is refused", []Grant{{"r", []Statement{{Resources: projB.Resources, Actions: projB.Actions, Effect: Deny}}}}, []Grant{{"inline", []Statement{projB}}},
			fault.Forbidden, `role "inline" statement 0 grants rights the caller does not hold (no identical allow statement among the caller's roles)`},
		{"notResources must match the holder's exactly", []Grant{{"r", []Statement{{NotResources: []string{"proj/a"}, Actions: []string{"*"}, Effect: Allow}}}}, []Grant{{"inline", []Statement{{Resources: []string{"proj/a"}, Actions: []string{"*"}, Effect: Allow}}}},
			fault.Forbidden, `role "inline" statement 0 grants rights the caller does not hold (no identical allow statement among the caller's roles)`},
		{"a wanted grant that does not parse is a bad request", []Grant{admin}, []Grant{{"inline", []Statement{{Resources: []string{"proj"}, Actions: []string{"*"}, Effect: Allow}}}},
			fault.Invalid, `role "inline": statement 0: field "resources"[0]: resource specifier "proj": segment 1 "proj": missing "/" between kind and name (write kind/name, e.g. proj/*)`},
		{"a holder role that does not parse passes on nothing", []Grant{{"stale", []Statement{{Effect: Allow}}}}, []Grant{reader, {"inline", []Statement{projA}}},
			fault.Forbidden, `the caller's role "stale" is not valid, so it grants nothing to pass on: statement 0: fields "resources" and "notResources": one of them must be non-empty`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Covers(tt.holder, tt.wanted)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("Covers: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Covers accepted it")
			}
			if got := fault.CodeOf(err); got != tt.code {
				t.Errorf("code = %s, want %s", got, tt.code)
			}
			if got := fault.MessageOf(err); got != tt.msg {
				t.Errorf("message\n got: %s\nwant: %s", got, tt.msg)
			}
		})
	}
}
