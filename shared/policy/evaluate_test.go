package policy

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/flagplane/flagplane/shared/fault"
)

func mustCompile(tb testing.TB, grants ...Grant) *Policy {
	tb.Helper()
	p, err := Compile(grants)
	if err != nil {
		tb.Fatalf("Compile: %v", err)
	}
	return p
}

func mustBuiltIn(tb testing.TB, role string) Grant {
	tb.Helper()
	g, err := BuiltIn(role)
	if err != nil {
		tb.Fatalf("BuiltIn(%q): %v", role, err)
	}
	return g
}

var (
	shopProd  = NewResource("proj", "shop").Child("env", "production", "critical")
	shopFlag  = shopProd.Child("flag", "new-checkout")
	otherFlag = NewResource("proj", "other").Child("env", "production").Child("flag", "new-checkout")
)

func TestEvaluate(t *testing.T) {
	allowShopFlags := Statement{Resources: []string{"proj/shop:env/*:flag/*"}, Actions: []string{"*"}, Effect: Allow}
	denyCritical := Statement{Resources: []string{"proj/*:env/*;critical:flag/*"}, Actions: []string{"update*"}, Effect: Deny}
	allowNotOther := Statement{NotResources: []string{"proj/other:env/*:flag/*"}, Actions: []string{"updateOn"}, Effect: Allow}
	allowButDelete := Statement{Resources: []string{"proj/*:env/*:flag/*"}, NotActions: []string{"delete*"}, Effect: Allow}
	tests := []struct {
		name     string
		grants   []Grant
		r        Resource
		action   string
		allowed  bool
		reason   *Statement
		roleName string
	}{
		{"no grants deny implicitly", nil, shopFlag, "updateOn", false, nil, ""},
		{"an allow on the resource and action allows", []Grant{{"shop-team", []Statement{allowShopFlags}}}, shopFlag, "updateOn", true, &allowShopFlags, "shop-team"},
		{"an allow on another project denies implicitly", []Grant{{"shop-team", []Statement{allowShopFlags}}}, otherFlag, "updateOn", false, nil, ""},
		{"a deny overrides an allow in the same role", []Grant{{"r", []Statement{allowShopFlags, denyCritical}}}, shopFlag, "updateTargets", false, &denyCritical, "r"},
		{"a deny in a later role overrides an allow in an earlier one", []Grant{{"a", []Statement{allowShopFlags}}, {"b", []Statement{denyCritical}}}, shopFlag, "updateOn", false, &denyCritical, "b"},
		{"a deny that does not apply leaves the allow", []Grant{{"r", []Statement{allowShopFlags, denyCritical}}}, shopFlag, "deleteFlag", true, &allowShopFlags, "r"},
		{"the first applying allow is the reason", []Grant{{"a", []Statement{allowButDelete}}, {"b", []Statement{allowShopFlags}}}, shopFlag, "updateOn", true, &allowButDelete, "a"},
		{"notResources applies to resources it does not name", []Grant{{"r", []Statement{allowNotOther}}}, shopFlag, "updateOn", true, &allowNotOther, "r"},
		{"notResources does not apply to resources it names", []Grant{{"r", []Statement{allowNotOther}}}, otherFlag, "updateOn", false, nil, ""},
		{"notResources applies to resources of another shape", []Grant{{"r", []Statement{allowNotOther}}}, shopProd, "updateOn", true, &allowNotOther, "r"},
		{"notActions applies to actions it does not name", []Grant{{"r", []Statement{allowButDelete}}}, shopFlag, "updateName", true, &allowButDelete, "r"},
		{"notActions does not apply to actions it names", []Grant{{"r", []Statement{allowButDelete}}}, shopFlag, "deleteFlag", false, nil, ""},
		{"action names are case sensitive", []Grant{{"r", []Statement{{Resources: []string{"proj/*"}, Actions: []string{"updateName"}, Effect: Allow}}}}, NewResource("proj", "shop"), "UpdateName", false, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, d := range []Decision{Evaluate(tt.grants, tt.r, tt.action), mustCompile(t, tt.grants...).Evaluate(tt.r, tt.action)} {
				if d.Allowed != tt.allowed {
					t.Errorf("Allowed = %v, want %v", d.Allowed, tt.allowed)
				}
				if tt.reason == nil {
					if d.Reason != nil {
						t.Errorf("Reason = %+v, want nil", *d.Reason)
					}
					continue
				}
				if d.Reason == nil {
					t.Fatalf("Reason = nil, want %+v", *tt.reason)
				}
				want := Reason{Statement: *tt.reason, RoleName: tt.roleName}
				if !sameReason(*d.Reason, want) {
					t.Errorf("Reason = %+v, want %+v", *d.Reason, want)
				}
			}
		})
	}
}

func sameReason(a, b Reason) bool {
	return a.RoleName == b.RoleName && a.Effect == b.Effect &&
		slices.Equal(a.Resources, b.Resources) && slices.Equal(a.NotResources, b.NotResources) &&
		slices.Equal(a.Actions, b.Actions) && slices.Equal(a.NotActions, b.NotActions)
}

func TestEvaluateFailsClosedOnInvalidGrants(t *testing.T) {
	bad := []Grant{
		{"ok", []Statement{allowAll("proj/*")}},
		{"broken", []Statement{{Resources: []string{"proj/*"}, Actions: []string{"*"}, Effect: "permit"}}},
	}
	if d := Evaluate(bad, NewResource("proj", "shop"), "updateName"); d.Allowed || d.Reason != nil {
		t.Errorf("Evaluate = %+v, want an implicit deny", d)
	}
	_, err := Compile(bad)
	if !fault.Is(err, fault.Invalid) {
		t.Fatalf("Compile error = %v, want invalid", err)
	}
	want := `role "broken": statement 0: field "effect": "permit" must be "allow" or "deny"`
	if got := fault.MessageOf(err); got != want {
		t.Errorf("message\n got: %s\nwant: %s", got, want)
	}
	acc := AccessFor(bad, NewResource("proj", "shop"), []string{"updateName"})
	if len(acc.Allowed) != 0 || len(acc.Denied) != 1 {
		t.Errorf("AccessFor = %+v, want everything denied", acc)
	}
	var nilPolicy *Policy
	if d := nilPolicy.Evaluate(shopFlag, "updateOn"); d.Allowed {
		t.Error("a nil Policy allowed an action")
	}
}

func TestCompileDoesNotAliasTheCallersStatements(t *testing.T) {
	st := allowAll("proj/shop")
	p := mustCompile(t, Grant{"r", []Statement{st}})
	st.Resources[0] = "proj/other"
	d := p.Evaluate(NewResource("proj", "shop"), "updateName")
	if !d.Allowed || d.Reason.Resources[0] != "proj/shop" {
		t.Errorf("after the caller edited its statement: %+v %+v", d, d.Reason)
	}
}

func TestAccessKeepsTheOrderOfActions(t *testing.T) {
	role := Grant{"flag-editor", []Statement{
		{Resources: []string{"proj/*:env/*:flag/*"}, Actions: []string{"update*"}, Effect: Allow},
		{Resources: []string{"proj/*:env/*:flag/*"}, Actions: []string{"updateOn"}, Effect: Deny},
	}}
	actions := []string{"updateOn", "deleteFlag", "updateName", "createFlag", "updateTargets"}
	acc := mustCompile(t, role).Access(shopFlag, actions)
	names := func(es []AccessEntry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Action)
		}
		return out
	}
	if got, want := names(acc.Allowed), []string{"updateName", "updateTargets"}; !slices.Equal(got, want) {
		t.Errorf("allowed = %v, want %v", got, want)
	}
	if got, want := names(acc.Denied), []string{"updateOn", "deleteFlag", "createFlag"}; !slices.Equal(got, want) {
		t.Errorf("denied = %v, want %v", got, want)
	}
	if r := acc.Denied[0].Reason; r == nil || r.Effect != Deny || r.RoleName != "flag-editor" {
		t.Errorf("updateOn reason = %+v, want the deny statement", r)
	}
	if acc.Denied[1].Reason != nil {
		t.Errorf("deleteFlag reason = %+v, want nil (implicit)", acc.Denied[1].Reason)
	}
}

func TestAccessJSON(t *testing.T) {
	tests := []struct {
		name    string
		grants  []Grant
		actions []string
		want    string
	}{
		{"no actions give empty arrays, not null", nil, nil, `{"allowed":[],"denied":[]}`},
		{"an implicit deny has a null reason", nil, []string{"updateOn"},
			`{"allowed":[],"denied":[{"action":"updateOn","reason":null}]}`},
		{"an allow carries its statement and role name", []Grant{{"inline", []Statement{{Resources: []string{"proj/*:env/*:flag/*"}, Actions: []string{"updateOn"}, Effect: Allow}}}}, []string{"updateOn"},
			`{"allowed":[{"action":"updateOn","reason":{"resources":["proj/*:env/*:flag/*"],"actions":["updateOn"],"effect":"allow","role_name":"inline"}}],"denied":[]}`},
		{"a deny on notResources carries its statement", []Grant{{"guard", []Statement{{NotResources: []string{"proj/other:env/*:flag/*"}, NotActions: []string{"updateName"}, Effect: Deny}}}}, []string{"updateOn"},
			`{"allowed":[],"denied":[{"action":"updateOn","reason":{"resources":null,"notResources":["proj/other:env/*:flag/*"],"actions":null,"notActions":["updateName"],"effect":"deny","role_name":"guard"}}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(AccessFor(tt.grants, shopFlag, tt.actions))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("\n got: %s\nwant: %s", b, tt.want)
			}
		})
	}
}

func TestEvaluateDoesNotAllocate(t *testing.T) {
	p := mustCompile(t, mustBuiltIn(t, Writer), Grant{"r", []Statement{{Resources: []string{"proj/*:env/*;critical:flag/*"}, Actions: []string{"delete*"}, Effect: Deny}}})
	allocs := testing.AllocsPerRun(100, func() {
		_ = p.Evaluate(shopFlag, "updateOn")
		_ = p.Evaluate(shopFlag, "deleteFlag")
	})
	if allocs != 0 {
		t.Errorf("Evaluate allocates %v times per call pair", allocs)
	}
}

func TestReasonsNameTheSpecifierThatMatched(t *testing.T) {
	twoShapes := Statement{Resources: []string{"proj/*:env/*", "proj/*:env/*:flag/*"}, Actions: []string{"*"}, Effect: Allow}
	notOther := Statement{NotResources: []string{"proj/other:env/*:flag/*", "proj/x:env/*:flag/*"}, Actions: []string{"updateOn"}, Effect: Allow}
	tests := []struct {
		name          string
		grant         Grant
		res           Resource
		wantResources []string
		wantNot       []string
	}{
		{"an admin's reason on a flag holds the flag shape alone", mustBuiltIn(t, Admin), shopFlag, []string{"proj/*:env/*:flag/*"}, nil},
		{"an admin's reason on an environment holds the environment shape alone", mustBuiltIn(t, Admin), shopProd, []string{"proj/*:env/*"}, nil},
		{"a statement with two resources names the one that matched", Grant{RoleName: "r", Statements: []Statement{twoShapes}}, shopProd, []string{"proj/*:env/*"}, nil},
		{"a notResources statement keeps its whole list", Grant{RoleName: "r", Statements: []Statement{notOther}}, shopFlag, nil, notOther.NotResources},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustCompile(t, tt.grant).Evaluate(tt.res, "updateOn")
			if !d.Allowed || d.Reason == nil {
				t.Fatalf("decision %+v, want allowed with a reason", d)
			}
			if !slices.Equal(d.Reason.Resources, tt.wantResources) || !slices.Equal(d.Reason.NotResources, tt.wantNot) {
				t.Errorf("reason resources %v notResources %v, want %v and %v", d.Reason.Resources, d.Reason.NotResources, tt.wantResources, tt.wantNot)
			}
			if d.Reason.RoleName != tt.grant.RoleName || d.Reason.Effect != Allow {
				t.Errorf("reason %+v", d.Reason)
			}
		})
	}
}
