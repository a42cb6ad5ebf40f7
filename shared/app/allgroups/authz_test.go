package allgroups_test

import (
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/token"
)

// The authorization matrix: every built operation of the catalog, called
// with a valid request by callers of every kind, must answer as the one
// check in the router decides (shared/api/authorize.go).

// azPathParam matches the {name} segments of a catalog path.
var azPathParam = regexp.MustCompile(`\{([^}]*)\}`)

// azPublic reports whether op takes no access token (the catalog's Public
// field, read by name so this file does not depend on it existing).
func azPublic(op catalog.Operation) bool {
	f := reflect.ValueOf(op).FieldByName("Public")
	return f.IsValid() && f.Kind() == reflect.Bool && f.Bool()
}

// azBuilt returns the operations that answer something other than 501
// with the admin token: the built ones. It calls every operation on keys
// that do not exist, so it changes nothing. A 403 says nothing about an
// operation (the check runs before the handler), so those are left out
// here and reported by TestBuiltInRolesReachEveryCatalogOperation.
func azBuilt(t *testing.T, srv *apptest.Server) []catalog.Operation {
	t.Helper()
	var out []catalog.Operation
	for _, op := range catalog.All() {
		if azPublic(op) {
			continue
		}
		var body any
		switch op.Method {
		case http.MethodPost, http.MethodPut:
			body = "{}"
		case http.MethodPatch:
			body = `[{"op":"replace","path":"/name","value":"x"}]`
		}
		res := srv.Do(t, op.Method, azPathParam.ReplaceAllString(op.Path, "does-not-exist"), body, "SVC-API-Version", "beta")
		if res.Status != http.StatusNotImplemented && res.Status != http.StatusForbidden {
			out = append(out, op)
		}
	}
	if len(out) == 0 {
		t.Fatal("no catalog operation is built")
	}
	return out
}

// azAccountKinds are the resource kinds of account management, which a
// writer may not change.
var azAccountKinds = map[string]bool{"member": true, "role": true, "team": true, "oauth-client": true, "service-token": true}

func azAccountOp(op catalog.Operation) bool {
	kind, _, _ := strings.Cut(op.Resource, "/")
	return azAccountKinds[kind]
}

func azRead(op catalog.Operation) bool { return op.Scope == catalog.Read }

func azHasProject(op catalog.Operation) bool { return strings.Contains(op.Path, "{projectKey}") }

// azPatch is a harmless JSON patch: a new name.
func azPatch(field string) []apptest.PatchOp {
	return []apptest.PatchOp{apptest.Replace("/"+field, "Renamed by the matrix")}
}

// azBodies are minimal valid bodies, by operation id. Operations not
// listed (built after this file was written) get {} or a patch of /name,
// and only a lenient check when they should be allowed.
var azBodies = map[string]func(f *azFixture) any{
	"postProject": func(f *azFixture) any {
		return map[string]any{"key": f.unique("proj"), "name": "Matrix project", "environments": []any{}}
	},
	"patchProject": func(*azFixture) any { return azPatch("name") },
	"postEnvironment": func(f *azFixture) any {
		return map[string]any{"key": f.unique("env"), "name": "Matrix env", "color": "336699"}
	},
	"patchEnvironment": func(*azFixture) any { return azPatch("name") },
	"postToken":        func(f *azFixture) any { return map[string]any{"name": f.unique("token"), "role": "reader"} },
	"patchToken":       func(*azFixture) any { return azPatch("name") },
	"postCustomRole": func(f *azFixture) any {
		return map[string]any{"key": f.unique("role"), "name": "Matrix role", "policy": []map[string]any{
			{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"viewProject"}},
		}}
	},
	"patchCustomRole": func(*azFixture) any { return azPatch("name") },
	"postMembers": func(f *azFixture) any {
		return []map[string]any{{"email": f.unique("member") + "@example.com", "role": "reader"}}
	},
	"patchMember": func(*azFixture) any { return azPatch("firstName") },
	"postTeam":    func(f *azFixture) any { return map[string]any{"key": f.unique("team"), "name": "Matrix team"} },
	"patchTeam":   func(*azFixture) any { return azPatch("name") },
	"createOAuth2Client": func(f *azFixture) any {
		return map[string]any{"name": f.unique("client"), "redirectUri": "https://example.com/cb"}
	},
	"patchOAuthClient": func(*azFixture) any { return azPatch("name") },
	"postSegment":      func(f *azFixture) any { return map[string]any{"key": f.unique("segment"), "name": "Matrix segment"} },
	"patchSegment":     func(*azFixture) any { return azPatch("name") },
}

// azReadsKnown are the reads whose request here is known to succeed.
var azReadsKnown = map[string]bool{
	"getProjects": true, "getProject": true, "getEnvironmentsByProject": true, "getEnvironment": true,
	"getAuditLogEntries": true, "getAuditLogEntry": true, "getTokens": true, "getToken": true,
	"getMembers": true, "getMember": true, "getCustomRoles": true, "getCustomRole": true,
	"getTeams": true, "getTeam": true, "getOAuthClients": true, "getOAuthClientById": true,
	"getSegments": true, "getSegment": true,
}

// azWritesKnown are the writes without a body whose request here is known to succeed.
var azWritesKnown = map[string]bool{
	"deleteProject": true, "deleteEnvironment": true, "resetEnvironmentSDKKey": true, "resetEnvironmentMobileKey": true,
	"deleteToken": true, "resetToken": true, "deleteCustomRole": true, "deleteMember": true, "deleteTeam": true,
	"deleteOAuthClient": true, "deleteSegment": true,
}

func azKnown(op catalog.Operation) bool {
	_, body := azBodies[op.ID]
	return body || azReadsKnown[op.ID] || azWritesKnown[op.ID]
}

// azFixture holds the resources the requests name. The victims are read
// and patched by the matrix; deletes get a throwaway resource of their own
// when they are expected to succeed.
type azFixture struct {
	srv                                           *apptest.Server
	n                                             int
	tokenID, memberID, roleKey, teamKey, clientID string
	auditID, ownerID                              string
}

func (f *azFixture) unique(prefix string) string {
	f.n++
	return fmt.Sprintf("mx-%s-%d", prefix, f.n)
}

func newAZFixture(t *testing.T, srv *apptest.Server) *azFixture {
	t.Helper()
	f := &azFixture{srv: srv, teamKey: "does-not-exist", clientID: "does-not-exist"}
	srv.MustCreateProject(t, "a")
	srv.MustCreateProject(t, "b")
	for _, p := range []string{"a", "b"} {
		apptest.WantStatus(t, srv.Do(t, http.MethodPost, api+"/segments/"+p+"/test", map[string]any{"key": "victim", "name": "Victim"}), http.StatusCreated)
	}
	f.tokenID, _ = srv.MustCreateToken(t, map[string]any{"name": "victim", "role": "reader"})
	f.memberID = f.invite(t, "victim@example.com", "reader")
	f.roleKey = f.role(t, "victim-role", map[string]any{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"viewProject"}})
	if res := srv.Do(t, http.MethodPost, api+"/teams", map[string]any{"key": "victim-team", "name": "Victim"}); res.Status == http.StatusCreated {
		f.teamKey = "victim-team"
	}
	if res := srv.Do(t, http.MethodPost, api+"/oauth/clients", map[string]any{"name": "victim", "redirectUri": "https://example.com/cb"}); res.Status == http.StatusCreated {
		f.clientID, _ = res.Map(t)["_clientId"].(string)
	}
	var log struct {
		Items []struct {
			ID string `json:"_id"`
		} `json:"items"`
	}
	res := srv.Do(t, http.MethodGet, api+"/auditlog", nil)
	apptest.WantStatus(t, res, http.StatusOK)
	res.JSON(t, &log)
	if len(log.Items) == 0 {
		t.Fatalf("the audit log is empty: %s", res.Body)
	}
	f.auditID = log.Items[0].ID
	f.ownerID = apptest.MemberIDByEmail(t, srv, "owner@flagplane.local")
	return f
}

// invite adds a member with the admin token and returns its id.
func (f *azFixture) invite(t testing.TB, email, role string) string {
	t.Helper()
	res := f.srv.Do(t, http.MethodPost, api+"/members", []map[string]any{{"email": email, "role": role}})
	apptest.WantStatus(t, res, http.StatusCreated)
	var out struct {
		Items []struct {
			ID string `json:"_id"`
		} `json:"items"`
	}
	res.JSON(t, &out)
	return out.Items[0].ID
}

// role creates a custom role with the admin token and returns its key.
func (f *azFixture) role(t testing.TB, key string, statements ...map[string]any) string {
	t.Helper()
	apptest.CreateRole(t, f.srv, key, "", statements...)
	return key
}

// azRequest is one request of the matrix.
type azRequest struct {
	path string
	body any
}

// request builds a valid request for op in project (a or b; "" lets a
// delete use a throwaway project). fresh asks for a throwaway target for a
// delete that is expected to succeed. ok is false when no such request can
// be made without destroying a fixture.
func (f *azFixture) request(t *testing.T, op catalog.Operation, project string, fresh bool) (req azRequest, ok bool) {
	t.Helper()
	srv := f.srv
	fresh = fresh && op.Method == http.MethodDelete
	params := map[string]string{"projectKey": project, "environmentKey": "test"}
	if project == "" {
		params["projectKey"] = "a"
	}
	switch op.Group {
	case "tokens":
		params["id"] = f.tokenID
	case "members":
		params["id"] = f.memberID
	case "auditlog":
		params["id"] = f.auditID
	}
	params["customRoleKey"], params["teamKey"], params["clientId"], params["segmentKey"] = f.roleKey, f.teamKey, f.clientID, "victim"
	if fresh {
		switch op.ID {
		case "deleteProject":
			if project != "" {
				return azRequest{}, false
			}
			key := f.unique("doomed")
			apptest.EmptyProject(t, srv, key)
			params["projectKey"] = key
		case "deleteEnvironment":
			key := f.unique("doomed")
			srv.MustCreateEnvironment(t, params["projectKey"], key, nil)
			params["environmentKey"] = key
		case "deleteToken":
			params["id"], _ = srv.MustCreateToken(t, map[string]any{"name": "doomed", "role": "reader"})
		case "deleteMember":
			params["id"] = f.invite(t, f.unique("doomed")+"@example.com", "reader")
		case "deleteCustomRole":
			params["customRoleKey"] = f.role(t, f.unique("doomed"), map[string]any{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"viewProject"}})
		case "deleteTeam":
			key := f.unique("doomed")
			apptest.WantStatus(t, srv.Do(t, http.MethodPost, api+"/teams", map[string]any{"key": key, "name": "Doomed"}), http.StatusCreated)
			params["teamKey"] = key
		case "deleteOAuthClient":
			res := srv.Do(t, http.MethodPost, api+"/oauth/clients", map[string]any{"name": "doomed", "redirectUri": "https://example.com/cb"})
			apptest.WantStatus(t, res, http.StatusCreated)
			params["clientId"], _ = res.Map(t)["_clientId"].(string)
		case "deleteSegment":
			key := f.unique("doomed")
			apptest.WantStatus(t, srv.Do(t, http.MethodPost, api+"/segments/"+params["projectKey"]+"/test", map[string]any{"key": key, "name": "Doomed"}), http.StatusCreated)
			params["segmentKey"] = key
		}
	}
	path := azPathParam.ReplaceAllStringFunc(op.Path, func(m string) string {
		if v := params[m[1:len(m)-1]]; v != "" {
			return v
		}
		return "does-not-exist"
	})
	var body any
	if mk, ok := azBodies[op.ID]; ok {
		body = mk(f)
	} else if op.Method == http.MethodPatch {
		body = azPatch("name")
	} else if op.Method == http.MethodPost || op.Method == http.MethodPut {
		body = "{}"
	}
	return azRequest{path: path, body: body}, true
}

// azWant is what a caller should get.
type azWant int

const (
	azUnauthorized azWant = iota
	azForbidden
	azAllowed
	// azHidden: the caller may call the operation but may not see the
	// resource (another member's token), so it does not exist for them.
	azHidden
)

func (w azWant) String() string {
	return [...]string{"is refused with 401", "is refused with 403", "is allowed", "does not see another member's token (404)"}[w]
}

// azCheck asserts the answer. An allowed request of a known operation must
// succeed; of an operation built after this file, it must at least pass
// authentication and authorization.
func azCheck(t *testing.T, op catalog.Operation, res *apptest.Response, want azWant, parts ...string) {
	t.Helper()
	switch want {
	case azUnauthorized:
		apptest.WantError(t, res, http.StatusUnauthorized, "unauthorized", parts...)
	case azForbidden:
		apptest.WantError(t, res, http.StatusForbidden, "forbidden", parts...)
	case azHidden:
		apptest.WantError(t, res, http.StatusNotFound, "not_found")
	case azAllowed:
		if azKnown(op) {
			if res.Status < 200 || res.Status > 299 {
				t.Fatalf("%s %s: status %d, want 2xx: %s", op.Method, op.Path, res.Status, res.Body)
			}
		} else if res.Status == http.StatusUnauthorized || res.Status == http.StatusForbidden || res.Status >= 500 {
			t.Fatalf("%s %s: status %d, want it to pass the check: %s", op.Method, op.Path, res.Status, res.Body)
		}
	}
}

// azRow is one caller of the matrix and what it should get for an operation
// in a project.
type azRow struct {
	name  string
	token string // "" sends no Authorization header
	// want returns the expectation for op in project ("" for operations
	// outside a project), and a reason to skip instead.
	want func(op catalog.Operation, project string) (azWant, string)
	// parts must appear in the error message.
	parts []string
}

func TestAuthorizationMatrix(t *testing.T) {
	start := time.Now()
	srv := apptest.New(t)
	built := azBuilt(t, srv)
	f := newAZFixture(t, srv)

	_, reader := srv.MustCreateToken(t, map[string]any{"name": "reader", "role": "reader"})
	_, writer := srv.MustCreateToken(t, map[string]any{"name": "writer", "role": "writer"})
	_, noAccess := srv.MustCreateToken(t, map[string]any{"name": "no access", "role": "no_access"})
	f.role(t, "only-a", map[string]any{"effect": "allow", "resources": []string{"proj/a", "proj/a:env/*", "proj/a:env/*:flag/*", "proj/a:env/*:adaptive-trigger/*", "proj/a:env/*:segment/*", "proj/a:env/*:destination/*", "proj/a:env/*:integration/*", "proj/a:integration/*", "proj/a:context-kind/*", "proj/a:release-pipeline/*", "proj/a:release-policy/*", "proj/a:insight-repository/*"}, "actions": []string{"*"}})
	_, onlyA := srv.MustCreateToken(t, map[string]any{"name": "only a", "customRoleIds": []string{"only-a"}})
	// The AI Configs and model configs of project a too.
	apptest.WantStatus(t, srv.Do(t, http.MethodPatch, api+"/roles/only-a", []apptest.PatchOp{apptest.Add("/policy/-", map[string]any{"effect": "allow",
		"resources": []string{"proj/a:aiconfig/*", "proj/a:ai-model-config/*"}, "actions": []string{"*"}})}), http.StatusOK)
	_, expired := srv.MustIssueToken(t, token.Spec{Name: "expired", Role: identity.RoleAdmin, MemberID: f.ownerID, Expiry: time.Now().Add(-time.Minute).UnixMilli()})
	// Tokens are made for the caller's own member, so a token of another
	// member is stored directly: an admin token of a reader member.
	readerMember := f.invite(t, "capped@example.com", "reader")
	_, capped := srv.MustIssueToken(t, token.Spec{Name: "capped", Role: identity.RoleAdmin, MemberID: readerMember})

	readsOnly := func(op catalog.Operation, _ string) (azWant, string) {
		if azRead(op) {
			return azAllowed, ""
		}
		return azForbidden, ""
	}
	always := func(w azWant) func(catalog.Operation, string) (azWant, string) {
		return func(catalog.Operation, string) (azWant, string) { return w, "" }
	}
	rows := []azRow{
		{name: "without an Authorization header", token: "", want: always(azUnauthorized), parts: []string{"Authorization"}},
		{name: "with an unknown token", token: token.NewValue(), want: always(azUnauthorized), parts: []string{"not valid"}},
		{name: "with a value that is not a token", token: "not-a-token", want: always(azUnauthorized)},
		{name: "with an expired admin token", token: expired, want: always(azUnauthorized), parts: []string{"expired"}},
		{name: "with the admin token", token: srv.Token, want: always(azAllowed)},
		{name: "with a reader token", token: reader, want: readsOnly},
		{name: "with a writer token", token: writer, want: func(op catalog.Operation, _ string) (azWant, string) {
			if !azRead(op) && azAccountOp(op) {
				return azForbidden, ""
			}
			return azAllowed, ""
		}},
		{name: "with a no_access token", token: noAccess, want: always(azForbidden)},
		{name: "with an admin token of a reader member", token: capped, want: func(op catalog.Operation, project string) (azWant, string) {
			if op.ID == "getToken" {
				return azHidden, ""
			}
			return readsOnly(op, project)
		}},
		{name: "with a custom role limited to project a", token: onlyA, want: func(op catalog.Operation, project string) (azWant, string) {
			switch {
			case azRead(op):
				// Reading is allowed by default to every role but no_access.
				return azAllowed, ""
			case project == "a" && op.ID == "deleteProject":
				return 0, "deleting the fixture project a"
			case project == "a":
				return azAllowed, ""
			}
			return azForbidden, ""
		}},
	}

	// Project operations run in project a, and for the limited role also in b.
	projects := func(row azRow, op catalog.Operation) []string {
		if !azHasProject(op) {
			return []string{""}
		}
		if row.token == onlyA {
			return []string{"a", "b"}
		}
		return []string{""}
	}

	subtests := 0
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			for _, op := range built {
				for _, project := range projects(row, op) {
					want, skip := row.want(op, project)
					verdict := want.String()
					if skip != "" {
						verdict = "is not called"
					}
					name := fmt.Sprintf("%s %s", op.ID, verdict)
					if project != "" {
						name = fmt.Sprintf("%s in project %s %s", op.ID, project, verdict)
					}
					subtests++
					t.Run(name, func(t *testing.T) {
						if skip != "" {
							t.Skip(skip)
						}
						req, ok := f.request(t, op, project, want == azAllowed)
						if !ok {
							t.Skip("no request without destroying a fixture")
						}
						res := srv.Do(t, op.Method, req.path, req.body, "Authorization", row.token, "SVC-API-Version", "beta")
						azCheck(t, op, res, want, row.parts...)
					})
				}
			}
		})
	}
	t.Logf("%d operations built, %d matrix subtests, in %v", len(built), subtests, time.Since(start))
}

// TestAuthorizationStatements covers what the matrix does not: a deny that
// overrides an allow, statements that select by tag, and project-limited
// roles on reads.
func TestAuthorizationStatements(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "a") // environments test and production
	srv.MustCreateProject(t, "b")
	srv.MustCreateEnvironment(t, "a", "locked", map[string]any{"tags": []string{"critical-tag"}})
	srv.MustCreateEnvironment(t, "a", "open", nil)

	apptest.CreateRole(t, srv, "no-prod-colors", "",
		map[string]any{"effect": "allow", "resources": []string{"proj/*:env/*"}, "actions": []string{"*"}},
		map[string]any{"effect": "deny", "resources": []string{"proj/*:env/production"}, "actions": []string{"updateColor", "deleteEnvironment"}},
	)
	apptest.CreateRole(t, srv, "no-critical", "",
		map[string]any{"effect": "allow", "resources": []string{"proj/*:env/*"}, "actions": []string{"*"}},
		map[string]any{"effect": "deny", "resources": []string{"proj/*:env/*;critical-tag"}, "actions": []string{"*"}},
	)
	apptest.CreateRole(t, srv, "only-a", "", map[string]any{"effect": "allow", "resources": []string{"proj/a", "proj/a:env/*"}, "actions": []string{"*"}})
	apptest.CreateRole(t, srv, "only-a-strict", "no_access", map[string]any{"effect": "allow", "resources": []string{"proj/a", "proj/a:env/*"}, "actions": []string{"*"}})
	_, noProdColors := srv.MustCreateToken(t, map[string]any{"name": "no prod colors", "customRoleIds": []string{"no-prod-colors"}})
	_, noCritical := srv.MustCreateToken(t, map[string]any{"name": "no critical", "customRoleIds": []string{"no-critical"}})
	_, onlyA := srv.MustCreateToken(t, map[string]any{"name": "only a", "customRoleIds": []string{"only-a"}})
	_, onlyAStrict := srv.MustCreateToken(t, map[string]any{"name": "only a strict", "customRoleIds": []string{"only-a-strict"}})
	color := []apptest.PatchOp{apptest.Replace("/color", "FF0000")}

	t.Run("a deny statement overrides an allow and the 403 names it", func(t *testing.T) {
		res := srv.Do(t, http.MethodPatch, envPath("a", "production"), color, "Authorization", noProdColors)
		apptest.WantError(t, res, http.StatusForbidden, "forbidden", "updateColor", "proj/a:env/production", "deny", `"no-prod-colors"`)
		if got := apptest.GetEnv(t, srv, "a", "production")["color"]; got == "FF0000" {
			t.Errorf("the refused patch changed the colour")
		}
	})
	t.Run("the same allow still lets the colour of test change", func(t *testing.T) {
		res := srv.Do(t, http.MethodPatch, envPath("a", "test"), color, "Authorization", noProdColors)
		apptest.WantStatus(t, res, http.StatusOK)
		if got := res.Map(t)["color"]; got != "FF0000" {
			t.Errorf("color %v, want FF0000", got)
		}
	})
	t.Run("the deny covers only its actions: production may still be renamed", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, envPath("a", "production"), []apptest.PatchOp{apptest.Replace("/name", "Prod")}, "Authorization", noProdColors), http.StatusOK)
	})
	t.Run("a patch touching an allowed and a denied path is refused as a whole", func(t *testing.T) {
		res := srv.Do(t, http.MethodPatch, envPath("a", "production"), []apptest.PatchOp{apptest.Replace("/name", "Prod 2"), apptest.Replace("/color", "00FF00")}, "Authorization", noProdColors)
		apptest.WantError(t, res, http.StatusForbidden, "forbidden", "updateColor")
		if got := apptest.GetEnv(t, srv, "a", "production")["name"]; got == "Prod 2" {
			t.Errorf("the refused patch renamed the environment")
		}
	})
	t.Run("the denied delete of production is refused, of another environment allowed", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodDelete, envPath("b", "production"), nil, "Authorization", noProdColors), http.StatusForbidden, "forbidden", "deleteEnvironment", "deny")
		srv.MustCreateEnvironment(t, "b", "scratch", nil)
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, envPath("b", "scratch"), nil, "Authorization", noProdColors), http.StatusNoContent)
	})

	t.Run("an environment tagged critical-tag cannot be patched under a tag deny", func(t *testing.T) {
		res := srv.Do(t, http.MethodPatch, envPath("a", "locked"), color, "Authorization", noCritical)
		apptest.WantError(t, res, http.StatusForbidden, "forbidden", "proj/a:env/locked", "deny", `"no-critical"`)
	})
	t.Run("an environment tagged critical-tag cannot be deleted under a tag deny", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodDelete, envPath("a", "locked"), nil, "Authorization", noCritical), http.StatusForbidden, "forbidden")
	})
	t.Run("an untagged environment can be patched under the same role", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, envPath("a", "open"), color, "Authorization", noCritical), http.StatusOK)
	})
	t.Run("removing the tag is itself refused, since the stored tags decide", func(t *testing.T) {
		res := srv.Do(t, http.MethodPatch, envPath("a", "locked"), []apptest.PatchOp{apptest.Replace("/tags", []string{})}, "Authorization", noCritical)
		apptest.WantError(t, res, http.StatusForbidden, "forbidden")
	})

	t.Run("a role limited to project a may write its environments", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, envPath("a", "open"), []apptest.PatchOp{apptest.Replace("/name", "Open")}, "Authorization", onlyA), http.StatusOK)
		apptest.WantStatus(t, srv.Do(t, http.MethodPost, envsPath("a"), map[string]any{"key": "made-by-a", "name": "A", "color": "000000"}, "Authorization", onlyA), http.StatusCreated)
	})
	t.Run("a role limited to project a may not write project b", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPatch, envPath("b", "test"), []apptest.PatchOp{apptest.Replace("/name", "B")}, "Authorization", onlyA), http.StatusForbidden, "forbidden", "proj/b:env/test")
		apptest.WantError(t, srv.Do(t, http.MethodPost, envsPath("b"), map[string]any{"key": "made-by-a", "name": "A", "color": "000000"}, "Authorization", onlyA), http.StatusForbidden, "forbidden", "proj/b:env/made-by-a")
	})
	t.Run("a role with the default reader base permissions may read project b", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, projectPath("b"), nil, "Authorization", onlyA), http.StatusOK)
	})
	// BUG: basePermissions is stored but never used: the Authenticator lets
	// any token with custom roles and no built-in role read everything.
	t.Run("a role with no_access base permissions may read project a but not project b", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, projectPath("a"), nil, "Authorization", onlyAStrict), http.StatusOK)
		apptest.WantError(t, srv.Do(t, http.MethodGet, projectPath("b"), nil, "Authorization", onlyAStrict), http.StatusForbidden, "forbidden", "proj/b")
	})
}

// TestBuiltInRolesReachEveryCatalogOperation calls every operation, built
// or not, with the admin and writer tokens: the check runs before the
// handler, so an operation not built yet answers 501 once the check lets
// the caller through, and 403 when the built-in role does not reach the
// operation's resource kind (policy.BuiltIn allows "*" on the shapes of
// shared/policy/builtin.go, which must hold every kind the catalog names).
func TestBuiltInRolesReachEveryCatalogOperation(t *testing.T) {
	srv := apptest.New(t)
	_, writer := srv.MustCreateToken(t, map[string]any{"name": "writer", "role": "writer"})
	for _, c := range []struct {
		name, token string
		skip        func(catalog.Operation) bool
	}{
		{"the admin token passes the check of every catalog operation", srv.Token, func(catalog.Operation) bool { return false }},
		{"a writer token passes the check of every operation outside account management", writer, azAccountOp},
	} {
		t.Run(c.name, func(t *testing.T) {
			var refused []string
			for _, op := range catalog.All() {
				if azPublic(op) || c.skip(op) {
					continue
				}
				var body any
				switch op.Method {
				case http.MethodPost, http.MethodPut:
					body = `{"key":"k"}`
				case http.MethodPatch:
					body = `[{"op":"replace","path":"/name","value":"x"}]`
				}
				res := srv.Do(t, op.Method, azPathParam.ReplaceAllString(op.Path, "k"), body, "Authorization", c.token, "SVC-API-Version", "beta")
				if res.Status == http.StatusForbidden {
					refused = append(refused, fmt.Sprintf("%s (%s)", op.ID, op.Resource))
				}
			}
			if len(refused) > 0 {
				t.Errorf("%d operations answer 403, their resource kind is not among the built-in role's shapes:\n  %s", len(refused), strings.Join(refused, "\n  "))
			}
		})
	}
}

func TestTaggedDenyAppliesToCreates(t *testing.T) {
	srv := apptest.New(t)
	apptest.EmptyProject(t, srv, "p")
	apptest.WantStatus(t, srv.Do(t, http.MethodPost, "/api/v2/roles", map[string]any{
		"key": "no-critical", "name": "No critical",
		"policy": []map[string]any{
			{"effect": "allow", "resources": []string{"proj/*:env/*"}, "actions": []string{"*"}},
			{"effect": "deny", "resources": []string{"proj/*:env/*;critical-tag"}, "actions": []string{"*"}},
		},
	}), http.StatusCreated)
	_, tok := srv.MustCreateToken(t, map[string]any{"name": "no critical", "customRoleIds": []string{"no-critical"}})
	body := func(key string, tags ...string) map[string]any {
		return map[string]any{"key": key, "name": key, "color": "00AA00", "tags": tags}
	}
	t.Run("an environment created with a denied tag is refused", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPost, envsPath("p"), body("crit", "critical-tag"), "Authorization", tok), http.StatusForbidden, "forbidden", "deny")
	})
	t.Run("an environment created without it is allowed", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodPost, envsPath("p"), body("plain", "other"), "Authorization", tok), http.StatusCreated)
	})
}
