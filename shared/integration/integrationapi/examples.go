package integrationapi

import (
	"net/http"
	"sync"

	"github.com/flagplane/flagplane/shared/example"
)

const examplesPath = "/api/v2/integration-configurations"

// exampleConfigs are the Datadog configuration of each world (by its
// server's URL), made on first use: Datadog's host is fixed, so no name
// needs resolving.
var exampleConfigs sync.Map

func exampleBody(name string) map[string]any {
	return map[string]any{"name": name, "tags": []string{"ops"}, "enabled": false, "configValues": map[string]any{"apiKey": "0123456789abcdef0123456789abcdef"},
		"capabilityConfig": map[string]any{"auditLogEventsHook": map[string]any{"statements": []any{
			map[string]any{"effect": "allow", "resources": []string{"proj/*:env/*:flag/*"}, "actions": []string{"*"}}}}}}
}

func exampleConfig(w *example.World) string {
	if id, ok := exampleConfigs.Load(w.URL); ok {
		return id.(string)
	}
	id := example.Str(w.Must(http.StatusCreated, http.MethodPost, examplesPath+"/keys/datadog", exampleBody("World Datadog"), example.BetaHeader...), "_id")
	exampleConfigs.Store(w.URL, id)
	return id
}

func examples() example.Set {
	beta := example.BetaHeader
	return example.Set{
		Calls: map[string]example.Example{
			"getAllIntegrationConfigurations": func(w *example.World) example.Call {
				exampleConfig(w)
				return example.Get(examplesPath+"/keys/datadog", beta...)
			},
			"createIntegrationConfiguration": func(w *example.World) example.Call {
				return example.Post(examplesPath+"/keys/datadog", exampleBody(w.Unique("dd")), beta...)
			},
			"getIntegrationConfiguration": func(w *example.World) example.Call {
				return example.Get(examplesPath+"/"+exampleConfig(w), beta...)
			},
			"updateIntegrationConfiguration": func(w *example.World) example.Call {
				return example.Call{Path: examplesPath + "/" + exampleConfig(w), Body: []example.Op{example.Replace("/name", w.Unique("Renamed"))}, Headers: beta}
			},
			"deleteIntegrationConfiguration": func(w *example.World) example.Call {
				id := example.Str(w.Must(http.StatusCreated, http.MethodPost, examplesPath+"/keys/datadog", exampleBody("Doomed"), beta...), "_id")
				return example.Get(examplesPath+"/"+id, beta...)
			},
		},
		// 2.9: capabilityConfig is the JSON-encoded capability configuration.
		SpecTypes: map[string]map[string]string{"IntegrationConfigurationsRep": {"capabilityConfig": "string"}},
	}
}
