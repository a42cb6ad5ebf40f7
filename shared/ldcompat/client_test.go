package ldcompat_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	ldapi "github.com/launchdarkly/api-client-go/v17"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// Keys of what the tier makes.
const (
	proj     = "ld"
	prod     = "production"
	staging  = "staging"
	flagKey  = "checkout"
	flag2Key = "banner"
	roleKey  = "viewers"
	teamKey  = "devs"
	userKey  = "u1"
)

// semanticPatchType is the media type LaunchDarkly documents for a
// semantic patch (flagplane's own is domain-model=flagplane.semanticpatch).
const semanticPatchType = "application/json; domain-model=launchdarkly.semanticpatch"

func ptr[T any](v T) *T { return &v }

func replace(path string, v any) ldapi.PatchOperation {
	return ldapi.PatchOperation{Op: "replace", Path: path, Value: v}
}

// TestLaunchDarklyClient drives every built operation the client has, in
// the order a user would: projects and environments, roles, members, teams,
// tokens, webhooks, OAuth clients, flags with JSON and semantic patch,
// evaluation, expiring targets, approval requests, the audit log, then
// deletes. Steps go on after a failure where they can, so the one list at
// the end shows everything that is left.
func TestLaunchDarklyClient(t *testing.T) {
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(hooks.Close)
	srv := apptest.New(t, apptest.WithWebhookDelivery()) // webhooks may target the loopback receiver
	tr := newTier(t, srv)
	ld, ctx := tr.ld, tr.ctx

	// Projects and environments.
	check(tr, "postProject", "create with two environments", http.StatusCreated, ld.ProjectsApi.PostProject(ctx).ProjectPost(ldapi.ProjectPost{
		Key: proj, Name: "LaunchDarkly client", Tags: []string{"sdk"},
		Environments: []ldapi.EnvironmentPost{{Key: prod, Name: "Production", Color: "417505"}, {Key: "test", Name: "Test", Color: "F5A623"}},
	}).Execute)
	check(tr, "getProjects", "list", http.StatusOK, ld.ProjectsApi.GetProjects(ctx).Execute)
	check(tr, "getProject", "get", http.StatusOK, ld.ProjectsApi.GetProject(ctx, proj).Execute)
	check(tr, "getProject", "get with expand=environments", http.StatusOK, ld.ProjectsApi.GetProject(ctx, proj).Expand("environments").Execute)
	check(tr, "patchProject", "rename", http.StatusOK, ld.ProjectsApi.PatchProject(ctx, proj).PatchOperation([]ldapi.PatchOperation{replace("/name", "LD client")}).Execute)
	check(tr, "postEnvironment", "create", http.StatusCreated, ld.EnvironmentsApi.PostEnvironment(ctx, proj).EnvironmentPost(ldapi.EnvironmentPost{
		Key: staging, Name: "Staging", Color: "00AA00", Tags: []string{"ops"}, Critical: ptr(false),
	}).Execute)
	check(tr, "getEnvironmentsByProject", "list", http.StatusOK, ld.EnvironmentsApi.GetEnvironmentsByProject(ctx, proj).Execute)
	check(tr, "getEnvironment", "get", http.StatusOK, ld.EnvironmentsApi.GetEnvironment(ctx, proj, prod).Execute)
	check(tr, "patchEnvironment", "color and canReviewOwnRequest", http.StatusOK, ld.EnvironmentsApi.PatchEnvironment(ctx, proj, prod).PatchOperation([]ldapi.PatchOperation{
		replace("/color", "3D9970"), replace("/approvalSettings/canReviewOwnRequest", true),
	}).Execute)
	check(tr, "resetEnvironmentSDKKey", "reset", http.StatusOK, ld.EnvironmentsApi.ResetEnvironmentSDKKey(ctx, proj, staging).Execute)
	check(tr, "resetEnvironmentMobileKey", "reset", http.StatusOK, ld.EnvironmentsApi.ResetEnvironmentMobileKey(ctx, proj, staging).Execute)

	// Custom roles.
	role := check(tr, "postCustomRole", "create", http.StatusCreated, ld.CustomRolesApi.PostCustomRole(ctx).CustomRolePost(ldapi.CustomRolePost{
		Key: roleKey, Name: "Viewers", Description: ptr("read projects"),
		Policy: []ldapi.StatementPost{{Effect: "allow", Resources: []string{"proj/*"}, Actions: []string{"viewProject"}}},
	}).Execute)
	check(tr, "getCustomRoles", "list", http.StatusOK, ld.CustomRolesApi.GetCustomRoles(ctx).Execute)
	check(tr, "getCustomRole", "get", http.StatusOK, ld.CustomRolesApi.GetCustomRole(ctx, roleKey).Execute)
	check(tr, "patchCustomRole", "description, with comment", http.StatusOK, ld.CustomRolesApi.PatchCustomRole(ctx, roleKey).PatchWithComment(ldapi.PatchWithComment{
		Patch: []ldapi.PatchOperation{replace("/description", "reads every project")}, Comment: ptr("wider"),
	}).Execute)

	// Members.
	var memberID string
	if ms := check(tr, "postMembers", "invite", http.StatusCreated, ld.AccountMembersApi.PostMembers(ctx).NewMemberForm([]ldapi.NewMemberForm{
		{Email: "dev@example.com", FirstName: ptr("Dev"), LastName: ptr("One"), Role: ptr("writer")},
	}).Execute); ms != nil && len(ms.Items) == 1 {
		memberID = ms.Items[0].Id
	}
	check(tr, "getMembers", "list", http.StatusOK, ld.AccountMembersApi.GetMembers(ctx).Execute)
	if memberID != "" {
		check(tr, "getMember", "get", http.StatusOK, ld.AccountMembersApi.GetMember(ctx, memberID).Execute)
		check(tr, "patchMember", "role", http.StatusOK, ld.AccountMembersApi.PatchMember(ctx, memberID).PatchOperation([]ldapi.PatchOperation{replace("/role", "reader")}).Execute)
	} else {
		tr.note("getMember, patchMember, deleteMember skipped: the invite gave no member id")
	}

	// Teams: the client patches a team by semantic patch, sent as plain application/json.
	team := ldapi.TeamPostInput{Key: teamKey, Name: "Developers", Description: ptr("builds things"), CustomRoleKeys: []string{roleKey}}
	if memberID != "" {
		team.MemberIDs = []string{memberID}
	}
	check(tr, "postTeam", "create with a role and a member", http.StatusCreated, ld.TeamsApi.PostTeam(ctx).TeamPostInput(team).Execute)
	check(tr, "getTeams", "list", http.StatusOK, ld.TeamsApi.GetTeams(ctx).Execute)
	check(tr, "getTeam", "get", http.StatusOK, ld.TeamsApi.GetTeam(ctx, teamKey).Execute)
	check(tr, "patchTeam", "updateName and updateDescription", http.StatusOK, ld.TeamsApi.PatchTeam(ctx, teamKey).TeamPatchInput(ldapi.TeamPatchInput{
		Comment: ptr("rename"), Instructions: []map[string]any{{"kind": "updateName", "value": "Devs"}, {"kind": "updateDescription", "value": "ships things"}},
	}).Execute)
	check(tr, "getTeamRoles", "list", http.StatusOK, ld.TeamsApi.GetTeamRoles(ctx, teamKey).Execute)
	check(tr, "getTeamMaintainers", "list", http.StatusOK, ld.TeamsApi.GetTeamMaintainers(ctx, teamKey).Execute)

	// Access tokens: one with a built-in role, one with a custom role by its id.
	var tokenID, roleTokenID string
	if tok := check(tr, "postToken", "create with role writer", http.StatusCreated, ld.AccessTokensApi.PostToken(ctx).AccessTokenPost(ldapi.AccessTokenPost{
		Name: ptr("ci"), Description: ptr("for CI"), Role: ptr("writer"),
	}).Execute); tok != nil {
		tokenID = tok.Id
		if tok.Token != nil {
			// Use it once, so reads show lastUsed.
			check(tr, "getProjects", "list with the new token", http.StatusOK, ld.ProjectsApi.GetProjects(tr.withToken(*tok.Token)).Execute)
		}
	}
	if role != nil {
		if tok := check(tr, "postToken", "create with customRoleIds [role _id]", http.StatusCreated, ld.AccessTokensApi.PostToken(ctx).AccessTokenPost(ldapi.AccessTokenPost{
			Name: ptr("viewer"), CustomRoleIds: []string{role.Id},
		}).Execute); tok != nil {
			roleTokenID = tok.Id
		}
	}
	check(tr, "getTokens", "list", http.StatusOK, ld.AccessTokensApi.GetTokens(ctx).Execute)
	if tokenID != "" {
		check(tr, "getToken", "get", http.StatusOK, ld.AccessTokensApi.GetToken(ctx, tokenID).Execute)
		check(tr, "patchToken", "description", http.StatusOK, ld.AccessTokensApi.PatchToken(ctx, tokenID).PatchOperation([]ldapi.PatchOperation{replace("/description", "for CI, renamed")}).Execute)
		check(tr, "resetToken", "reset with expiry", http.StatusOK, ld.AccessTokensApi.ResetToken(ctx, tokenID).Expiry(time.Now().Add(time.Hour).UnixMilli()).Execute)
	}

	// Webhooks.
	var hookID string
	if h := check(tr, "postWebhook", "create signed", http.StatusOK, ld.WebhooksApi.PostWebhook(ctx).WebhookPost(ldapi.WebhookPost{
		Name: ptr("receiver"), Url: hooks.URL + "/hook", Sign: true, On: true, Tags: []string{"ops"},
	}).Execute); h != nil {
		hookID = h.Id
	}
	check(tr, "getAllWebhooks", "list", http.StatusOK, ld.WebhooksApi.GetAllWebhooks(ctx).Execute)
	if hookID != "" {
		check(tr, "getWebhook", "get", http.StatusOK, ld.WebhooksApi.GetWebhook(ctx, hookID).Execute)
		check(tr, "patchWebhook", "turn off", http.StatusOK, ld.WebhooksApi.PatchWebhook(ctx, hookID).PatchOperation([]ldapi.PatchOperation{replace("/on", false)}).Execute)
	}

	// OAuth clients (the admin token is the owner's, so the client acts for the owner).
	var clientID string
	if c := check(tr, "createOAuth2Client", "create", http.StatusCreated, ld.OAuth2ClientsApi.CreateOAuth2Client(ctx).OauthClientPost(ldapi.OauthClientPost{
		Name: ptr("dashboard"), RedirectUri: ptr("https://dashboard.example.com/callback"), Description: ptr("reads flags"),
	}).Execute); c != nil && c.ClientId != "" {
		clientID = c.ClientId
	}
	check(tr, "getOAuthClients", "list", http.StatusOK, ld.OAuth2ClientsApi.GetOAuthClients(ctx).Execute)
	if clientID != "" {
		check(tr, "getOAuthClientById", "get", http.StatusOK, ld.OAuth2ClientsApi.GetOAuthClientById(ctx, clientID).Execute)
		check(tr, "patchOAuthClient", "description", http.StatusOK, ld.OAuth2ClientsApi.PatchOAuthClient(ctx, clientID).PatchOperation([]ldapi.PatchOperation{replace("/description", "reads and writes flags")}).Execute)
	}

	// Flags.
	var variationID string
	if f := check(tr, "postFeatureFlag", "create boolean", http.StatusCreated, ld.FeatureFlagsApi.PostFeatureFlag(ctx, proj).FeatureFlagBody(ldapi.FeatureFlagBody{
		Key: flagKey, Name: "Checkout", Description: ptr("new checkout"), Tags: []string{"web"}, Temporary: ptr(true),
	}).Execute); f != nil && len(f.Variations) > 0 && f.Variations[0].Id != nil {
		variationID = *f.Variations[0].Id
	}
	check(tr, "postFeatureFlag", "create string variations", http.StatusCreated, ld.FeatureFlagsApi.PostFeatureFlag(ctx, proj).FeatureFlagBody(ldapi.FeatureFlagBody{
		Key: flag2Key, Name: "Banner", Variations: []ldapi.Variation{{Value: "red", Name: ptr("Red")}, {Value: "blue"}},
	}).Execute)
	check(tr, "getFeatureFlags", "list", http.StatusOK, ld.FeatureFlagsApi.GetFeatureFlags(ctx, proj).Execute)
	check(tr, "getFeatureFlags", "list with env and summary=0", http.StatusOK, ld.FeatureFlagsApi.GetFeatureFlags(ctx, proj).Env(prod).Summary(false).Execute)
	check(tr, "getFeatureFlag", "get", http.StatusOK, ld.FeatureFlagsApi.GetFeatureFlag(ctx, proj, flagKey).Execute)
	check(tr, "patchFeatureFlag", "JSON patch with comment (PatchWithComment)", http.StatusOK, ld.FeatureFlagsApi.PatchFeatureFlag(ctx, proj, flagKey).PatchWithComment(ldapi.PatchWithComment{
		Patch: []ldapi.PatchOperation{replace("/description", "the new checkout")}, Comment: ptr("clearer"),
	}).Execute)
	if variationID != "" {
		// The client's PatchWithComment carries only a JSON patch, so a flag's
		// semantic patch goes out with the client's configuration and the
		// media type LaunchDarkly documents, and decodes into its FeatureFlag.
		instructions := map[string]any{"comment": "launch", "environmentKey": prod, "instructions": []map[string]any{
			{"kind": "turnFlagOn"}, {"kind": "addUserTargets", "values": []string{userKey}, "variationId": variationID},
		}}
		if check(tr, "patchFeatureFlag", "semantic patch as launchdarkly.semanticpatch", http.StatusOK,
			send[ldapi.FeatureFlag](tr, http.MethodPatch, "/api/v2/flags/"+proj+"/"+flagKey, semanticPatchType, instructions)) == nil {
			res := srv.Do(t, http.MethodPatch, "/api/v2/flags/"+proj+"/"+flagKey, instructions, "Content-Type", "application/json; domain-model=flagplane.semanticpatch")
			tr.note("setup: the same semantic patch as flagplane.semanticpatch answered %d, so the steps after it still test their own operations", res.Status)
		}
	}
	check(tr, "evaluateContextInstance", "evaluate a user", http.StatusOK, ld.ContextsApi.EvaluateContextInstance(ctx, proj, prod).RequestBody(map[string]any{"kind": "user", "key": userKey, "name": "U"}).Execute)

	// Expiring user targets: the client sends these semantic patches as plain application/json.
	if variationID != "" {
		check(tr, "patchExpiringUserTargets", "addExpireUserTargetDate", http.StatusOK, ld.FeatureFlagsApi.PatchExpiringUserTargets(ctx, proj, prod, flagKey).PatchFlagsRequest(ldapi.PatchFlagsRequest{
			Comment:      ptr("expire u1 tomorrow"),
			Instructions: []map[string]any{{"kind": "addExpireUserTargetDate", "userKey": userKey, "variationId": variationID, "value": time.Now().Add(24 * time.Hour).UnixMilli()}},
		}).Execute)
	}
	check(tr, "getExpiringUserTargets", "list", http.StatusOK, ld.FeatureFlagsApi.GetExpiringUserTargets(ctx, proj, prod, flagKey).Execute)
	check(tr, "getExpiringFlagsForUser", "list", http.StatusOK, ld.UserSettingsApi.GetExpiringFlagsForUser(ctx, proj, userKey, prod).Execute)
	if variationID != "" {
		// InstructionUserRequest.value is an int32, too small for a Unix-ms
		// date, so through this call the client can only remove a date.
		check(tr, "patchExpiringFlagsForUser", "removeExpireUserTargetDate", http.StatusOK, ld.UserSettingsApi.PatchExpiringFlagsForUser(ctx, proj, userKey, prod).PatchUsersRequest(ldapi.PatchUsersRequest{
			Comment:      ptr("keep u1"),
			Instructions: []ldapi.InstructionUserRequest{{Kind: "removeExpireUserTargetDate", FlagKey: flagKey, VariationId: variationID}},
		}).Execute)
	}

	// Approval requests: one reviewed and applied, one deleted.
	request := func() ldapi.CreateApprovalRequestRequest {
		return ldapi.CreateApprovalRequestRequest{
			ResourceId: "proj/" + proj + ":env/" + prod + ":flag/" + flagKey, Description: "turn checkout off", Comment: ptr("incident"),
			Instructions: []map[string]any{{"kind": "turnFlagOff"}},
		}
	}
	var approvalID string
	if a := check(tr, "postApprovalRequest", "create", http.StatusCreated, ld.ApprovalsApi.PostApprovalRequest(ctx).CreateApprovalRequestRequest(request()).Execute); a != nil {
		approvalID = a.Id
	}
	check(tr, "getApprovalRequests", "list", http.StatusOK, ld.ApprovalsApi.GetApprovalRequests(ctx).Execute)
	check(tr, "getApprovalRequests", "list with expand=flag,project,environments", http.StatusOK, ld.ApprovalsApi.GetApprovalRequests(ctx).Expand("flag,project,environments").Execute)
	if approvalID != "" {
		check(tr, "getApprovalRequest", "get", http.StatusOK, ld.ApprovalsApi.GetApprovalRequest(ctx, approvalID).Execute)
		check(tr, "postApprovalRequestReview", "approve own request", http.StatusOK, ld.ApprovalsApi.PostApprovalRequestReview(ctx, approvalID).PostApprovalRequestReviewRequest(ldapi.PostApprovalRequestReviewRequest{
			Kind: ptr("approve"), Comment: ptr("fine"),
		}).Execute)
		check(tr, "postApprovalRequestApply", "apply", http.StatusOK, ld.ApprovalsApi.PostApprovalRequestApply(ctx, approvalID).PostApprovalRequestApplyRequest(ldapi.PostApprovalRequestApplyRequest{Comment: ptr("go")}).Execute)
		check(tr, "getApprovalRequest", "get completed", http.StatusOK, ld.ApprovalsApi.GetApprovalRequest(ctx, approvalID).Execute)
	}
	if a := check(tr, "postApprovalRequest", "create another", http.StatusCreated, ld.ApprovalsApi.PostApprovalRequest(ctx).CreateApprovalRequestRequest(request()).Execute); a != nil {
		checkEmpty(tr, "deleteApprovalRequest", "delete", http.StatusNoContent, ld.ApprovalsApi.DeleteApprovalRequest(ctx, a.Id).Execute)
	}

	// Contexts and applications, fed by an SDK's events (posted as LaunchDarkly's SDKs post them).
	if env := check(tr, "getEnvironment", "get the SDK key", http.StatusOK, ld.EnvironmentsApi.GetEnvironment(ctx, proj, prod).Execute); env != nil {
		events := fmt.Sprintf(`[{"kind":"index","creationDate":%[1]d,"context":{"kind":"multi","user":{"key":%[2]q,"name":"U"},"org":{"key":"acme","plan":"gold"}}},`+
			`{"kind":"summary","startDate":%[1]d,"endDate":%[1]d,"features":{%[3]q:{"counters":[{"variation":0,"version":1,"value":true,"count":2}]}}}]`, time.Now().UnixMilli(), userKey, flagKey)
		if res := tr.srv.Do(t, http.MethodPost, "/bulk", events, "Authorization", env.ApiKey, "X-LaunchDarkly-Tags", "application-id/ld-app application-version/1.0"); res.Status != http.StatusAccepted {
			t.Errorf("post SDK events: %d %s", res.Status, res.Body)
		}
	}
	check(tr, "getContextKindsByProjectKey", "list", http.StatusOK, ld.ContextsApi.GetContextKindsByProjectKey(ctx, proj).Execute)
	check(tr, "putContextKind", "name the org kind", http.StatusOK, ld.ContextsApi.PutContextKind(ctx, proj, "org").UpsertContextKindPayload(ldapi.UpsertContextKindPayload{Name: "Organization", Description: ptr("customers")}).Execute)
	check(tr, "getContexts", "by kind and key", http.StatusOK, ld.ContextsApi.GetContexts(ctx, proj, prod, "org", "acme").Filter("applicationId:ld-app").Execute)
	check(tr, "searchContexts", "with a body filter", http.StatusOK, ld.ContextsApi.SearchContexts(ctx, proj, prod).ContextSearch(ldapi.ContextSearch{Filter: ptr("applicationId:ld-app")}).Execute)
	if found := check(tr, "searchContextInstances", "first page", http.StatusOK, ld.ContextsApi.SearchContextInstances(ctx, proj, prod).ContextInstanceSearch(ldapi.ContextInstanceSearch{}).Limit(5).Execute); found != nil && len(found.Items) > 0 {
		id := found.Items[0].Id
		check(tr, "getContextInstances", "by id", http.StatusOK, ld.ContextsApi.GetContextInstances(ctx, proj, prod, id).Execute)
		checkEmpty(tr, "deleteContextInstances", "delete", http.StatusNoContent, ld.ContextsApi.DeleteContextInstances(ctx, proj, prod, id).Execute)
	}
	check(tr, "getContextAttributeNames", "names", http.StatusOK, ld.ContextsApi.GetContextAttributeNames(ctx, proj, prod).Execute)
	check(tr, "getContextAttributeValues", "values of plan", http.StatusOK, ld.ContextsApi.GetContextAttributeValues(ctx, proj, prod, "plan").Execute)
	check(tr, "getApplications", "list", http.StatusOK, ld.ApplicationsBetaApi.GetApplications(ctx).Execute)
	check(tr, "getApplication", "get with expand=flags", http.StatusOK, ld.ApplicationsBetaApi.GetApplication(ctx, "ld-app").Expand("flags").Execute)
	check(tr, "patchApplication", "description", http.StatusOK, ld.ApplicationsBetaApi.PatchApplication(ctx, "ld-app").PatchOperation([]ldapi.PatchOperation{replace("/description", "the shop")}).Execute)
	check(tr, "getApplicationVersions", "list", http.StatusOK, ld.ApplicationsBetaApi.GetApplicationVersions(ctx, "ld-app").Execute)
	check(tr, "patchApplicationVersion", "unsupported", http.StatusOK, ld.ApplicationsBetaApi.PatchApplicationVersion(ctx, "ld-app", "1.0").PatchOperation([]ldapi.PatchOperation{replace("/supported", false)}).Execute)
	checkEmpty(tr, "deleteApplicationVersion", "delete", http.StatusNoContent, ld.ApplicationsBetaApi.DeleteApplicationVersion(ctx, "ld-app", "1.0").Execute)
	checkEmpty(tr, "deleteApplication", "delete", http.StatusNoContent, ld.ApplicationsBetaApi.DeleteApplication(ctx, "ld-app").Execute)

	// AI Configs: a model config, an AI Config with a variation, each edit of it a new version.
	// The client marks them beta (LD-API-Version: beta); the reference no longer does, and flagplane takes them either way.
	ai := ld.AIConfigsBetaApi
	check(tr, "postModelConfig", "create", http.StatusOK, ai.PostModelConfig(ctx, proj).LDAPIVersion("beta").ModelConfigPost(*ldapi.NewModelConfigPost("GPT", "gpt", "gpt-4")).Execute)
	check(tr, "getModelConfig", "get", http.StatusOK, ai.GetModelConfig(ctx, proj, "gpt").LDAPIVersion("beta").Execute)
	check(tr, "listModelConfigs", "list", http.StatusOK, func() (*[]ldapi.ModelConfig, *http.Response, error) {
		list, res, err := ai.ListModelConfigs(ctx, proj).LDAPIVersion("beta").Execute()
		return &list, res, err
	})
	check(tr, "postAIConfig", "create", http.StatusCreated, ai.PostAIConfig(ctx, proj).LDAPIVersion("beta").AIConfigPost(*ldapi.NewAIConfigPost("chat", "Chat")).Execute)
	check(tr, "postAIConfigVariation", "create", http.StatusCreated, ai.PostAIConfigVariation(ctx, proj, "chat").LDAPIVersion("beta").AIConfigVariationPost(
		*ldapi.NewAIConfigVariationPost("short", []ldapi.Message{{Role: "system", Content: "Be brief."}}, map[string]any{"name": "gpt-4"}, "Short")).Execute)
	check(tr, "patchAIConfigVariation", "model config and state", http.StatusOK, ai.PatchAIConfigVariation(ctx, proj, "chat", "short").LDAPIVersion("beta").AIConfigVariationPatch(ldapi.AIConfigVariationPatch{ModelConfigKey: ptr("gpt"), State: ptr("archived")}).Execute)
	check(tr, "getAIConfigVariation", "every version", http.StatusOK, ai.GetAIConfigVariation(ctx, proj, "chat", "short").LDAPIVersion("beta").Execute)
	check(tr, "patchAIConfig", "description", http.StatusOK, ai.PatchAIConfig(ctx, proj, "chat").LDAPIVersion("beta").AIConfigPatch(ldapi.AIConfigPatch{Description: ptr("talks")}).Execute)
	check(tr, "getAIConfig", "get", http.StatusOK, ai.GetAIConfig(ctx, proj, "chat").LDAPIVersion("beta").Execute)
	check(tr, "getAIConfigs", "list", http.StatusOK, ai.GetAIConfigs(ctx, proj).LDAPIVersion("beta").Execute)
	checkEmpty(tr, "deleteAIConfigVariation", "delete", http.StatusNoContent, ai.DeleteAIConfigVariation(ctx, proj, "chat", "short").LDAPIVersion("beta").Execute)
	checkEmpty(tr, "deleteModelConfig", "delete once unused", http.StatusNoContent, ai.DeleteModelConfig(ctx, proj, "gpt").LDAPIVersion("beta").Execute)
	checkEmpty(tr, "deleteAIConfig", "delete", http.StatusNoContent, ai.DeleteAIConfig(ctx, proj, "chat").LDAPIVersion("beta").Execute)

	// Release pipelines (beta) and a flag's release through one.
	phases := []ldapi.CreatePhaseInput{{Name: "Ship", Audiences: []ldapi.AudiencePost{{EnvironmentKey: prod, Name: "Everyone"}}}}
	check(tr, "postReleasePipeline", "create (the project's default)", http.StatusCreated, ld.ReleasePipelinesBetaApi.PostReleasePipeline(ctx, proj).CreateReleasePipelineInput(ldapi.CreateReleasePipelineInput{Key: "ld-pipe", Name: "Standard", Phases: phases, Description: ptr("ships")}).Execute)
	check(tr, "postReleasePipeline", "create a second", http.StatusCreated, ld.ReleasePipelinesBetaApi.PostReleasePipeline(ctx, proj).CreateReleasePipelineInput(ldapi.CreateReleasePipelineInput{Key: "ld-pipe-2", Name: "Second", Phases: phases}).Execute)
	check(tr, "getAllReleasePipelines", "list", http.StatusOK, ld.ReleasePipelinesBetaApi.GetAllReleasePipelines(ctx, proj).Filter("query:standard").Execute)
	check(tr, "getReleasePipelineByKey", "get", http.StatusOK, ld.ReleasePipelinesBetaApi.GetReleasePipelineByKey(ctx, proj, "ld-pipe").Execute)
	check(tr, "putReleasePipeline", "rename", http.StatusOK, ld.ReleasePipelinesBetaApi.PutReleasePipeline(ctx, proj, "ld-pipe").UpdateReleasePipelineInput(ldapi.UpdateReleasePipelineInput{Name: "Renamed", Phases: phases}).Execute)
	check(tr, "createReleaseForFlag", "add the flag", http.StatusOK, ld.ReleasesBetaApi.CreateReleaseForFlag(ctx, proj, flagKey).CreateReleaseInput(ldapi.CreateReleaseInput{ReleasePipelineKey: "ld-pipe"}).Execute)
	check(tr, "getReleaseByFlagKey", "get", http.StatusOK, ld.ReleasesBetaApi.GetReleaseByFlagKey(ctx, proj, flagKey).Execute)
	check(tr, "getAllReleaseProgressionsForReleasePipeline", "the flag's progression", http.StatusOK, ld.ReleasePipelinesBetaApi.GetAllReleaseProgressionsForReleasePipeline(ctx, proj, "ld-pipe").Execute)
	checkEmpty(tr, "deleteReleasePipeline", "delete the second", http.StatusNoContent, ld.ReleasePipelinesBetaApi.DeleteReleasePipeline(ctx, proj, "ld-pipe-2").Execute)

	// The audit log: the list, and each kind of entry in detail.
	if list := check(tr, "getAuditLogEntries", "list", http.StatusOK, ld.AuditLogApi.GetAuditLogEntries(ctx).Limit(20).Execute); list != nil {
		kinds := map[string]bool{}
		for _, e := range list.Items {
			if !kinds[e.Kind] && len(kinds) < 4 {
				kinds[e.Kind] = true
				check(tr, "getAuditLogEntry", "get a "+e.Kind+" entry", http.StatusOK, ld.AuditLogApi.GetAuditLogEntry(ctx, e.Id).Execute)
			}
		}
	}
	check(tr, "getAuditLogEntries", "list with q", http.StatusOK, ld.AuditLogApi.GetAuditLogEntries(ctx).Q("checkout").Execute)

	// Beta operations: LaunchDarkly's clients send LD-API-Version: beta alone.
	tr.betaHeaderProbe()

	// Deletes, dependents first.
	checkEmpty(tr, "deleteTeam", "delete", http.StatusNoContent, ld.TeamsApi.DeleteTeam(ctx, teamKey).Execute)
	for _, id := range []string{tokenID, roleTokenID} {
		if id != "" {
			checkEmpty(tr, "deleteToken", "delete", http.StatusNoContent, ld.AccessTokensApi.DeleteToken(ctx, id).Execute)
		}
	}
	checkEmpty(tr, "deleteCustomRole", "delete", http.StatusNoContent, ld.CustomRolesApi.DeleteCustomRole(ctx, roleKey).Execute)
	if memberID != "" {
		checkEmpty(tr, "deleteMember", "delete", http.StatusNoContent, ld.AccountMembersApi.DeleteMember(ctx, memberID).Execute)
	}
	if hookID != "" {
		checkEmpty(tr, "deleteWebhook", "delete", http.StatusNoContent, ld.WebhooksApi.DeleteWebhook(ctx, hookID).Execute)
	}
	if clientID != "" {
		checkEmpty(tr, "deleteOAuthClient", "delete", http.StatusNoContent, ld.OAuth2ClientsApi.DeleteOAuthClient(ctx, clientID).Execute)
	}
	checkEmpty(tr, "deleteFeatureFlag", "delete", http.StatusNoContent, ld.FeatureFlagsApi.DeleteFeatureFlag(ctx, proj, flag2Key).Execute)
	checkEmpty(tr, "deleteEnvironment", "delete", http.StatusNoContent, ld.EnvironmentsApi.DeleteEnvironment(ctx, proj, staging).Execute)
	checkEmpty(tr, "deleteProject", "delete", http.StatusNoContent, ld.ProjectsApi.DeleteProject(ctx, proj).Execute)

	tr.report()
}

// betaHeaderProbe calls a beta operation with LD-API-Version: beta and
// not flagplane's own header: it must pass the beta gate, not answer 403.
func (tr *tier) betaHeaderProbe() {
	c := tr.begin("getAllReleasePipelines", "beta gate with LD-API-Version: beta alone")
	_, res, err := tr.ld.ReleasePipelinesBetaApi.GetAllReleasePipelines(tr.ctx, proj).Execute()
	tr.takeLastOp()
	switch {
	case res == nil:
		c.fail("no answer: %v", err)
	case res.Request.Header.Get("SVC-API-Version") != "":
		c.fail("the probe sent SVC-API-Version too, so it proves nothing")
	case res.StatusCode == http.StatusForbidden:
		c.status = res.StatusCode
		c.fail("LD-API-Version: beta is not taken for SVC-API-Version: beta (403)")
	default:
		c.status = res.StatusCode // decoding is not this probe's business
	}
}
