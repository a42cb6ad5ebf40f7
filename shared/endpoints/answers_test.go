package endpoints_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/sdkcontext"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/app/apptest/reference"
	"github.com/flagplane/flagplane/shared/catalog"
)

// Every built operation's success answer against the reference's response
// schema: each field the reference marks required is present, at every
// depth (resolving $ref and allOf), and each field has the reference's
// JSON type, or the type the spec's part 2 gives it where the two differ
// (specTypes). LaunchDarkly's generated clients decode a missing
// required field as a zero value or refuse the answer; this finds them.

// answerRequest is one call of an operation, made on the world.
type answerRequest struct {
	path    string
	body    any
	headers []string
}

// answerRequests are, by operation id, a successful call of each built
// operation. A new operation gets its row here: the test fails for a built
// operation without one.
var answerRequests = map[string]func(tb testing.TB, w *world) answerRequest{
	"getProjects":    func(testing.TB, *world) answerRequest { return answerRequest{path: api + "/projects"} },
	"getOpenapiSpec": func(testing.TB, *world) answerRequest { return answerRequest{path: api + "/openapi.json"} },
	"getProject":     func(_ testing.TB, w *world) answerRequest { return answerRequest{path: projectPath(w.project)} },
	"patchProject": func(_ testing.TB, w *world) answerRequest {
		return patchOf(projectPath(w.project), apptest.Replace("/name", "Renamed"))
	},
	"postProject": func(_ testing.TB, w *world) answerRequest {
		return postOf(api+"/projects", map[string]any{"key": w.unique("proj"), "name": "New"})
	},
	"deleteProject": func(tb testing.TB, w *world) answerRequest {
		return answerRequest{path: projectPath(w.throwawayProject(tb))}
	},
	"getEnvironment": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: envPath(w.project, "production")}
	},
	"postEnvironment": func(_ testing.TB, w *world) answerRequest {
		return postOf(envsPath(w.project), map[string]any{"key": w.unique("env"), "name": "New", "color": "336699"})
	},
	"patchEnvironment": func(_ testing.TB, w *world) answerRequest {
		return patchOf(envPath(w.project, "test"), apptest.Replace("/name", "Testing"))
	},
	"deleteEnvironment": func(tb testing.TB, w *world) answerRequest {
		return answerRequest{path: envPath(w.project, w.throwawayEnvironment(tb))}
	},
	"getEnvironmentsByProject": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: envsPath(w.project)}
	},
	"resetEnvironmentSDKKey": func(tb testing.TB, w *world) answerRequest {
		return postOf(envPath(w.project, w.throwawayEnvironment(tb))+"/apiKey", nil)
	},
	"resetEnvironmentMobileKey": func(tb testing.TB, w *world) answerRequest {
		return postOf(envPath(w.project, w.throwawayEnvironment(tb))+"/mobileKey", nil)
	},

	"getAIConfigs": func(_ testing.TB, w *world) answerRequest { return answerRequest{path: aiConfigsPath(w.project)} },
	"getAIConfig": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: aiConfigPath(w.project, "world")}
	},
	"postAIConfig": func(_ testing.TB, w *world) answerRequest {
		return postOf(aiConfigsPath(w.project), map[string]any{"key": w.unique("ai"), "name": "New", "defaultVariation": map[string]any{"key": "d", "name": "D"}})
	},
	"patchAIConfig": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: aiConfigPath(w.project, "world"), body: map[string]any{"description": "patched"}}
	},
	"deleteAIConfig": func(tb testing.TB, w *world) answerRequest {
		key := w.unique("ai")
		w.must(tb, http.StatusCreated, http.MethodPost, aiConfigsPath(w.project), map[string]any{"key": key, "name": "Doomed"})
		return answerRequest{path: aiConfigPath(w.project, key)}
	},
	"postAIConfigVariation": func(_ testing.TB, w *world) answerRequest {
		return postOf(aiConfigPath(w.project, "world")+"/variations", map[string]any{"key": w.unique("v"), "name": "New", "modelConfigKey": "world"})
	},
	"getAIConfigVariation": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: aiVariationPath(w.project, "world", "v")}
	},
	"patchAIConfigVariation": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: aiVariationPath(w.project, "world", "v"), body: map[string]any{"comment": "again", "modelConfigVersion": 1}}
	},
	"deleteAIConfigVariation": func(tb testing.TB, w *world) answerRequest {
		key := w.unique("v")
		w.must(tb, http.StatusCreated, http.MethodPost, aiConfigPath(w.project, "world")+"/variations", map[string]any{"key": key, "name": "Doomed"})
		return answerRequest{path: aiVariationPath(w.project, "world", key)}
	},
	"listModelConfigs": func(_ testing.TB, w *world) answerRequest { return answerRequest{path: aiModelsPath(w.project)} },
	"getModelConfig": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: aiModelsPath(w.project) + "/world"}
	},
	"postModelConfig": func(_ testing.TB, w *world) answerRequest {
		return postOf(aiModelsPath(w.project), map[string]any{"key": w.unique("model"), "name": "New", "id": "new-1"})
	},
	"deleteModelConfig": func(tb testing.TB, w *world) answerRequest {
		key := w.unique("model")
		w.must(tb, http.StatusOK, http.MethodPost, aiModelsPath(w.project), map[string]any{"key": key, "name": "Doomed", "id": "doomed-1"})
		return answerRequest{path: aiModelsPath(w.project) + "/" + key}
	},

	"getContextKindsByProjectKey": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: projectPath(w.project) + "/context-kinds"}
	},
	"putContextKind": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: projectPath(w.project) + "/context-kinds/" + w.unique("kind"), body: map[string]any{"name": "Kind", "description": "d"}}
	},
	"getContextAttributeNames": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: envPath(w.project, "production") + "/context-attributes"}
	},
	"getContextAttributeValues": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: envPath(w.project, "production") + "/context-attributes/email"}
	},
	"getContexts": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: envPath(w.project, "production") + "/contexts/user/" + w.user}
	},
	"searchContexts": func(_ testing.TB, w *world) answerRequest {
		return postOf(envPath(w.project, "production")+"/contexts/search", map[string]any{"filter": "applicationId:world"})
	},
	"searchContextInstances": func(_ testing.TB, w *world) answerRequest {
		return postOf(envPath(w.project, "production")+"/context-instances/search", map[string]any{"limit": 5})
	},
	"getContextInstances": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: envPath(w.project, "production") + "/context-instances/" + sdkcontext.InstanceID(w.user)}
	},
	"deleteContextInstances": func(tb testing.TB, w *world) answerRequest {
		return answerRequest{path: envPath(w.project, "production") + "/context-instances/" + w.seenContext(tb, w.unique("gone"))}
	},

	"getApplications": func(testing.TB, *world) answerRequest {
		return answerRequest{path: api + "/applications?expand=flags", headers: betaHeader}
	},
	"getApplication": func(testing.TB, *world) answerRequest {
		return answerRequest{path: api + "/applications/world?expand=flags", headers: betaHeader}
	},
	"patchApplication": func(testing.TB, *world) answerRequest {
		return answerRequest{path: api + "/applications/world", body: []apptest.PatchOp{apptest.Replace("/description", "the world")}, headers: betaHeader}
	},
	"deleteApplication": func(tb testing.TB, w *world) answerRequest {
		key := w.unique("app")
		w.seenContextFrom(tb, w.unique("u"), key)
		return answerRequest{path: api + "/applications/" + key, headers: betaHeader}
	},
	"getApplicationVersions": func(testing.TB, *world) answerRequest {
		return answerRequest{path: api + "/applications/world/versions", headers: betaHeader}
	},
	"patchApplicationVersion": func(testing.TB, *world) answerRequest {
		return answerRequest{path: api + "/applications/world/versions/1.0", body: []apptest.PatchOp{apptest.Replace("/name", "One")}, headers: betaHeader}
	},
	"deleteApplicationVersion": func(tb testing.TB, w *world) answerRequest {
		key := w.unique("app")
		w.seenContextFrom(tb, w.unique("u"), key)
		return answerRequest{path: api + "/applications/" + key + "/versions/1.0", headers: betaHeader}
	},
	"GetReleasePolicies": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: releasePoliciesPath(w.project), headers: betaHeader}
	},
	"GetReleasePolicy": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: releasePoliciesPath(w.project) + "/world", headers: betaHeader}
	},
	"PostReleasePolicy": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: releasePoliciesPath(w.project), body: guardedPolicy(w.unique("policy")), headers: betaHeader}
	},
	"PutReleasePolicy": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: releasePoliciesPath(w.project) + "/world", body: guardedPolicy("world"), headers: betaHeader}
	},
	"PostReleasePoliciesOrder": func(tb testing.TB, w *world) answerRequest {
		return answerRequest{path: releasePoliciesPath(w.project) + "/order", body: w.releasePolicyKeysReversed(tb), headers: betaHeader}
	},
	"DeleteReleasePolicy": func(tb testing.TB, w *world) answerRequest {
		key := w.unique("policy")
		w.must(tb, http.StatusCreated, http.MethodPost, releasePoliciesPath(w.project), progressivePolicy(key), betaHeader...)
		return answerRequest{path: releasePoliciesPath(w.project) + "/" + key, headers: betaHeader}
	},

	"getFeatureFlags": func(_ testing.TB, w *world) answerRequest { return answerRequest{path: flagsPath(w.project)} },
	"getFeatureFlag":  func(_ testing.TB, w *world) answerRequest { return answerRequest{path: flagPath(w.project, w.flag)} },
	"postFeatureFlag": func(_ testing.TB, w *world) answerRequest {
		return postOf(flagsPath(w.project), map[string]any{"key": w.unique("flag"), "name": "New"})
	},
	"patchFeatureFlag": func(_ testing.TB, w *world) answerRequest {
		return patchOf(flagPath(w.project, w.flag), apptest.Replace("/description", "patched"))
	},
	"deleteFeatureFlag": func(tb testing.TB, w *world) answerRequest {
		key := w.unique("flag")
		w.must(tb, http.StatusCreated, http.MethodPost, flagsPath(w.project), map[string]any{"key": key, "name": "Doomed"})
		return answerRequest{path: flagPath(w.project, key)}
	},
	"getExpiringUserTargets": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: flagExpiringPath(w.project, w.flag, "production")}
	},
	"patchExpiringUserTargets": func(_ testing.TB, w *world) answerRequest {
		return semanticOf(flagExpiringPath(w.project, w.flag, "production"), instr("updateExpireUserTargetDate",
			"userKey", w.user, "variationId", w.variations[1], "value", time.Now().Add(48*time.Hour).UnixMilli()))
	},
	"getExpiringFlagsForUser": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: userExpiringPath(w.project, w.user, "production")}
	},
	"patchExpiringFlagsForUser": func(_ testing.TB, w *world) answerRequest {
		return semanticOf(userExpiringPath(w.project, w.user, "production"), instr("updateExpireUserTargetDate",
			"flagKey", w.flag, "variationId", w.variations[1], "value", time.Now().Add(72*time.Hour).UnixMilli()))
	},
	"evaluateContextInstance": func(_ testing.TB, w *world) answerRequest {
		return postOf(envPath(w.project, "production")+"/flags/evaluate", map[string]any{"kind": "user", "key": w.user})
	},

	"getApprovalRequests": func(testing.TB, *world) answerRequest { return answerRequest{path: approvalsPath} },
	"getApprovalRequest":  func(_ testing.TB, w *world) answerRequest { return answerRequest{path: approvalPath(w.appliedID)} },
	"postApprovalRequest": func(_ testing.TB, w *world) answerRequest {
		return postOf(approvalsPath, map[string]any{"resourceId": "proj/" + w.project + ":env/test:flag/" + w.flag,
			"description": "turn on", "instructions": []any{instr("turnFlagOn")}})
	},
	"postApprovalRequestReview": func(tb testing.TB, w *world) answerRequest {
		r := postOf(approvalPath(w.pendingApproval(tb))+"/reviews", map[string]any{"kind": "approve", "comment": "ok"})
		r.headers = []string{"Authorization", w.reviewerToken}
		return r
	},
	"postApprovalRequestApply": func(tb testing.TB, w *world) answerRequest {
		id := w.pendingApproval(tb)
		w.must(tb, http.StatusOK, http.MethodPost, approvalPath(id)+"/reviews", map[string]any{"kind": "approve"}, "Authorization", w.reviewerToken)
		return postOf(approvalPath(id)+"/apply", map[string]any{"comment": "go"})
	},
	"deleteApprovalRequest": func(tb testing.TB, w *world) answerRequest {
		return answerRequest{path: approvalPath(w.pendingApproval(tb))}
	},
	"patchApprovalRequest": func(tb testing.TB, w *world) answerRequest {
		return answerRequest{path: approvalPath(w.pendingApproval(tb)), headers: []string{"SVC-API-Version", "beta"},
			body: map[string]any{"instructions": []any{instr("updateDescription", "value", "New description")}}}
	},

	"getAuditLogEntries": func(testing.TB, *world) answerRequest { return answerRequest{path: api + "/auditlog"} },
	"getAuditLogEntry":   func(_ testing.TB, w *world) answerRequest { return answerRequest{path: auditEntryPath(w.auditID)} },

	"getTokens": func(testing.TB, *world) answerRequest { return answerRequest{path: api + "/tokens"} },
	"getToken": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: api + "/tokens/" + w.usedTokenID}
	},
	"postToken": func(_ testing.TB, w *world) answerRequest {
		return postOf(api+"/tokens", map[string]any{"name": w.unique("token"), "role": "reader"})
	},
	"patchToken": func(_ testing.TB, w *world) answerRequest {
		return patchOf(api+"/tokens/"+w.tokenID, apptest.Replace("/name", "renamed"))
	},
	"resetToken": func(_ testing.TB, w *world) answerRequest { return postOf(api+"/tokens/"+w.tokenID+"/reset", nil) },
	"deleteToken": func(tb testing.TB, w *world) answerRequest {
		id := worldStr(tb, w.must(tb, http.StatusCreated, http.MethodPost, api+"/tokens", map[string]any{"name": w.unique("doomed"), "role": "reader"}), "_id")
		return answerRequest{path: api + "/tokens/" + id}
	},

	"getMembers": func(testing.TB, *world) answerRequest { return answerRequest{path: api + "/members"} },
	"getMember":  func(_ testing.TB, w *world) answerRequest { return answerRequest{path: api + "/members/" + w.memberID} },
	"patchMember": func(_ testing.TB, w *world) answerRequest {
		return patchOf(api+"/members/"+w.memberID, apptest.Replace("/firstName", "Ray"))
	},
	"postMembers": func(_ testing.TB, w *world) answerRequest {
		return postOf(api+"/members", []map[string]any{{"email": w.unique("new") + "@example.com", "role": "reader"}})
	},
	"deleteMember": func(tb testing.TB, w *world) answerRequest {
		m := w.must(tb, http.StatusCreated, http.MethodPost, api+"/members", []map[string]any{{"email": w.unique("doomed") + "@example.com"}})
		return answerRequest{path: api + "/members/" + worldStr(tb, m["items"].([]any)[0].(map[string]any), "_id")}
	},

	"getCustomRoles": func(testing.TB, *world) answerRequest { return answerRequest{path: api + "/roles"} },
	"getCustomRole":  func(_ testing.TB, w *world) answerRequest { return answerRequest{path: api + "/roles/" + w.roleKey} },
	"patchCustomRole": func(_ testing.TB, w *world) answerRequest {
		return patchOf(api+"/roles/"+w.roleKey, apptest.Replace("/name", "Viewer"))
	},
	"postCustomRole": func(_ testing.TB, w *world) answerRequest {
		return postOf(api+"/roles", map[string]any{"key": w.unique("role"), "name": "New", "policy": []map[string]any{
			{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"viewProject"}}}})
	},
	"deleteCustomRole": func(tb testing.TB, w *world) answerRequest {
		key := w.unique("doomed")
		w.must(tb, http.StatusCreated, http.MethodPost, api+"/roles", map[string]any{"key": key, "name": "Doomed", "policy": []map[string]any{
			{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"viewProject"}}}})
		return answerRequest{path: api + "/roles/" + key}
	},

	"getTeams": func(testing.TB, *world) answerRequest { return answerRequest{path: api + "/teams"} },
	"getTeam":  func(_ testing.TB, w *world) answerRequest { return answerRequest{path: api + "/teams/" + w.teamKey} },
	"patchTeam": func(_ testing.TB, w *world) answerRequest {
		return patchOf(api+"/teams/"+w.teamKey, apptest.Replace("/name", "Operations"))
	},
	"getTeamRoles": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: api + "/teams/" + w.teamKey + "/roles"}
	},
	"getTeamMaintainers": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: api + "/teams/" + w.teamKey + "/maintainers"}
	},
	"postTeam": func(_ testing.TB, w *world) answerRequest {
		return postOf(api+"/teams", map[string]any{"key": w.unique("team"), "name": "New"})
	},
	"deleteTeam": func(tb testing.TB, w *world) answerRequest {
		key := w.unique("doomed")
		w.must(tb, http.StatusCreated, http.MethodPost, api+"/teams", map[string]any{"key": key, "name": "Doomed"})
		return answerRequest{path: api + "/teams/" + key}
	},

	"getOAuthClients": func(testing.TB, *world) answerRequest { return answerRequest{path: api + "/oauth/clients"} },
	"getOAuthClientById": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: api + "/oauth/clients/" + w.clientID}
	},
	"patchOAuthClient": func(_ testing.TB, w *world) answerRequest {
		return patchOf(api+"/oauth/clients/"+w.clientID, apptest.Replace("/name", "renamed"))
	},
	"createOAuth2Client": func(_ testing.TB, w *world) answerRequest {
		return postOf(api+"/oauth/clients", map[string]any{"name": w.unique("client"), "redirectUri": "https://app.example.com/cb"})
	},
	"deleteOAuthClient": func(tb testing.TB, w *world) answerRequest {
		id := worldStr(tb, w.must(tb, http.StatusCreated, http.MethodPost, api+"/oauth/clients", map[string]any{"name": "doomed", "redirectUri": "https://app.example.com/cb"}), "_clientId")
		return answerRequest{path: api + "/oauth/clients/" + id}
	},

	"getAllReleasePipelines": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: pipelinesPath(w.project), headers: betaHeader}
	},
	"getReleasePipelineByKey": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: pipelinesPath(w.project) + "/world", headers: betaHeader}
	},
	"postReleasePipeline": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: pipelinesPath(w.project), body: pipelineBody(w.unique("pipe"), "production"), headers: betaHeader}
	},
	"putReleasePipeline": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: pipelinesPath(w.project) + "/world", body: pipelineBody("world", "test", "production"), headers: betaHeader}
	},
	"deleteReleasePipeline": func(tb testing.TB, w *world) answerRequest {
		key := w.unique("doomed-pipe")
		w.must(tb, http.StatusCreated, http.MethodPost, pipelinesPath(w.project), pipelineBody(key, "test"), betaHeader...)
		return answerRequest{path: pipelinesPath(w.project) + "/" + key, headers: betaHeader}
	},
	"getAllReleaseProgressionsForReleasePipeline": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: pipelinesPath(w.project) + "/world/releases", headers: betaHeader}
	},
	"createReleaseForFlag": func(tb testing.TB, w *world) answerRequest {
		key := w.unique("flag")
		w.must(tb, http.StatusCreated, http.MethodPost, flagsPath(w.project), map[string]any{"key": key, "name": key})
		return answerRequest{path: flagReleasePath(w.project, key), body: map[string]any{"releasePipelineKey": "world"}, headers: betaHeader}
	},
	"getReleaseByFlagKey": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: api + "/flags/" + w.project + "/" + w.flag + "/release", headers: betaHeader}
	},
	"getAllWebhooks": func(testing.TB, *world) answerRequest { return answerRequest{path: api + "/webhooks"} },
	"getWebhook": func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: api + "/webhooks/" + w.webhookID}
	},
	"patchWebhook": func(_ testing.TB, w *world) answerRequest {
		return patchOf(api+"/webhooks/"+w.webhookID, apptest.Replace("/name", "renamed"))
	},
	"postWebhook": func(_ testing.TB, w *world) answerRequest {
		return postOf(api+"/webhooks", map[string]any{"url": "http://127.0.0.1:9/" + w.unique("hook"), "sign": false, "on": false})
	},
	"deleteWebhook": func(tb testing.TB, w *world) answerRequest {
		id := worldStr(tb, w.must(tb, http.StatusOK, http.MethodPost, api+"/webhooks", map[string]any{"url": "http://127.0.0.1:9/doomed", "sign": false, "on": false}), "_id")
		return answerRequest{path: api + "/webhooks/" + id}
	},
}

func postOf(path string, body any) answerRequest {
	if body == nil {
		return answerRequest{path: path}
	}
	return answerRequest{path: path, body: body}
}

func patchOf(path string, ops ...apptest.PatchOp) answerRequest {
	return answerRequest{path: path, body: ops}
}

func semanticOf(path string, ins ...map[string]any) answerRequest {
	return answerRequest{path: path, body: map[string]any{"instructions": ins}, headers: []string{"Content-Type", semanticType}}
}

// throwawayProject is a project without environments, for a delete.
func (w *world) throwawayProject(tb testing.TB) string {
	tb.Helper()
	key := w.unique("doomed")
	w.must(tb, http.StatusCreated, http.MethodPost, api+"/projects", map[string]any{"key": key, "name": "Doomed", "environments": []any{}})
	return key
}

// throwawayEnvironment is a new environment of the world's project.
func (w *world) throwawayEnvironment(tb testing.TB) string {
	tb.Helper()
	key := w.unique("doomed")
	w.srv.MustCreateEnvironment(tb, w.project, key, nil)
	return key
}

// pendingApproval is a new pending approval request on the flag in test.
func (w *world) pendingApproval(tb testing.TB) string {
	tb.Helper()
	return worldStr(tb, w.must(tb, http.StatusCreated, http.MethodPost, approvalsPath, map[string]any{
		"resourceId": "proj/" + w.project + ":env/test:flag/" + w.flag, "description": "pending",
		"instructions": []any{instr("addUserTargets", "values", []string{w.unique("user")}, "variationId", w.variations[0])}}), "_id")
}

// builtOperations are the catalog operations with a handler.
func builtOperations(w *world) []catalog.Operation {
	handlers := w.srv.App.Handlers()
	var out []catalog.Operation
	for _, op := range catalog.All() {
		if _, ok := handlers[op.ID]; ok {
			out = append(out, op)
		}
	}
	return out
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

func TestAnswersCarryTheFieldsTheReferenceRequires(t *testing.T) {
	checkEveryAnswer(t, "answers every field the reference requires", nil, specTypes)
}

// checkEveryAnswer makes each built operation's call of answerRequests
// (and answerQueries), with extra headers, in a subtest named for the
// operation and what, and checks each answer with checkAnswer.
func checkEveryAnswer(t *testing.T, what string, extra []string, types map[string]map[string]string) {
	ref, err := reference.Load()
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t)
	for _, op := range builtOperations(w) {
		t.Run(op.ID+" "+what, func(t *testing.T) {
			rop, ok := ref.Op(op.ID)
			if !ok {
				t.Skipf("%s is flagplane's own (not in the reference)", op.ID)
			}
			mk, ok := answerRequests[op.ID]
			if !ok {
				t.Fatalf("no request for %s in answerRequests: add one that succeeds", op.ID)
			}
			if rop.Method != op.Method {
				t.Errorf("the catalog has %s %s, the reference %s %s", op.Method, op.Path, rop.Method, rop.Path)
			}
			req := mk(t, w)
			headers := append(append([]string{}, req.headers...), extra...)
			checkAnswer(t, ref, rop, w.srv.Do(t, op.Method, req.path, req.body, headers...), types)
			for _, q := range answerQueries[op.ID] {
				t.Run("with "+q, func(t *testing.T) {
					checkAnswer(t, ref, rop, w.srv.Do(t, op.Method, req.path+q, req.body, headers...), types)
				})
			}
		})
	}
}

// checkAnswer checks one answer against the reference's operation rop.
func checkAnswer(t *testing.T, ref *reference.Reference, rop *reference.Op, res *apptest.Response, types map[string]map[string]string) {
	t.Helper()
	for _, p := range ref.Check(rop, res.Status, res.Body, types) {
		t.Error(p)
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
