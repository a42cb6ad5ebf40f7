package teamapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/team"
	"github.com/flagplane/flagplane/shared/token"
)

// Teams updated by the reference's semantic patch instructions (with or
// without the domain-model parameter, since teams take an object with
// "instructions" as nothing else), all or nothing, beside JSON patch; and
// the team's custom roles and maintainers as LaunchDarkly's Terraform
// provider reads them.

const teamsPath = apptest.API + "/teams"

// ldSemanticType is the Content-Type of LaunchDarkly's semantic patch.
const ldSemanticType = "application/json; domain-model=" + api.LaunchDarklySemanticPatchModel

func teamPath(key string) string { return teamsPath + "/" + key }

// teamDoc is a team as the API shows it.
type teamDoc struct {
	Key            string   `json:"key"`
	Name           string   `json:"name"`
	Description    string   `json:"description"`
	CustomRoleKeys []string `json:"customRoleKeys"`
	MemberIDs      []string `json:"memberIds"`
	CreationDate   int64    `json:"_creationDate"`
	LastModified   int64    `json:"_lastModified"`
	Version        int64    `json:"_version"`
}

func readTeam(tb testing.TB, srv *apptest.Server, key string) teamDoc {
	tb.Helper()
	res := srv.Do(tb, http.MethodGet, teamPath(key), nil)
	apptest.WantStatus(tb, res, http.StatusOK)
	var d teamDoc
	res.JSON(tb, &d)
	return d
}

// teamFixture is a server with roles "deployers" and "auditors", members
// ann, bob and cat, and team "ops" (ann; deployers).
type teamFixture struct {
	srv                *apptest.Server
	ann, bob, cat      string
	deployers, auditor string // role _ids
}

func newTeamFixture(tb testing.TB) teamFixture {
	tb.Helper()
	srv := apptest.New(tb)
	apptest.EmptyProject(tb, srv, "a")
	fx := teamFixture{srv: srv}
	fx.deployers = apptest.EnvMakerRole(tb, srv, "deployers")
	apptest.CreateRole(tb, srv, "auditors", "", map[string]any{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"viewProject"}})
	fx.auditor = apptest.RoleID(tb, srv, "auditors")
	ms := apptest.InviteMembers(tb, srv, map[string]any{"email": "ann@example.com"}, map[string]any{"email": "bob@example.com"}, map[string]any{"email": "cat@example.com"})
	fx.ann, fx.bob, fx.cat = ms[0].ID, ms[1].ID, ms[2].ID
	apptest.WantStatus(tb, srv.Do(tb, http.MethodPost, teamsPath, map[string]any{"key": "ops", "name": "Ops", "description": "on call",
		"memberIDs": []string{fx.ann}, "customRoleKeys": []string{"deployers"}}), http.StatusCreated)
	return fx
}

// patchTeam sends instructions (and a comment) to team ops with contentType.
func (fx teamFixture) patchTeam(tb testing.TB, contentType string, ins ...map[string]any) *apptest.Response {
	tb.Helper()
	return fx.srv.Do(tb, http.MethodPatch, teamPath("ops"), map[string]any{"comment": "why", "instructions": ins}, "Content-Type", contentType)
}

func TestTeamSemanticPatch(t *testing.T) {
	for _, c := range []struct {
		name  string
		ins   func(fx teamFixture) []map[string]any
		check func(t *testing.T, fx teamFixture, d teamDoc)
		// actions the audit entry records
		actions []string
	}{
		{"updateName renames the team",
			func(teamFixture) []map[string]any {
				return []map[string]any{apptest.Instr("updateName", "value", "Operations")}
			},
			func(t *testing.T, _ teamFixture, d teamDoc) {
				if d.Name != "Operations" {
					t.Errorf("name %q", d.Name)
				}
			}, []string{"updateTeamName"}},
		{"updateDescription replaces the description, also with an empty one",
			func(teamFixture) []map[string]any {
				return []map[string]any{apptest.Instr("updateDescription", "value", "")}
			},
			func(t *testing.T, _ teamFixture, d teamDoc) {
				if d.Description != "" {
					t.Errorf("description %q", d.Description)
				}
			}, []string{"updateTeamDescription"}},
		{"addMembers adds members, each once",
			func(fx teamFixture) []map[string]any {
				return []map[string]any{apptest.Instr("addMembers", "values", []string{fx.bob, fx.ann, fx.bob})}
			},
			func(t *testing.T, fx teamFixture, d teamDoc) {
				if want := []string{fx.ann, fx.bob}; !slices.Equal(d.MemberIDs, want) {
					t.Errorf("memberIds %v, want %v", d.MemberIDs, want)
				}
			}, []string{"updateTeamMembers"}},
		{"removeMembers removes members and ignores those not on the team",
			func(fx teamFixture) []map[string]any {
				return []map[string]any{apptest.Instr("removeMembers", "values", []string{fx.ann, fx.cat})}
			},
			func(t *testing.T, _ teamFixture, d teamDoc) {
				if len(d.MemberIDs) != 0 {
					t.Errorf("memberIds %v, want none", d.MemberIDs)
				}
			}, []string{"updateTeamMembers"}},
		{"replaceMembers sets the members",
			func(fx teamFixture) []map[string]any {
				return []map[string]any{apptest.Instr("replaceMembers", "values", []string{fx.cat, fx.bob})}
			},
			func(t *testing.T, fx teamFixture, d teamDoc) {
				if want := []string{fx.cat, fx.bob}; !slices.Equal(d.MemberIDs, want) {
					t.Errorf("memberIds %v, want %v", d.MemberIDs, want)
				}
			}, []string{"updateTeamMembers"}},
		{"replaceMembers with no values empties the team",
			func(teamFixture) []map[string]any {
				return []map[string]any{apptest.Instr("replaceMembers", "values", []string{})}
			},
			func(t *testing.T, _ teamFixture, d teamDoc) {
				if d.MemberIDs == nil || len(d.MemberIDs) != 0 {
					t.Errorf("memberIds %v, want []", d.MemberIDs)
				}
			}, []string{"updateTeamMembers"}},
		{"addCustomRoles takes roles by key or _id and shows keys",
			func(fx teamFixture) []map[string]any {
				return []map[string]any{apptest.Instr("addCustomRoles", "values", []string{fx.auditor, "deployers"})}
			},
			func(t *testing.T, _ teamFixture, d teamDoc) {
				if want := []string{"deployers", "auditors"}; !slices.Equal(d.CustomRoleKeys, want) {
					t.Errorf("customRoleKeys %v, want %v", d.CustomRoleKeys, want)
				}
			}, []string{"updateTeamCustomRoles"}},
		{"removeCustomRoles takes a role by _id",
			func(fx teamFixture) []map[string]any {
				return []map[string]any{apptest.Instr("removeCustomRoles", "values", []string{fx.deployers})}
			},
			func(t *testing.T, _ teamFixture, d teamDoc) {
				if len(d.CustomRoleKeys) != 0 {
					t.Errorf("customRoleKeys %v, want none", d.CustomRoleKeys)
				}
			}, []string{"updateTeamCustomRoles"}},
		{"replaceCustomRoles sets the roles",
			func(teamFixture) []map[string]any {
				return []map[string]any{apptest.Instr("replaceCustomRoles", "values", []string{"auditors"})}
			},
			func(t *testing.T, _ teamFixture, d teamDoc) {
				if want := []string{"auditors"}; !slices.Equal(d.CustomRoleKeys, want) {
					t.Errorf("customRoleKeys %v, want %v", d.CustomRoleKeys, want)
				}
			}, []string{"updateTeamCustomRoles"}},
		{"several instructions apply in order in one change",
			func(fx teamFixture) []map[string]any {
				return []map[string]any{
					apptest.Instr("updateName", "value", "Ops 2"),
					apptest.Instr("addMembers", "values", []string{fx.bob}),
					apptest.Instr("removeMembers", "values", []string{fx.ann}),
					apptest.Instr("addCustomRoles", "values", []string{"auditors"}),
				}
			},
			func(t *testing.T, fx teamFixture, d teamDoc) {
				if d.Name != "Ops 2" || !slices.Equal(d.MemberIDs, []string{fx.bob}) || !slices.Equal(d.CustomRoleKeys, []string{"deployers", "auditors"}) {
					t.Errorf("team %+v", d)
				}
			}, []string{"updateTeamCustomRoles", "updateTeamMembers", "updateTeamName"}},
	} {
		for _, ct := range []struct{ name, value string }{
			{"plain application/json", "application/json"},
			{"LaunchDarkly's domain-model", ldSemanticType},
			{"flagplane's domain-model", apptest.SemanticType},
		} {
			t.Run(c.name+", sent with "+ct.name, func(t *testing.T) {
				fx := newTeamFixture(t)
				before := readTeam(t, fx.srv, "ops")
				res := fx.patchTeam(t, ct.value, c.ins(fx)...)
				apptest.WantStatus(t, res, http.StatusOK)
				var d teamDoc
				res.JSON(t, &d)
				c.check(t, fx, d)
				c.check(t, fx, readTeam(t, fx.srv, "ops"))
				if d.Version != before.Version+1 || d.LastModified < before.LastModified || d.CreationDate != before.CreationDate {
					t.Errorf("version %d -> %d, lastModified %d -> %d, creationDate %d -> %d", before.Version, d.Version, before.LastModified, d.LastModified, before.CreationDate, d.CreationDate)
				}
				e := apptest.LatestAuditEntry(t, fx.srv)
				if e.Kind != "team" || e.Comment != "why" || !slices.Equal(e.Actions(), c.actions) {
					t.Errorf("audit entry kind %q comment %q actions %v, want team, why, %v", e.Kind, e.Comment, e.Actions(), c.actions)
				}
				if len(e.Delta) != 0 && string(e.Delta) != "null" {
					t.Errorf("a semantic patch's audit entry has delta %s", e.Delta)
				}
			})
		}
	}
}

func TestTeamSemanticPatchRefusals(t *testing.T) {
	for _, c := range []struct {
		name   string
		body   func(fx teamFixture) any
		status int
		code   string
		parts  []string
	}{
		{"an unknown kind is refused with 400 naming its index and the kinds there are",
			func(teamFixture) any { return map[string]any{"instructions": []any{apptest.Instr("turnFlagOn")}} },
			http.StatusBadRequest, "invalid_request", []string{"instructions[0]", "turnFlagOn", "addMembers"}},
		{"addPermissionGrants is refused with 400 saying permission grants are not modelled",
			func(fx teamFixture) any {
				return map[string]any{"instructions": []any{apptest.Instr("addPermissionGrants", "actionSet", "maintainTeam", "memberIDs", []string{fx.bob})}}
			},
			http.StatusBadRequest, "invalid_request", []string{"instructions[0]", "addPermissionGrants", "not modelled"}},
		{"a role attribute instruction is refused with 400 saying role attributes are not modelled",
			func(teamFixture) any {
				return map[string]any{"instructions": []any{apptest.Instr("updateName", "value", "x"), apptest.Instr("addRoleAttribute", "key", "k", "values", []string{"v"})}}
			},
			http.StatusBadRequest, "invalid_request", []string{"instructions[1]", "role attributes"}},
		{"a member that does not exist fails with 422 naming the instruction, and nothing before it applies",
			func(fx teamFixture) any {
				return map[string]any{"instructions": []any{apptest.Instr("updateName", "value", "Renamed"), apptest.Instr("addMembers", "values", []string{fx.bob, "0123456789abcdef01234567"})}}
			},
			http.StatusUnprocessableEntity, "patch_failed", []string{"instructions[1]", "addMembers", "0123456789abcdef01234567", "values[1]"}},
		{"a custom role that does not exist fails with 422 naming the instruction",
			func(teamFixture) any {
				return map[string]any{"instructions": []any{apptest.Instr("replaceCustomRoles", "values", []string{"ghost"})}}
			},
			http.StatusUnprocessableEntity, "patch_failed", []string{"instructions[0]", "ghost"}},
		{"addMembers without values is refused with 400 naming the field",
			func(teamFixture) any { return map[string]any{"instructions": []any{apptest.Instr("addMembers")}} },
			http.StatusBadRequest, "invalid_request", []string{"instructions[0].values"}},
		{"addMembers with an empty list is refused with 400 naming the field",
			func(teamFixture) any {
				return map[string]any{"instructions": []any{apptest.Instr("addMembers", "values", []string{})}}
			},
			http.StatusBadRequest, "invalid_request", []string{"instructions[0].values"}},
		{"values of the wrong JSON type are refused with 400 naming the field",
			func(teamFixture) any {
				return map[string]any{"instructions": []any{apptest.Instr("addCustomRoles", "values", "deployers")}}
			},
			http.StatusBadRequest, "invalid_request", []string{"instructions[0].values"}},
		{"updateName without a value is refused with 400 naming the field",
			func(teamFixture) any { return map[string]any{"instructions": []any{apptest.Instr("updateName")}} },
			http.StatusBadRequest, "invalid_request", []string{"instructions[0].value"}},
		{"updateName with an empty name is refused with 400 naming the field",
			func(teamFixture) any {
				return map[string]any{"instructions": []any{apptest.Instr("updateName", "value", " ")}}
			},
			http.StatusBadRequest, "invalid_request", []string{"instructions[0].value"}},
		{"an empty instruction list is refused with 400",
			func(teamFixture) any { return map[string]any{"instructions": []any{}} },
			http.StatusBadRequest, "invalid_request", []string{"instructions"}},
		{"an instruction without a kind is refused with 400 naming its index",
			func(teamFixture) any { return map[string]any{"instructions": []any{map[string]any{"value": "x"}}} },
			http.StatusBadRequest, "invalid_request", []string{"instructions[0]", "kind"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fx := newTeamFixture(t)
			before := readTeam(t, fx.srv, "ops")
			apptest.WantError(t, fx.srv.Do(t, http.MethodPatch, teamPath("ops"), c.body(fx)), c.status, c.code, c.parts...)
			if after := readTeam(t, fx.srv, "ops"); !sameTeam(before, after) {
				t.Errorf("a refused patch changed the team: %+v -> %+v", before, after)
			}
		})
	}
	t.Run("a JSON patch array sent as a semantic patch is refused with 400", func(t *testing.T) {
		fx := newTeamFixture(t)
		apptest.WantError(t, fx.srv.Do(t, http.MethodPatch, teamPath("ops"), []apptest.PatchOp{apptest.Replace("/name", "x")}, "Content-Type", ldSemanticType),
			http.StatusBadRequest, "invalid_request", "instructions")
		if got := readTeam(t, fx.srv, "ops").Name; got != "Ops" {
			t.Errorf("name %q", got)
		}
	})
	t.Run("a semantic patch of a team that does not exist is not found", func(t *testing.T) {
		fx := newTeamFixture(t)
		apptest.WantStatus(t, fx.srv.Do(t, http.MethodPatch, teamPath("nope"), map[string]any{"instructions": []any{apptest.Instr("updateName", "value", "x")}}), http.StatusNotFound)
	})
}

// sameTeam compares the fields a change could touch.
func sameTeam(a, b teamDoc) bool {
	return a.Name == b.Name && a.Description == b.Description && slices.Equal(a.CustomRoleKeys, b.CustomRoleKeys) &&
		slices.Equal(a.MemberIDs, b.MemberIDs) && a.Version == b.Version && a.LastModified == b.LastModified
}

func TestTeamPatchStillTakesJSONPatch(t *testing.T) {
	fx := newTeamFixture(t)
	t.Run("a JSON patch array renames the team and records its delta", func(t *testing.T) {
		res := fx.srv.Do(t, http.MethodPatch, teamPath("ops"), []apptest.PatchOp{apptest.Replace("/name", "Ops by JSON patch")})
		apptest.WantStatus(t, res, http.StatusOK)
		if got := readTeam(t, fx.srv, "ops").Name; got != "Ops by JSON patch" {
			t.Errorf("name %q", got)
		}
		if e := apptest.LatestAuditEntry(t, fx.srv); len(e.Delta) == 0 || string(e.Delta) == "null" {
			t.Errorf("a JSON patch's audit entry has no delta")
		}
	})
	t.Run("a JSON patch in the comment form is a JSON patch", func(t *testing.T) {
		res := fx.srv.Do(t, http.MethodPatch, teamPath("ops"), map[string]any{"comment": "c", "patch": []apptest.PatchOp{apptest.Replace("/description", "d")}})
		apptest.WantStatus(t, res, http.StatusOK)
		if got := readTeam(t, fx.srv, "ops").Description; got != "d" {
			t.Errorf("description %q", got)
		}
	})
	t.Run("a JSON patch adding a member that does not exist is refused with 400 naming it", func(t *testing.T) {
		apptest.WantError(t, fx.srv.Do(t, http.MethodPatch, teamPath("ops"), []apptest.PatchOp{apptest.Add("/memberIds/-", "0123456789abcdef01234567")}),
			http.StatusBadRequest, "invalid_request", `"memberIds[1]"`)
	})
	t.Run("a change that changes nothing is not recorded", func(t *testing.T) {
		before := apptest.LatestAuditEntry(t, fx.srv).ID
		apptest.WantStatus(t, fx.patchTeam(t, "application/json", apptest.Instr("addMembers", "values", []string{fx.ann})), http.StatusOK)
		if after := apptest.LatestAuditEntry(t, fx.srv).ID; after != before {
			t.Errorf("a no-op semantic patch made audit entry %s", after)
		}
	})
}

func TestTeamSemanticPatchRights(t *testing.T) {
	fx := newTeamFixture(t)
	apptest.CreateRole(t, fx.srv, "team-namer", "", map[string]any{"effect": "allow", "resources": []string{"team/*"}, "actions": []string{"updateTeamName"}})
	_, namer := fx.srv.MustCreateToken(t, map[string]any{"name": "namer", "serviceToken": true, "customRoleIds": []string{"team-namer"}})
	t.Run("a token allowed updateTeamName may rename a team by semantic patch", func(t *testing.T) {
		apptest.WantStatus(t, fx.srv.Do(t, http.MethodPatch, teamPath("ops"), map[string]any{"instructions": []any{apptest.Instr("updateName", "value", "Named")}}, "Authorization", namer), http.StatusOK)
	})
	t.Run("the same token may not add members: 403 naming updateTeamMembers, and nothing changes", func(t *testing.T) {
		before := readTeam(t, fx.srv, "ops")
		apptest.WantError(t, fx.srv.Do(t, http.MethodPatch, teamPath("ops"), map[string]any{"instructions": []any{
			apptest.Instr("updateName", "value", "Again"), apptest.Instr("addMembers", "values", []string{fx.bob})}}, "Authorization", namer),
			http.StatusForbidden, "forbidden", "updateTeamMembers")
		if after := readTeam(t, fx.srv, "ops"); !sameTeam(before, after) {
			t.Errorf("a refused patch changed the team")
		}
	})
	t.Run("a member added by semantic patch gains the team's custom roles", func(t *testing.T) {
		_, bobToken := fx.srv.MustIssueToken(t, token.Spec{Name: "bob", Role: identity.RoleAdmin, MemberID: fx.bob})
		if got := apptest.CreateEnvStatus(t, fx.srv, bobToken, "a", "before"); got != http.StatusForbidden {
			t.Fatalf("bob, a reader, may create environments before joining: %d", got)
		}
		apptest.WantStatus(t, fx.patchTeam(t, "application/json", apptest.Instr("addMembers", "values", []string{fx.bob})), http.StatusOK)
		if got := apptest.CreateEnvStatus(t, fx.srv.Reopen(t), bobToken, "a", "after"); got != http.StatusCreated {
			t.Errorf("bob may not create environments after joining a team with the role: %d", got)
		}
	})
}

func TestTeamCreateTakesTheReferenceFields(t *testing.T) {
	fx := newTeamFixture(t)
	for _, c := range []struct {
		name   string
		body   map[string]any
		status int
		parts  []string
	}{
		{"memberIDs, the reference's name, sets the members", map[string]any{"key": "t1", "name": "T1", "memberIDs": []string{fx.bob}}, http.StatusCreated, nil},
		{"memberIds, flagplane's name, sets the members", map[string]any{"key": "t2", "name": "T2", "memberIds": []string{fx.bob}}, http.StatusCreated, nil},
		{"an empty permissionGrants list, as LaunchDarkly's Terraform provider sends it, is accepted", map[string]any{"key": "t3", "name": "T3", "memberIDs": []string{fx.bob}, "permissionGrants": []any{}}, http.StatusCreated, nil},
		{"permission grants are refused with 400: flagplane does not model them", map[string]any{"key": "t4", "name": "T4",
			"permissionGrants": []any{map[string]any{"actionSet": "maintainTeam", "memberIDs": []string{fx.bob}}}}, http.StatusBadRequest, []string{"permissionGrants", "not modelled"}},
		{"role attributes are refused with 400: flagplane does not model them", map[string]any{"key": "t5", "name": "T5",
			"roleAttributes": map[string]any{"projects": []string{"a"}}}, http.StatusBadRequest, []string{"roleAttributes"}},
		{"a member that does not exist is refused with 400 naming it", map[string]any{"key": "t6", "name": "T6", "memberIDs": []string{fx.bob, "0123456789abcdef01234567"}},
			http.StatusBadRequest, []string{`"memberIDs[1]"`}},
		{"members under both names are refused with 400", map[string]any{"key": "t7", "name": "T7", "memberIDs": []string{fx.bob}, "memberIds": []string{fx.cat}},
			http.StatusBadRequest, []string{"memberIDs", "memberIds"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := fx.srv.Do(t, http.MethodPost, teamsPath, c.body)
			if c.status != http.StatusCreated {
				apptest.WantError(t, res, c.status, "invalid_request", c.parts...)
				apptest.WantStatus(t, fx.srv.Do(t, http.MethodGet, teamPath(c.body["key"].(string)), nil), http.StatusNotFound)
				return
			}
			apptest.WantStatus(t, res, http.StatusCreated)
			d := readTeam(t, fx.srv, c.body["key"].(string))
			if !slices.Equal(d.MemberIDs, []string{fx.bob}) || d.Version != 1 || d.LastModified != d.CreationDate || d.CreationDate == 0 {
				t.Errorf("team %+v", d)
			}
		})
	}
}

// teamRolesDoc is TeamCustomRoles.
type teamRolesDoc struct {
	TotalCount int `json:"totalCount"`
	Items      []struct {
		Key  string `json:"key"`
		Name string `json:"name"`
	} `json:"items"`
	Links map[string]struct {
		Href string `json:"href"`
	} `json:"_links"`
}

func (d teamRolesDoc) keys() []string {
	out := []string{}
	for _, it := range d.Items {
		out = append(out, it.Key)
	}
	return out
}

func TestTeamRolesAndMaintainers(t *testing.T) {
	fx := newTeamFixture(t)
	apptest.WantStatus(t, fx.patchTeam(t, "application/json", apptest.Instr("addCustomRoles", "values", []string{"auditors"})), http.StatusOK)
	for _, c := range []struct {
		name       string
		query      string
		keys       []string
		total      int
		next, prev bool
	}{
		{"the team's custom roles are listed in the team's order", "", []string{"deployers", "auditors"}, 2, false, false},
		{"limit cuts the first page and links the next", "?limit=1", []string{"deployers"}, 2, true, false},
		{"offset reaches the second page and links the previous", "?limit=1&offset=1", []string{"auditors"}, 2, false, true},
		{"an offset past the end answers no items", "?offset=5", []string{}, 2, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := fx.srv.Do(t, http.MethodGet, teamPath("ops")+"/roles"+c.query, nil)
			apptest.WantStatus(t, res, http.StatusOK)
			var d teamRolesDoc
			res.JSON(t, &d)
			if !slices.Equal(d.keys(), c.keys) || d.TotalCount != c.total {
				t.Errorf("roles %v (totalCount %d), want %v (%d)", d.keys(), d.TotalCount, c.keys, c.total)
			}
			if d.Items != nil && len(d.Items) > 0 && d.Items[0].Name == "" {
				t.Errorf("a role has no name: %s", res.Body)
			}
			_, next := d.Links["next"]
			_, prev := d.Links["prev"]
			if next != c.next || prev != c.prev || d.Links["self"].Href == "" {
				t.Errorf("links %v", d.Links)
			}
		})
	}
	t.Run("a custom role deleted since it was given is left out of the team's roles", func(t *testing.T) {
		apptest.WantStatus(t, fx.srv.Do(t, http.MethodDelete, apptest.API+"/roles/auditors", nil), http.StatusNoContent)
		var d teamRolesDoc
		res := fx.srv.Do(t, http.MethodGet, teamPath("ops")+"/roles", nil)
		apptest.WantStatus(t, res, http.StatusOK)
		res.JSON(t, &d)
		if !slices.Equal(d.keys(), []string{"deployers"}) || d.TotalCount != 1 {
			t.Errorf("roles %v (%d)", d.keys(), d.TotalCount)
		}
	})
	t.Run("a team has no maintainers: flagplane does not model them", func(t *testing.T) {
		res := fx.srv.Do(t, http.MethodGet, teamPath("ops")+"/maintainers?limit=100", nil)
		apptest.WantStatus(t, res, http.StatusOK)
		var d struct {
			TotalCount *int              `json:"totalCount"`
			Items      []json.RawMessage `json:"items"`
			Links      map[string]any    `json:"_links"`
		}
		res.JSON(t, &d)
		if d.TotalCount == nil || *d.TotalCount != 0 || d.Items == nil || len(d.Items) != 0 || d.Links["self"] == nil {
			t.Errorf("maintainers %s", res.Body)
		}
	})
	for _, path := range []string{"/roles", "/maintainers"} {
		t.Run("the "+path[1:]+" of a team that does not exist are not found", func(t *testing.T) {
			apptest.WantError(t, fx.srv.Do(t, http.MethodGet, teamPath("nope")+path, nil), http.StatusNotFound, "not_found")
		})
		t.Run("the "+path[1:]+" with a bad limit are refused with 400 naming it", func(t *testing.T) {
			apptest.WantError(t, fx.srv.Do(t, http.MethodGet, teamPath("ops")+path+"?limit=0", nil), http.StatusBadRequest, "invalid_request", "limit")
		})
	}
}

func TestTeamExpand(t *testing.T) {
	fx := newTeamFixture(t)
	for _, c := range []struct {
		name    string
		expand  string
		present []string
		absent  []string
	}{
		{"a plain read expands nothing", "", nil, []string{"members", "roles", "maintainers", "roleAttributes", "projects"}},
		{"expand=members counts the members", "members", []string{"members"}, []string{"roles"}},
		{"expand=roles,projects,maintainers, as the Terraform provider asks, shows roles and maintainers", "roles,projects,maintainers", []string{"roles", "maintainers"}, []string{"projects", "members"}},
		{"expand=roleAttributes shows none", "roleAttributes", []string{"roleAttributes"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := teamPath("ops")
			if c.expand != "" {
				path += "?expand=" + c.expand
			}
			got := fx.srv.Do(t, http.MethodGet, path, nil)
			apptest.WantStatus(t, got, http.StatusOK)
			m := got.Map(t)
			for _, f := range c.present {
				if m[f] == nil {
					t.Errorf("%s is missing: %s", f, got.Body)
				}
			}
			for _, f := range c.absent {
				if _, ok := m[f]; ok {
					t.Errorf("%s is shown: %s", f, got.Body)
				}
			}
			if c.expand == "members" && m["members"].(map[string]any)["totalCount"] != float64(1) {
				t.Errorf("members %v", m["members"])
			}
			if c.expand == "roles,projects,maintainers" && m["roles"].(map[string]any)["totalCount"] != float64(1) {
				t.Errorf("roles %v", m["roles"])
			}
		})
	}
	t.Run("an expansion the reference does not have is refused with 400 naming it", func(t *testing.T) {
		apptest.WantError(t, fx.srv.Do(t, http.MethodGet, teamPath("ops")+"?expand=everything", nil), http.StatusBadRequest, "invalid_request", "expand", "everything")
	})
	t.Run("a patch with a bad expansion is refused with 400 before it changes anything", func(t *testing.T) {
		before := readTeam(t, fx.srv, "ops")
		apptest.WantError(t, fx.srv.Do(t, http.MethodPatch, teamPath("ops")+"?expand=everything", map[string]any{"instructions": []any{apptest.Instr("updateName", "value", "x")}}),
			http.StatusBadRequest, "invalid_request", "expand")
		if after := readTeam(t, fx.srv, "ops"); !sameTeam(before, after) {
			t.Errorf("a refused patch changed the team")
		}
	})
	t.Run("the list expands its items too", func(t *testing.T) {
		res := fx.srv.Do(t, http.MethodGet, teamsPath+"?expand=members", nil)
		apptest.WantStatus(t, res, http.StatusOK)
		items := res.Map(t)["items"].([]any)
		if len(items) != 1 || items[0].(map[string]any)["members"] == nil {
			t.Errorf("items %v", items)
		}
	})
}

func TestTeamListFilter(t *testing.T) {
	fx := newTeamFixture(t)
	apptest.WantStatus(t, fx.srv.Do(t, http.MethodPost, teamsPath, map[string]any{"key": "empty", "name": "Nobody Here"}), http.StatusCreated)
	for _, c := range []struct {
		name, filter string
		keys         []string
	}{
		{"no filter lists every team", "", []string{"empty", "ops"}},
		{"query matches names ignoring case", "query:nobody", []string{"empty"}},
		{"query matches keys", "query:op", []string{"ops"}},
		{"nomembers:true keeps teams without members", "nomembers:true", []string{"empty"}},
		{"nomembers:false keeps teams with members", "nomembers:false", []string{"ops"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := fx.srv.Do(t, http.MethodGet, teamsPath+"?filter="+c.filter, nil)
			apptest.WantStatus(t, res, http.StatusOK)
			if got := apptest.ItemKeys(t, res); !slices.Equal(got, c.keys) {
				t.Errorf("keys %v, want %v", got, c.keys)
			}
		})
	}
	for _, filter := range []string{"nomembers:maybe", "color:red"} {
		t.Run("filter "+filter+" is refused with 400", func(t *testing.T) {
			apptest.WantError(t, fx.srv.Do(t, http.MethodGet, teamsPath+"?filter="+filter, nil), http.StatusBadRequest, "invalid_request")
		})
	}
}

func TestTeamsWithManyMembers(t *testing.T) {
	fx := newTeamFixture(t)
	var invites []map[string]any
	for i := range 12 {
		invites = append(invites, map[string]any{"email": fmt.Sprintf("many%d@example.com", i)})
	}
	var ids []string
	for _, m := range apptest.InviteMembers(t, fx.srv, invites...) {
		ids = append(ids, m.ID)
	}
	t.Run("replaceMembers with a dozen members sets them all", func(t *testing.T) {
		apptest.WantStatus(t, fx.patchTeam(t, "application/json", apptest.Instr("replaceMembers", "values", ids)), http.StatusOK)
		if got := readTeam(t, fx.srv, "ops").MemberIDs; !slices.Equal(got, ids) {
			t.Errorf("memberIds %v, want %v", got, ids)
		}
	})
	t.Run("one member that does not exist among a dozen fails with 422 naming it", func(t *testing.T) {
		bad := append(slices.Clone(ids[:6]), append([]string{"0123456789abcdef01234567"}, ids[6:]...)...)
		apptest.WantError(t, fx.patchTeam(t, "application/json", apptest.Instr("replaceMembers", "values", []string{fx.ann}), apptest.Instr("replaceMembers", "values", bad)),
			http.StatusUnprocessableEntity, "patch_failed", "instructions[1]", "0123456789abcdef01234567", "values[6]")
		if got := readTeam(t, fx.srv, "ops").MemberIDs; !slices.Equal(got, ids) {
			t.Errorf("a refused patch changed the members to %v", got)
		}
	})
	t.Run("instructions naming more members than a team holds are refused with 400 before any is read", func(t *testing.T) {
		many := make([]string, team.MaxMembers+1)
		for i := range many {
			many[i] = fmt.Sprintf("%024x", i)
		}
		apptest.WantError(t, fx.patchTeam(t, "application/json", apptest.Instr("addMembers", "values", many)), http.StatusBadRequest, "invalid_request", fmt.Sprint(team.MaxMembers))
	})
	t.Run("instructions naming more custom roles than a team holds are refused with 400", func(t *testing.T) {
		many := make([]string, team.MaxCustomRoles+1)
		for i := range many {
			many[i] = fmt.Sprintf("role-%d", i)
		}
		apptest.WantError(t, fx.patchTeam(t, "application/json", apptest.Instr("addCustomRoles", "values", many)), http.StatusBadRequest, "invalid_request", fmt.Sprint(team.MaxCustomRoles))
	})
}

func TestARemovedMemberLeavesItsTeams(t *testing.T) {
	fx := newTeamFixture(t)
	apptest.WantStatus(t, fx.srv.Do(t, http.MethodPost, teamsPath, map[string]any{"key": "dev", "name": "Dev", "memberIDs": []string{fx.bob, fx.ann}}), http.StatusCreated)
	before := readTeam(t, fx.srv, "dev")
	apptest.WantStatus(t, fx.srv.Do(t, http.MethodDelete, apptest.MemberPath(fx.ann), nil), http.StatusNoContent)
	for _, c := range []struct {
		key  string
		want []string
	}{
		{"ops", []string{}},
		{"dev", []string{fx.bob}},
	} {
		t.Run("team "+c.key+" no longer names the removed member", func(t *testing.T) {
			d := readTeam(t, fx.srv, c.key)
			if !slices.Equal(d.MemberIDs, c.want) {
				t.Errorf("memberIds %v, want %v", d.MemberIDs, c.want)
			}
		})
	}
	t.Run("the team's version moves, and the removal is one audit entry, the member's", func(t *testing.T) {
		if d := readTeam(t, fx.srv, "dev"); d.Version != before.Version+1 {
			t.Errorf("version %d, want %d", d.Version, before.Version+1)
		}
		if e := apptest.LatestAuditEntry(t, fx.srv); e.Kind != "member" || !slices.Equal(e.Actions(), []string{"deleteMember"}) {
			t.Errorf("latest entry %s %v", e.Kind, e.Actions())
		}
	})
	t.Run("a member on no team is removed as before", func(t *testing.T) {
		apptest.WantStatus(t, fx.srv.Do(t, http.MethodDelete, apptest.MemberPath(fx.cat), nil), http.StatusNoContent)
		apptest.WantStatus(t, fx.srv.Do(t, http.MethodGet, apptest.MemberPath(fx.cat), nil), http.StatusNotFound)
	})
	t.Run("the owner still cannot be removed, and its teams keep it", func(t *testing.T) {
		owner := apptest.MemberIDByEmail(t, fx.srv, "owner@flagplane.local")
		apptest.WantStatus(t, fx.patchTeam(t, "application/json", apptest.Instr("addMembers", "values", []string{owner})), http.StatusOK)
		apptest.WantError(t, fx.srv.Do(t, http.MethodDelete, apptest.MemberPath(owner), nil), http.StatusBadRequest, "invalid_request", "owner")
		if d := readTeam(t, fx.srv, "ops"); !slices.Contains(d.MemberIDs, owner) {
			t.Errorf("a refused removal took the owner off the team: %v", d.MemberIDs)
		}
	})
}
