package api_test

import (
	"net/http/httptest"
	"testing"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/policy"
)

// readRights decides as tokens do: statements first, and reading where no
// statement decides allowed by the base permission alone.
type readRights struct {
	pol  *policy.Policy
	read bool
}

func (r readRights) Decide(res policy.Resource, action string) policy.Decision {
	d := r.pol.Evaluate(res, action)
	if action == identity.ViewAction && d.Reason == nil {
		d.Allowed = r.read
	}
	return d
}

func (r readRights) Access(res policy.Resource, actions []string) policy.Access {
	return r.pol.Access(res, actions)
}

func TestMayViewDecidesAlongTheEnclosingResources(t *testing.T) {
	destination := func(p, e string) policy.Resource {
		return policy.NewResource("proj", p).Child("env", e).Child("destination", "d1")
	}
	st := func(effect string, actions []string, resources ...string) policy.Statement {
		return policy.Statement{Effect: effect, Actions: actions, Resources: resources}
	}
	tests := []struct {
		name       string
		read       bool
		statements []policy.Statement
		res        policy.Resource
		want       bool
	}{
		{"a deny on the project hides an item inside it", true,
			[]policy.Statement{st("deny", []string{"*"}, "proj/pb")}, destination("pb", "production"), false},
		{"a deny on another project hides nothing here", true,
			[]policy.Statement{st("deny", []string{"*"}, "proj/pb")}, destination("pa", "production"), true},
		{"a deny on the environment hides an item inside it", true,
			[]policy.Statement{st("deny", []string{"viewProject"}, "proj/*:env/production")}, destination("pa", "production"), false},
		{"a deny on one environment hides nothing in another", true,
			[]policy.Statement{st("deny", []string{"viewProject"}, "proj/*:env/production")}, destination("pa", "test"), true},
		{"a deny on the item itself hides it", true,
			[]policy.Statement{st("deny", []string{"*"}, "proj/*:env/*:destination/d1")}, destination("pa", "test"), false},
		{"a deny of another action hides nothing", true,
			[]policy.Statement{st("deny", []string{"updateName"}, "proj/pa")}, destination("pa", "test"), true},
		{"without a base read, an allow on the project reads what it holds", false,
			[]policy.Statement{st("allow", []string{"viewProject"}, "proj/*")}, destination("pa", "test"), true},
		{"without a base read, an allow on the project still loses to a deny on the environment", false,
			[]policy.Statement{st("allow", []string{"viewProject"}, "proj/*"), st("deny", []string{"*"}, "proj/*:env/test")}, destination("pa", "test"), false},
		{"without a base read or any statement, nothing is read", false, nil, destination("pa", "test"), false},
		{"with a base read and no statement, everything is read", true, nil, destination("pa", "test"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol, err := policy.Compile([]policy.Grant{{RoleName: "r", Statements: tt.statements}})
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest("GET", "/api/v2/destinations", nil)
			r = r.WithContext(identity.With(r.Context(), identity.Principal{Rights: readRights{pol: pol, read: tt.read}}))
			if got := api.MayView(r, tt.res, identity.ViewAction); got != tt.want {
				t.Errorf("MayView(%s) = %v, want %v", tt.res, got, tt.want)
			}
			err = api.RequireView(r, tt.res, identity.ViewAction)
			if (err == nil) != tt.want {
				t.Errorf("RequireView(%s) = %v, want allowed %v", tt.res, err, tt.want)
			}
		})
	}
}
