package app_test

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/store/dynamo/dynamotest"
	"github.com/flagplane/flagplane/shared/token"
)

// The rights-by-environment matrix: every flag change is authorized on the
// environment it touches (proj/<p>;<tags>:env/<e>;<tags>:flag/<f>;<tags>),
// changes to the flag's settings on env/*. Each case runs a change with a
// custom role's token against a fresh flag and proves that an allowed
// change lands and a refused one changes nothing, on the embedded store
// and, in the DynamoDB tier, on DynamoDB Local.

const (
	semanticPatch = "application/json; domain-model=flagplane.semanticpatch"
	rightsProject = "shop" // tagged team-a; staging untagged, production tagged critical
)

// envRole is a custom role and, written out by hand, what it allows: the
// expectation must not come from the policy engine under test.
type envRole struct {
	key        string
	statements []map[string]any
	allows     func(action, env string, flagTagged bool) bool
}

var envRoles = []envRole{
	{
		key:        "staging-switch",
		statements: []map[string]any{allow([]string{"updateOn"}, "proj/shop:env/staging:flag/*")},
		allows:     func(a, env string, _ bool) bool { return a == "updateOn" && env == "staging" },
	},
	{
		key: "all-but-critical",
		statements: []map[string]any{
			allow([]string{"*"}, "proj/shop:env/*:flag/*"),
			{"effect": "deny", "actions": []string{"*"}, "resources": []string{"proj/shop:env/*;critical:flag/*"}},
		},
		allows: func(_, env string, _ bool) bool { return env != "production" },
	},
	{
		key:        "beta-targeting",
		statements: []map[string]any{allow([]string{"updateTargets", "updateOn"}, "proj/shop:env/*:flag/*;beta")},
		allows: func(a, _ string, tagged bool) bool {
			return tagged && (a == "updateTargets" || a == "updateOn")
		},
	},
	{
		key:        "team-a-production-rules",
		statements: []map[string]any{allow([]string{"updateRules", "updateFallthrough"}, "proj/*;team-a:env/production:flag/*")},
		allows: func(a, env string, _ bool) bool {
			return env == "production" && (a == "updateRules" || a == "updateFallthrough")
		},
	},
	{
		key:        "settings-only",
		statements: []map[string]any{allow([]string{"updateName", "updateDescription"}, "proj/shop:env/*:flag/*")},
		allows:     func(a, env string, _ bool) bool { return env == "*" && (a == "updateName" || a == "updateDescription") },
	},
}

func allow(actions []string, resources ...string) map[string]any {
	return map[string]any{"effect": "allow", "actions": actions, "resources": resources}
}

// flagChange is one change to a flag: its body, the action it performs,
// and how its effect shows on the flag read back.
type flagChange struct {
	name        string
	action      string
	semantic    bool
	body        func(env string, f rightsFlag) any
	landed      func(f rightsFlag, env string) bool
	envScoped   bool // false: a change to the flag's settings, authorized on env/*
	bothEnvs    bool // a JSON patch touching staging and production at once
	description string
}

func instructions(env string, ins ...map[string]any) map[string]any {
	body := map[string]any{"instructions": ins}
	if env != "" {
		body["environmentKey"] = env
	}
	return body
}

var flagChanges = []flagChange{
	{name: "turnFlagOn", action: "updateOn", semantic: true, envScoped: true,
		body:   func(env string, _ rightsFlag) any { return instructions(env, map[string]any{"kind": "turnFlagOn"}) },
		landed: func(f rightsFlag, env string) bool { return f.Environments[env].On }},
	{name: "addUserTargets", action: "updateTargets", semantic: true, envScoped: true,
		body: func(env string, f rightsFlag) any {
			return instructions(env, map[string]any{"kind": "addUserTargets", "values": []string{"u1"}, "variationId": f.Variations[0].ID})
		},
		landed: func(f rightsFlag, env string) bool { return len(f.Environments[env].Targets) == 1 }},
	{name: "addRule", action: "updateRules", semantic: true, envScoped: true,
		body: func(env string, f rightsFlag) any {
			return instructions(env, map[string]any{"kind": "addRule", "variationId": f.Variations[0].ID,
				"clauses": []map[string]any{{"contextKind": "user", "attribute": "email", "op": "endsWith", "values": []string{"@example.com"}}}})
		},
		landed: func(f rightsFlag, env string) bool { return len(f.Environments[env].Rules) == 1 }},
	{name: "updateFallthroughVariationOrRollout", action: "updateFallthrough", semantic: true, envScoped: true,
		body: func(env string, f rightsFlag) any {
			return instructions(env, map[string]any{"kind": "updateFallthroughVariationOrRollout", "variationId": f.Variations[1].ID})
		},
		landed: func(f rightsFlag, env string) bool {
			v := f.Environments[env].Fallthrough.Variation
			return v != nil && *v == 1
		}},
	{name: "updateOffVariation", action: "updateOffVariation", semantic: true, envScoped: true,
		body: func(env string, f rightsFlag) any {
			return instructions(env, map[string]any{"kind": "updateOffVariation", "variationId": f.Variations[0].ID})
		},
		landed: func(f rightsFlag, env string) bool {
			v := f.Environments[env].OffVariation
			return v != nil && *v == 0
		}},
	{name: "JSON patch of /environments/<env>/on", action: "updateOn", envScoped: true,
		body: func(env string, _ rightsFlag) any {
			return []map[string]any{{"op": "replace", "path": "/environments/" + env + "/on", "value": true}}
		},
		landed: func(f rightsFlag, env string) bool { return f.Environments[env].On }},
	{name: "JSON patch of /environments/<env>/rules", action: "updateRules", envScoped: true,
		body: func(env string, f rightsFlag) any {
			return []map[string]any{{"op": "add", "path": "/environments/" + env + "/rules/-", "value": map[string]any{
				"variation": 0, "clauses": []map[string]any{{"attribute": "email", "op": "in", "values": []string{"a@b.c"}}}}}}
		},
		landed: func(f rightsFlag, env string) bool { return len(f.Environments[env].Rules) == 1 }},
	{name: "JSON patch of /environments/<env>/trackEvents", action: "updateTrackEvents", envScoped: true,
		body: func(env string, _ rightsFlag) any {
			return []map[string]any{{"op": "replace", "path": "/environments/" + env + "/trackEvents", "value": true}}
		},
		landed: func(f rightsFlag, env string) bool { return f.Environments[env].TrackEvents }},
	{name: "semantic updateName", action: "updateName", semantic: true,
		body: func(string, rightsFlag) any {
			return instructions("", map[string]any{"kind": "updateName", "value": "Renamed"})
		},
		landed: func(f rightsFlag, _ string) bool { return f.Name == "Renamed" }},
	{name: "semantic updateName sent with an environment key", action: "updateName", semantic: true,
		body: func(env string, _ rightsFlag) any {
			return instructions(env, map[string]any{"kind": "updateName", "value": "Renamed"})
		},
		landed: func(f rightsFlag, _ string) bool { return f.Name == "Renamed" }},
	{name: "JSON patch of /description", action: "updateDescription",
		body: func(string, rightsFlag) any {
			return []map[string]any{{"op": "replace", "path": "/description", "value": "changed"}}
		},
		landed: func(f rightsFlag, _ string) bool { return f.Description == "changed" }},
	{name: "JSON patch turning the flag on in staging and production at once", action: "updateOn", envScoped: true, bothEnvs: true,
		body: func(string, rightsFlag) any {
			return []map[string]any{
				{"op": "replace", "path": "/environments/staging/on", "value": true},
				{"op": "replace", "path": "/environments/production/on", "value": true},
			}
		},
		landed: func(f rightsFlag, _ string) bool {
			return f.Environments["staging"].On && f.Environments["production"].On
		}},
}

type rightsFlag struct {
	Key         string `json:"key"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Version     int    `json:"_version"`
	Variations  []struct {
		ID string `json:"_id"`
	} `json:"variations"`
	Environments map[string]struct {
		On          bool  `json:"on"`
		TrackEvents bool  `json:"trackEvents"`
		Targets     []any `json:"targets"`
		Rules       []any `json:"rules"`
		Fallthrough struct {
			Variation *int `json:"variation"`
		} `json:"fallthrough"`
		OffVariation *int `json:"offVariation"`
		Access       *struct {
			Allowed []struct {
				Action string `json:"action"`
			} `json:"allowed"`
			Denied []struct {
				Action string `json:"action"`
			} `json:"denied"`
		} `json:"_access"`
	} `json:"environments"`
}

// rightsBackends runs fn on the embedded store and, when the DynamoDB tier
// provides an endpoint, on DynamoDB Local.
func rightsBackends(t *testing.T, fn func(t *testing.T, srv *apptest.Server)) {
	t.Run("on the embedded store", func(t *testing.T) { fn(t, apptest.New(t)) })
	t.Run("on DynamoDB", func(t *testing.T) {
		table, _ := dynamotest.NewTable(t)
		fn(t, apptest.New(t, apptest.WithTable(table)))
	})
}

// rightsSetup makes the project, its two environments and one token per role.
func rightsSetup(t *testing.T, srv *apptest.Server) map[string]string {
	t.Helper()
	res := srv.Do(t, http.MethodPost, "/api/v2/projects", map[string]any{"key": rightsProject, "name": "Shop", "tags": []string{"team-a"},
		"environments": []map[string]any{
			{"key": "staging", "name": "Staging", "color": "00AA00"},
			{"key": "production", "name": "Production", "color": "AA0000", "tags": []string{"critical"}},
		}})
	if res.Status != http.StatusCreated {
		t.Fatalf("create project: %d %s", res.Status, res.Body)
	}
	tokens := map[string]string{}
	for _, role := range envRoles {
		res := srv.Do(t, http.MethodPost, "/api/v2/roles", map[string]any{"key": role.key, "name": role.key, "policy": role.statements})
		if res.Status != http.StatusCreated {
			t.Fatalf("create role %s: %d %s", role.key, res.Status, res.Body)
		}
		_, tok := srv.MustCreateToken(t, map[string]any{"name": role.key, "customRoleIds": []string{role.key}})
		tokens[role.key] = tok
	}
	return tokens
}

func createRightsFlag(t *testing.T, srv *apptest.Server, key string, tags []string) rightsFlag {
	t.Helper()
	res := srv.Do(t, http.MethodPost, "/api/v2/flags/"+rightsProject, map[string]any{"key": key, "name": key, "tags": tags})
	if res.Status != http.StatusCreated {
		t.Fatalf("create flag %s: %d %s", key, res.Status, res.Body)
	}
	var f rightsFlag
	res.JSON(t, &f)
	return f
}

func sendChange(t *testing.T, srv *apptest.Server, c flagChange, env string, f rightsFlag, tok string) *apptest.Response {
	t.Helper()
	ct := "application/json"
	if c.semantic {
		ct = semanticPatch
	}
	return srv.Do(t, http.MethodPatch, "/api/v2/flags/"+rightsProject+"/"+f.Key, c.body(env, f), "Authorization", tok, "Content-Type", ct)
}

func TestFlagRightsByEnvironment(t *testing.T) {
	rightsBackends(t, func(t *testing.T, srv *apptest.Server) {
		tokens := rightsSetup(t, srv)
		n := 0
		for _, role := range envRoles {
			for _, c := range flagChanges {
				envs := []string{"staging", "production"}
				if c.bothEnvs {
					envs = []string{"both"}
				}
				for _, env := range envs {
					for _, tagged := range []bool{false, true} {
						// What the change needs, by hand: its action in each environment it touches.
						needs := []string{env}
						switch {
						case c.bothEnvs:
							needs = []string{"staging", "production"}
						case !c.envScoped:
							needs = []string{"*"}
						}
						want := true
						for _, e := range needs {
							want = want && role.allows(c.action, e, tagged)
						}
						tags, flagTags := "an untagged flag", []string(nil)
						if tagged {
							tags, flagTags = "a flag tagged beta", []string{"beta"}
						}
						verb := "is refused and changes nothing"
						if want {
							verb = "lands"
						}
						name := fmt.Sprintf("%s: %s in %s on %s %s", role.key, c.name, env, tags, verb)
						n++
						t.Run(name, func(t *testing.T) {
							f := createRightsFlag(t, srv, fmt.Sprintf("f%d", n), flagTags)
							before := srv.Do(t, http.MethodGet, "/api/v2/flags/"+rightsProject+"/"+f.Key, nil)
							res := sendChange(t, srv, c, env, f, tokens[role.key])
							after := srv.Do(t, http.MethodGet, "/api/v2/flags/"+rightsProject+"/"+f.Key, nil)
							var got rightsFlag
							after.JSON(t, &got)
							if want {
								if res.Status != http.StatusOK {
									t.Fatalf("status %d, want 200: %s", res.Status, res.Body)
								}
								if !c.landed(got, env) {
									t.Fatalf("answered 200 but the change is not stored: %s", after.Body)
								}
								return
							}
							if res.Status != http.StatusForbidden {
								t.Fatalf("status %d, want 403: %s", res.Status, res.Body)
							}
							if !bytes.Equal(before.Body, after.Body) {
								t.Fatalf("a refused change altered the flag:\nbefore %s\nafter  %s", before.Body, after.Body)
							}
							if !strings.Contains(res.String(), c.action) {
								t.Errorf("403 does not name the action %s: %s", c.action, res.Body)
							}
						})
					}
				}
			}
		}
		t.Logf("%d roles × changes × environments × flag tags: %d cases", len(envRoles), n)
	})
}

func TestFlagRightsMessagesAndAccess(t *testing.T) {
	srv := apptest.New(t)
	tokens := rightsSetup(t, srv)
	f := createRightsFlag(t, srv, "checkout", []string{"beta"})

	t.Run("a refusal names the environment-level specifier with its tags", func(t *testing.T) {
		res := sendChange(t, srv, flagChanges[0], "production", f, tokens["all-but-critical"])
		want := "updateOn on proj/shop;team-a:env/production;critical:flag/checkout;beta: a deny statement of role \"all-but-critical\""
		msg, _ := res.Map(t)["message"].(string)
		if res.Status != http.StatusForbidden || !strings.Contains(msg, want) {
			t.Fatalf("status %d %s, want 403 naming %q", res.Status, res.Body, want)
		}
	})

	t.Run("_access on each environment reflects the decision there", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, "/api/v2/flags/"+rightsProject+"/checkout?expand=access", nil, "Authorization", tokens["staging-switch"])
		var got rightsFlag
		res.JSON(t, &got)
		allowed := func(env string) []string {
			var out []string
			if a := got.Environments[env].Access; a != nil {
				for _, e := range a.Allowed {
					out = append(out, e.Action)
				}
			}
			return out
		}
		if !slices.Contains(allowed("staging"), "updateOn") || slices.Contains(allowed("production"), "updateOn") {
			t.Fatalf("updateOn allowed in staging %v, in production %v; want staging only", allowed("staging"), allowed("production"))
		}
		if got.Environments["production"].Access == nil || len(got.Environments["production"].Access.Denied) == 0 {
			t.Fatalf("production _access lists no denied action: %s", res.Body)
		}
	})

	t.Run("a list summary leaves per-environment _access out", func(t *testing.T) {
		var list struct {
			Items []struct {
				Environments map[string]map[string]any `json:"environments"`
			} `json:"items"`
		}
		srv.Do(t, http.MethodGet, "/api/v2/flags/"+rightsProject+"?env=staging&env=production", nil).JSON(t, &list)
		if len(list.Items) != 1 || len(list.Items[0].Environments) != 2 {
			t.Fatalf("list %+v, want one flag in two environments", list)
		}
		for env, c := range list.Items[0].Environments {
			if _, ok := c["_access"]; ok {
				t.Errorf("summary of %s carries _access", env)
			}
		}
	})
}

// TestApprovalAndExpiringRightsByEnvironment: approval requests are
// created, reviewed, applied and deleted, and expiring targets scheduled,
// with rights on the request's or the path's environment.
func TestApprovalAndExpiringRightsByEnvironment(t *testing.T) {
	rightsBackends(t, func(t *testing.T, srv *apptest.Server) {
		rightsSetup(t, srv)
		f := createRightsFlag(t, srv, "checkout", nil)
		beta := createRightsFlag(t, srv, "beta-flag", []string{"beta"})
		roleToken := func(key string, statements ...map[string]any) string {
			t.Helper()
			if res := srv.Do(t, http.MethodPost, "/api/v2/roles", map[string]any{"key": key, "name": key, "policy": statements}); res.Status != http.StatusCreated {
				t.Fatalf("create role %s: %d %s", key, res.Status, res.Body)
			}
			// A member of its own, so that reviewing the admin's requests is not reviewing one's own.
			res := srv.Do(t, http.MethodPost, "/api/v2/members", []map[string]any{{"email": key + "@example.com", "role": "reader", "customRoles": []string{key}}})
			if res.Status != http.StatusCreated {
				t.Fatalf("invite member: %d %s", res.Status, res.Body)
			}
			var members struct {
				Items []struct {
					ID string `json:"_id"`
				} `json:"items"`
			}
			res.JSON(t, &members)
			_, tok := srv.MustIssueToken(t, token.Spec{Name: key, CustomRoleIDs: []string{key}, MemberID: members.Items[0].ID})
			return tok
		}
		reviewer := roleToken("staging-approver", allow([]string{"createApprovalRequest", "reviewApprovalRequest", "applyApprovalRequest", "deleteApprovalRequest"},
			"proj/shop:env/staging:flag/*"))
		expirer := roleToken("staging-expirer", allow([]string{"updateExpiringTargets"}, "proj/shop:env/staging:flag/*"))
		betaExpirer := roleToken("beta-expirer", allow([]string{"updateExpiringTargets"}, "proj/shop:env/*:flag/*;beta"))

		request := func(env, tok string) *apptest.Response {
			return srv.Do(t, http.MethodPost, "/api/v2/approval-requests", map[string]any{
				"resourceId": "proj/shop:env/" + env + ":flag/checkout", "description": "turn on in " + env,
				"instructions": []map[string]any{{"kind": "turnFlagOn"}}}, "Authorization", tok)
		}
		requestID := func(res *apptest.Response) string {
			t.Helper()
			if res.Status != http.StatusCreated {
				t.Fatalf("create approval request: %d %s", res.Status, res.Body)
			}
			id, _ := res.Map(t)["_id"].(string)
			return id
		}
		count := func() int {
			var list struct {
				TotalCount int `json:"totalCount"`
			}
			srv.Do(t, http.MethodGet, "/api/v2/approval-requests", nil).JSON(t, &list)
			return list.TotalCount
		}
		status := func(id string) string {
			s, _ := srv.Do(t, http.MethodGet, "/api/v2/approval-requests/"+id, nil).Map(t)["reviewStatus"].(string)
			return s
		}
		flagOn := func(key, env string) bool {
			var got rightsFlag
			srv.Do(t, http.MethodGet, "/api/v2/flags/shop/"+key, nil).JSON(t, &got)
			return got.Environments[env].On
		}
		staging := requestID(request("staging", srv.Token))
		production := requestID(request("production", srv.Token))

		t.Run("a staging approver creates requests in staging only", func(t *testing.T) {
			requestID(request("staging", reviewer))
			n := count()
			if res := request("production", reviewer); res.Status != http.StatusForbidden {
				t.Fatalf("production request: %d %s, want 403", res.Status, res.Body)
			}
			if count() != n {
				t.Fatal("a refused request was stored")
			}
		})
		t.Run("a staging approver reviews staging's requests, not production's", func(t *testing.T) {
			approve := map[string]any{"kind": "approve"}
			if res := srv.Do(t, http.MethodPost, "/api/v2/approval-requests/"+staging+"/reviews", approve, "Authorization", reviewer); res.Status != http.StatusOK {
				t.Fatalf("review staging: %d %s", res.Status, res.Body)
			}
			if res := srv.Do(t, http.MethodPost, "/api/v2/approval-requests/"+production+"/reviews", approve, "Authorization", reviewer); res.Status != http.StatusForbidden {
				t.Fatalf("review production: %d %s, want 403", res.Status, res.Body)
			}
			if status(staging) != "approved" || status(production) != "pending" {
				t.Fatalf("review status staging %q production %q", status(staging), status(production))
			}
		})
		t.Run("a staging approver applies staging's request, not production's", func(t *testing.T) {
			if res := srv.Do(t, http.MethodPost, "/api/v2/approval-requests/"+production+"/apply", map[string]any{}, "Authorization", reviewer); res.Status != http.StatusForbidden {
				t.Fatalf("apply production: %d %s, want 403", res.Status, res.Body)
			}
			if res := srv.Do(t, http.MethodPost, "/api/v2/approval-requests/"+staging+"/apply", map[string]any{}, "Authorization", reviewer); res.Status != http.StatusOK {
				t.Fatalf("apply staging: %d %s", res.Status, res.Body)
			}
			if !flagOn("checkout", "staging") || flagOn("checkout", "production") {
				t.Fatalf("on in staging %v, in production %v; want staging only", flagOn("checkout", "staging"), flagOn("checkout", "production"))
			}
		})
		t.Run("a staging approver may not delete production's request", func(t *testing.T) {
			if res := srv.Do(t, http.MethodDelete, "/api/v2/approval-requests/"+production, nil, "Authorization", reviewer); res.Status != http.StatusForbidden {
				t.Fatalf("delete production: %d %s, want 403", res.Status, res.Body)
			}
			if res := srv.Do(t, http.MethodGet, "/api/v2/approval-requests/"+production, nil); res.Status != http.StatusOK {
				t.Fatalf("production request after a refused delete: %d", res.Status)
			}
		})

		// Expiring targets need the user targeted first.
		for _, fl := range []rightsFlag{f, beta} {
			for _, env := range []string{"staging", "production"} {
				res := sendChange(t, srv, flagChanges[1], env, fl, srv.Token)
				if res.Status != http.StatusOK {
					t.Fatalf("target u1: %d %s", res.Status, res.Body)
				}
			}
		}
		expire := func(path, flagKey string, fl rightsFlag, tok string) *apptest.Response {
			ins := map[string]any{"kind": "addExpireUserTargetDate", "userKey": "u1", "variationId": fl.Variations[0].ID, "value": 4102444800000}
			if flagKey != "" {
				ins["flagKey"] = flagKey
			}
			return srv.Do(t, http.MethodPatch, path, map[string]any{"instructions": []map[string]any{ins}}, "Authorization", tok, "Content-Type", semanticPatch)
		}
		scheduled := func(env, flagKey string) int {
			var list struct {
				Items []any `json:"items"`
			}
			srv.Do(t, http.MethodGet, "/api/v2/flags/shop/"+flagKey+"/expiring-user-targets/"+env, nil).JSON(t, &list)
			return len(list.Items)
		}
		cases := []struct {
			name    string
			tok     string
			path    string
			flagKey string // for the per-user route
			fl      rightsFlag
			env     string
			want    int
		}{
			{"a staging expirer schedules a removal in staging on the flag's route", expirer, "/api/v2/flags/shop/checkout/expiring-user-targets/staging", "", f, "staging", 200},
			{"a staging expirer is refused in production on the flag's route", expirer, "/api/v2/flags/shop/checkout/expiring-user-targets/production", "", f, "production", 403},
			{"a staging expirer schedules a removal in staging on the user's route", expirer, "/api/v2/users/shop/u1/expiring-user-targets/staging", "beta-flag", beta, "staging", 200},
			{"a staging expirer is refused in production on the user's route", expirer, "/api/v2/users/shop/u1/expiring-user-targets/production", "beta-flag", beta, "production", 403},
			{"a beta expirer is refused on an untagged flag on the user's route", betaExpirer, "/api/v2/users/shop/u1/expiring-user-targets/production", "checkout", f, "production", 403},
			{"a beta expirer schedules a removal on a beta flag on the user's route", betaExpirer, "/api/v2/users/shop/u1/expiring-user-targets/production", "beta-flag", beta, "production", 200},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				before := scheduled(tc.env, tc.fl.Key)
				res := expire(tc.path, tc.flagKey, tc.fl, tc.tok)
				if res.Status != tc.want {
					t.Fatalf("status %d, want %d: %s", res.Status, tc.want, res.Body)
				}
				after := scheduled(tc.env, tc.fl.Key)
				if tc.want == http.StatusOK && after != before+1 || tc.want != http.StatusOK && after != before {
					t.Fatalf("scheduled removals %d before, %d after", before, after)
				}
			})
		}
	})
}
