package role_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/audit/audittest"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/fault/faulttest"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/role"
	"github.com/flagplane/flagplane/shared/store/storetest"
)

type rig struct {
	table *storetest.Barrier
	log   *audit.Log
	svc   *role.Service
}

func newRig(tb testing.TB) *rig {
	tb.Helper()
	now := func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }
	a := audittest.New(tb, now)
	return &rig{table: a.Table, log: a.Log, svc: role.NewService(a.Table, a.Log, now)}
}

func ptr[T any](v T) *T { return &v }

var allowAll = []policy.Statement{{Resources: []string{"proj/*"}, Actions: []string{"*"}, Effect: "allow"}}

func (r *rig) create(tb testing.TB, key, base string) *role.Role {
	tb.Helper()
	ro, err := r.svc.Create(context.Background(), role.Input{Key: ptr(key), Name: ptr(strings.ToUpper(key)), Policy: allowAll, BasePermissions: base})
	if err != nil {
		tb.Fatal(err)
	}
	return ro
}

func TestLooksLikeID(t *testing.T) {
	cases := []struct {
		name string
		ref  string
		want bool
	}{
		{"24 lower-case hex digits are an _id", "0123456789abcdef01234567", true},
		{"23 digits are a key", "0123456789abcdef0123456", false},
		{"upper-case hex is a key", "0123456789ABCDEF01234567", false},
		{"24 characters with a letter past f are a key", "0123456789abcdef0123456g", false},
		{"a word is a key", "ops", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := role.LooksLikeID(c.ref); got != c.want {
				t.Errorf("LooksLikeID(%q) = %v", c.ref, got)
			}
		})
	}
}

func TestCreateRefusals(t *testing.T) {
	r := newRig(t)
	r.create(t, "ops", "")
	in := func(change func(*role.Input)) role.Input {
		i := role.Input{Key: ptr("new"), Name: ptr("New"), Policy: allowAll}
		change(&i)
		return i
	}
	cases := []struct {
		name string
		in   role.Input
		code fault.Code
		part string
	}{
		{"a role without a key is refused", in(func(i *role.Input) { i.Key = nil }), fault.Invalid, `"key"`},
		{"a role without a name is refused", in(func(i *role.Input) { i.Name = nil }), fault.Invalid, `"name"`},
		{"a key with the form of an _id is refused", in(func(i *role.Input) { i.Key = ptr("0123456789abcdef01234567") }), fault.Invalid, "form of a role _id"},
		{"unknown base permissions are refused naming them", in(func(i *role.Input) { i.BasePermissions = "writer" }), fault.Invalid, `"basePermissions"`},
		{"a role without statements is refused", in(func(i *role.Input) { i.Policy = nil }), fault.Invalid, `"policy"`},
		{"a statement with a bad effect is refused", in(func(i *role.Input) {
			i.Policy = []policy.Statement{{Resources: []string{"proj/*"}, Actions: []string{"*"}, Effect: "perhaps"}}
		}), fault.Invalid, "effect"},
		{"a long description is refused", in(func(i *role.Input) { i.Description = strings.Repeat("d", 1025) }), fault.Invalid, `"description"`},
		{"a second role with the same key is refused", in(func(i *role.Input) { i.Key = ptr("ops") }), fault.Conflict, `"ops"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.svc.Create(context.Background(), c.in)
			faulttest.Want(t, err, c.code, c.part)
		})
	}
	t.Run("a role without base permissions reads by default", func(t *testing.T) {
		got, err := r.svc.Get(context.Background(), "ops")
		if err != nil || got.BasePermissions != "reader" || !role.LooksLikeID(got.ID) {
			t.Errorf("role %+v, %v", got, err)
		}
	})
}

func TestReferences(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	ops := r.create(t, "ops", "no_access")
	dev := r.create(t, "dev", "reader")
	gone := r.create(t, "gone", "reader")
	if err := r.svc.Delete(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	// A role made again under a deleted role's key is a new role with a new _id.
	again := r.create(t, "gone", "no_access")

	resolved := []struct {
		name string
		ref  string
		want string // key found, "" for none
	}{
		{"a key names its role", "ops", "ops"},
		{"an _id names its role", dev.ID, "dev"},
		{"an unknown key names none", "nope", ""},
		{"a malformed key names none", "no such", ""},
		{"the _id of a deleted role names none, even when its key is used again", gone.ID, ""},
		{"the new role's _id names it", again.ID, "gone"},
	}
	for _, c := range resolved {
		t.Run(c.name, func(t *testing.T) {
			found, err := r.svc.Resolve(ctx, []string{c.ref})
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if found[0] != nil {
				got = found[0].Key
			}
			if got != c.want {
				t.Errorf("Resolve(%q) = %q, want %q", c.ref, got, c.want)
			}
		})
	}
	t.Run("Keys turns _ids into keys, in order", func(t *testing.T) {
		keys, err := r.svc.Keys(ctx, "customRoles", []string{dev.ID, "ops"})
		if err != nil || strings.Join(keys, ",") != "dev,ops" {
			t.Errorf("Keys = %v, %v", keys, err)
		}
	})
	t.Run("Keys refuses an unknown reference naming the field and index", func(t *testing.T) {
		_, err := r.svc.Keys(ctx, "[0].customRoles", []string{"ops", gone.ID})
		faulttest.Want(t, err, fault.Invalid, `"[0].customRoles[1]"`)
	})
	t.Run("GetByRef of an unknown reference is not found", func(t *testing.T) {
		_, err := r.svc.GetByRef(ctx, gone.ID)
		faulttest.Want(t, err, fault.NotFound, gone.ID)
	})
	grants := []struct {
		name  string
		refs  []string
		roles string
		read  bool
	}{
		{"a no_access role grants its statements and no reading", []string{ops.ID}, "ops", false},
		{"one reader role among them lets the holder read", []string{"ops", dev.ID}, "ops,dev", true},
		{"a deleted role only removes rights", []string{gone.ID, "ops"}, "ops", false},
	}
	for _, c := range grants {
		t.Run(c.name, func(t *testing.T) {
			gs, read, err := r.svc.Grants(ctx, c.refs)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, g := range gs {
				names = append(names, g.RoleName)
			}
			if strings.Join(names, ",") != c.roles || read != c.read {
				t.Errorf("grants %v, read %v; want %s, %v", names, read, c.roles, c.read)
			}
		})
	}
}

func TestPatch(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	ops := r.create(t, "ops", "")
	mustPatch := func(tb testing.TB, body string) patch.Patch {
		tb.Helper()
		p, err := patch.Parse([]byte(body))
		if err != nil {
			tb.Fatal(err)
		}
		return p
	}
	refused := []struct {
		name, body string
		part       string
	}{
		{"base permissions outside reader and no_access are refused", `[{"op":"replace","path":"/basePermissions","value":"admin"}]`, `"basePermissions"`},
		{"an empty policy is refused", `[{"op":"replace","path":"/policy","value":[]}]`, `"policy"`},
		{"the key is not patchable", `[{"op":"replace","path":"/key","value":"other"}]`, "key"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.svc.Patch(ctx, "ops", mustPatch(t, c.body))
			faulttest.Want(t, err, fault.Invalid, c.part)
		})
	}
	t.Run("a patch keeps the _id and creation date", func(t *testing.T) {
		got, err := r.svc.Patch(ctx, "ops", mustPatch(t, `[{"op":"replace","path":"/name","value":"Operators"},{"op":"replace","path":"/basePermissions","value":"no_access"}]`))
		if err != nil || got.ID != ops.ID || got.CreatedOn != ops.CreatedOn || got.Name != "Operators" || got.BasePermissions != "no_access" || got.Version != 2 {
			t.Errorf("patched %+v, %v", got, err)
		}
	})
	t.Run("two patches racing: one wins, the other gets a 409", func(t *testing.T) {
		descriptions := []string{"first", "second"}
		errs := r.table.Race(2, func(i int) error {
			_, err := r.svc.Patch(ctx, "ops", mustPatch(t, `[{"op":"replace","path":"/description","value":"`+descriptions[i]+`"}]`))
			return err
		})
		faulttest.OneWins(t, errs, fault.OptimisticLock)
		got, err := r.svc.Get(ctx, "ops")
		if err != nil || got.Version != 3 {
			t.Errorf("role %+v, %v; want version 3", got, err)
		}
	})
	if err := r.svc.Delete(ctx, "ops"); err != nil {
		t.Fatal(err)
	}
	t.Run("each change wrote its audit entry, and refused ones none", func(t *testing.T) {
		want := "createRole updateBasePermissions updateName updateDescription deleteRole"
		if got := strings.Join(audittest.Actions(t, r.log), " "); got != want {
			t.Errorf("audit actions %q, want %q", got, want)
		}
	})
	t.Run("a deleted role is not found by key or _id", func(t *testing.T) {
		_, err := r.svc.Get(ctx, "ops")
		faulttest.Want(t, err, fault.NotFound, `"ops"`)
		_, err = r.svc.GetByRef(ctx, ops.ID)
		faulttest.Want(t, err, fault.NotFound, ops.ID)
	})
}
