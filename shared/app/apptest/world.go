package apptest

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/example"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/sdkcontext"
	"github.com/flagplane/flagplane/shared/token"
)

// SemanticType is the Content-Type of a semantic patch.
const SemanticType = example.SemanticType

// Instr is a semantic patch instruction: its kind and name/value pairs.
var Instr = example.Instr

// World is one server holding one of every built resource, each made over
// HTTP and used the way that fills its optional fields (a token that was
// used and expires, an approval request reviewed and applied, another
// scheduled, a flag with targets, a rule and an expiring target), for the
// checks that read every resource: the groups' examples.
type World struct {
	Srv *Server
	n   int

	Project, Flag, User string
	// Variations are the variation ids of the flag, in order.
	Variations []string

	TokenID                 string // made with POST /api/v2/tokens
	UsedTokenID             string // expires in a day and has been used
	MemberID, ReviewerToken string
	RoleKey, RoleID         string
	TeamKey, ClientID       string
	WebhookID               string
	TriggerID               string // an adaptive trigger in production
	AppliedID, ScheduledID  string // approval requests
	AuditID                 string
}

// Unique returns a key nothing else in the world uses.
func (w *World) Unique(prefix string) string {
	w.n++
	return fmt.Sprintf("%s-%d", prefix, w.n)
}

// Must sends a request that has to succeed with status and returns its body as a map.
func (w *World) Must(tb testing.TB, status int, method, path string, body any, headers ...string) map[string]any {
	tb.Helper()
	res := w.Srv.Do(tb, method, path, body, headers...)
	if res.Status != status {
		tb.Fatalf("%s %s: status %d, want %d: %s", method, path, res.Status, status, res.Body)
	}
	if len(res.Body) == 0 {
		return nil
	}
	return res.Map(tb)
}

// Str reads a string field of a decoded answer, which must be there.
func Str(tb testing.TB, m map[string]any, field string) string {
	tb.Helper()
	s, ok := m[field].(string)
	if !ok || s == "" {
		tb.Fatalf("the answer has no %q string: %v", field, m)
	}
	return s
}

// NewWorld makes the world on a server of its own.
func NewWorld(tb testing.TB) *World {
	tb.Helper()
	// Webhooks may target loopback here (they are off: nothing is delivered), as no name resolves in tests.
	srv := New(tb, WithWebhookDelivery())
	w := &World{Srv: srv, Project: "p", Flag: "f", User: "u"}
	semantic := []string{"Content-Type", SemanticType}
	const v2 = "/api/v2"
	proj := v2 + "/projects/" + w.Project
	flags := v2 + "/flags/" + w.Project

	w.Must(tb, http.StatusCreated, http.MethodPost, v2+"/projects", map[string]any{"key": w.Project, "name": "Project", "tags": []string{"shop"}})
	w.Must(tb, http.StatusOK, http.MethodPost, proj+"/ai-configs/model-configs", map[string]any{"key": "world", "name": "World model", "id": "world-1",
		"provider": "acme", "params": map[string]any{"temperature": 0.5}, "tags": []string{"ai"}, "costPerInputToken": 0.1})
	w.Must(tb, http.StatusCreated, http.MethodPost, proj+"/ai-configs", map[string]any{"key": "world", "name": "World", "description": "every field filled",
		"tags": []string{"ai"}, "evaluationMetricKey": "clicks", "isInverted": false,
		"defaultVariation": map[string]any{"key": "v", "name": "V", "modelConfigKey": "world", "messages": []map[string]any{{"role": "system", "content": "hi"}},
			"judgeConfiguration": map[string]any{"judges": []map[string]any{{"samplingRate": 0.5, "judgeConfigKey": "judge"}}}}})
	w.Must(tb, http.StatusOK, http.MethodPatch, proj+"/ai-configs/world/variations/v", map[string]any{"comment": "archived once", "state": "archived"})
	f := w.Must(tb, http.StatusCreated, http.MethodPost, flags, map[string]any{
		"key": w.Flag, "name": "Flag", "description": "every field filled",
		"variations": []map[string]any{{"value": "a", "name": "A"}, {"value": "b"}, {"value": "c"}},
		"defaults":   map[string]any{"onVariation": 0, "offVariation": 2}, "tags": []string{"checkout"},
		"customProperties": map[string]any{"jira": map[string]any{"name": "Jira issues", "value": []string{"SHOP-1"}}},
	})
	for _, v := range f["variations"].([]any) {
		w.Variations = append(w.Variations, v.(map[string]any)["_id"].(string))
	}
	w.Must(tb, http.StatusOK, http.MethodPatch, flags+"/"+w.Flag, map[string]any{"environmentKey": "production", "instructions": []any{
		Instr("turnFlagOn"),
		Instr("addUserTargets", "values", []string{w.User}, "variationId", w.Variations[1]),
		Instr("addRule", "variationId", w.Variations[0], "clauses", []any{map[string]any{"attribute": "email", "op": "endsWith", "values": []any{"@example.com"}}}),
	}}, semantic...)
	w.Must(tb, http.StatusOK, http.MethodPatch, v2+"/users/"+w.Project+"/"+w.User+"/expiring-user-targets/production", map[string]any{"instructions": []any{
		Instr("addExpireUserTargetDate", "flagKey", w.Flag, "variationId", w.Variations[1], "value", time.Now().Add(24*time.Hour).UnixMilli()),
	}}, semantic...)

	w.TokenID = Str(tb, w.Must(tb, http.StatusCreated, http.MethodPost, v2+"/tokens", map[string]any{"name": "ci", "role": "reader", "description": "for the checks"}), "_id")
	id, value := srv.MustIssueToken(tb, token.Spec{Name: "expiring", Role: identity.RoleReader, Expiry: time.Now().Add(24 * time.Hour).UnixMilli()})
	w.Must(tb, http.StatusOK, http.MethodGet, v2+"/projects", nil, "Authorization", value) // sets lastUsed
	w.UsedTokenID = id

	members := w.Must(tb, http.StatusCreated, http.MethodPost, v2+"/members", []map[string]any{{"email": "reviewer@example.com", "role": "writer", "firstName": "Rae", "lastName": "Viewer"}})
	w.MemberID = Str(tb, members["items"].([]any)[0].(map[string]any), "_id")
	_, w.ReviewerToken = srv.MustIssueToken(tb, token.Spec{Name: "reviewer", Role: identity.RoleAdmin, MemberID: w.MemberID})

	w.RoleKey = "flag-viewer"
	role := w.Must(tb, http.StatusCreated, http.MethodPost, v2+"/roles", map[string]any{"key": w.RoleKey, "name": "Flag viewer", "description": "reads flags",
		"policy": []map[string]any{{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"viewProject"}}}})
	w.RoleID = Str(tb, role, "_id")
	w.TeamKey = "ops"
	w.Must(tb, http.StatusCreated, http.MethodPost, v2+"/teams", map[string]any{"key": w.TeamKey, "name": "Ops", "description": "on call",
		"memberIDs": []string{w.MemberID}, "customRoleKeys": []string{w.RoleKey}})
	w.ClientID = Str(tb, w.Must(tb, http.StatusCreated, http.MethodPost, v2+"/oauth/clients", map[string]any{"name": "app", "description": "an app", "redirectUri": "https://app.example.com/cb"}), "_clientId")
	w.WebhookID = Str(tb, w.Must(tb, http.StatusOK, http.MethodPost, v2+"/webhooks", map[string]any{"url": "http://127.0.0.1:9/flagplane", "sign": true, "on": false, "name": "hook", "tags": []string{"ops"},
		"statements": []map[string]any{{"effect": "allow", "resources": []string{"proj/*:env/*:flag/*"}, "actions": []string{"*"}}}}), "_id")
	w.Must(tb, http.StatusCreated, http.MethodPost, proj+"/release-policies", map[string]any{"key": "world", "name": "Policy world", "releaseMethod": "guarded-release",
		"scope": map[string]any{"environmentKeys": []string{"production"}, "flagTagKeys": []string{"frontend"}},
		"guardedReleaseConfig": map[string]any{"metricKeys": []string{"http-errors"}, "rolloutContextKindKey": "user", "minSampleSize": 100,
			"rollbackOnRegression": true, "stages": []map[string]any{{"allocation": 25000, "durationMillis": 60000}, {"allocation": 50000, "durationMillis": 60000}}}}, BetaHeader...)
	w.TriggerID = Str(tb, w.Must(tb, http.StatusCreated, http.MethodPost, proj+"/environments/production/adaptive-triggers", map[string]any{
		"name": "errors spike", "resourceKind": "flag", "resourceKey": w.Flag, "task": map[string]any{"instructions": []any{Instr("turnFlagOff")}},
		"triggerSource": map[string]any{"type": "observabilityAlert", "alertId": 1}}), "id")

	w.Must(tb, http.StatusCreated, http.MethodPost, proj+"/release-pipelines", PipelineBody("world", "test", "production"), BetaHeader...)
	w.Must(tb, http.StatusOK, http.MethodPut, proj+"/flags/"+w.Flag+"/release", map[string]any{"releasePipelineKey": "world", "releaseVariationId": w.Variations[1]}, BetaHeader...)

	resource := "proj/" + w.Project + ":env/production:flag/" + w.Flag
	approvals := v2 + "/approval-requests"
	w.AppliedID = Str(tb, w.Must(tb, http.StatusCreated, http.MethodPost, approvals, map[string]any{"resourceId": resource, "description": "serve b",
		"notifyMemberIds": []string{w.MemberID}, "notifyTeamKeys": []string{w.TeamKey},
		"instructions": []any{Instr("updateFallthroughVariationOrRollout", "variationId", w.Variations[1])}}), "_id")
	w.Must(tb, http.StatusOK, http.MethodPost, approvals+"/"+w.AppliedID+"/reviews", map[string]any{"kind": "approve", "comment": "fine"}, "Authorization", w.ReviewerToken)
	w.Must(tb, http.StatusOK, http.MethodPost, approvals+"/"+w.AppliedID+"/apply", map[string]any{"comment": "ship it"})
	w.ScheduledID = Str(tb, w.Must(tb, http.StatusCreated, http.MethodPost, approvals, map[string]any{"resourceId": resource, "description": "later",
		"executionDate": time.Now().Add(24 * time.Hour).UnixMilli(), "instructions": []any{Instr("turnFlagOff")}}), "_id")

	// An SDK reports the user and an org, so the contexts operations have data.
	w.SeenContext(tb, w.User)

	log := w.Must(tb, http.StatusOK, http.MethodGet, v2+"/auditlog", nil)
	w.AuditID = Str(tb, log["items"].([]any)[0].(map[string]any), "_id")
	return w
}

// For is the world as examples see it, failing tb when a call they make
// fails.
func (w *World) For(tb testing.TB) *example.World {
	return &example.World{
		URL: w.Srv.URL, Token: w.Srv.Token,
		Project: w.Project, Flag: w.Flag, User: w.User, Variations: w.Variations,
		TokenID: w.TokenID, UsedTokenID: w.UsedTokenID, MemberID: w.MemberID, ReviewerToken: w.ReviewerToken,
		RoleKey: w.RoleKey, RoleID: w.RoleID, TeamKey: w.TeamKey, ClientID: w.ClientID, WebhookID: w.WebhookID,
		TriggerID: w.TriggerID, AppliedID: w.AppliedID, ScheduledID: w.ScheduledID, AuditID: w.AuditID,
		Must: func(status int, method, path string, body any, headers ...string) map[string]any {
			tb.Helper()
			return w.Must(tb, status, method, path, body, headers...)
		},
		Unique: w.Unique,
		SeenContext: func(key, appKey string) string {
			tb.Helper()
			return w.SeenContextFrom(tb, key, appKey)
		},
		RunWorker: func(name string) {
			tb.Helper()
			if err := w.Srv.App.RunWorker(context.Background(), name, slog.New(slog.DiscardHandler)); err != nil {
				tb.Fatalf("run worker %s: %v", name, err)
			}
		},
	}
}

// SeenContext posts, with the production SDK key and the tags of the
// application "world", an index event for the user key (with an org beside
// it in a feature event) and returns the user's context instance id.
func (w *World) SeenContext(tb testing.TB, key string) string {
	tb.Helper()
	return w.SeenContextFrom(tb, key, "world")
}

// SeenContextFrom is SeenContext as reported by version 1.0 of the application appKey.
func (w *World) SeenContextFrom(tb testing.TB, key, appKey string) string {
	tb.Helper()
	sdkKey := Str(tb, w.Must(tb, http.StatusOK, http.MethodGet, "/api/v2/projects/"+w.Project+"/environments/production", nil), "apiKey")
	body := fmt.Sprintf(`[{"kind":"index","creationDate":%[2]d,"context":{"kind":"user","key":%[1]q,"email":"a@example.com"}},`+
		`{"kind":"feature","creationDate":%[2]d,"key":"f","context":{"kind":"multi","user":{"key":%[1]q},"org":{"key":"acme"}},"variation":0}]`, key, time.Now().UnixMilli())
	res := w.Srv.Do(tb, http.MethodPost, "/bulk", body, "Authorization", sdkKey, "X-LaunchDarkly-Tags", "application-id/"+appKey+" application-version/1.0")
	if res.Status != http.StatusAccepted {
		tb.Fatalf("post events: status %d: %s", res.Status, res.Body)
	}
	return sdkcontext.InstanceID(key)
}
