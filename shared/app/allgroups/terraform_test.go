package allgroups_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"testing"

	ldapi "github.com/launchdarkly/api-client-go/v17"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/app/apptest/reference"
)

// LaunchDarkly's Terraform provider (v2.26.2) through a whole lifecycle:
// each request as the provider sends it (its headers, its patch bodies,
// read back from its source), with what is stored checked after.

// terraformHeaders are the headers the provider sends on every request:
// a dated API version, and its user agent.
var terraformHeaders = []string{"LD-API-Version", "20240415", "User-Agent", "terraform-provider-launchdarkly/v2.26.2"}

// terraform sends one request as the provider does; extra headers follow its own.
func terraform(tb testing.TB, srv *apptest.Server, method, path string, body any, extra ...string) *apptest.Response {
	tb.Helper()
	return srv.Do(tb, method, path, body, append(append([]string{}, terraformHeaders...), extra...)...)
}

// jsonTypes names the JSON type of each of fields in an answer ("absent" when missing).
func jsonTypes(tb testing.TB, res *apptest.Response, fields ...string) map[string]string {
	tb.Helper()
	m := res.Map(tb)
	out := map[string]string{}
	for _, f := range fields {
		out[f] = "absent"
		if v, ok := m[f]; ok {
			out[f] = reference.JSONType(v)
		}
	}
	return out
}

func TestTerraformAccessTokenTimestamps(t *testing.T) {
	srv := apptest.New(t)
	fields := []string{"creationDate", "lastModified"}
	cases := []struct {
		name    string
		headers []string
		want    string
	}{
		{"the provider's dated LD-API-Version answers the timestamps as integers", terraformHeaders, "integer"},
		{"without LD-API-Version the timestamps are the spec's strings", nil, "string"},
		{"LD-API-Version beta alone keeps the spec's strings", []string{"LD-API-Version", "beta"}, "string"},
		{"SVC-API-Version with a date is not LaunchDarkly's header and keeps the strings", []string{"SVC-API-Version", "20240415"}, "string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The provider's launchdarkly_access_token create: a service token with a built-in role.
			created := srv.Do(t, http.MethodPost, api+"/tokens", map[string]any{"name": "terraform", "role": "reader", "serviceToken": true, "defaultApiVersion": 20240415}, tc.headers...)
			apptest.WantStatus(t, created, http.StatusCreated)
			var tok struct {
				ID           string          `json:"_id"`
				CreationDate json.RawMessage `json:"creationDate"`
			}
			created.JSON(t, &tok)
			read := srv.Do(t, http.MethodGet, api+"/tokens/"+tok.ID, nil, tc.headers...)
			apptest.WantStatus(t, read, http.StatusOK)
			for what, res := range map[string]*apptest.Response{"create": created, "read": read} {
				for f, got := range jsonTypes(t, res, fields...) {
					if got != tc.want {
						t.Errorf("the %s answers %s as a JSON %s, want %s: %s", what, f, got, tc.want, res.Body)
					}
				}
			}
			var again struct {
				CreationDate json.RawMessage `json:"creationDate"`
			}
			read.JSON(t, &again)
			if string(again.CreationDate) != string(tok.CreationDate) {
				t.Errorf("creationDate %s on create, %s on read", tok.CreationDate, again.CreationDate)
			}
		})
	}
}

// TestTerraformTokenDecodesInLaunchDarklysClient creates and reads a token
// (and an OAuth client) with LaunchDarkly's Go API client, which the
// provider is built on, set up as the provider sets it: a dated version on
// every request. The client decodes creationDate as an int64, so a string
// fails the call.
func TestTerraformTokenDecodesInLaunchDarklysClient(t *testing.T) {
	srv := apptest.New(t)
	cfg := ldapi.NewConfiguration()
	cfg.Servers = ldapi.ServerConfigurations{{URL: srv.URL}}
	cfg.AddDefaultHeader("LD-API-Version", "20240415")
	cfg.UserAgent = "terraform-provider-launchdarkly/v2.26.2"
	ld := ldapi.NewAPIClient(cfg)
	ctx := context.WithValue(context.Background(), ldapi.ContextAPIKeys, map[string]ldapi.APIKey{"ApiKey": {Key: srv.Token}})

	name, role, service := "terraform", "reader", true
	created, _, err := ld.AccessTokensApi.PostToken(ctx).AccessTokenPost(ldapi.AccessTokenPost{Name: &name, Role: &role, ServiceToken: &service}).Execute()
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.CreationDate == 0 || created.LastModified == 0 {
		t.Errorf("creationDate %d, lastModified %d: want the time it was made", created.CreationDate, created.LastModified)
	}
	read, _, err := ld.AccessTokensApi.GetToken(ctx, created.Id).Execute()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if read.CreationDate != created.CreationDate {
		t.Errorf("creationDate %d on read, %d on create", read.CreationDate, created.CreationDate)
	}
	list, _, err := ld.AccessTokensApi.GetTokens(ctx).Execute()
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(list.Items) == 0 {
		t.Errorf("the token list is empty")
	}

	// Another of the listed fields, which the beta-header tier (shared/ldcompat) counts as a deviation.
	client, _, err := ld.OAuth2ClientsApi.CreateOAuth2Client(ctx).OauthClientPost(ldapi.OauthClientPost{
		Name: ptr("terraform"), RedirectUri: ptr("https://app.example.com/cb")}).Execute()
	if err != nil {
		t.Fatalf("create OAuth client: %v", err)
	}
	if client.CreationDate == 0 {
		t.Errorf("OAuth client _creationDate 0")
	}
	if _, _, err := ld.OAuth2ClientsApi.GetOAuthClients(ctx).Execute(); err != nil {
		t.Errorf("list OAuth clients: %v", err)
	}
}

// providerEnvPatch is the JSON patch the provider sends to update an
// environment of a launchdarkly_project (getEnvironmentUpdatePatches): every
// field it manages, then every approval setting, each as in env (as it read
// it) unless set. An empty requiredApprovalTags goes as null, as the
// provider sends a nil list.
func providerEnvPatch(env map[string]any, set map[string]any) []apptest.PatchOp {
	as, _ := env["approvalSettings"].(map[string]any)
	val := func(path string, read any) any {
		if v, ok := set[path]; ok {
			return v
		}
		return read
	}
	tags := any(json.RawMessage("null"))
	if list, _ := as["requiredApprovalTags"].([]any); len(list) > 0 {
		tags = list
	}
	var ops []apptest.PatchOp
	for _, f := range []string{"name", "color", "defaultTtl", "secureMode", "defaultTrackEvents", "requireComments", "confirmChanges", "tags", "critical"} {
		ops = append(ops, apptest.Replace("/"+f, val("/"+f, env[f])))
	}
	for _, f := range []string{"required", "canReviewOwnRequest", "minNumApprovals", "canApplyDeclinedChanges", "requiredApprovalTags", "serviceKind", "serviceConfig", "autoApplyApprovedChanges"} {
		read := as[f]
		if f == "requiredApprovalTags" {
			read = tags
		}
		ops = append(ops, apptest.Replace("/approvalSettings/"+f, val("/approvalSettings/"+f, read)))
	}
	return ops
}

func TestTerraformProjectUpdate(t *testing.T) {
	srv := apptest.New(t)
	apptest.WantStatus(t, terraform(t, srv, http.MethodPost, api+"/projects", map[string]any{"key": "tf", "name": "Terraform", "tags": []string{"managed"},
		"environments": []map[string]any{{"key": "production", "name": "Production", "color": "417505"}}}), http.StatusCreated)

	t.Run("the provider's update renames the project and the environment, sending back the approval settings it read", func(t *testing.T) {
		proj := terraform(t, srv, http.MethodGet, projectPath("tf"), nil).Map(t)
		apptest.WantStatus(t, terraform(t, srv, http.MethodPatch, projectPath("tf"), []apptest.PatchOp{
			apptest.Replace("/name", "Terraform 2"), apptest.Replace("/tags", []string{"managed"}), apptest.Replace("/includeInSnippetByDefault", proj["includeInSnippetByDefault"]),
			apptest.Replace("/defaultClientSideAvailability", proj["defaultClientSideAvailability"]),
		}), http.StatusOK)
		before := apptest.GetEnv(t, srv, "tf", "production")
		res := terraform(t, srv, http.MethodPatch, envPath("tf", "production"), providerEnvPatch(before, map[string]any{"/name": "Production 2"}))
		apptest.WantStatus(t, res, http.StatusOK)
		after := apptest.GetEnv(t, srv, "tf", "production")
		if after["name"] != "Production 2" {
			t.Errorf("environment name %v, want Production 2", after["name"])
		}
		if !reflect.DeepEqual(after["approvalSettings"], before["approvalSettings"]) {
			t.Errorf("approval settings changed from %v to %v", before["approvalSettings"], after["approvalSettings"])
		}
		if got := terraform(t, srv, http.MethodGet, projectPath("tf"), nil).Map(t)["name"]; got != "Terraform 2" {
			t.Errorf("project name %v, want Terraform 2", got)
		}
	})

	refusedEnv := []struct {
		name string
		set  map[string]any
		part string
	}{
		{"a read-only approval setting that changes is refused naming it", map[string]any{"/approvalSettings/serviceKind": "servicenow"}, "/approvalSettings/serviceKind"},
		{"auto-apply, read-only here, is refused when it changes", map[string]any{"/approvalSettings/autoApplyApprovedChanges": true}, "/approvalSettings/autoApplyApprovedChanges"},
		{"required and requiredApprovalTags both changed are refused", map[string]any{"/approvalSettings/required": true, "/approvalSettings/requiredApprovalTags": []string{"reviewed"}}, "requiredApprovalTags"},
		{"an invalid color after a valid rename is refused", map[string]any{"/color": "nope"}, "color"},
	}
	for _, tc := range refusedEnv {
		t.Run(tc.name+", and nothing of the patch is stored", func(t *testing.T) {
			before := apptest.GetEnv(t, srv, "tf", "production")
			set := map[string]any{"/name": "Renamed"}
			for k, v := range tc.set {
				set[k] = v
			}
			apptest.WantError(t, terraform(t, srv, http.MethodPatch, envPath("tf", "production"), providerEnvPatch(before, set)), http.StatusBadRequest, "invalid_request", tc.part)
			if after := apptest.GetEnv(t, srv, "tf", "production"); !reflect.DeepEqual(before, after) {
				t.Errorf("a refused patch changed the environment:\nbefore %v\nafter  %v", before, after)
			}
		})
	}

	t.Run("a read-only project field sent back as read is accepted", func(t *testing.T) {
		res := terraform(t, srv, http.MethodPatch, projectPath("tf"), []apptest.PatchOp{apptest.Replace("/key", "tf"), apptest.Replace("/name", "Terraform 3")})
		apptest.WantStatus(t, res, http.StatusOK)
		if got := res.Map(t)["name"]; got != "Terraform 3" {
			t.Errorf("name %v", got)
		}
	})

	t.Run("a read-only project field that changes is refused naming it, and the rename before it is not stored", func(t *testing.T) {
		apptest.WantError(t, terraform(t, srv, http.MethodPatch, projectPath("tf"), []apptest.PatchOp{apptest.Replace("/name", "Half done"), apptest.Replace("/key", "other")}),
			http.StatusBadRequest, "invalid_request", "/key")
		if got := terraform(t, srv, http.MethodGet, projectPath("tf"), nil).Map(t)["name"]; got != "Terraform 3" {
			t.Errorf("project name %v after a refused patch, want Terraform 3", got)
		}
	})
}

// terraformFlag creates, as the provider does, a boolean flag without
// variation names in project tf, and returns it.
func terraformFlag(tb testing.TB, srv *apptest.Server, key string) map[string]any {
	tb.Helper()
	res := terraform(tb, srv, http.MethodPost, apptest.FlagsPath("tf"), map[string]any{
		"key": key, "name": "Checkout", "description": "", "temporary": false, "tags": []string{},
		"variations":             []map[string]any{{"value": true}, {"value": false}},
		"defaults":               map[string]any{"onVariation": 0, "offVariation": 1},
		"clientSideAvailability": map[string]any{"usingEnvironmentId": false, "usingMobileKey": false},
	})
	apptest.WantStatus(tb, res, http.StatusCreated)
	return res.Map(tb)
}

// providerFlagPatch is the patch the provider sends to update a
// launchdarkly_feature_flag, with a comment, as PatchWithComment: its
// settings, then value, name and description of each variation (names and
// descriptions "" when unset), then the defaults.
func providerFlagPatch(name string, variations []map[string]any) map[string]any {
	ops := []apptest.PatchOp{apptest.Replace("/name", name), apptest.Replace("/description", ""), apptest.Replace("/tags", []string{}), apptest.Replace("/temporary", false),
		apptest.Replace("/customProperties", map[string]any{}), apptest.Replace("/clientSideAvailability", map[string]any{"usingEnvironmentId": false, "usingMobileKey": false})}
	for i, v := range variations {
		for _, f := range []string{"value", "name", "description"} {
			ops = append(ops, apptest.Replace("/variations/"+strconv.Itoa(i)+"/"+f, v[f]))
		}
	}
	ops = append(ops, apptest.Replace("/defaults", map[string]any{"onVariation": 0, "offVariation": 1}))
	return map[string]any{"comment": "Terraform", "patch": ops}
}

func TestTerraformFlagUpdate(t *testing.T) {
	srv := apptest.New(t)
	apptest.WantStatus(t, terraform(t, srv, http.MethodPost, api+"/projects", map[string]any{"key": "tf", "name": "Terraform"}), http.StatusCreated)
	created := terraformFlag(t, srv, "checkout")
	if v := created["variations"].([]any)[0].(map[string]any); v["name"] != nil || v["description"] != nil {
		t.Errorf("a variation without a name answers %v; the reference leaves name and description out when unset", v)
	}
	unnamed := []map[string]any{{"value": true, "name": "", "description": ""}, {"value": false, "name": "", "description": ""}}

	t.Run("a rename with the provider's variation replaces of empty names succeeds and leaves the variations as they were", func(t *testing.T) {
		res := terraform(t, srv, http.MethodPatch, apptest.FlagPath("tf", "checkout"), providerFlagPatch("Checkout v2", unnamed))
		apptest.WantStatus(t, res, http.StatusOK)
		got := terraform(t, srv, http.MethodGet, apptest.FlagPath("tf", "checkout"), nil).Map(t)
		if got["name"] != "Checkout v2" {
			t.Errorf("name %v", got["name"])
		}
		if !reflect.DeepEqual(got["variations"], created["variations"]) {
			t.Errorf("variations %v, want them unchanged: %v", got["variations"], created["variations"])
		}
	})

	t.Run("a variation name and description set by the provider's replace are stored", func(t *testing.T) {
		named := []map[string]any{{"value": true, "name": "On", "description": "serves true"}, {"value": false, "name": "", "description": ""}}
		apptest.WantStatus(t, terraform(t, srv, http.MethodPatch, apptest.FlagPath("tf", "checkout"), providerFlagPatch("Checkout v2", named)), http.StatusOK)
		vars := terraform(t, srv, http.MethodGet, apptest.FlagPath("tf", "checkout"), nil).Map(t)["variations"].([]any)
		first, second := vars[0].(map[string]any), vars[1].(map[string]any)
		if first["name"] != "On" || first["description"] != "serves true" {
			t.Errorf("variation 0 %v, want name On and description serves true", first)
		}
		if _, ok := second["name"]; ok {
			t.Errorf("variation 1 %v has a name though it was replaced with \"\"", second)
		}
	})

	t.Run("a replace of any other missing member of a variation is still refused", func(t *testing.T) {
		before := terraform(t, srv, http.MethodGet, apptest.FlagPath("tf", "checkout"), nil).Map(t)
		apptest.WantError(t, terraform(t, srv, http.MethodPatch, apptest.FlagPath("tf", "checkout"), []apptest.PatchOp{apptest.Replace("/name", "Half done"), apptest.Replace("/variations/0/nickname", "x")}),
			http.StatusUnprocessableEntity, "patch_failed")
		if after := terraform(t, srv, http.MethodGet, apptest.FlagPath("tf", "checkout"), nil).Map(t); !reflect.DeepEqual(before, after) {
			t.Errorf("a refused patch changed the flag")
		}
	})

	t.Run("a read-only flag field sent back as read is accepted, one that changes is refused naming it", func(t *testing.T) {
		apptest.WantStatus(t, terraform(t, srv, http.MethodPatch, apptest.FlagPath("tf", "checkout"), []apptest.PatchOp{apptest.Replace("/key", "checkout"), apptest.Replace("/kind", "boolean"), apptest.Replace("/description", "kept")}), http.StatusOK)
		apptest.WantError(t, terraform(t, srv, http.MethodPatch, apptest.FlagPath("tf", "checkout"), []apptest.PatchOp{apptest.Replace("/description", "lost"), apptest.Replace("/kind", "multivariate")}),
			http.StatusBadRequest, "invalid_request", "kind")
		if got := terraform(t, srv, http.MethodGet, apptest.FlagPath("tf", "checkout"), nil).Map(t)["description"]; got != "kept" {
			t.Errorf("description %v after a refused patch, want kept", got)
		}
	})
}

func TestTerraformFlagEnvironmentDestroy(t *testing.T) {
	srv := apptest.New(t)
	apptest.WantStatus(t, terraform(t, srv, http.MethodPost, api+"/projects", map[string]any{"key": "tf", "name": "Terraform"}), http.StatusCreated)
	terraformFlag(t, srv, "gate")
	terraformFlag(t, srv, "checkout")
	prod := func(path string) string { return "/environments/production/" + path }

	// The provider's launchdarkly_feature_flag_environment create: targeting in production.
	apptest.WantStatus(t, terraform(t, srv, http.MethodPatch, apptest.FlagPath("tf", "checkout"), map[string]any{"comment": "Terraform", "patch": []apptest.PatchOp{
		apptest.Replace(prod("on"), true),
		apptest.Replace(prod("offVariation"), 0),
		apptest.Replace(prod("trackEvents"), true),
		apptest.Replace(prod("rules"), []map[string]any{{"variation": 0, "clauses": []map[string]any{{"attribute": "email", "op": "endsWith", "values": []string{"@example.com"}, "negate": false}}}}),
		apptest.Replace(prod("prerequisites"), []map[string]any{{"key": "gate", "variation": 0}}),
		apptest.Replace(prod("targets"), []map[string]any{{"values": []string{"alice"}, "variation": 0}}),
		apptest.Replace(prod("contextTargets"), []map[string]any{{"contextKind": "org", "values": []string{"acme"}, "variation": 1}}),
		apptest.Replace(prod("fallthrough"), map[string]any{"variation": 1}),
	}}), http.StatusOK)

	for _, path := range []string{"/environments/production/fallthoughs", "/environments/production/fallthoug", "/fallthough", "/environments/production/rules/fallthough"} {
		t.Run("the misspelling is no alias at "+path, func(t *testing.T) {
			before := terraform(t, srv, http.MethodGet, apptest.FlagPath("tf", "checkout"), nil).Map(t)
			res := terraform(t, srv, http.MethodPatch, apptest.FlagPath("tf", "checkout"), map[string]any{"comment": "Terraform", "patch": []apptest.PatchOp{apptest.Replace(prod("on"), false), apptest.Replace(path, map[string]any{"variation": 0})}})
			if res.Status != http.StatusBadRequest && res.Status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 400 or 422: %s", res.Status, res.Body)
			}
			if after := terraform(t, srv, http.MethodGet, apptest.FlagPath("tf", "checkout"), nil).Map(t); !reflect.DeepEqual(before, after) {
				t.Errorf("a refused patch changed the flag")
			}
		})
	}

	t.Run("the provider's destroy resets the environment's targeting", func(t *testing.T) {
		// It reads the flag first, for its off variation: the last one.
		vars := terraform(t, srv, http.MethodGet, apptest.FlagPath("tf", "checkout"), nil).Map(t)["variations"].([]any)
		res := terraform(t, srv, http.MethodPatch, apptest.FlagPath("tf", "checkout"), map[string]any{"comment": "Terraform", "patch": []apptest.PatchOp{
			apptest.Replace(prod("on"), false),
			apptest.Replace(prod("rules"), []any{}),
			apptest.Replace(prod("trackEvents"), false),
			apptest.Replace(prod("prerequisites"), []any{}),
			apptest.Replace(prod("offVariation"), len(vars)-1),
			apptest.Replace(prod("targets"), []any{}),
			apptest.Replace(prod("contextTargets"), []any{}),
			apptest.Replace(prod("fallthough"), map[string]any{"variation": 0}),
		}})
		apptest.WantStatus(t, res, http.StatusOK)
		env := terraform(t, srv, http.MethodGet, apptest.FlagPath("tf", "checkout")+"?env=production", nil).Map(t)["environments"].(map[string]any)["production"].(map[string]any)
		want := map[string]any{"on": false, "trackEvents": false, "offVariation": float64(len(vars) - 1), "fallthrough": map[string]any{"variation": 0.0}}
		for f, w := range want {
			if !reflect.DeepEqual(env[f], w) {
				t.Errorf("%s %v, want %v", f, env[f], w)
			}
		}
		for _, f := range []string{"rules", "prerequisites", "targets", "contextTargets"} {
			if list, ok := env[f].([]any); !ok || len(list) != 0 {
				t.Errorf("%s %v, want []", f, env[f])
			}
		}
	})
}

// ldSemanticPatch is the Content-Type of a semantic patch as LaunchDarkly's clients send it.
const ldSemanticPatch = "application/json; domain-model=launchdarkly.semanticpatch"

// An instruction that removes what is already absent is a no-op, as
// LaunchDarkly treats it (and as removeUserTargets always was): the answer
// is 200 and nothing is written. Those whose result cannot hold (a removal
// that would leave a clause empty, a variation still served) still fail.
func TestRemoveInstructionsWhoseResultHoldsAreNoOps(t *testing.T) {
	srv := apptest.New(t)
	apptest.WantStatus(t, terraform(t, srv, http.MethodPost, api+"/projects", map[string]any{"key": "tf", "name": "Terraform"}), http.StatusCreated)
	terraformFlag(t, srv, "gate")
	f := terraformFlag(t, srv, "checkout")
	var vids []string
	for _, v := range f["variations"].([]any) {
		vids = append(vids, v.(map[string]any)["_id"].(string))
	}
	semantic := func(path string, body map[string]any) *apptest.Response {
		return terraform(t, srv, http.MethodPatch, path, body, "Content-Type", ldSemanticPatch)
	}
	apptest.WantStatus(t, semantic(apptest.FlagPath("tf", "checkout"), map[string]any{"environmentKey": "production", "instructions": []any{
		apptest.Instr("addRule", "variationId", vids[0], "clauses", []any{map[string]any{"attribute": "country", "op": "in", "values": []string{"SE", "NO"}}}),
		apptest.Instr("addUserTargets", "values", []string{"alice"}, "variationId", vids[0]),
	}}), http.StatusOK)
	apptest.WantStatus(t, terraform(t, srv, http.MethodPost, api+"/teams", map[string]any{"key": "ops", "name": "Ops"}), http.StatusCreated)
	var rule struct {
		ID      string `json:"_id"`
		Clauses []struct {
			ID string `json:"_id"`
		} `json:"clauses"`
	}
	env := terraform(t, srv, http.MethodGet, apptest.FlagPath("tf", "checkout")+"?env=production", nil).Map(t)["environments"].(map[string]any)["production"].(map[string]any)
	raw, _ := json.Marshal(env["rules"].([]any)[0])
	if err := json.Unmarshal(raw, &rule); err != nil || len(rule.Clauses) != 1 {
		t.Fatalf("rule %s: %v", raw, err)
	}
	clause := rule.Clauses[0].ID

	onFlag := func(ins ...map[string]any) (string, map[string]any) {
		return apptest.FlagPath("tf", "checkout"), map[string]any{"environmentKey": "production", "instructions": ins}
	}
	cases := []struct {
		name   string
		path   string
		body   map[string]any
		read   string // what must not change
		status int
		part   string
	}{
		{name: "removeExpireUserTargetDate with nothing scheduled, on the flag's expiring targets", path: apptest.FlagExpiringPath("tf", "checkout", "production"),
			body: map[string]any{"instructions": []any{apptest.Instr("removeExpireUserTargetDate", "userKey", "alice", "variationId", vids[0])}}, read: apptest.FlagExpiringPath("tf", "checkout", "production")},
		{name: "removeExpireUserTargetDate with nothing scheduled, on the user's expiring targets", path: apptest.UserExpiringPath("tf", "alice", "production"),
			body: map[string]any{"instructions": []any{apptest.Instr("removeExpireUserTargetDate", "flagKey", "checkout", "variationId", vids[0])}}, read: apptest.UserExpiringPath("tf", "alice", "production")},
		{name: "removeVariation of a variation the flag does not have"},
		{name: "removeClauses of a clause the rule does not have"},
		{name: "removeClauses of a rule that does not exist"},
		{name: "removeValuesFromClause of values the clause does not hold"},
		{name: "removeValuesFromClause of a clause that does not exist"},
		{name: "removeValuesFromClause of a rule that does not exist"},
		{name: "removeRule of a rule that does not exist"},
		{name: "removePrerequisite of a flag that is no prerequisite"},
		{name: "removeUserTargets of a user not targeted"},
		{name: "removeTargets of a context not targeted"},
		{name: "removeTags of a tag the flag does not have"},
		{name: "removeMaintainer of a flag without one"},
		{name: "removeMembers of a member not in the team", path: api + "/teams/ops",
			body: map[string]any{"instructions": []any{apptest.Instr("removeMembers", "values", []string{"0123456789abcdef01234567"})}}, read: api + "/teams/ops"},
		{name: "removeCustomRoles of a role the team does not have", path: api + "/teams/ops",
			body: map[string]any{"instructions": []any{apptest.Instr("removeCustomRoles", "values", []string{"nobody"})}}, read: api + "/teams/ops"},
		{name: "removeVariation of a variation still served still fails", status: http.StatusUnprocessableEntity, part: "in use"},
		{name: "removeValuesFromClause that would leave the clause empty still fails", status: http.StatusUnprocessableEntity, part: "without values"},
	}
	flagIns := map[string]map[string]any{
		"removeVariation of a variation the flag does not have":                apptest.Instr("removeVariation", "variationId", "no-such-variation"),
		"removeClauses of a clause the rule does not have":                     apptest.Instr("removeClauses", "ruleId", rule.ID, "clauseIds", []string{"no-such-clause"}),
		"removeClauses of a rule that does not exist":                          apptest.Instr("removeClauses", "ruleId", "no-such-rule", "clauseIds", []string{clause}),
		"removeValuesFromClause of values the clause does not hold":            apptest.Instr("removeValuesFromClause", "ruleId", rule.ID, "clauseId", clause, "values", []string{"DK"}),
		"removeValuesFromClause of a clause that does not exist":               apptest.Instr("removeValuesFromClause", "ruleId", rule.ID, "clauseId", "no-such-clause", "values", []string{"SE"}),
		"removeValuesFromClause of a rule that does not exist":                 apptest.Instr("removeValuesFromClause", "ruleId", "no-such-rule", "clauseId", clause, "values", []string{"SE"}),
		"removeRule of a rule that does not exist":                             apptest.Instr("removeRule", "ruleId", "no-such-rule"),
		"removePrerequisite of a flag that is no prerequisite":                 apptest.Instr("removePrerequisite", "key", "gate"),
		"removeUserTargets of a user not targeted":                             apptest.Instr("removeUserTargets", "values", []string{"bob"}, "variationId", vids[0]),
		"removeTargets of a context not targeted":                              apptest.Instr("removeTargets", "values", []string{"acme"}, "variationId", vids[1], "contextKind", "org"),
		"removeTags of a tag the flag does not have":                           apptest.Instr("removeTags", "values", []string{"absent"}),
		"removeMaintainer of a flag without one":                               apptest.Instr("removeMaintainer"),
		"removeVariation of a variation still served still fails":              apptest.Instr("removeVariation", "variationId", vids[0]),
		"removeValuesFromClause that would leave the clause empty still fails": apptest.Instr("removeValuesFromClause", "ruleId", rule.ID, "clauseId", clause, "values", []string{"SE", "NO"}),
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if in, ok := flagIns[tc.name]; ok {
				tc.path, tc.body = onFlag(in)
				tc.read = apptest.FlagPath("tf", "checkout")
			}
			if tc.path == "" {
				t.Fatalf("no request for %q", tc.name)
			}
			before := terraform(t, srv, http.MethodGet, tc.read, nil)
			apptest.WantStatus(t, before, http.StatusOK)
			res := semantic(tc.path, tc.body)
			if tc.status != 0 {
				apptest.WantError(t, res, tc.status, "patch_failed", tc.part)
			} else {
				apptest.WantStatus(t, res, http.StatusOK)
			}
			if after := terraform(t, srv, http.MethodGet, tc.read, nil); !apptest.SameJSON(t, before.Body, after.Body) {
				t.Errorf("%s changed:\nbefore %s\nafter  %s", tc.read, before.Body, after.Body)
			}
		})
	}
}
