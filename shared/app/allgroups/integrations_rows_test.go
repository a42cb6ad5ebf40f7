package allgroups_test

import (
	"net/http"
	"sync"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// The integrations group (shared/integration/integrationapi) in the
// cross-cutting tables: its answer requests, the spec's string type of
// capabilityConfig, and its timestamp.

const integrationsPath = api + "/integration-configurations"

// worldIntegrations are the Datadog configuration each world holds, made
// on first use (Datadog's host is fixed, so no name needs resolving).
var worldIntegrations sync.Map // *apptest.World → id

func integrationBody(name string) map[string]any {
	return map[string]any{"name": name, "tags": []string{"ops"}, "enabled": false, "configValues": map[string]any{"apiKey": "0123456789abcdef0123456789abcdef"},
		"capabilityConfig": map[string]any{"auditLogEventsHook": map[string]any{"statements": []any{
			map[string]any{"effect": "allow", "resources": []string{"proj/*:env/*:flag/*"}, "actions": []string{"*"}}}}}}
}

// worldIntegration returns the world's configuration id, creating it
// through plain HTTP (the timestamp table's paths get no testing.TB).
func worldIntegration(w *apptest.World) string {
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
	timestampTable = append(timestampTable, timestampRow{resource: "integration configurations", source: "the reference's IntegrationConfigurationsRep",
		reads: []timestampRead{
			tsGet(func(w *apptest.World) string { return integrationsPath + "/" + worldIntegration(w) }),
			tsList(func(w *apptest.World) string { worldIntegration(w); return integrationsPath + "/keys/datadog" }),
		},
		fields: []timestampField{tsInteger("_createdAt")}})
}
