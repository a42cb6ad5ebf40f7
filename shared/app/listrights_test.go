package app_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/catalog"
)

// The list-filter table: every list whose items can belong to different
// projects or environments shows a caller only the items a GET of each
// would show them. Two custom roles read everything but one project
// (proj/pb) or one environment of every project (proj/*:env/denied); each
// list gets an item in an allowed scope, in the denied project and in the
// denied environment, and must show the first, hide the others, and count
// in totalCount only what it shows. On the embedded store and, in the
// DynamoDB tier, on DynamoDB Local.

// listScope is where an item lives.
type listScope struct{ project, env string }

var (
	allowedScope = listScope{"pa", "open"}
	deniedProj   = listScope{"pb", "open"}
	deniedEnv    = listScope{"pa", "denied"}
	listScopes   = []listScope{allowedScope, deniedProj, deniedEnv}
)

// listRole is a custom role and, written out by hand, what it hides.
type listRole struct {
	key        string
	statements []map[string]any
	hides      func(s listScope, envScoped bool) bool
}

var listRoles = []listRole{
	{
		key: "all-but-project-pb",
		statements: []map[string]any{
			allow([]string{"viewProject"}, "proj/*", "proj/*:env/*"),
			{"effect": "deny", "actions": []string{"*"}, "resources": []string{"proj/pb"}},
		},
		hides: func(s listScope, _ bool) bool { return s.project == "pb" },
	},
	{
		key: "all-but-environment-denied",
		statements: []map[string]any{
			allow([]string{"viewProject"}, "proj/*", "proj/*:env/*"),
			{"effect": "deny", "actions": []string{"*"}, "resources": []string{"proj/*:env/denied"}},
		},
		hides: func(s listScope, envScoped bool) bool { return envScoped && s.env == "denied" },
	},
}

// token makes the role (reading by default, as a reader) and a token holding it.
func (r listRole) token(tb testing.TB, srv *apptest.Server) string {
	tb.Helper()
	mustDo(tb, srv, http.StatusCreated, http.MethodPost, "/api/v2/roles", map[string]any{"key": r.key, "name": r.key,
		"basePermissions": "reader", "policy": r.statements})
	_, tok := srv.MustCreateToken(tb, map[string]any{"name": r.key, "customRoleIds": []string{r.key}})
	return tok
}

// listCase is one list operation of the catalog.
type listCase struct {
	op string
	// envScoped: the items belong to an environment, not only a project.
	envScoped bool
	// path is the request that would list an item of s.
	path func(s listScope) string
	// seed makes an item in s and returns its id as the list shows it
	// (see itemID); nil for a list that answers no items of its own, whose
	// refusal of a denied scope is then what is checked.
	seed    func(tb testing.TB, srv *apptest.Server, s listScope) string
	headers []string
	// pages: the list takes limit and offset and answers totalCount.
	pages bool
}

var beta = []string{"SVC-API-Version", "beta"}

func fixed(p string) func(listScope) string { return func(listScope) string { return p } }

// insightQuery is an engineering-insights list of the scope its query names.
func insightQuery(p string) func(listScope) string {
	return func(s listScope) string {
		return p + "?" + url.Values{"projectKey": {s.project}, "environmentKey": {s.env}, "applicationKey": {"web"}}.Encode()
	}
}

var listCases = []listCase{
	{op: "getProjects", path: fixed("/api/v2/projects"), pages: true,
		seed: func(_ testing.TB, _ *apptest.Server, s listScope) string { return "/api/v2/projects/" + s.project }},
	{op: "getEnvironmentsByProject", envScoped: true, pages: true,
		path: func(s listScope) string { return "/api/v2/projects/" + s.project + "/environments" },
		seed: func(_ testing.TB, _ *apptest.Server, s listScope) string {
			return "/api/v2/projects/" + s.project + "/environments/" + s.env
		}},
	{op: "getIntegrationDeliveryConfigurations", envScoped: true, path: fixed("/api/v2/integration-capabilities/featureStore"), headers: beta,
		seed: func(tb testing.TB, srv *apptest.Server, s listScope) string {
			return selfOf(tb, mustDo(tb, srv, http.StatusCreated, http.MethodPost, "/api/v2/integration-capabilities/featureStore/"+s.project+"/"+s.env+"/dynamodb",
				map[string]any{"name": "store", "config": map[string]any{"tableName": "flags", "region": "eu-west-1"}}, beta...))
		}},
	{op: "getBigSegmentStoreIntegrations", envScoped: true, path: fixed("/api/v2/integration-capabilities/big-segment-store"), headers: beta,
		seed: func(tb testing.TB, srv *apptest.Server, s listScope) string {
			return selfOf(tb, mustDo(tb, srv, http.StatusCreated, http.MethodPost, "/api/v2/integration-capabilities/big-segment-store/"+s.project+"/"+s.env+"/dynamodb",
				map[string]any{"name": "segments", "config": map[string]any{"tableName": "segments", "region": "eu-west-1"}}, beta...))
		}},
	{op: "getDestinations", envScoped: true, path: fixed("/api/v2/destinations"),
		seed: func(tb testing.TB, srv *apptest.Server, s listScope) string {
			return selfOf(tb, mustDo(tb, srv, http.StatusCreated, http.MethodPost, "/api/v2/destinations/"+s.project+"/"+s.env,
				map[string]any{"kind": "bigquery", "name": "warehouse", "config": map[string]any{"projectId": "flag-exports"}}))
		}},
	{op: "getFlagImportConfigurations", path: fixed("/api/v2/integration-capabilities/flag-import"), headers: beta,
		seed: func(tb testing.TB, srv *apptest.Server, s listScope) string {
			return selfOf(tb, mustDo(tb, srv, http.StatusOK, http.MethodPost, "/api/v2/integration-capabilities/flag-import/"+s.project+"/split",
				map[string]any{"config": map[string]any{"workspaceApiKey": "wk", "workspaceId": "ws", "environmentId": "env",
					"splitTag": "t", "ldApiKey": "api-y", "ldTag": "from-split"}}, beta...))
		}},
	{op: "getApprovalRequests", envScoped: true, path: fixed("/api/v2/approval-requests"), pages: true,
		seed: func(tb testing.TB, srv *apptest.Server, s listScope) string {
			flag := "f-" + s.env
			if res := srv.Do(tb, http.MethodPost, "/api/v2/flags/"+s.project, map[string]any{"key": flag, "name": flag}); res.Status != http.StatusCreated && res.Status != http.StatusConflict {
				tb.Fatalf("create flag %s/%s: %d %s", s.project, flag, res.Status, res.Body)
			}
			return selfOf(tb, mustDo(tb, srv, http.StatusCreated, http.MethodPost, "/api/v2/approval-requests", map[string]any{
				"resourceId": "proj/" + s.project + ":env/" + s.env + ":flag/" + flag, "description": "turn it on",
				"instructions": []any{map[string]any{"kind": "turnFlagOn"}}}))
		}},
	{op: "getAuditLogEntries", envScoped: true,
		// The entries of one rename: other entries of the scope (its
		// creation) do not crowd it out of the page.
		path: func(s listScope) string { return "/api/v2/auditlog?limit=20&q=" + auditMarker(s) },
		seed: func(tb testing.TB, srv *apptest.Server, s listScope) string {
			mustDo(tb, srv, http.StatusOK, http.MethodPatch, "/api/v2/projects/"+s.project+"/environments/"+s.env,
				[]map[string]any{{"op": "replace", "path": "/name", "value": auditMarker(s)}})
			var page struct {
				Items []map[string]any `json:"items"`
			}
			mustDo(tb, srv, http.StatusOK, http.MethodGet, "/api/v2/auditlog?limit=20&q="+auditMarker(s), nil).JSON(tb, &page)
			if len(page.Items) != 1 {
				tb.Fatalf("the audit log holds %d entries of the rename of %v, want 1", len(page.Items), s)
			}
			return itemID(page.Items[0])
		}},
	{op: "getDeployments", envScoped: true, path: insightQuery("/api/v2/engineering-insights/deployments"), headers: beta,
		seed: func(tb testing.TB, srv *apptest.Server, s listScope) string {
			mustDo(tb, srv, http.StatusCreated, http.MethodPost, "/api/v2/engineering-insights/deployment-events", map[string]any{
				"projectKey": s.project, "environmentKey": s.env, "applicationKey": "web", "version": "1.0",
				"eventType": "started", "eventTime": time.Now().Add(-time.Minute).UnixMilli()}, beta...)
			var page struct {
				Items []map[string]any `json:"items"`
			}
			mustDo(tb, srv, http.StatusOK, http.MethodGet, insightQuery("/api/v2/engineering-insights/deployments")(s), nil, beta...).JSON(tb, &page)
			if len(page.Items) != 1 {
				tb.Fatalf("%v holds %d deployments, want 1", s, len(page.Items))
			}
			return itemID(page.Items[0])
		}},
	{op: "getFlagEvents", envScoped: true, path: insightQuery("/api/v2/engineering-insights/flag-events"), headers: beta},
	{op: "getInsightsScores", envScoped: true, path: insightQuery("/api/v2/engineering-insights/insights/scores"), headers: beta},
}

// accountWide are the reads whose resource spans scopes (a "*" in a name)
// and that are not in listCases, each with why no project or environment
// can leak through it.
var accountWide = map[string]string{
	"getApprovalRequest":              "one request, authorized on the flag and environment the stored request acts on (approvalapi's storedNeeds)",
	"postAuditLogEntries":             "the search of getAuditLogEntries: the same listEntries, with the same filter",
	"postAuditLogEntryCounts":         "counts the entries getAuditLogEntries would show (the same filter)",
	"getAllIntegrationConfigurations": "integration configurations are account-level resources (integration/<key>/<id>)",
	"getIntegrationConfiguration":     "an account-level integration configuration",
	"getAllWebhooks":                  "webhooks are account-level",
	"getTokens":                       "tokens belong to members, not to projects",
	"getToken":                        "a token belongs to a member, not to a project",
	"getOAuthClients":                 "OAuth clients are account-level",
	"getMembers":                      "members are account-level",
	"getTeams":                        "teams are account-level",
	"getCustomRoles":                  "roles are account-level",
	"getApplications":                 "applications are account-level",
	"getInsightGroups":                "insight groups are account-level (insight-group/<key>); an expanded environment shows its keys only to who may read it",
	"getInsightsRepositories":         "repositories are account-level; the projects an expand names are filtered by the view right",
	"getExtinctions":                  "code reference repositories are account-level, each filtered by its own view right",
	"getRepositories":                 "code reference repositories are account-level, each filtered by its own view right",
}

// accountWideKinds are kinds whose every read is account-wide by nature.
var accountWideKinds = map[string]string{
	"usage/": "usage is an account-wide aggregate, holding no project's objects",
}

func TestListsShowOnlyWhatTheCallerMayRead(t *testing.T) {
	rightsBackends(t, func(t *testing.T, srv *apptest.Server) {
		for _, p := range []string{"pa", "pb"} {
			res := srv.Do(t, http.MethodPost, "/api/v2/projects", map[string]any{"key": p, "name": "Project " + p,
				"environments": []map[string]any{
					{"key": "open", "name": "Open", "color": "00AA00"},
					{"key": "denied", "name": "Denied", "color": "AA0000"},
				}})
			if res.Status != http.StatusCreated {
				t.Fatalf("create project %s: %d %s", p, res.Status, res.Body)
			}
		}
		tokens := map[string]string{}
		for _, role := range listRoles {
			tokens[role.key] = role.token(t, srv)
		}
		cases := 0
		for _, c := range listCases {
			seeded := map[listScope]string{}
			if c.seed != nil {
				for _, s := range listScopes {
					seeded[s] = c.seed(t, srv, s)
				}
			}
			t.Run(c.op+": the admin sees an item of every scope", func(t *testing.T) {
				got := listAll(t, srv, c, srv.Token, func(listScope) bool { return false })
				for s, id := range seeded {
					if !slices.Contains(got, id) {
						t.Errorf("item %s of %v is missing from %v", id, s, got)
					}
				}
			})
			for _, role := range listRoles {
				hidden := func(s listScope) bool { return role.hides(s, c.envScoped) }
				for _, s := range listScopes {
					verb := map[bool]string{false: "shows the item", true: "hides the item"}[hidden(s)]
					if c.seed == nil {
						verb = map[bool]string{false: "answers the list", true: "refuses the list"}[hidden(s)]
					}
					cases++
					t.Run(fmt.Sprintf("%s: %s %s of %s/%s", c.op, role.key, verb, s.project, s.env), func(t *testing.T) {
						got := listAll(t, srv, c, tokens[role.key], hidden)
						id, ok := seeded[s]
						if !ok {
							return // a list of no items: listAll checked the refusal
						}
						if in := slices.Contains(got, id); in == hidden(s) {
							t.Errorf("item %s of %v shown: %v, want %v (the list shows %v)", id, s, in, !hidden(s), got)
						}
						if !strings.HasPrefix(id, "/api/v2/") {
							return // no path of its own to GET
						}
						// The GET of the item decides as the list did.
						want := map[bool]int{false: http.StatusOK, true: http.StatusForbidden}[hidden(s)]
						if res := srv.Do(t, http.MethodGet, id, nil, append([]string{"Authorization", tokens[role.key]}, c.headers...)...); res.Status != want {
							t.Errorf("GET %s: %d, want %d: %s", id, res.Status, want, res.Body)
						}
					})
				}
				if c.pages {
					t.Run(c.op+": "+role.key+" pages over what it may read, one item a page", func(t *testing.T) {
						pagesOver(t, srv, c, tokens[role.key], hidden)
					})
				}
			}
		}
		t.Logf("list-filter table: %d list operations × %d roles × %d scopes = %d cases", len(listCases), len(listRoles), len(listScopes), cases)
	})
}

// listAll requests c's list for every scope (each distinct request once)
// with tok and returns the ids of the items shown. A request for a scope
// the role hides may be refused (403); any other answer must be 200, and
// its totalCount, when it has one, must count exactly the items shown.
func listAll(tb testing.TB, srv *apptest.Server, c listCase, tok string, hidden func(listScope) bool) []string {
	tb.Helper()
	var ids []string
	seen := map[string]bool{}
	for _, s := range listScopes {
		path := c.path(s)
		if seen[path] {
			continue
		}
		seen[path] = true
		res := srv.Do(tb, http.MethodGet, path, nil, append([]string{"Authorization", tok}, c.headers...)...)
		if res.Status == http.StatusForbidden && hidden(s) {
			continue
		}
		if res.Status != http.StatusOK {
			tb.Fatalf("GET %s: %d %s", path, res.Status, res.Body)
		}
		if hidden(s) && c.seed == nil {
			tb.Fatalf("GET %s of a denied scope answered 200: %s", path, res.Body)
		}
		var page struct {
			Items      []map[string]any `json:"items"`
			TotalCount *int             `json:"totalCount"`
		}
		res.JSON(tb, &page)
		if page.TotalCount != nil && *page.TotalCount != len(page.Items) {
			tb.Errorf("GET %s: totalCount %d, but %d items shown", path, *page.TotalCount, len(page.Items))
		}
		for _, it := range page.Items {
			ids = append(ids, itemID(it))
		}
	}
	return ids
}

// pagesOver walks each of c's lists one item a page: every page counts in
// totalCount the items the whole list shows, and the pages together hold
// exactly those items.
func pagesOver(tb testing.TB, srv *apptest.Server, c listCase, tok string, hidden func(listScope) bool) {
	tb.Helper()
	seen := map[string]bool{}
	for _, s := range listScopes {
		path := c.path(s)
		if seen[path] || hidden(s) && c.path(allowedScope) != path {
			continue // a denied path: listAll checks its refusal
		}
		seen[path] = true
		whole := listAll(tb, srv, listCase{path: fixed(path), seed: c.seed, headers: c.headers}, tok, func(listScope) bool { return false })
		var paged []string
		for offset := 0; offset <= len(whole); offset++ {
			p := fmt.Sprintf("%s?limit=1&offset=%d", path, offset)
			var page struct {
				Items      []map[string]any `json:"items"`
				TotalCount int              `json:"totalCount"`
			}
			mustDo(tb, srv, http.StatusOK, http.MethodGet, p, nil, append([]string{"Authorization", tok}, c.headers...)...).JSON(tb, &page)
			if page.TotalCount != len(whole) {
				tb.Errorf("GET %s: totalCount %d, want the %d items the list shows", p, page.TotalCount, len(whole))
			}
			for _, it := range page.Items {
				paged = append(paged, itemID(it))
			}
		}
		if !slices.Equal(paged, whole) {
			tb.Errorf("GET %s one a page: %v, want %v", path, paged, whole)
		}
	}
}

// itemID is an item's self link, or its id when it has none.
func itemID(item map[string]any) string {
	if links, ok := item["_links"].(map[string]any); ok {
		if self, ok := links["self"].(map[string]any); ok {
			if href, ok := self["href"].(string); ok {
				return href
			}
		}
	}
	for _, k := range []string{"_id", "id"} {
		if id, ok := item[k].(string); ok {
			return id
		}
	}
	return fmt.Sprint(item)
}

func selfOf(tb testing.TB, res *apptest.Response) string {
	tb.Helper()
	return itemID(res.Map(tb))
}

func auditMarker(s listScope) string { return "renamed-" + s.project + "-" + s.env }

func mustDo(tb testing.TB, srv *apptest.Server, want int, method, path string, body any, headers ...string) *apptest.Response {
	tb.Helper()
	res := srv.Do(tb, method, path, body, headers...)
	if res.Status != want {
		tb.Fatalf("%s %s: %d, want %d: %s", method, path, res.Status, want, res.Body)
	}
	return res
}

// TestListFilterTableCoversTheCatalog: every read of the catalog whose
// resource spans projects or environments (a "*" in place of a key) is in
// the list-filter table or named account-wide with a reason, so a new list
// cannot be added without deciding which.
func TestListFilterTableCoversTheCatalog(t *testing.T) {
	inTable := map[string]bool{}
	for _, c := range listCases {
		inTable[c.op] = true
		if _, ok := catalog.ByID(c.op); !ok {
			t.Errorf("the table lists %s, which the catalog does not have", c.op)
		}
	}
	for id := range accountWide {
		if inTable[id] {
			t.Errorf("%s is both in the table and account-wide", id)
		}
		if _, ok := catalog.ByID(id); !ok {
			t.Errorf("account-wide %s is not in the catalog", id)
		}
	}
	for _, op := range catalog.All() {
		if op.Scope != catalog.Read || op.Public || !strings.Contains(op.Resource, "*") {
			continue
		}
		covered := inTable[op.ID] || accountWide[op.ID] != ""
		for prefix := range accountWideKinds {
			covered = covered || strings.HasPrefix(op.Resource, prefix)
		}
		if !covered {
			t.Errorf("%s reads %s across scopes: add it to the list-filter table or to accountWide with a reason", op.ID, op.Resource)
		}
	}
}

// TestInsightRepositoriesNameOnlyProjectsTheCallerMayRead: repositories
// are account-level, but the projects an expand names are filtered by the
// view right, and their totalCount counts what is shown.
func TestInsightRepositoriesNameOnlyProjectsTheCallerMayRead(t *testing.T) {
	rightsBackends(t, func(t *testing.T, srv *apptest.Server) {
		for _, p := range []string{"pa", "pb"} {
			srv.MustCreateProject(t, p)
		}
		tok := listRoles[0].token(t, srv) // denies proj/pb
		mustDo(t, srv, http.StatusOK, http.MethodPost, "/api/v2/code-refs/repositories", map[string]any{"name": "shop-web", "sourceLink": "https://git.example.com/shop-web"})
		mustDo(t, srv, http.StatusOK, http.MethodPut, "/api/v2/engineering-insights/repositories/projects", map[string]any{"mappings": []any{
			map[string]any{"repositoryKey": "shop-web", "projectKey": "pa"}, map[string]any{"repositoryKey": "shop-web", "projectKey": "pb"}}}, beta...)
		projectsOf := func(tb testing.TB, tok string) ([]string, int) {
			tb.Helper()
			var list struct {
				Items []struct {
					Projects struct {
						TotalCount int `json:"totalCount"`
						Items      []struct {
							Key string `json:"key"`
						} `json:"items"`
					} `json:"projects"`
				} `json:"items"`
			}
			mustDo(tb, srv, http.StatusOK, http.MethodGet, "/api/v2/engineering-insights/repositories?expand=projects", nil,
				append([]string{"Authorization", tok}, beta...)...).JSON(tb, &list)
			if len(list.Items) != 1 {
				tb.Fatalf("%d repositories, want 1", len(list.Items))
			}
			var keys []string
			for _, p := range list.Items[0].Projects.Items {
				keys = append(keys, p.Key)
			}
			return keys, list.Items[0].Projects.TotalCount
		}
		tests := []struct {
			name, token string
			want        []string
		}{
			{"the admin sees both mapped projects", srv.Token, []string{"pa", "pb"}},
			{"a role denying pb sees only pa, and counts only pa", tok, []string{"pa"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				keys, total := projectsOf(t, tt.token)
				slices.Sort(keys)
				if !slices.Equal(keys, tt.want) || total != len(tt.want) {
					t.Errorf("projects %v (totalCount %d), want %v", keys, total, tt.want)
				}
			})
		}
	})
}

// TestFlagsShowNoTargetingOfADeniedEnvironment: a flag belongs to its
// project, but its targeting in an environment the caller may not read is
// left out of the flag, in a GET and in the list alike.
func TestFlagsShowNoTargetingOfADeniedEnvironment(t *testing.T) {
	rightsBackends(t, func(t *testing.T, srv *apptest.Server) {
		mustDo(t, srv, http.StatusCreated, http.MethodPost, "/api/v2/projects", map[string]any{"key": "pa", "name": "Project pa",
			"environments": []map[string]any{{"key": "open", "name": "Open", "color": "00AA00"}, {"key": "denied", "name": "Denied", "color": "AA0000"}}})
		mustDo(t, srv, http.StatusCreated, http.MethodPost, "/api/v2/flags/pa", map[string]any{"key": "checkout", "name": "Checkout"})
		tok := listRoles[1].token(t, srv) // denies proj/*:env/denied
		type flagEnvs struct {
			Environments map[string]any `json:"environments"`
		}
		envsOf := func(f flagEnvs) []string {
			var out []string
			for k := range f.Environments {
				out = append(out, k)
			}
			slices.Sort(out)
			return out
		}
		tests := []struct {
			name, token string
			want        []string
		}{
			{"the admin sees both environments", srv.Token, []string{"denied", "open"}},
			{"a role denying one environment sees only the other", tok, []string{"open"}},
		}
		for _, tt := range tests {
			t.Run(tt.name+" in a GET of the flag", func(t *testing.T) {
				var f flagEnvs
				mustDo(t, srv, http.StatusOK, http.MethodGet, "/api/v2/flags/pa/checkout", nil, "Authorization", tt.token).JSON(t, &f)
				if got := envsOf(f); !slices.Equal(got, tt.want) {
					t.Errorf("environments %v, want %v", got, tt.want)
				}
			})
			t.Run(tt.name+" in the list of flags", func(t *testing.T) {
				var list struct {
					Items []flagEnvs `json:"items"`
				}
				mustDo(t, srv, http.StatusOK, http.MethodGet, "/api/v2/flags/pa?env=denied&env=open", nil, "Authorization", tt.token).JSON(t, &list)
				if len(list.Items) != 1 {
					t.Fatalf("%d flags, want 1", len(list.Items))
				}
				if got := envsOf(list.Items[0]); !slices.Equal(got, tt.want) {
					t.Errorf("environments %v, want %v", got, tt.want)
				}
			})
		}
	})
}
