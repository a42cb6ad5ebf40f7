package usageapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/example"
)

// exampleEvents posts one Go SDK payload to the world's production
// environment (an SDK seen now, evaluations of the world's flag) and rolls
// up, so the SDK version lists (which read the rollup's snapshot) and the
// evaluation series answer with items.
func exampleEvents(w *example.World) {
	env := w.Must(http.StatusOK, http.MethodGet, "/api/v2/projects/"+w.Project+"/environments/production", nil)
	body := `[{"kind":"index","creationDate":1,"context":{"kind":"user","key":"usage-u1"}},` +
		`{"kind":"summary","startDate":1,"endDate":1700000000000,"features":{"` + w.Flag + `":{"default":false,"contextKinds":["user"],"counters":[{"variation":0,"version":1,"value":true,"count":2}]}}}]`
	w.Must(http.StatusAccepted, http.MethodPost, "/bulk", body, "Authorization", example.Str(env, "apiKey"), "User-Agent", "GoClient/7.14.6", "X-LaunchDarkly-Event-Schema", "4")
	w.RunWorker("usage-rollup")
}

// examples: every operation is a GET with the beta header.
func examples() example.Set {
	calls := map[string]example.Example{}
	for id, path := range map[string]string{
		"getAIRunsUsage":                "ai-runs",
		"getContextsClientsideUsage":    "clientside-contexts",
		"getContextsServersideUsage":    "serverside-contexts?groupBy=sdkName",
		"getContextsTotalUsage":         "total-contexts?aggregationType=rolling_30d",
		"getMAUClientsideUsage":         "clientside-mau?granularity=monthly",
		"getMAUTotalUsage":              "total-mau?aggregationType=incremental",
		"getMauUsage":                   "mau",
		"getMauUsageByCategory":         "mau/bycategory",
		"getMauSdksByType":              "mau/sdks?sdktype=server",
		"getDataExportEventsUsage":      "data-export-events",
		"getEventsUsage":                "events/received",
		"getExperimentationEventsUsage": "experimentation-events",
		"getExperimentationKeysUsage":   "experimentation-keys",
		"getObservabilityErrorsUsage":   "observability/errors",
		"getObservabilityLogsUsage":     "observability/logs",
		"getObservabilityMetricsUsage":  "observability/metrics",
		"getObservabilitySessionsUsage": "observability/sessions",
		"getObservabilityTracesUsage":   "observability/traces",
		"getServiceConnectionsUsage":    "service-connections",
		"getStreamUsage":                "streams/server",
		"getStreamUsageBySdkVersion":    "streams/client/bysdkversion",
		"getStreamUsageSdkversion":      "streams/server/sdkversions",
		"getVegaAIUsage":                "vega-ai",
		"getWarehouseExportUsage":       "warehouse-export",
	} {
		calls[id] = func(*example.World) example.Call { return example.Get("/api/v2/usage/"+path, example.BetaHeader...) }
	}
	withEvents := func(path func(w *example.World) string) example.Example {
		return func(w *example.World) example.Call {
			exampleEvents(w)
			return example.Get(path(w), example.BetaHeader...)
		}
	}
	calls["getSdkAllVersions"] = withEvents(func(*example.World) string { return "/api/v2/usage/sdk-versions/all" })
	calls["getSdkVersionsDetails"] = withEvents(func(*example.World) string { return "/api/v2/usage/sdk-versions/details" })
	calls["getEvaluationsUsage"] = withEvents(func(w *example.World) string {
		return "/api/v2/usage/evaluations/" + w.Project + "/production/" + w.Flag + "?from=1699000000000&to=1700100000000"
	})
	return example.Set{Calls: calls}
}
