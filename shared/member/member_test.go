package member_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/audit/audittest"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/fault/faulttest"
	"github.com/flagplane/flagplane/shared/member"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/role"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/storetest"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// rig is the member service over a fresh embedded store holding custom
// role "ops" and an owner, stored as the bootstrap stores one.
type rig struct {
	table *storetest.Barrier
	log   *audit.Log
	svc   *member.Service
	ops   *role.Role
	owner *member.Member
}

func newRig(tb testing.TB) *rig {
	tb.Helper()
	now := func() time.Time { return t0 }
	a := audittest.New(tb, now)
	b, log := a.Table, a.Log
	roles := role.NewService(b, log, now)
	ctx := context.Background()
	ops, err := roles.Create(ctx, role.Input{Key: ptr("ops"), Name: ptr("Ops"), Policy: []policy.Statement{{Resources: []string{"proj/*"}, Actions: []string{"*"}, Effect: "allow"}}})
	if err != nil {
		tb.Fatal(err)
	}
	owner, err := member.New(member.Invite{Email: ptr("boss@example.com"), Role: "reader"}, "", t0)
	if err != nil {
		tb.Fatal(err)
	}
	owner.Role = "owner"
	ws, err := owner.Writes()
	if err != nil {
		tb.Fatal(err)
	}
	if err := b.Transact(ctx, ws); err != nil {
		tb.Fatal(err)
	}
	return &rig{table: b, log: log, svc: member.NewService(b, log, roles, now), ops: ops, owner: owner}
}

func ptr[T any](v T) *T { return &v }

func (r *rig) invite(tb testing.TB, invites ...member.Invite) []*member.Member {
	tb.Helper()
	ms, err := r.svc.Invite(context.Background(), invites)
	if err != nil {
		tb.Fatal(err)
	}
	return ms
}

func (r *rig) emails(tb testing.TB) string {
	tb.Helper()
	all, err := r.svc.List(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, m := range all {
		out = append(out, m.Email)
	}
	return strings.Join(out, " ")
}

func mustPatch(tb testing.TB, body string) patch.Patch {
	tb.Helper()
	p, err := patch.Parse([]byte(body))
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func TestNew(t *testing.T) {
	cases := []struct {
		name     string
		in       member.Invite
		email    string
		role     string
		refusal  string // a part of the refusal, "" when the invite is valid
		fieldErr string
	}{
		{"an email is trimmed and lower-cased", member.Invite{Email: ptr("  Ann@Example.COM ")}, "ann@example.com", "reader", "", ""},
		{"a member with custom roles only has no built-in access", member.Invite{Email: ptr("a@example.com"), CustomRoles: []string{"ops"}}, "a@example.com", "no_access", "", ""},
		{"a role given is kept", member.Invite{Email: ptr("a@example.com"), Role: "admin"}, "a@example.com", "admin", "", ""},
		{"an invite without an email is refused naming it", member.Invite{}, "", "", "is required", `"[3].email"`},
		{"an address that is no email is refused naming it", member.Invite{Email: ptr("Ann <ann@example.com>")}, "", "", "must be an email address", `"[3].email"`},
		{"the owner role is not given by invitation", member.Invite{Email: ptr("a@example.com"), Role: "owner"}, "", "", "cannot be given by invitation", `"[3].role"`},
		{"an unknown role is refused naming it", member.Invite{Email: ptr("a@example.com"), Role: "boss"}, "", "", `not "boss"`, `"[3].role"`},
		{"an overlong name is refused naming both name fields", member.Invite{Email: ptr("a@example.com"), FirstName: strings.Repeat("n", 257)}, "", "", "at most 256", `"[3].firstName"`},
		{"a malformed custom role key is refused naming its index", member.Invite{Email: ptr("a@example.com"), CustomRoles: []string{"ops", "no such"}}, "", "", "", `"[3].customRoles[1]"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := member.New(c.in, "[3].", t0)
			if c.fieldErr != "" {
				faulttest.Want(t, err, fault.Invalid, c.fieldErr)
				faulttest.Want(t, err, fault.Invalid, c.refusal)
				return
			}
			if err != nil || m.Email != c.email || m.Role != c.role || !m.PendingInvite || m.CustomRoles == nil || m.Version != 1 {
				t.Errorf("member %+v, %v; want %s as %s, pending", m, err, c.email, c.role)
			}
		})
	}
}

func TestInvite(t *testing.T) {
	r := newRig(t)
	t.Run("members are invited together with their roles by _id stored as keys", func(t *testing.T) {
		ms := r.invite(t, member.Invite{Email: ptr("ann@example.com"), CustomRoles: []string{r.ops.ID, "ops"}}, member.Invite{Email: ptr("bob@example.com")})
		if len(ms) != 2 || strings.Join(ms[0].CustomRoles, ",") != "ops" || ms[1].Role != "reader" {
			t.Errorf("invited %+v %+v", ms[0], ms[1])
		}
	})
	refused := []struct {
		name    string
		invites []member.Invite
		code    fault.Code
		part    string
	}{
		{"an empty request is refused", nil, fault.Invalid, "1 to 24"},
		{"too many at once are refused", make([]member.Invite, member.MaxInvites+1), fault.Invalid, "1 to 24"},
		{"an email twice in one request is refused naming the second", []member.Invite{{Email: ptr("cid@example.com")}, {Email: ptr("CID@example.com")}}, fault.Invalid, `"[1].email"`},
		{"an email already a member's, in another case, is a conflict naming it", []member.Invite{{Email: ptr("dan@example.com")}, {Email: ptr("Ann@Example.com")}}, fault.Conflict, `"ann@example.com"`},
		{"a custom role that does not exist is refused naming its index", []member.Invite{{Email: ptr("dan@example.com"), CustomRoles: []string{"nope"}}}, fault.Invalid, `"[0].customRoles[0]"`},
	}
	for _, c := range refused {
		t.Run(c.name+" and nobody is invited", func(t *testing.T) {
			_, err := r.svc.Invite(context.Background(), c.invites)
			faulttest.Want(t, err, c.code, c.part)
			if got := r.emails(t); got != "ann@example.com bob@example.com boss@example.com" {
				t.Errorf("members %q", got)
			}
		})
	}
	t.Run("one invite request is one audit entry", func(t *testing.T) {
		if a := strings.Join(audittest.Actions(t, r.log, "member"), " "); a != "createMember" {
			t.Errorf("audit actions %q", a)
		}
	})
}

func TestPatchAndDelete(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	ann := r.invite(t, member.Invite{Email: ptr("ann@example.com")})[0]
	refused := []struct {
		name, id, body, part string
	}{
		{"the owner's role cannot change", "OWNER", `[{"op":"replace","path":"/role","value":"admin"}]`, "owner's role cannot be changed"},
		{"nobody becomes owner", "ANN", `[{"op":"replace","path":"/role","value":"owner"}]`, "owner role cannot be given"},
		{"an unknown role is refused naming the field", "ANN", `[{"op":"replace","path":"/role","value":"boss"}]`, `"role"`},
		{"a custom role that does not exist is refused naming its index", "ANN", `[{"op":"replace","path":"/customRoles","value":["ops","nope"]}]`, `"customRoles[1]"`},
		{"the email is not patchable", "ANN", `[{"op":"replace","path":"/email","value":"x@example.com"}]`, "email"},
	}
	ids := map[string]string{"OWNER": r.owner.ID, "ANN": ann.ID}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.svc.Patch(ctx, ids[c.id], mustPatch(t, c.body))
			faulttest.Want(t, err, fault.Invalid, c.part)
		})
	}
	t.Run("a custom role given by _id is held by key", func(t *testing.T) {
		got, err := r.svc.Patch(ctx, ann.ID, mustPatch(t, `[{"op":"replace","path":"/customRoles","value":["`+r.ops.ID+`"]}]`))
		if err != nil || strings.Join(got.CustomRoles, ",") != "ops" || got.Email != ann.Email || got.Version != 2 {
			t.Errorf("patched %+v, %v", got, err)
		}
	})
	t.Run("two patches racing: one wins, the other gets a 409", func(t *testing.T) {
		names := []string{"First", "Second"}
		errs := r.table.Race(2, func(i int) error {
			_, err := r.svc.Patch(ctx, ann.ID, mustPatch(t, `[{"op":"replace","path":"/firstName","value":"`+names[i]+`"}]`))
			return err
		})
		faulttest.OneWins(t, errs, fault.OptimisticLock)
	})
	t.Run("the owner cannot be removed", func(t *testing.T) {
		faulttest.Want(t, r.svc.Delete(ctx, r.owner.ID), fault.Invalid, "owner cannot be removed")
	})
	t.Run("a removal whose extra write fails removes nothing", func(t *testing.T) {
		stale := store.Check(store.MemberKey(r.owner.ID), store.IfVersion(99))
		if err := r.svc.Delete(ctx, ann.ID, stale); err == nil {
			t.Fatal("the removal passed a failed condition")
		}
		if _, err := r.svc.Get(ctx, ann.ID); err != nil {
			t.Errorf("ann: %v", err)
		}
		if _, err := r.table.Get(ctx, store.MemberEmailKey(ann.Email)); err != nil {
			t.Errorf("ann's email is no longer reserved: %v", err)
		}
	})
	t.Run("a removal frees the email for a new invitation", func(t *testing.T) {
		if err := r.svc.Delete(ctx, ann.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := r.table.Get(ctx, store.MemberEmailKey(ann.Email)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("email reservation: %v", err)
		}
		again := r.invite(t, member.Invite{Email: ptr("ann@example.com")})
		if again[0].ID == ann.ID {
			t.Error("the new member has the old one's id")
		}
	})
	t.Run("each change was audited once", func(t *testing.T) {
		want := "createMember updateMemberRole updateMemberName deleteMember createMember"
		if a := strings.Join(audittest.Actions(t, r.log, "member"), " "); a != want {
			t.Errorf("audit actions %q, want %q", a, want)
		}
	})
}
