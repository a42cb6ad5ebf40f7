package catalog

import (
	"regexp"
	"strings"
	"testing"
)

var (
	kindName   = regexp.MustCompile(`^[a-z]+(-[a-z]+)*$`)
	namePart   = regexp.MustCompile(`^(\*|\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z0-9._-]+)$`)
	camelCase  = regexp.MustCompile(`^[a-z][a-z0-9]*([A-Z][a-z0-9]*)*$`)
	pathParams = regexp.MustCompile(`\{([^}]*)\}`)
)

// kindChains are the kind sequences the comment at the top of operations.go lists.
var kindChains = func() map[string]bool {
	out := map[string]bool{}
	for _, c := range []string{
		"proj", "proj:env", "proj:env:flag", "proj:env:segment", "proj:env:destination",
		"proj:env:adaptive-trigger", "proj:env:integration", "proj:integration",
		"proj:release-pipeline", "proj:release-policy", "proj:aiconfig", "proj:ai-model-config",
		"proj:context-kind", "proj:insight-repository",
		"member", "member:token", "role", "team", "webhook", "oauth-client", "integration",
		"application", "code-reference-repository", "insight-group", "deployment",
		"insight", "usage", "auditlog",
	} {
		out[c] = true
	}
	return out
}()

// projectKeyParams are the names the paths give a project key.
var projectKeyParams = map[string]bool{"projectKey": true, "projKey": true}

// notInResource lists, per group, the path parameters a resource may leave out, and why.
// Reads inside a project name only their project and are not checked against this list.
var notInResource = map[string]map[string]string{
	"approvals":         {"id": "an approval request acts on the flag its resourceId names"},
	"contexts":          {"id": "context instances belong to their environment"},
	"flags":             {"userKey": "a user key selects targets on the flags, it names no resource"},
	"destinations":      {"kind": "the warehouse kind selects a setup, it names no resource"},
	"applications":      {"versionKey": "versions are part of their application, as in LaunchDarkly"},
	"events":            {"clientSideId": "the client-side id is a credential: it resolves to the environment the events feed"},
	"ai-configs":        {"variationKey": "variations are part of their AI Config, as in LaunchDarkly"},
	"code-refs":         {"branch": "branches are part of their repository, as in LaunchDarkly"},
	"release-pipelines": {"phaseId": "a release's phases are part of the flag's release, which acts on the flag"},
	"usage": {
		"type":   "the event type selects a usage series, it names no resource",
		"source": "the stream source selects a usage series, it names no resource",
	},
}

// itemReads are the GETs of items that account-wide lists show across projects
// or environments: each names the item itself, so the GET and the list decide
// on the same resource.
var itemReads = map[string]string{
	"getDestination": "proj/{projectKey}:env/{environmentKey}:destination/{id}",
	"getIntegrationDeliveryConfigurationById": "proj/{projectKey}:env/{environmentKey}:integration/{integrationKey}/{id}",
	"getBigSegmentStoreIntegration":           "proj/{projectKey}:env/{environmentKey}:integration/{integrationKey}/{integrationId}",
	"getFlagImportConfiguration":              "proj/{projectKey}:integration/{integrationKey}/{integrationId}",
}

// settledElsewhere are viewProject operations whose resource follows another rule.
var settledElsewhere = map[string]bool{
	// validate opens a connection to the store: its right is not a read's.
	"validateIntegrationDeliveryConfiguration": true,
}

// mergePatches are the PATCH operations whose body is a merge-style object, not a JSON
// patch or semantic patch, so their action does not follow from the body.
var mergePatches = map[string]bool{"patchAIConfig": true, "patchAIConfigVariation": true}

// segment is one kind/name part of a resource specifier.
type segment struct{ kind, name string }

// parseResource splits a specifier into its segments or reports why it cannot.
func parseResource(spec string) ([]segment, string) {
	if spec == "" {
		return nil, "is empty"
	}
	var out []segment
	for _, part := range strings.Split(spec, ":") {
		kind, name, ok := strings.Cut(part, "/")
		if !ok {
			return nil, "segment " + part + " has no kind/name"
		}
		if !kindName.MatchString(kind) {
			return nil, "kind " + kind + " is not lower-case hyphenated"
		}
		names, wantParts := strings.Split(name, "/"), 1
		if kind == "integration" {
			wantParts = 2 // <integrationKey>/<id>
		}
		if len(names) != wantParts {
			return nil, "segment " + part + " has the wrong number of name parts"
		}
		for _, n := range names {
			if !namePart.MatchString(n) {
				return nil, "name " + n + " is neither a literal, * nor a {param}"
			}
		}
		out = append(out, segment{kind, name})
	}
	return out, ""
}

// chain is the kinds of a parsed specifier joined by ":".
func chain(segs []segment) string {
	kinds := make([]string, len(segs))
	for i, s := range segs {
		kinds[i] = s.kind
	}
	return strings.Join(kinds, ":")
}

// params lists the {param} names of a path or specifier.
func params(s string) []string {
	var out []string
	for _, m := range pathParams.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// projectParam returns the project key parameter of the path, if it has one.
func projectParam(path string) (string, bool) {
	for _, p := range params(path) {
		if projectKeyParams[p] {
			return p, true
		}
	}
	return "", false
}

func TestOperationResources(t *testing.T) {
	ops := All()
	tests := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"every resource parses as kind/name segments with lower-case hyphenated kinds, bar public operations that act on none", func(t *testing.T) {
			for _, op := range ops {
				if op.Public && op.Resource == "" && op.Action == "" {
					continue
				}
				if _, why := parseResource(op.Resource); why != "" {
					t.Errorf("%s: resource %q %s", op.ID, op.Resource, why)
				}
			}
		}},
		{"every resource's kinds are a chain the comment of operations.go lists", func(t *testing.T) {
			for _, op := range ops {
				segs, why := parseResource(op.Resource)
				if why != "" {
					continue
				}
				if c := chain(segs); !kindChains[c] {
					t.Errorf("%s: resource %q has kinds %s", op.ID, op.Resource, c)
				}
			}
		}},
		{"every {param} of a resource is a parameter of its path", func(t *testing.T) {
			for _, op := range ops {
				inPath := map[string]bool{}
				for _, p := range params(op.Path) {
					inPath[p] = true
				}
				for _, p := range params(op.Resource) {
					if !inPath[p] {
						t.Errorf("%s: resource %q names {%s}, which %s lacks", op.ID, op.Resource, p, op.Path)
					}
				}
			}
		}},
		{"every path parameter appears in the resource of a write or account-level read, bar the listed exceptions", func(t *testing.T) {
			for _, op := range ops {
				if op.Action == "viewProject" || (op.Public && op.Resource == "" && op.Action == "") {
					continue
				}
				inResource := map[string]bool{}
				for _, p := range params(op.Resource) {
					inResource[p] = true
				}
				for _, p := range params(op.Path) {
					if !inResource[p] && notInResource[op.Group][p] == "" {
						t.Errorf("%s: path parameter {%s} is missing from resource %q", op.ID, p, op.Resource)
					}
				}
			}
		}},
		{"every exception is a parameter some operation of its group leaves out", func(t *testing.T) {
			for group, names := range notInResource {
				for p := range names {
					used := false
					for _, op := range ops {
						if op.Group == group && op.Action != "viewProject" &&
							strings.Contains(op.Path, "{"+p+"}") && !strings.Contains(op.Resource, "{"+p+"}") {
							used = true
						}
					}
					if !used {
						t.Errorf("exception {%s} of group %s is not needed", p, group)
					}
				}
			}
		}},
		{"every resource with a project key in its path names that project", func(t *testing.T) {
			for _, op := range ops {
				if p, ok := projectParam(op.Path); ok && !strings.HasPrefix(op.Resource, "proj/{"+p+"}") {
					t.Errorf("%s: resource %q does not start with proj/{%s}", op.ID, op.Resource, p)
				}
			}
		}},
		{"a resource names an environment only as a parameter called environmentKey or envKey", func(t *testing.T) {
			for _, op := range ops {
				segs, why := parseResource(op.Resource)
				if why != "" {
					continue
				}
				for _, s := range segs {
					if s.kind == "env" && s.name != "*" && s.name != "{environmentKey}" && s.name != "{envKey}" {
						t.Errorf("%s: environment segment env/%s", op.ID, s.name)
					}
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.check)
	}
}

func TestOperationActions(t *testing.T) {
	ops := All()
	tests := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"every write has an action", func(t *testing.T) {
			for _, op := range ops {
				if op.Scope == Write && op.Action == "" {
					t.Errorf("%s is a write without an action", op.ID)
				}
			}
		}},
		{"no write claims viewProject", func(t *testing.T) {
			for _, op := range ops {
				if op.Scope == Write && op.Action == "viewProject" {
					t.Errorf("%s is a write with action viewProject", op.ID)
				}
			}
		}},
		{"every read has action viewProject or none", func(t *testing.T) {
			for _, op := range ops {
				if op.Scope == Read && op.Action != "" && op.Action != "viewProject" {
					t.Errorf("%s is a read with action %q", op.ID, op.Action)
				}
			}
		}},
		{"a read has viewProject exactly when its path has a project key", func(t *testing.T) {
			for _, op := range ops {
				if op.Scope != Read {
					continue
				}
				_, inProject := projectParam(op.Path)
				if inProject != (op.Action == "viewProject") {
					t.Errorf("%s: path %s, action %q", op.ID, op.Path, op.Action)
				}
			}
		}},
		{"a viewProject read names its project, its environment when the path has one, or the item it reads", func(t *testing.T) {
			for _, op := range ops {
				if op.Action != "viewProject" {
					continue
				}
				p, _ := projectParam(op.Path)
				want := "proj/{" + p + "}"
				for _, e := range []string{"environmentKey", "envKey"} {
					if strings.Contains(op.Path, "{"+e+"}") {
						want += ":env/{" + e + "}"
					}
				}
				if item, ok := itemReads[op.ID]; ok {
					want = item
				}
				if op.Resource != want && !settledElsewhere[op.ID] {
					t.Errorf("%s: resource %q, want %s", op.ID, op.Resource, want)
				}
			}
		}},
		{"every action is camelCase", func(t *testing.T) {
			for _, op := range ops {
				if op.Action != "" && !camelCase.MatchString(op.Action) {
					t.Errorf("%s: action %q is not camelCase", op.ID, op.Action)
				}
			}
		}},
		{"BodyActions marks only PATCH operations", func(t *testing.T) {
			for _, op := range ops {
				if op.BodyActions && op.Method != "PATCH" {
					t.Errorf("%s is a %s with BodyActions", op.ID, op.Method)
				}
			}
		}},
		{"every JSON-patch or semantic-patch PATCH has BodyActions and the merge-style ones do not", func(t *testing.T) {
			for _, op := range ops {
				if op.Method == "PATCH" && op.BodyActions == mergePatches[op.ID] {
					t.Errorf("%s: BodyActions is %v", op.ID, op.BodyActions)
				}
			}
		}},
		{"every BodyActions fallback is an update action", func(t *testing.T) {
			for _, op := range ops {
				if op.BodyActions && !strings.HasPrefix(op.Action, "update") {
					t.Errorf("%s: fallback %q does not start with update", op.ID, op.Action)
				}
			}
		}},
		{"every POST that creates names the collection with a trailing *, bar parts created in their owner", func(t *testing.T) {
			partOfOwner := map[string]bool{"postAIConfigVariation": true} // names its AI Config
			for _, op := range ops {
				if op.Method == "POST" && strings.HasPrefix(op.Action, "create") && !partOfOwner[op.ID] &&
					!strings.HasSuffix(op.Resource, "/*") {
					t.Errorf("%s: create on %q", op.ID, op.Resource)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.check)
	}
}

func TestOperationAccessSpotChecks(t *testing.T) {
	tests := []struct {
		id, resource, action string
		bodyActions          bool
	}{
		{"getEnvironment", "proj/{projectKey}:env/{environmentKey}", "viewProject", false},
		{"getEnvironmentsByProject", "proj/{projectKey}", "viewProject", false},
		{"postEnvironment", "proj/{projectKey}:env/*", "createEnvironment", false},
		{"patchEnvironment", "proj/{projectKey}:env/{environmentKey}", "updateEnvironment", true},
		{"deleteEnvironment", "proj/{projectKey}:env/{environmentKey}", "deleteEnvironment", false},
		{"resetEnvironmentSDKKey", "proj/{projectKey}:env/{environmentKey}", "updateApiKey", false},
		{"resetEnvironmentMobileKey", "proj/{projectKey}:env/{environmentKey}", "updateMobileKey", false},
		{"getProjects", "proj/*", "", false},
		{"postProject", "proj/*", "createProject", false},
		{"patchProject", "proj/{projectKey}", "updateProject", true},
		{"deleteProject", "proj/{projectKey}", "deleteProject", false},
		{"postFeatureFlag", "proj/{projectKey}:env/*:flag/*", "createFlag", false},
		{"patchFeatureFlag", "proj/{projectKey}:env/*:flag/{featureFlagKey}", "updateFlag", true},
		{"patchExpiringUserTargets", "proj/{projectKey}:env/{environmentKey}:flag/{featureFlagKey}", "updateExpiringTargets", true},
		{"postApprovalRequestReview", "proj/*:env/*:flag/*", "reviewApprovalRequest", false},
		{"postApprovalRequestApply", "proj/*:env/*:flag/*", "applyApprovalRequest", false},
		{"getTokens", "member/*:token/*", "", false},
		{"postToken", "member/*:token/*", "createAccessToken", false},
		{"getToken", "member/*:token/{id}", "", false},
		{"patchToken", "member/*:token/{id}", "updateAccessToken", true},
		{"deleteToken", "member/*:token/{id}", "deleteAccessToken", false},
		{"resetToken", "member/*:token/{id}", "resetAccessToken", false},
		{"getCustomRoles", "role/*", "", false},
		{"postCustomRole", "role/*", "createRole", false},
		{"patchCustomRole", "role/{customRoleKey}", "updateRole", true},
		{"deleteCustomRole", "role/{customRoleKey}", "deleteRole", false},
		{"postMembers", "member/*", "createMember", false},
		{"patchMember", "member/{id}", "updateMember", true},
		{"deleteMember", "member/{id}", "deleteMember", false},
		{"postWebhook", "webhook/*", "createWebhook", false},
		{"patchWebhook", "webhook/{id}", "updateWebhook", true},
		{"createOAuth2Client", "oauth-client/*", "createOAuthClient", false},
		{"postOAuthToken", "oauth-client/*", "createOAuthToken", false},
		{"postAIConfig", "proj/{projectKey}:aiconfig/*", "createAIConfig", false},
		{"patchAIConfigVariation", "proj/{projectKey}:aiconfig/{configKey}", "updateAIConfigVariation", false},
		{"putContextKind", "proj/{projectKey}:context-kind/{key}", "updateContextKind", false},
		{"deleteContextInstances", "proj/{projectKey}:env/{environmentKey}", "deleteContextInstance", false},
		{"searchContexts", "proj/{projectKey}:env/{environmentKey}", "viewProject", false},
		{"createIntegrationConfiguration", "integration/{integrationKey}/*", "createIntegration", false},
		{"patchDestination", "proj/{projectKey}:env/{environmentKey}:destination/{id}", "updateDestination", true},
		{"postRepository", "code-reference-repository/*", "createCodeRefsRepository", false},
		{"getEvaluationsUsage", "proj/{projectKey}:env/{environmentKey}", "viewProject", false},
		{"getAuditLogEntries", "auditlog/*", "", false},
		{"postAuditLogEntryCounts", "auditlog/*", "", false},
	}
	for _, tt := range tests {
		want := tt.action
		if want == "" {
			want = "no action"
		}
		t.Run(tt.id+" is "+want+" on "+tt.resource, func(t *testing.T) {
			op, ok := ByID(tt.id)
			if !ok {
				t.Fatalf("operation %s is missing", tt.id)
			}
			if op.Resource != tt.resource || op.Action != tt.action || op.BodyActions != tt.bodyActions {
				t.Errorf("%s is %q on %q (BodyActions %v), want %q on %q (BodyActions %v)",
					tt.id, op.Action, op.Resource, op.BodyActions, tt.action, tt.resource, tt.bodyActions)
			}
		})
	}
}
