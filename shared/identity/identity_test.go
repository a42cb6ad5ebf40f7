package identity_test

import (
	"context"
	"testing"

	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/policy"
)

func TestCanRead(t *testing.T) {
	cases := []struct {
		role identity.Role
		want bool
	}{
		{identity.RoleReader, true},
		{identity.RoleWriter, true},
		{identity.RoleAdmin, true},
		{identity.RoleOwner, true},
		{identity.RoleNoAccess, false},
		{"", false},
	}
	for _, c := range cases {
		name := "role " + string(c.role)
		if c.role == "" {
			name = "no role"
		}
		if c.want {
			name += " may read"
		} else {
			name += " may not read"
		}
		t.Run(name, func(t *testing.T) {
			if got := c.role.CanRead(); got != c.want {
				t.Errorf("CanRead = %v", got)
			}
		})
	}
}

func TestAPrincipalWithoutRightsMayDoNothing(t *testing.T) {
	p := identity.Principal{Role: identity.RoleOwner, MemberID: "m"}
	res, ok := policy.ResourceOf("proj/p")
	if !ok {
		t.Fatal("proj/p is no resource")
	}
	t.Run("every decision denies, even for an owner role", func(t *testing.T) {
		if d := p.Decide(res, "updateProjectName"); d.Allowed {
			t.Errorf("decision %+v", d)
		}
	})
	t.Run("access lists every action as denied and none allowed", func(t *testing.T) {
		acc := p.Access(res, []string{"updateProjectName", "deleteProject"})
		if acc.Allowed == nil || len(acc.Allowed) != 0 || len(acc.Denied) != 2 || acc.Denied[1].Action != "deleteProject" {
			t.Errorf("access %+v", acc)
		}
	})
}

func TestContext(t *testing.T) {
	t.Run("a context without a principal is unauthenticated", func(t *testing.T) {
		if _, ok := identity.From(context.Background()); ok {
			t.Error("From found a principal")
		}
	})
	t.Run("a principal put in a context is found there", func(t *testing.T) {
		p := identity.Principal{TokenID: "t1", MemberID: "m1", Role: identity.RoleWriter}
		got, ok := identity.From(identity.With(context.Background(), p))
		if !ok || got.TokenID != "t1" || got.MemberID != "m1" || got.Role != identity.RoleWriter {
			t.Errorf("From = %+v, %v", got, ok)
		}
	})
}
