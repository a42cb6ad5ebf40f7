package catalog

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var (
	groupName    = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	wildcardName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	literalSeg   = regexp.MustCompile(`^[A-Za-z0-9._~-]+$`)
	anyWildcard  = regexp.MustCompile(`\{[^}]*\}`)
)

// publicOps are the operations that take no access token and authenticate
// their caller themselves; only they may live outside /api/v2.
var publicOps = map[string]bool{
	"postOAuthToken": true, // RFC 6749 token endpoint: client credentials, POST /trust/oauth/token
	"getHealth":      true, // GET /healthz: says only whether the store answers
	"getOpenapiSpec": true, // GET /api/v2/openapi.json: the API's description, public as LaunchDarkly's is
	// Firing an adaptive trigger: the trigger's own token, shown once at creation.
	"postAdaptiveTriggerFire": true,
	// The SDKs' event routes: the environment's SDK key, mobile key or client-side id.
	"postServerEvents":              true,
	"postDiagnosticEvent":           true,
	"postMobileEvents":              true,
	"postClientSideEvents":          true,
	"postMobileDiagnosticEvent":     true,
	"postClientSideDiagnosticEvent": true,
	// The sdk group: LaunchDarkly's SDKs send an SDK key, mobile key or client-side id, never an access token.
	"getSDKLatestAll":                      true,
	"getSDKLatestFlags":                    true,
	"getSDKLatestFlag":                     true,
	"streamSDKAll":                         true,
	"getSDKClientSideEvaluations":          true,
	"reportSDKClientSideEvaluations":       true,
	"getSDKMobileEvaluations":              true,
	"reportSDKMobileEvaluations":           true,
	"streamSDKClientSideEvaluations":       true,
	"streamSDKClientSideEvaluationsReport": true,
	"streamSDKClientSidePing":              true,
	"streamSDKMobileEvaluations":           true,
	"streamSDKMobileEvaluationsReport":     true,
	"streamSDKMobilePing":                  true,
	// OpenFeature's remote evaluation: the same SDK credentials.
	"evaluateOFREPFlag":  true,
	"evaluateOFREPFlags": true,
	// The web console's page and files: static, the same for everyone; the
	// page then calls the API with the token it is given.
	"getConsolePage":       true,
	"getConsoleFile":       true,
	"getConsoleScript":     true,
	"getConsolePageScript": true,
}

// samplePath fills every {param} of a path with "x".
func samplePath(path string) string {
	return anyWildcard.ReplaceAllString(path, "x")
}

// shape replaces every {param} with {} so paths compare regardless of parameter names.
func shape(path string) string {
	return anyWildcard.ReplaceAllString(path, "{}")
}

// register adds the pattern to the mux and turns a registration panic into an error.
func register(mux *http.ServeMux, pattern string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	mux.HandleFunc(pattern, func(http.ResponseWriter, *http.Request) {})
	return nil
}

func TestCatalogIsWellFormed(t *testing.T) {
	ops := All()
	tests := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"every operation id is unique", func(t *testing.T) {
			seen := map[string]bool{}
			for _, op := range ops {
				if op.ID == "" {
					t.Errorf("operation %s has no id", op.Pattern())
				}
				if seen[op.ID] {
					t.Errorf("id %q appears twice", op.ID)
				}
				seen[op.ID] = true
			}
		}},
		{"every method and path pair is unique", func(t *testing.T) {
			seen := map[string]string{}
			for _, op := range ops {
				if other, ok := seen[op.Pattern()]; ok {
					t.Errorf("%s is used by %s and %s", op.Pattern(), other, op.ID)
				}
				seen[op.Pattern()] = op.ID
			}
		}},
		{"every method is an upper-case HTTP method", func(t *testing.T) {
			allowed := map[string]bool{"GET": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true}
			for _, op := range ops {
				// REPORT (a GET with a body, RFC 3253) is what client-side SDKs send;
				// API Gateway cannot route it, so only local-only operations use it.
				if op.Method == "REPORT" && op.LocalOnly {
					continue
				}
				if !allowed[op.Method] {
					t.Errorf("%s has method %q", op.ID, op.Method)
				}
			}
		}},
		{"every path starts with /api/v2/, bar the public operations, and has valid ServeMux wildcards", func(t *testing.T) {
			for _, op := range ops {
				if !strings.HasPrefix(op.Path, "/api/v2/") && !publicOps[op.ID] {
					t.Errorf("%s: path %q does not start with /api/v2/", op.ID, op.Path)
				}
				if op.Path == "/" && op.Console {
					continue // the console's page: the root alone (Pattern's "/{$}")
				}
				if strings.HasSuffix(op.Path, "/") {
					t.Errorf("%s: path %q ends with a slash", op.ID, op.Path)
				}
				names := map[string]bool{}
				for _, seg := range strings.Split(strings.TrimPrefix(op.Path, "/"), "/") {
					if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
						name := seg[1 : len(seg)-1]
						if !wildcardName.MatchString(name) {
							t.Errorf("%s: wildcard %q is not a Go identifier", op.ID, seg)
						}
						if names[name] {
							t.Errorf("%s: wildcard %q appears twice", op.ID, seg)
						}
						names[name] = true
						continue
					}
					if !literalSeg.MatchString(seg) {
						t.Errorf("%s: segment %q is neither a literal nor a whole-segment wildcard", op.ID, seg)
					}
				}
			}
		}},
		{"the public operations, which take no access token, are exactly the reviewed ones", func(t *testing.T) {
			seen := map[string]bool{}
			for _, op := range ops {
				if op.Public != publicOps[op.ID] {
					t.Errorf("%s: Public is %v", op.ID, op.Public)
				}
				seen[op.ID] = true
			}
			for id := range publicOps {
				if !seen[id] {
					t.Errorf("public operation %s is not in the catalog", id)
				}
			}
		}},
		{"the console's operations are public reads of the console group, and only they", func(t *testing.T) {
			for _, op := range ops {
				if op.Console != (op.Group == "console") {
					t.Errorf("%s: Console is %v in group %s", op.ID, op.Console, op.Group)
				}
				if op.Console && (!op.Public || op.Method != "GET" || op.Action != "" || op.Resource != "" || op.LocalOnly) {
					t.Errorf("%s: a console operation must be a public GET with no action or resource, served everywhere", op.ID)
				}
			}
		}},
		{"API is every operation but the console's", func(t *testing.T) {
			n := 0
			for _, op := range API() {
				if op.Console {
					t.Errorf("API lists the console's %s", op.ID)
				}
				n++
			}
			console, _ := Group("console")
			if n+len(console) != len(ops) || len(console) == 0 {
				t.Errorf("API has %d operations and the console %d, of %d", n, len(console), len(ops))
			}
		}},
		{"every group name is lower-case kebab", func(t *testing.T) {
			for _, op := range ops {
				if !groupName.MatchString(op.Group) {
					t.Errorf("%s: group %q does not match %s", op.ID, op.Group, groupName)
				}
			}
		}},
		{"every GET needs only read scope", func(t *testing.T) {
			for _, op := range ops {
				if op.Method == "GET" && op.Scope != Read {
					t.Errorf("%s is a GET with scope %q", op.ID, op.Scope)
				}
			}
		}},
		{"every PUT, PATCH and DELETE needs write scope", func(t *testing.T) {
			for _, op := range ops {
				if op.Method != "GET" && op.Method != "POST" && op.Method != "REPORT" && op.Scope != Write {
					t.Errorf("%s is a %s with scope %q", op.ID, op.Method, op.Scope)
				}
			}
		}},
		{"every scope is read or write", func(t *testing.T) {
			for _, op := range ops {
				if op.Scope != Read && op.Scope != Write {
					t.Errorf("%s has scope %q", op.ID, op.Scope)
				}
			}
		}},
		{"the total stays well under the 300-route gateway limit", func(t *testing.T) {
			if n := len(ops); n >= 280 {
				t.Errorf("catalog has %d operations, want fewer than 280", n)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.check)
	}
}

func TestCatalogRoutesInOneServeMux(t *testing.T) {
	ops := All()
	mux := http.NewServeMux()
	t.Run("registering every pattern in one ServeMux does not panic", func(t *testing.T) {
		for _, op := range ops {
			if err := register(mux, op.Pattern()); err != nil {
				t.Errorf("%s: %v", op.ID, err)
			}
		}
	})
	t.Run("a sample URL of each operation routes back to its own pattern", func(t *testing.T) {
		for _, op := range ops {
			req := httptest.NewRequest(op.Method, samplePath(op.Path), nil)
			if _, got := mux.Handler(req); got != op.Pattern() {
				t.Errorf("%s: %s %s routed to %q, want %q", op.ID, op.Method, req.URL.Path, got, op.Pattern())
			}
		}
	})
}

// TestLeftOutReferenceRoutesWouldConflict proves the reason given in operations.go for
// leaving some AI Config routes of the reference out of the catalog.
func TestLeftOutReferenceRoutesWouldConflict(t *testing.T) {
	left := []string{
		"GET /api/v2/projects/{projectKey}/ai-configs/{configKey}/targeting",
		"GET /api/v2/projects/{projectKey}/ai-configs/prompt-snippets/{snippetKey}/references",
	}
	for _, pattern := range left {
		t.Run(pattern+" conflicts with the catalog", func(t *testing.T) {
			mux := http.NewServeMux()
			for _, op := range All() {
				if err := register(mux, op.Pattern()); err != nil {
					t.Fatalf("%s: %v", op.ID, err)
				}
			}
			if err := register(mux, pattern); err == nil {
				t.Errorf("registering %s succeeded, want a conflict", pattern)
			}
		})
	}
}

func TestSpecOperationsArePresent(t *testing.T) {
	// Operations of spec part 4 with their method and path as the spec gives them.
	// Parameter names are compared loosely: the catalog keeps the reference's names.
	headings := []struct {
		spec, id, method, path string
	}{
		{"4.1 get release policy", "GetReleasePolicy", "GET", "/api/v2/projects/{projectKey}/release-policies/{policyKey}"},
		{"4.2 list OAuth clients", "getOAuthClients", "GET", "/api/v2/oauth/clients"},
		{"4.3 create environment", "postEnvironment", "POST", "/api/v2/projects/{projectKey}/environments"},
		{"4.3 list environments", "getEnvironmentsByProject", "GET", "/api/v2/projects/{projectKey}/environments"},
		{"4.3 get environment", "getEnvironment", "GET", "/api/v2/projects/{projectKey}/environments/{environmentKey}"},
		{"4.4 create insight group", "createInsightGroup", "POST", "/api/v2/engineering-insights/insights/group"},
		{"4.5 get contexts", "getContexts", "GET", "/api/v2/projects/{projectKey}/environments/{environmentKey}/contexts/{kind}/{key}"},
		{"4.6 create approval request", "postApprovalRequest", "POST", "/api/v2/approval-requests"},
		{"4.7 create release pipeline", "postReleasePipeline", "POST", "/api/v2/projects/{projectKey}/release-pipelines"},
		{"4.8 create integration configuration", "createIntegrationConfiguration", "POST", "/api/v2/integration-configurations/keys/{integrationKey}"},
		{"4.8 list integration configurations", "getAllIntegrationConfigurations", "GET", "/api/v2/integration-configurations/keys/{integrationKey}"},
		{"4.9 update access token", "patchToken", "PATCH", "/api/v2/tokens/{id}"},
		{"4.10 get application", "getApplication", "GET", "/api/v2/applications/{applicationKey}"},
		{"4.11 get delivery configuration", "getIntegrationDeliveryConfigurationById", "GET", "/api/v2/integration-capabilities/featureStore/{projectKey}/{environmentKey}/{integrationKey}/{id}"},
		{"4.12 update AI Config variation", "patchAIConfigVariation", "PATCH", "/api/v2/projects/{projectKey}/ai-configs/{configKey}/variations/{variationKey}"},
		{"4.14 get adaptive trigger", "getAdaptiveTrigger", "GET", "/api/v2/projects/{projectKey}/environments/{environmentKey}/adaptive-triggers/{triggerID}"},
		{"4.15 associate repositories with projects", "associateRepositoriesAndProjects", "PUT", "/api/v2/engineering-insights/repositories/projects"},
		{"4.16 complete warehouse destination setup", "postCompleteWarehouseDestinationSetup", "POST", "/api/v2/destinations/projects/{projectKey}/environments/{environmentKey}/kinds/{kind}/complete-setup"},
		{"4.17 get usage for all SDK versions", "getSdkAllVersions", "GET", "/api/v2/usage/sdk-versions/all"},
		{"4.17 get clientside contexts usage", "getContextsClientsideUsage", "GET", "/api/v2/usage/clientside-contexts"},
		{"4.18 list flag import configurations", "getFlagImportConfigurations", "GET", "/api/v2/integration-capabilities/flag-import"},
		{"4.19 get audit log entry", "getAuditLogEntry", "GET", "/api/v2/auditlog/{id}"},
		{"4.20 get big segment store integration", "getBigSegmentStoreIntegration", "GET", "/api/v2/integration-capabilities/big-segment-store/{projectKey}/{environmentKey}/{integrationKey}/{integrationId}"},
		{"4.21 create webhook", "postWebhook", "POST", "/api/v2/webhooks"},
		{"4.21 list webhooks", "getAllWebhooks", "GET", "/api/v2/webhooks"},
		{"4.21 update webhook", "patchWebhook", "PATCH", "/api/v2/webhooks/{id}"},
		{"4.22 list flag events", "getFlagEvents", "GET", "/api/v2/engineering-insights/flag-events"},
	}
	for _, h := range headings {
		t.Run("spec "+h.spec+" is "+h.id, func(t *testing.T) {
			op, ok := ByID(h.id)
			if !ok {
				t.Fatalf("operation %s is missing", h.id)
			}
			if op.Method != h.method || shape(op.Path) != shape(h.path) {
				t.Errorf("%s is %s, spec says %s %s", h.id, op.Pattern(), h.method, h.path)
			}
		})
	}

	// Rows of spec table 4.23, which gives the method only.
	rows := []struct {
		row, id, method string
	}{
		{"Update environment", "patchEnvironment", "PATCH"},
		{"Search for contexts", "searchContexts", "POST"},
		{"Evaluate flags for context instance", "evaluateContextInstance", "POST"},
		{"List approval requests", "getApprovalRequests", "GET"},
		{"Get approval request", "getApprovalRequest", "GET"},
		{"Generate warehouse destination key pair", "postGenerateWarehouseDestinationKeyPair", "POST"},
		{"Generate warehouse destination setup script", "postGenerateWarehouseDestinationSetupScript", "POST"},
		{"Get observability traces usage", "getObservabilityTracesUsage", "GET"},
		{"Get SDK versions usage details", "getSdkVersionsDetails", "GET"},
		{"Validate delivery configuration", "validateIntegrationDeliveryConfiguration", "POST"},
		{"Create flag import configuration", "createFlagImportConfiguration", "POST"},
		{"Get audit log entry counts", "postAuditLogEntryCounts", "POST"},
		{"List extinctions", "getExtinctions", "GET"},
		{"Create big segment store integration", "createBigSegmentStoreIntegration", "POST"},
		{"Update big segment store integration", "patchBigSegmentStoreIntegration", "PATCH"},
		{"Get AI runs usage", "getAIRunsUsage", "GET"},
		{"Get MAU clientside usage", "getMAUClientsideUsage", "GET"},
		{"Update expiring user target for flags", "patchExpiringFlagsForUser", "PATCH"},
		{"Update deployment", "updateDeployment", "PATCH"},
	}
	for _, r := range rows {
		t.Run("table 4.23 row "+r.row+" is "+r.id, func(t *testing.T) {
			op, ok := ByID(r.id)
			if !ok {
				t.Fatalf("operation %s is missing", r.id)
			}
			if op.Method != r.method {
				t.Errorf("%s has method %s, spec says %s", r.id, op.Method, r.method)
			}
		})
	}
}

func TestScopeAndBetaDecisions(t *testing.T) {
	readPosts := []string{
		"searchContexts", "searchContextInstances", "evaluateContextInstance",
		"postAuditLogEntries", "postAuditLogEntryCounts",
		// A membership evaluation stores nothing; an export copies members
		// out and changes no segment.
		"getContextInstanceSegmentsMembershipByEnv", "createBigSegmentExport",
		// OpenFeature's remote evaluations evaluate and store nothing.
		"evaluateOFREPFlag", "evaluateOFREPFlags",
	}
	for _, id := range readPosts {
		t.Run(id+" stores nothing so it needs only read scope", func(t *testing.T) {
			op, ok := ByID(id)
			if !ok {
				t.Fatalf("operation %s is missing", id)
			}
			if op.Method != "POST" || op.Scope != Read {
				t.Errorf("%s is %s with scope %q, want POST with read", id, op.Pattern(), op.Scope)
			}
		})
	}

	t.Run("the only other POSTs are write operations", func(t *testing.T) {
		allowed := map[string]bool{}
		for _, id := range readPosts {
			allowed[id] = true
		}
		for _, op := range All() {
			if op.Method == "POST" && op.Scope == Read && !allowed[op.ID] {
				t.Errorf("%s is a read POST not in the reviewed list", op.ID)
			}
		}
	})

	// Groups spec 9.2 labels beta, plus those the reference tags beta throughout.
	betaGroups := []string{
		"release-policies", "release-pipelines", "insights", "integrations", "applications",
		"delivery-configurations", "big-segments", "flag-imports", "usage",
	}
	for _, g := range betaGroups {
		t.Run("every operation of group "+g+" is beta", func(t *testing.T) {
			ops, err := Group(g)
			if err != nil {
				t.Fatal(err)
			}
			for _, op := range ops {
				if !op.Beta {
					t.Errorf("%s is not beta", op.ID)
				}
			}
		})
	}

	t.Run("outside the beta groups only patchApprovalRequest is beta", func(t *testing.T) {
		inBeta := map[string]bool{}
		for _, g := range betaGroups {
			inBeta[g] = true
		}
		for _, op := range All() {
			if op.Beta && !inBeta[op.Group] && op.ID != "patchApprovalRequest" {
				t.Errorf("%s in group %s is beta", op.ID, op.Group)
			}
		}
	})
}

func TestGroupAccessors(t *testing.T) {
	t.Run("Groups lists each group once, sorted", func(t *testing.T) {
		groups := Groups()
		if !sort.StringsAreSorted(groups) {
			t.Errorf("groups are not sorted: %v", groups)
		}
		seen := map[string]bool{}
		for _, g := range groups {
			if seen[g] {
				t.Errorf("group %q listed twice", g)
			}
			seen[g] = true
		}
		for _, op := range All() {
			if !seen[op.Group] {
				t.Errorf("group %q of %s is not listed", op.Group, op.ID)
			}
		}
	})

	t.Run("the number of groups stays moderate", func(t *testing.T) {
		// 20 to 28 API groups, and the console's.
		if n := len(Groups()); n < 21 || n > 29 {
			t.Errorf("catalog has %d groups, want 21 to 29", n)
		}
	})

	t.Run("Group returns exactly the operations of a known group", func(t *testing.T) {
		total := 0
		for _, g := range Groups() {
			ops, err := Group(g)
			if err != nil {
				t.Fatalf("Group(%q): %v", g, err)
			}
			if len(ops) == 0 {
				t.Errorf("Group(%q) is empty", g)
			}
			for _, op := range ops {
				if op.Group != g {
					t.Errorf("Group(%q) returned %s of group %q", g, op.ID, op.Group)
				}
			}
			total += len(ops)
		}
		if total != len(All()) {
			t.Errorf("groups hold %d operations, catalog has %d", total, len(All()))
		}
	})

	t.Run("Group returns an error for an unknown group", func(t *testing.T) {
		ops, err := Group("no-such-group")
		if err == nil {
			t.Errorf("Group(unknown) returned %d operations and no error", len(ops))
		}
		if err != nil && !strings.Contains(err.Error(), "no-such-group") {
			t.Errorf("error %q does not name the group", err)
		}
	})

	t.Run("All is ordered by group then path then method", func(t *testing.T) {
		ops := All()
		for i := 1; i < len(ops); i++ {
			a, b := ops[i-1], ops[i]
			key := func(o Operation) string { return o.Group + "\x00" + o.Path + "\x00" + o.Method }
			if key(a) > key(b) {
				t.Errorf("%s comes before %s", a.ID, b.ID)
			}
		}
	})

	t.Run("ByID finds a known id and rejects an unknown one", func(t *testing.T) {
		if op, ok := ByID("getProjects"); !ok || op.Pattern() != "GET /api/v2/projects" {
			t.Errorf("ByID(getProjects) = %v, %v", op, ok)
		}
		if _, ok := ByID("noSuchOperation"); ok {
			t.Error("ByID(noSuchOperation) found something")
		}
	})
}
