package endpoints_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// The integrations group (shared/integration/integrationapi) in the
// cross-cutting tables: its answer requests, the spec's string type of
// capabilityConfig, and its timestamp.

const integrationsPath = api + "/integration-configurations"

// worldIntegrations are the Datadog configuration each world holds, made
// on first use (Datadog's host is fixed, so no name needs resolving).
var worldIntegrations sync.Map // *world → id

func integrationBody(name string) map[string]any {
	return map[string]any{"name": name, "tags": []string{"ops"}, "enabled": false, "configValues": map[string]any{"apiKey": "0123456789abcdef0123456789abcdef"},
		"capabilityConfig": map[string]any{"auditLogEventsHook": map[string]any{"statements": []any{
			map[string]any{"effect": "allow", "resources": []string{"proj/*:env/*:flag/*"}, "actions": []string{"*"}}}}}}
}

// worldIntegration returns the world's configuration id, creating it
// through plain HTTP (the timestamp table's paths get no testing.TB).
func worldIntegration(w *world) string {
	if id, ok := worldIntegrations.Load(w); ok {
		return id.(string)
	}
	var out struct {
		ID string `json:"_id"`
	}
	worldSend(w, http.MethodPost, integrationsPath+"/keys/datadog", integrationBody("World Datadog"), &out)
	worldIntegrations.Store(w, out.ID)
	return out.ID
}

func init() {
	answerRequests["getAllIntegrationConfigurations"] = func(_ testing.TB, w *world) answerRequest {
		worldIntegration(w)
		return answerRequest{path: integrationsPath + "/keys/datadog", headers: betaHeader}
	}
	answerRequests["createIntegrationConfiguration"] = func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: integrationsPath + "/keys/datadog", body: integrationBody(w.unique("dd")), headers: betaHeader}
	}
	answerRequests["getIntegrationConfiguration"] = func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: integrationsPath + "/" + worldIntegration(w), headers: betaHeader}
	}
	answerRequests["updateIntegrationConfiguration"] = func(_ testing.TB, w *world) answerRequest {
		return answerRequest{path: integrationsPath + "/" + worldIntegration(w), body: []apptest.PatchOp{apptest.Replace("/name", w.unique("Renamed"))}, headers: betaHeader}
	}
	answerRequests["deleteIntegrationConfiguration"] = func(tb testing.TB, w *world) answerRequest {
		id := worldStr(tb, w.must(tb, http.StatusCreated, http.MethodPost, integrationsPath+"/keys/datadog", integrationBody("Doomed"), betaHeader...), "_id")
		return answerRequest{path: integrationsPath + "/" + id, headers: betaHeader}
	}

	// 2.9: capabilityConfig is the JSON-encoded capability configuration.
	specTypes["IntegrationConfigurationsRep"] = map[string]string{"capabilityConfig": "string"}

	timestampTable = append(timestampTable, timestampRow{resource: "integration configurations", source: "the reference's IntegrationConfigurationsRep",
		reads: []timestampRead{
			tsGet(func(w *world) string { return integrationsPath + "/" + worldIntegration(w) }),
			tsList(func(w *world) string { worldIntegration(w); return integrationsPath + "/keys/datadog" }),
		},
		fields: []timestampField{tsInteger("_createdAt")}})
}
