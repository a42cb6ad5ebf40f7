package role_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/role"
	"github.com/flagplane/flagplane/shared/store/bolt"
	"github.com/flagplane/flagplane/shared/store/storetest"
)

type rig struct {
	table *storetest.Barrier
	log   *audit.Log
	svc   *role.Service
}

func newRig(tb testing.TB) *rig {
	tb.Helper()
	table, err := bolt.Open(filepath.Join(tb.TempDir(), "role.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { table.Close() })
	b := &storetest.Barrier{Table: table}
	now := func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }
	log := audit.New(b, audit.Discard{}, "acct", slog.New(slog.NewTextHandler(io.Discard, nil)), now)
	return &rig{table: b, log: log, svc: role.NewService(b, log, now)}
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

// actions lists the actions of the audit entries on roles, oldest first.
func (r *rig) actions(tb testing.TB) []string {
	tb.Helper()
	res, err := r.log.List(context.Background(), audit.ListQuery{Limit: 100})
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for i := len(res.Entries) - 1; i >= 0; i-- {
		for _, a := range res.Entries[i].Accesses {
			out = append(out, a.Action)
		}
	}
	return out
}

func wantFault(tb testing.TB, err error, code fault.Code, part string) {
	tb.Helper()
	if !fault.Is(err, code) || !strings.Contains(err.Error(), part) {
		tb.Fatalf("error %v, want %s naming %q", err, code, part)
	}
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
			wantFault(t, err, c.code, c.part)
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
		wantFault(t, err, fault.Invalid, `"[0].customRoles[1]"`)
	})
	t.Run("GetByRef of an unknown reference is not found", func(t *testing.T) {
		_, err := r.svc.GetByRef(ctx, gone.ID)
		wantFault(t, err, fault.NotFound, gone.ID)
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
			wantFault(t, err, fault.Invalid, c.part)
		})
	}
	t.Run("a patch keeps the _id and creation date", func(t *testing.T) {
		got, err := r.svc.Patch(ctx, "ops", mustPatch(t, `[{"op":"replace","path":"/name","value":"Operators"},{"op":"replace","path":"/basePermissions","value":"no_access"}]`))
		if err != nil || got.ID != ops.ID || got.CreatedOn != ops.CreatedOn || got.Name != "Operators" || got.BasePermissions != "no_access" || got.Version != 2 {
			t.Errorf("patched %+v, %v", got, err)
		}
	})
	t.Run("two patches racing: one wins, the other gets a 409", func(t *testing.T) {
		r.table.Arm(2)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i, d := range []string{"first", "second"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = r.svc.Patch(ctx, "ops", mustPatch(t, `[{"op":"replace","path":"/description","value":"`+d+`"}]`))
			}()
		}
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("errors %v; want exactly one to fail", errs)
		}
		for _, err := range errs {
			if err != nil && !fault.Is(err, fault.OptimisticLock) {
				t.Errorf("the loser got %v, want a 409", err)
			}
		}
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
		if got := strings.Join(r.actions(t), " "); got != want {
			t.Errorf("audit actions %q, want %q", got, want)
		}
	})
	t.Run("a deleted role is not found by key or _id", func(t *testing.T) {
		_, err := r.svc.Get(ctx, "ops")
		wantFault(t, err, fault.NotFound, `"ops"`)
		_, err = r.svc.GetByRef(ctx, ops.ID)
		wantFault(t, err, fault.NotFound, ops.ID)
	})
}
