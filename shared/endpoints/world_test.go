package endpoints_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/sdkcontext"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/token"
)

// world is one server holding one of every built resource, each made over
// HTTP and used the way that fills its optional fields (a token that was
// used and expires, an approval request reviewed and applied, another
// scheduled, a flag with targets, a rule and an expiring target), for the
// checks that read every resource: the timestamp field types and the
// fields the reference requires.
type world struct {
	srv *apptest.Server
	n   int

	project, flag, user string
	// variation ids of the flag, in order
	variations []string

	tokenID                 string // made with POST /api/v2/tokens
	usedTokenID             string // expires in a day and has been used
	memberID, reviewerToken string
	roleKey, roleID         string
	teamKey, clientID       string
	webhookID               string
	triggerID               string // an adaptive trigger in production
	appliedID, scheduledID  string // approval requests
	auditID                 string
}

// unique returns a key nothing else in the world uses.
func (w *world) unique(prefix string) string {
	w.n++
	return fmt.Sprintf("%s-%d", prefix, w.n)
}

// must sends a request that has to succeed with status and returns its body as a map.
func (w *world) must(tb testing.TB, status int, method, path string, body any, headers ...string) map[string]any {
	tb.Helper()
	res := w.srv.Do(tb, method, path, body, headers...)
	if res.Status != status {
		tb.Fatalf("%s %s: status %d, want %d: %s", method, path, res.Status, status, res.Body)
	}
	if len(res.Body) == 0 {
		return nil
	}
	return res.Map(tb)
}

// worldStr reads a string field of a decoded answer.
func worldStr(tb testing.TB, m map[string]any, field string) string {
	tb.Helper()
	s, ok := m[field].(string)
	if !ok || s == "" {
		tb.Fatalf("the answer has no %q string: %v", field, m)
	}
	return s
}

func newWorld(tb testing.TB) *world {
	tb.Helper()
	// Webhooks may target loopback here (they are off: nothing is delivered), as no name resolves in tests.
	srv := apptest.New(tb, apptest.WithWebhookDelivery())
	w := &world{srv: srv, project: "p", flag: "f", user: "u"}
	semantic := []string{"Content-Type", semanticType}

	w.must(tb, http.StatusCreated, http.MethodPost, api+"/projects", map[string]any{"key": w.project, "name": "Project", "tags": []string{"shop"}})
	w.addAIConfigs(tb)
	f := w.must(tb, http.StatusCreated, http.MethodPost, flagsPath(w.project), map[string]any{
		"key": w.flag, "name": "Flag", "description": "every field filled",
		"variations": []map[string]any{{"value": "a", "name": "A"}, {"value": "b"}, {"value": "c"}},
		"defaults":   map[string]any{"onVariation": 0, "offVariation": 2}, "tags": []string{"checkout"},
		"customProperties": map[string]any{"jira": map[string]any{"name": "Jira issues", "value": []string{"SHOP-1"}}},
	})
	for _, v := range f["variations"].([]any) {
		w.variations = append(w.variations, v.(map[string]any)["_id"].(string))
	}
	w.must(tb, http.StatusOK, http.MethodPatch, flagPath(w.project, w.flag), map[string]any{"environmentKey": "production", "instructions": []any{
		instr("turnFlagOn"),
		instr("addUserTargets", "values", []string{w.user}, "variationId", w.variations[1]),
		instr("addRule", "variationId", w.variations[0], "clauses", []any{map[string]any{"attribute": "email", "op": "endsWith", "values": []any{"@example.com"}}}),
	}}, semantic...)
	w.must(tb, http.StatusOK, http.MethodPatch, userExpiringPath(w.project, w.user, "production"), map[string]any{"instructions": []any{
		instr("addExpireUserTargetDate", "flagKey", w.flag, "variationId", w.variations[1], "value", time.Now().Add(24*time.Hour).UnixMilli()),
	}}, semantic...)

	w.tokenID = worldStr(tb, w.must(tb, http.StatusCreated, http.MethodPost, api+"/tokens", map[string]any{"name": "ci", "role": "reader", "description": "for the checks"}), "_id")
	id, value := srv.MustIssueToken(tb, token.Spec{Name: "expiring", Role: identity.RoleReader, Expiry: time.Now().Add(24 * time.Hour).UnixMilli()})
	w.must(tb, http.StatusOK, http.MethodGet, api+"/projects", nil, "Authorization", value) // sets lastUsed
	w.usedTokenID = id

	members := w.must(tb, http.StatusCreated, http.MethodPost, api+"/members", []map[string]any{{"email": "reviewer@example.com", "role": "writer", "firstName": "Rae", "lastName": "Viewer"}})
	w.memberID = worldStr(tb, members["items"].([]any)[0].(map[string]any), "_id")
	_, w.reviewerToken = srv.MustIssueToken(tb, token.Spec{Name: "reviewer", Role: identity.RoleAdmin, MemberID: w.memberID})

	w.roleKey = "flag-viewer"
	role := w.must(tb, http.StatusCreated, http.MethodPost, api+"/roles", map[string]any{"key": w.roleKey, "name": "Flag viewer", "description": "reads flags",
		"policy": []map[string]any{{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"viewProject"}}}})
	w.roleID = worldStr(tb, role, "_id")
	w.teamKey = "ops"
	w.must(tb, http.StatusCreated, http.MethodPost, api+"/teams", map[string]any{"key": w.teamKey, "name": "Ops", "description": "on call",
		"memberIDs": []string{w.memberID}, "customRoleKeys": []string{w.roleKey}})
	w.clientID = worldStr(tb, w.must(tb, http.StatusCreated, http.MethodPost, api+"/oauth/clients", map[string]any{"name": "app", "description": "an app", "redirectUri": "https://app.example.com/cb"}), "_clientId")
	w.webhookID = worldStr(tb, w.must(tb, http.StatusOK, http.MethodPost, api+"/webhooks", map[string]any{"url": "http://127.0.0.1:9/flagplane", "sign": true, "on": false, "name": "hook", "tags": []string{"ops"},
		"statements": []map[string]any{{"effect": "allow", "resources": []string{"proj/*:env/*:flag/*"}, "actions": []string{"*"}}}}), "_id")
	w.must(tb, http.StatusCreated, http.MethodPost, releasePoliciesPath(w.project), guardedPolicy("world"), betaHeader...)
	w.triggerID = worldStr(tb, w.must(tb, http.StatusCreated, http.MethodPost, envPath(w.project, "production")+"/adaptive-triggers", map[string]any{
		"name": "errors spike", "resourceKind": "flag", "resourceKey": w.flag, "task": map[string]any{"instructions": []any{instr("turnFlagOff")}},
		"triggerSource": map[string]any{"type": "observabilityAlert", "alertId": 1}}), "id")

	w.must(tb, http.StatusCreated, http.MethodPost, pipelinesPath(w.project), pipelineBody("world", "test", "production"), betaHeader...)
	w.must(tb, http.StatusOK, http.MethodPut, flagReleasePath(w.project, w.flag), map[string]any{"releasePipelineKey": "world", "releaseVariationId": w.variations[1]}, betaHeader...)

	resource := "proj/" + w.project + ":env/production:flag/" + w.flag
	w.appliedID = worldStr(tb, w.must(tb, http.StatusCreated, http.MethodPost, api+"/approval-requests", map[string]any{"resourceId": resource, "description": "serve b",
		"notifyMemberIds": []string{w.memberID}, "notifyTeamKeys": []string{w.teamKey},
		"instructions": []any{instr("updateFallthroughVariationOrRollout", "variationId", w.variations[1])}}), "_id")
	w.must(tb, http.StatusOK, http.MethodPost, approvalPath(w.appliedID)+"/reviews", map[string]any{"kind": "approve", "comment": "fine"}, "Authorization", w.reviewerToken)
	w.must(tb, http.StatusOK, http.MethodPost, approvalPath(w.appliedID)+"/apply", map[string]any{"comment": "ship it"})
	w.scheduledID = worldStr(tb, w.must(tb, http.StatusCreated, http.MethodPost, api+"/approval-requests", map[string]any{"resourceId": resource, "description": "later",
		"executionDate": time.Now().Add(24 * time.Hour).UnixMilli(), "instructions": []any{instr("turnFlagOff")}}), "_id")

	// An SDK reports the user and an org, so the contexts operations have data.
	w.seenContext(tb, w.user)

	log := w.must(tb, http.StatusOK, http.MethodGet, api+"/auditlog", nil)
	w.auditID = worldStr(tb, log["items"].([]any)[0].(map[string]any), "_id")
	return w
}

// seenContext posts, with the production SDK key and the tags of the
// application "world", an index event for the
// user key (with an org beside it in a feature event) and returns the
// user's context instance id.
func (w *world) seenContext(tb testing.TB, key string) string {
	tb.Helper()
	return w.seenContextFrom(tb, key, "world")
}

// seenContextFrom is seenContext as reported by version 1.0 of the application appKey.
func (w *world) seenContextFrom(tb testing.TB, key, appKey string) string {
	tb.Helper()
	sdkKey := worldStr(tb, w.must(tb, http.StatusOK, http.MethodGet, envPath(w.project, "production"), nil), "apiKey")
	body := fmt.Sprintf(`[{"kind":"index","creationDate":%[2]d,"context":{"kind":"user","key":%[1]q,"email":"a@example.com"}},`+
		`{"kind":"feature","creationDate":%[2]d,"key":"f","context":{"kind":"multi","user":{"key":%[1]q},"org":{"key":"acme"}},"variation":0}]`, key, time.Now().UnixMilli())
	res := w.srv.Do(tb, http.MethodPost, "/bulk", body, "Authorization", sdkKey, "X-LaunchDarkly-Tags", "application-id/"+appKey+" application-version/1.0")
	if res.Status != http.StatusAccepted {
		tb.Fatalf("post events: status %d: %s", res.Status, res.Body)
	}
	return sdkcontext.InstanceID(key)
}
