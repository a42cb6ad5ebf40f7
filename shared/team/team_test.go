package team_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
	"github.com/flagplane/flagplane/shared/semanticpatch"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/storetest"
	"github.com/flagplane/flagplane/shared/team"
)

// rig is the team service over a fresh embedded store holding custom
// roles "ops" and "dev" and members ann, bob and cid (by id in ids).
type rig struct {
	table   *storetest.Barrier
	log     *audit.Log
	roles   *role.Service
	members *member.Service
	svc     *team.Service
	opsID   string
	ids     map[string]string
}

func newRig(tb testing.TB) *rig {
	tb.Helper()
	now := func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }
	a := audittest.New(tb, now)
	b, log := a.Table, a.Log
	roles := role.NewService(b, log, now)
	members := member.NewService(b, log, roles, now)
	r := &rig{table: b, log: log, roles: roles, members: members, svc: team.NewService(b, log, roles, members, now), ids: map[string]string{}}
	ctx := context.Background()
	for _, key := range []string{"ops", "dev"} {
		ro, err := roles.Create(ctx, role.Input{Key: ptr(key), Name: ptr(key), Policy: []policy.Statement{{Resources: []string{"proj/*"}, Actions: []string{"*"}, Effect: "allow"}}})
		if err != nil {
			tb.Fatal(err)
		}
		if key == "ops" {
			r.opsID = ro.ID
		}
	}
	var invites []member.Invite
	for _, name := range []string{"ann", "bob", "cid"} {
		invites = append(invites, member.Invite{Email: ptr(name + "@example.com"), Role: "reader"})
	}
	ms, err := members.Invite(ctx, invites)
	if err != nil {
		tb.Fatal(err)
	}
	for _, m := range ms {
		r.ids[strings.TrimSuffix(m.Email, "@example.com")] = m.ID
	}
	return r
}

func ptr[T any](v T) *T { return &v }

func (r *rig) create(tb testing.TB, in team.Input) *team.Team {
	tb.Helper()
	t, err := r.svc.Create(context.Background(), in)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

func instructions(tb testing.TB, ins ...string) semanticpatch.Patch {
	tb.Helper()
	sp, err := semanticpatch.Parse([]byte(`{"comment":"why","instructions":[` + strings.Join(ins, ",") + `]}`))
	if err != nil {
		tb.Fatal(err)
	}
	return sp
}

func TestCreate(t *testing.T) {
	r := newRig(t)
	t.Run("roles named by _id are stored by key, and repeats are kept once", func(t *testing.T) {
		got := r.create(t, team.Input{Key: ptr("a"), Name: ptr("A"), CustomRoleKeys: []string{r.opsID, "ops", "dev"},
			MemberIDs: []string{r.ids["ann"], r.ids["ann"], r.ids["bob"]}})
		if !slices.Equal(got.CustomRoleKeys, []string{"ops", "dev"}) || !slices.Equal(got.MemberIDs, []string{r.ids["ann"], r.ids["bob"]}) {
			t.Errorf("roles %v, members %v", got.CustomRoleKeys, got.MemberIDs)
		}
	})
	t.Run("members named as memberIDs, the reference's spelling, join too", func(t *testing.T) {
		got := r.create(t, team.Input{Key: ptr("b"), Name: ptr("B"), MemberIDsAlias: []string{r.ids["cid"]}})
		if !slices.Equal(got.MemberIDs, []string{r.ids["cid"]}) || got.CustomRoleKeys == nil {
			t.Errorf("members %v, roles %v", got.MemberIDs, got.CustomRoleKeys)
		}
	})
	refused := []struct {
		name string
		in   team.Input
		code fault.Code
		part string
	}{
		{"a team without a name is refused", team.Input{Key: ptr("x")}, fault.Invalid, `"name"`},
		{"a malformed key is refused naming the field", team.Input{Key: ptr("no spaces"), Name: ptr("X")}, fault.Invalid, `"key"`},
		{"a long description is refused naming the field", team.Input{Key: ptr("x"), Name: ptr("X"), Description: strings.Repeat("d", 1025)}, fault.Invalid, `"description"`},
		{"an unknown role is refused naming its index", team.Input{Key: ptr("x"), Name: ptr("X"), CustomRoleKeys: []string{"ops", "nope"}}, fault.Invalid, `"customRoleKeys[1]"`},
		{"an unknown member is refused naming its index", team.Input{Key: ptr("x"), Name: ptr("X"), MemberIDs: []string{r.ids["ann"], "nobody"}}, fault.Invalid, `"memberIds[1]"`},
		{"an unknown member given as memberIDs is refused under that name", team.Input{Key: ptr("x"), Name: ptr("X"), MemberIDsAlias: []string{"nobody"}}, fault.Invalid, `"memberIDs[0]"`},
		{"members given in both spellings are refused", team.Input{Key: ptr("x"), Name: ptr("X"), MemberIDs: []string{r.ids["ann"]}, MemberIDsAlias: []string{r.ids["bob"]}}, fault.Invalid, "not both"},
		{"permission grants are refused as not modelled", team.Input{Key: ptr("x"), Name: ptr("X"), PermissionGrants: []json.RawMessage{json.RawMessage(`{}`)}}, fault.Invalid, `"permissionGrants"`},
		{"more roles than a team holds are refused", team.Input{Key: ptr("x"), Name: ptr("X"), CustomRoleKeys: make([]string, team.MaxCustomRoles+1)}, fault.Invalid, `"customRoleKeys"`},
		{"a second team with the same key is refused", team.Input{Key: ptr("a"), Name: ptr("A")}, fault.Conflict, `"a"`},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.svc.Create(context.Background(), c.in)
			faulttest.Want(t, err, c.code, c.part)
		})
	}
	t.Run("refused creates store nothing", func(t *testing.T) {
		_, err := r.svc.Get(context.Background(), "x")
		faulttest.Want(t, err, fault.NotFound, `"x"`)
	})
}

func TestMembersAndTheirRoles(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	r.create(t, team.Input{Key: ptr("a"), Name: ptr("A"), CustomRoleKeys: []string{"ops"}, MemberIDs: []string{r.ids["ann"]}})
	r.create(t, team.Input{Key: ptr("b"), Name: ptr("B"), CustomRoleKeys: []string{"dev"}, MemberIDs: []string{r.ids["ann"], r.ids["bob"]}})
	cases := []struct {
		name   string
		member string
		want   []string
	}{
		{"a member on two teams holds the roles of both", "ann", []string{"ops", "dev"}},
		{"a member on one team holds its roles", "bob", []string{"dev"}},
		{"a member on no team holds none", "cid", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := r.svc.RolesOf(ctx, r.ids[c.member])
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("RolesOf(%s) = %v, %v; want %v", c.member, got, err, c.want)
			}
		})
	}
	t.Run("removing a member writes each of its teams on the version read", func(t *testing.T) {
		writes, err := r.svc.WithoutMember(ctx, r.ids["ann"])
		if err != nil || len(writes) != 2 {
			t.Fatalf("%d writes, %v; want one per team", len(writes), err)
		}
		if err := r.table.Transact(ctx, writes); err != nil {
			t.Fatal(err)
		}
		got, err := r.svc.RolesOf(ctx, r.ids["ann"])
		if err != nil || len(got) != 0 {
			t.Errorf("ann still holds %v, %v", got, err)
		}
		b, err := r.svc.Get(ctx, "b")
		if err != nil || !slices.Equal(b.MemberIDs, []string{r.ids["bob"]}) || b.Version != 2 {
			t.Errorf("team b %+v, %v", b, err)
		}
		if err := r.table.Transact(ctx, writes); !errors.Is(err, store.ErrConditionFailed) {
			t.Errorf("the same writes again: %v, want them refused on the version", err)
		}
	})
	t.Run("a role deleted since it was given is left out of the team's roles, and an unrelated change still passes", func(t *testing.T) {
		if err := r.roles.Delete(ctx, "dev"); err != nil {
			t.Fatal(err)
		}
		p, err := patch.Parse([]byte(`[{"op":"replace","path":"/name","value":"Renamed"}]`))
		if err != nil {
			t.Fatal(err)
		}
		b, err := r.svc.Patch(ctx, "b", p)
		if err != nil {
			t.Fatal(err)
		}
		roles, err := r.svc.Roles(ctx, b)
		if err != nil || len(roles) != 0 || !slices.Equal(b.CustomRoleKeys, []string{"dev"}) {
			t.Errorf("roles %v, %v; keys %v", roles, err, b.CustomRoleKeys)
		}
	})
}

func TestSemanticPatch(t *testing.T) {
	cases := []struct {
		name        string
		ins         []string
		wantMembers []string
		wantRoles   []string
		wantName    string
	}{
		{"addMembers adds each member once", []string{`{"kind":"addMembers","values":["bob","ann","bob"]}`}, []string{"ann", "bob"}, []string{"ops"}, "A"},
		{"removeMembers removes one that never was a member quietly", []string{`{"kind":"removeMembers","values":["ann","nobody"]}`}, []string{}, []string{"ops"}, "A"},
		{"replaceMembers with none empties the team", []string{`{"kind":"replaceMembers","values":[]}`}, []string{}, []string{"ops"}, "A"},
		{"addCustomRoles takes an _id and stores the key", []string{`{"kind":"addCustomRoles","values":["dev","OPSID"]}`}, []string{"ann"}, []string{"ops", "dev"}, "A"},
		{"removeCustomRoles takes an _id", []string{`{"kind":"removeCustomRoles","values":["OPSID"]}`}, []string{"ann"}, []string{}, "A"},
		{"instructions run in order on the result of the ones before", []string{`{"kind":"updateName","value":"B"}`, `{"kind":"replaceCustomRoles","values":["dev"]}`, `{"kind":"addCustomRoles","values":["ops"]}`}, []string{"ann"}, []string{"dev", "ops"}, "B"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			r.create(t, team.Input{Key: ptr("a"), Name: ptr("A"), CustomRoleKeys: []string{"ops"}, MemberIDs: []string{r.ids["ann"]}})
			ins := make([]string, len(c.ins))
			for i, in := range c.ins {
				in = strings.ReplaceAll(in, "OPSID", r.opsID)
				for name, id := range r.ids {
					in = strings.ReplaceAll(in, `"`+name+`"`, `"`+id+`"`)
				}
				ins[i] = in
			}
			got, err := r.svc.SemanticPatch(context.Background(), "a", instructions(t, ins...))
			if err != nil {
				t.Fatal(err)
			}
			want := make([]string, len(c.wantMembers))
			for i, name := range c.wantMembers {
				want[i] = r.ids[name]
			}
			if !slices.Equal(got.MemberIDs, want) || !slices.Equal(got.CustomRoleKeys, c.wantRoles) || got.Name != c.wantName || got.Version != 2 {
				t.Errorf("team %+v; want members %v, roles %v, name %s at version 2", got, want, c.wantRoles, c.wantName)
			}
		})
	}
}

func TestSemanticPatchRefusals(t *testing.T) {
	r := newRig(t)
	r.create(t, team.Input{Key: ptr("a"), Name: ptr("A"), MemberIDs: []string{r.ids["ann"]}})
	cases := []struct {
		name string
		ins  []string
		code fault.Code
		part string
	}{
		{"an unknown kind is refused naming the supported ones", []string{`{"kind":"fly"}`}, fault.Invalid, "addCustomRoles, addMembers"},
		{"a reference instruction flagplane does not model says so", []string{`{"kind":"addRoleAttribute"}`}, fault.Invalid, "role attributes are not modelled"},
		{"a missing value is refused naming its field", []string{`{"kind":"updateName"}`}, fault.Invalid, "instructions[0].value"},
		{"an add of no values is refused", []string{`{"kind":"updateName","value":"B"}`, `{"kind":"addMembers","values":[]}`}, fault.Invalid, "instructions[1].values"},
		{"a member that does not exist fails the whole patch", []string{`{"kind":"updateName","value":"B"}`, `{"kind":"addMembers","values":["nobody"]}`}, fault.PatchFailed, `"nobody"`},
		{"a role that does not exist fails the whole patch", []string{`{"kind":"addCustomRoles","values":["nope"]}`}, fault.PatchFailed, "instructions[0].values[0]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.svc.SemanticPatch(context.Background(), "a", instructions(t, c.ins...))
			faulttest.Want(t, err, c.code, c.part)
		})
	}
	t.Run("nothing refused was stored", func(t *testing.T) {
		got, err := r.svc.Get(context.Background(), "a")
		if err != nil || got.Name != "A" || got.Version != 1 {
			t.Errorf("team %+v, %v", got, err)
		}
	})
}

func TestRacingChanges(t *testing.T) {
	t.Run("two semantic patches adding members both land: the loser runs again on the winner's team", func(t *testing.T) {
		r := newRig(t)
		r.create(t, team.Input{Key: ptr("a"), Name: ptr("A")})
		names := []string{"ann", "bob"}
		for _, err := range r.table.Race(2, func(i int) error {
			_, err := r.svc.SemanticPatch(context.Background(), "a", instructions(t, fmt.Sprintf(`{"kind":"addMembers","values":[%q]}`, r.ids[names[i]])))
			return err
		}) {
			if err != nil {
				t.Errorf("an add failed: %v", err)
			}
		}
		got, err := r.svc.Get(context.Background(), "a")
		if err != nil || len(got.MemberIDs) != 2 || got.Version != 3 {
			t.Errorf("team %+v, %v; want both members at version 3", got, err)
		}
		if a := audittest.Actions(t, r.log, "team"); strings.Join(a, " ") != "createTeam updateTeamMembers updateTeamMembers" {
			t.Errorf("audit actions %v", a)
		}
	})
	t.Run("two JSON patches of the name: one wins, the other is refused and nothing is half written", func(t *testing.T) {
		r := newRig(t)
		r.create(t, team.Input{Key: ptr("a"), Name: ptr("A")})
		names := []string{"First", "Second"}
		errs := r.table.Race(2, func(i int) error {
			p, err := patch.Parse([]byte(`[{"op":"replace","path":"/name","value":"` + names[i] + `"}]`))
			if err != nil {
				return err
			}
			_, err = r.svc.Patch(context.Background(), "a", p)
			return err
		})
		faulttest.OneWins(t, errs, fault.OptimisticLock)
		got, err := r.svc.Get(context.Background(), "a")
		if err != nil || got.Version != 2 || (got.Name != "First" && got.Name != "Second") {
			t.Errorf("team %+v, %v", got, err)
		}
		if a := audittest.Actions(t, r.log, "team"); strings.Join(a, " ") != "createTeam updateTeamName" {
			t.Errorf("audit actions %v", a)
		}
	})
}

func TestEveryChangeIsAudited(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	r.create(t, team.Input{Key: ptr("a"), Name: ptr("A")})
	if _, err := r.svc.SemanticPatch(ctx, "a", instructions(t, `{"kind":"updateDescription","value":"d"}`, `{"kind":"addCustomRoles","values":["ops"]}`)); err != nil {
		t.Fatal(err)
	}
	t.Run("a semantic patch that changes nothing is not recorded", func(t *testing.T) {
		got, err := r.svc.SemanticPatch(ctx, "a", instructions(t, `{"kind":"updateDescription","value":"d"}`))
		if err != nil || got.Version != 2 {
			t.Errorf("team %+v, %v; want version 2 still", got, err)
		}
	})
	if err := r.svc.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	want := "createTeam updateTeamCustomRoles updateTeamDescription deleteTeam"
	if got := strings.Join(audittest.Actions(t, r.log, "team"), " "); got != want {
		t.Errorf("audit actions %q, want %q", got, want)
	}
	t.Run("the semantic patch's entry carries its comment", func(t *testing.T) {
		res, err := r.log.List(ctx, audit.ListQuery{Limit: 2})
		if err != nil || len(res.Entries) != 2 || res.Entries[1].Comment != "why" {
			t.Errorf("entries %+v, %v", res.Entries, err)
		}
	})
	t.Run("a deleted team is not found", func(t *testing.T) {
		_, err := r.svc.Get(ctx, "a")
		faulttest.Want(t, err, fault.NotFound, `"a"`)
	})
}
