package endpoints_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/sdkcontext"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/catalog"
)

// Every built operation's success answer against the reference's response
// schema: each field the reference marks required is present, at every
// depth (resolving $ref and allOf), and each field has the reference's
// JSON type, or the type the spec's part 2 gives it where the two differ
// (specTypes). LaunchDarkly's generated clients decode a missing
// required field as a zero value or refuse the answer; this finds them.

// answerRequests are, by operation id, a successful call of each built
// operation. A new operation gets its row here: the test fails for a built
// operation without one.
var answerRequests = map[string]apptest.Example{
	"getProjects":    func(testing.TB, *apptest.World) apptest.Request { return apptest.Request{Path: api + "/projects"} },
	"getOpenapiSpec": func(testing.TB, *apptest.World) apptest.Request { return apptest.Request{Path: api + "/openapi.json"} },
	"getProject": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: projectPath(w.Project)}
	},
	"patchProject": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Patch(projectPath(w.Project), apptest.Replace("/name", "Renamed"))
	},
	"postProject": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Post(api+"/projects", map[string]any{"key": w.Unique("proj"), "name": "New"})
	},
	"deleteProject": func(tb testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: projectPath(w.ThrowawayProject(tb))}
	},
	"getEnvironment": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: envPath(w.Project, "production")}
	},
	"postEnvironment": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Post(envsPath(w.Project), map[string]any{"key": w.Unique("env"), "name": "New", "color": "336699"})
	},
	"patchEnvironment": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Patch(envPath(w.Project, "test"), apptest.Replace("/name", "Testing"))
	},
	"deleteEnvironment": func(tb testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: envPath(w.Project, w.ThrowawayEnvironment(tb))}
	},
	"getEnvironmentsByProject": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: envsPath(w.Project)}
	},
	"resetEnvironmentSDKKey": func(tb testing.TB, w *apptest.World) apptest.Request {
		return apptest.Post(envPath(w.Project, w.ThrowawayEnvironment(tb))+"/apiKey", nil)
	},
	"resetEnvironmentMobileKey": func(tb testing.TB, w *apptest.World) apptest.Request {
		return apptest.Post(envPath(w.Project, w.ThrowawayEnvironment(tb))+"/mobileKey", nil)
	},

	"getAIConfigs": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: aiConfigsPath(w.Project)}
	},
	"getAIConfig": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: aiConfigPath(w.Project, "world")}
	},
	"postAIConfig": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Post(aiConfigsPath(w.Project), map[string]any{"key": w.Unique("ai"), "name": "New", "defaultVariation": map[string]any{"key": "d", "name": "D"}})
	},
	"patchAIConfig": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: aiConfigPath(w.Project, "world"), Body: map[string]any{"description": "patched"}}
	},
	"deleteAIConfig": func(tb testing.TB, w *apptest.World) apptest.Request {
		key := w.Unique("ai")
		w.Must(tb, http.StatusCreated, http.MethodPost, aiConfigsPath(w.Project), map[string]any{"key": key, "name": "Doomed"})
		return apptest.Request{Path: aiConfigPath(w.Project, key)}
	},
	"postAIConfigVariation": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Post(aiConfigPath(w.Project, "world")+"/variations", map[string]any{"key": w.Unique("v"), "name": "New", "modelConfigKey": "world"})
	},
	"getAIConfigVariation": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: aiVariationPath(w.Project, "world", "v")}
	},
	"patchAIConfigVariation": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: aiVariationPath(w.Project, "world", "v"), Body: map[string]any{"comment": "again", "modelConfigVersion": 1}}
	},
	"deleteAIConfigVariation": func(tb testing.TB, w *apptest.World) apptest.Request {
		key := w.Unique("v")
		w.Must(tb, http.StatusCreated, http.MethodPost, aiConfigPath(w.Project, "world")+"/variations", map[string]any{"key": key, "name": "Doomed"})
		return apptest.Request{Path: aiVariationPath(w.Project, "world", key)}
	},
	"listModelConfigs": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: aiModelsPath(w.Project)}
	},
	"getModelConfig": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: aiModelsPath(w.Project) + "/world"}
	},
	"postModelConfig": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Post(aiModelsPath(w.Project), map[string]any{"key": w.Unique("model"), "name": "New", "id": "new-1"})
	},
	"deleteModelConfig": func(tb testing.TB, w *apptest.World) apptest.Request {
		key := w.Unique("model")
		w.Must(tb, http.StatusOK, http.MethodPost, aiModelsPath(w.Project), map[string]any{"key": key, "name": "Doomed", "id": "doomed-1"})
		return apptest.Request{Path: aiModelsPath(w.Project) + "/" + key}
	},

	"getContextKindsByProjectKey": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: projectPath(w.Project) + "/context-kinds"}
	},
	"putContextKind": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: projectPath(w.Project) + "/context-kinds/" + w.Unique("kind"), Body: map[string]any{"name": "Kind", "description": "d"}}
	},
	"getContextAttributeNames": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: envPath(w.Project, "production") + "/context-attributes"}
	},
	"getContextAttributeValues": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: envPath(w.Project, "production") + "/context-attributes/email"}
	},
	"getContexts": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: envPath(w.Project, "production") + "/contexts/user/" + w.User}
	},
	"searchContexts": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Post(envPath(w.Project, "production")+"/contexts/search", map[string]any{"filter": "applicationId:world"})
	},
	"searchContextInstances": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Post(envPath(w.Project, "production")+"/context-instances/search", map[string]any{"limit": 5})
	},
	"getContextInstances": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: envPath(w.Project, "production") + "/context-instances/" + sdkcontext.InstanceID(w.User)}
	},
	"deleteContextInstances": func(tb testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: envPath(w.Project, "production") + "/context-instances/" + w.SeenContext(tb, w.Unique("gone"))}
	},

	"getApplications": func(testing.TB, *apptest.World) apptest.Request {
		return apptest.Request{Path: api + "/applications?expand=flags", Headers: betaHeader}
	},
	"getApplication": func(testing.TB, *apptest.World) apptest.Request {
		return apptest.Request{Path: api + "/applications/world?expand=flags", Headers: betaHeader}
	},
	"patchApplication": func(testing.TB, *apptest.World) apptest.Request {
		return apptest.Request{Path: api + "/applications/world", Body: []apptest.PatchOp{apptest.Replace("/description", "the world")}, Headers: betaHeader}
	},
	"deleteApplication": func(tb testing.TB, w *apptest.World) apptest.Request {
		key := w.Unique("app")
		w.SeenContextFrom(tb, w.Unique("u"), key)
		return apptest.Request{Path: api + "/applications/" + key, Headers: betaHeader}
	},
	"getApplicationVersions": func(testing.TB, *apptest.World) apptest.Request {
		return apptest.Request{Path: api + "/applications/world/versions", Headers: betaHeader}
	},
	"patchApplicationVersion": func(testing.TB, *apptest.World) apptest.Request {
		return apptest.Request{Path: api + "/applications/world/versions/1.0", Body: []apptest.PatchOp{apptest.Replace("/name", "One")}, Headers: betaHeader}
	},
	"deleteApplicationVersion": func(tb testing.TB, w *apptest.World) apptest.Request {
		key := w.Unique("app")
		w.SeenContextFrom(tb, w.Unique("u"), key)
		return apptest.Request{Path: api + "/applications/" + key + "/versions/1.0", Headers: betaHeader}
	},
	"GetReleasePolicies": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: releasePoliciesPath(w.Project), Headers: betaHeader}
	},
	"GetReleasePolicy": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: releasePoliciesPath(w.Project) + "/world", Headers: betaHeader}
	},
	"PostReleasePolicy": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: releasePoliciesPath(w.Project), Body: guardedPolicy(w.Unique("policy")), Headers: betaHeader}
	},
	"PutReleasePolicy": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: releasePoliciesPath(w.Project) + "/world", Body: guardedPolicy("world"), Headers: betaHeader}
	},
	"PostReleasePoliciesOrder": func(tb testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: releasePoliciesPath(w.Project) + "/order", Body: releasePolicyKeysReversed(tb, w), Headers: betaHeader}
	},
	"DeleteReleasePolicy": func(tb testing.TB, w *apptest.World) apptest.Request {
		key := w.Unique("policy")
		w.Must(tb, http.StatusCreated, http.MethodPost, releasePoliciesPath(w.Project), progressivePolicy(key), betaHeader...)
		return apptest.Request{Path: releasePoliciesPath(w.Project) + "/" + key, Headers: betaHeader}
	},

	"getFeatureFlags": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: flagsPath(w.Project)}
	},
	"getFeatureFlag": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: flagPath(w.Project, w.Flag)}
	},
	"postFeatureFlag": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Post(flagsPath(w.Project), map[string]any{"key": w.Unique("flag"), "name": "New"})
	},
	"patchFeatureFlag": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Patch(flagPath(w.Project, w.Flag), apptest.Replace("/description", "patched"))
	},
	"deleteFeatureFlag": func(tb testing.TB, w *apptest.World) apptest.Request {
		key := w.Unique("flag")
		w.Must(tb, http.StatusCreated, http.MethodPost, flagsPath(w.Project), map[string]any{"key": key, "name": "Doomed"})
		return apptest.Request{Path: flagPath(w.Project, key)}
	},
	"getExpiringUserTargets": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: flagExpiringPath(w.Project, w.Flag, "production")}
	},
	"patchExpiringUserTargets": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Semantic(flagExpiringPath(w.Project, w.Flag, "production"), instr("updateExpireUserTargetDate",
			"userKey", w.User, "variationId", w.Variations[1], "value", time.Now().Add(48*time.Hour).UnixMilli()))
	},
	"getExpiringFlagsForUser": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: userExpiringPath(w.Project, w.User, "production")}
	},
	"patchExpiringFlagsForUser": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Semantic(userExpiringPath(w.Project, w.User, "production"), instr("updateExpireUserTargetDate",
			"flagKey", w.Flag, "variationId", w.Variations[1], "value", time.Now().Add(72*time.Hour).UnixMilli()))
	},
	"evaluateContextInstance": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Post(envPath(w.Project, "production")+"/flags/evaluate", map[string]any{"kind": "user", "key": w.User})
	},

	"getApprovalRequests": func(testing.TB, *apptest.World) apptest.Request { return apptest.Request{Path: approvalsPath} },
	"getApprovalRequest": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: approvalPath(w.AppliedID)}
	},
	"postApprovalRequest": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Post(approvalsPath, map[string]any{"resourceId": "proj/" + w.Project + ":env/test:flag/" + w.Flag,
			"description": "turn on", "instructions": []any{instr("turnFlagOn")}})
	},
	"postApprovalRequestReview": func(tb testing.TB, w *apptest.World) apptest.Request {
		r := apptest.Post(approvalPath(w.PendingApproval(tb))+"/reviews", map[string]any{"kind": "approve", "comment": "ok"})
		r.Headers = []string{"Authorization", w.ReviewerToken}
		return r
	},
	"postApprovalRequestApply": func(tb testing.TB, w *apptest.World) apptest.Request {
		id := w.PendingApproval(tb)
		w.Must(tb, http.StatusOK, http.MethodPost, approvalPath(id)+"/reviews", map[string]any{"kind": "approve"}, "Authorization", w.ReviewerToken)
		return apptest.Post(approvalPath(id)+"/apply", map[string]any{"comment": "go"})
	},
	"deleteApprovalRequest": func(tb testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: approvalPath(w.PendingApproval(tb))}
	},
	"patchApprovalRequest": func(tb testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: approvalPath(w.PendingApproval(tb)), Headers: []string{"SVC-API-Version", "beta"},
			Body: map[string]any{"instructions": []any{instr("updateDescription", "value", "New description")}}}
	},

	"getAuditLogEntries": func(testing.TB, *apptest.World) apptest.Request { return apptest.Request{Path: api + "/auditlog"} },
	"getAuditLogEntry": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: auditEntryPath(w.AuditID)}
	},

	"getTokens": func(testing.TB, *apptest.World) apptest.Request { return apptest.Request{Path: api + "/tokens"} },
	"getToken": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: api + "/tokens/" + w.UsedTokenID}
	},
	"postToken": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Post(api+"/tokens", map[string]any{"name": w.Unique("token"), "role": "reader"})
	},
	"patchToken": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Patch(api+"/tokens/"+w.TokenID, apptest.Replace("/name", "renamed"))
	},
	"resetToken": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Post(api+"/tokens/"+w.TokenID+"/reset", nil)
	},
	"deleteToken": func(tb testing.TB, w *apptest.World) apptest.Request {
		id := apptest.Str(tb, w.Must(tb, http.StatusCreated, http.MethodPost, api+"/tokens", map[string]any{"name": w.Unique("doomed"), "role": "reader"}), "_id")
		return apptest.Request{Path: api + "/tokens/" + id}
	},

	"getMembers": func(testing.TB, *apptest.World) apptest.Request { return apptest.Request{Path: api + "/members"} },
	"getMember": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: api + "/members/" + w.MemberID}
	},
	"patchMember": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Patch(api+"/members/"+w.MemberID, apptest.Replace("/firstName", "Ray"))
	},
	"postMembers": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Post(api+"/members", []map[string]any{{"email": w.Unique("new") + "@example.com", "role": "reader"}})
	},
	"deleteMember": func(tb testing.TB, w *apptest.World) apptest.Request {
		m := w.Must(tb, http.StatusCreated, http.MethodPost, api+"/members", []map[string]any{{"email": w.Unique("doomed") + "@example.com"}})
		return apptest.Request{Path: api + "/members/" + apptest.Str(tb, m["items"].([]any)[0].(map[string]any), "_id")}
	},

	"getCustomRoles": func(testing.TB, *apptest.World) apptest.Request { return apptest.Request{Path: api + "/roles"} },
	"getCustomRole": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: api + "/roles/" + w.RoleKey}
	},
	"patchCustomRole": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Patch(api+"/roles/"+w.RoleKey, apptest.Replace("/name", "Viewer"))
	},
	"postCustomRole": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Post(api+"/roles", map[string]any{"key": w.Unique("role"), "name": "New", "policy": []map[string]any{
			{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"viewProject"}}}})
	},
	"deleteCustomRole": func(tb testing.TB, w *apptest.World) apptest.Request {
		key := w.Unique("doomed")
		w.Must(tb, http.StatusCreated, http.MethodPost, api+"/roles", map[string]any{"key": key, "name": "Doomed", "policy": []map[string]any{
			{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"viewProject"}}}})
		return apptest.Request{Path: api + "/roles/" + key}
	},

	"getTeams": func(testing.TB, *apptest.World) apptest.Request { return apptest.Request{Path: api + "/teams"} },
	"getTeam": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: api + "/teams/" + w.TeamKey}
	},
	"patchTeam": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Patch(api+"/teams/"+w.TeamKey, apptest.Replace("/name", "Operations"))
	},
	"getTeamRoles": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: api + "/teams/" + w.TeamKey + "/roles"}
	},
	"getTeamMaintainers": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: api + "/teams/" + w.TeamKey + "/maintainers"}
	},
	"postTeam": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Post(api+"/teams", map[string]any{"key": w.Unique("team"), "name": "New"})
	},
	"deleteTeam": func(tb testing.TB, w *apptest.World) apptest.Request {
		key := w.Unique("doomed")
		w.Must(tb, http.StatusCreated, http.MethodPost, api+"/teams", map[string]any{"key": key, "name": "Doomed"})
		return apptest.Request{Path: api + "/teams/" + key}
	},

	"getOAuthClients": func(testing.TB, *apptest.World) apptest.Request { return apptest.Request{Path: api + "/oauth/clients"} },
	"getOAuthClientById": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: api + "/oauth/clients/" + w.ClientID}
	},
	"patchOAuthClient": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Patch(api+"/oauth/clients/"+w.ClientID, apptest.Replace("/name", "renamed"))
	},
	"createOAuth2Client": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Post(api+"/oauth/clients", map[string]any{"name": w.Unique("client"), "redirectUri": "https://app.example.com/cb"})
	},
	"deleteOAuthClient": func(tb testing.TB, w *apptest.World) apptest.Request {
		id := apptest.Str(tb, w.Must(tb, http.StatusCreated, http.MethodPost, api+"/oauth/clients", map[string]any{"name": "doomed", "redirectUri": "https://app.example.com/cb"}), "_clientId")
		return apptest.Request{Path: api + "/oauth/clients/" + id}
	},

	"getAllReleasePipelines": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: pipelinesPath(w.Project), Headers: betaHeader}
	},
	"getReleasePipelineByKey": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: pipelinesPath(w.Project) + "/world", Headers: betaHeader}
	},
	"postReleasePipeline": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: pipelinesPath(w.Project), Body: pipelineBody(w.Unique("pipe"), "production"), Headers: betaHeader}
	},
	"putReleasePipeline": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: pipelinesPath(w.Project) + "/world", Body: pipelineBody("world", "test", "production"), Headers: betaHeader}
	},
	"deleteReleasePipeline": func(tb testing.TB, w *apptest.World) apptest.Request {
		key := w.Unique("doomed-pipe")
		w.Must(tb, http.StatusCreated, http.MethodPost, pipelinesPath(w.Project), pipelineBody(key, "test"), betaHeader...)
		return apptest.Request{Path: pipelinesPath(w.Project) + "/" + key, Headers: betaHeader}
	},
	"getAllReleaseProgressionsForReleasePipeline": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: pipelinesPath(w.Project) + "/world/releases", Headers: betaHeader}
	},
	"createReleaseForFlag": func(tb testing.TB, w *apptest.World) apptest.Request {
		key := w.Unique("flag")
		w.Must(tb, http.StatusCreated, http.MethodPost, flagsPath(w.Project), map[string]any{"key": key, "name": key})
		return apptest.Request{Path: flagReleasePath(w.Project, key), Body: map[string]any{"releasePipelineKey": "world"}, Headers: betaHeader}
	},
	"getReleaseByFlagKey": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: api + "/flags/" + w.Project + "/" + w.Flag + "/release", Headers: betaHeader}
	},
	"getAllWebhooks": func(testing.TB, *apptest.World) apptest.Request { return apptest.Request{Path: api + "/webhooks"} },
	"getWebhook": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Request{Path: api + "/webhooks/" + w.WebhookID}
	},
	"patchWebhook": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Patch(api+"/webhooks/"+w.WebhookID, apptest.Replace("/name", "renamed"))
	},
	"postWebhook": func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Post(api+"/webhooks", map[string]any{"url": "http://127.0.0.1:9/" + w.Unique("hook"), "sign": false, "on": false})
	},
	"deleteWebhook": func(tb testing.TB, w *apptest.World) apptest.Request {
		id := apptest.Str(tb, w.Must(tb, http.StatusOK, http.MethodPost, api+"/webhooks", map[string]any{"url": "http://127.0.0.1:9/doomed", "sign": false, "on": false}), "_id")
		return apptest.Request{Path: api + "/webhooks/" + id}
	},
}

// answerQueries are further reads of an operation, by the query options
// that change the answer's shape (expansions, full targeting): each is
// checked like the operation's own row.
var answerQueries = map[string][]string{
	"getProject":          {"?expand=environments"},
	"getProjects":         {"?expand=environments"},
	"getFeatureFlags":     {"?summary=0", "?env=production"},
	"getFeatureFlag":      {"?env=production"},
	"getApprovalRequest":  {"?expand=environments,flag,project,resource"},
	"getApprovalRequests": {"?expand=environments,flag,project"},
}

// TestAnswersCarryTheFieldsTheReferenceRequires checks the examples of
// each group whose rows are still here, as the group's own tests will.
func TestAnswersCarryTheFieldsTheReferenceRequires(t *testing.T) {
	dated := map[string][]string{}
	for schema, fields := range datedTimestamp {
		for f := range fields {
			dated[schema] = append(dated[schema], f)
		}
	}
	byGroup := map[string]map[string]apptest.Example{}
	for _, op := range catalog.All() {
		if ex, ok := answerRequests[op.ID]; ok {
			if byGroup[op.Group] == nil {
				byGroup[op.Group] = map[string]apptest.Example{}
			}
			byGroup[op.Group][op.ID] = ex
		}
	}
	for group, calls := range byGroup {
		t.Run(group, func(t *testing.T) {
			apptest.Examples{Group: group, Calls: calls, Queries: answerQueries, SpecTypes: specTypes, Dated: dated}.Check(t)
		})
	}
}

// specTypes are the fields whose JSON type the spec's part 2 sets apart
// from the reference's (mostly Unix ms as strings), by the reference schema
// that holds them and the field's name.
var specTypes = map[string]map[string]string{
	// 2.3 OAuth 2.0 client
	"Client": {"_creationDate": "string"},
	// 2.7 Approval request, and its reviews
	"ApprovalRequestResponse":           {"creationDate": "string", "appliedDate": "string", "executionDate": "string"},
	"ExpandableApprovalRequestResponse": {"creationDate": "string", "appliedDate": "string", "executionDate": "string"},
	"FlagConfigApprovalRequestResponse": {"creationDate": "string", "appliedDate": "string", "executionDate": "string"},
	"ReviewResponse":                    {"creationDate": "string"},
	// 2.10 Access token
	"Token": {"creationDate": "string", "lastModified": "string", "lastUsed": "string", "expiry": "string"},
	// 2.19 Audit log entry, both forms
	// (and its target, a Markdown sentence rather than the reference's object)
	"AuditLogEntryRep":        {"date": "string", "target": "string"},
	"AuditLogEntryListingRep": {"date": "string", "target": "string"},
}
