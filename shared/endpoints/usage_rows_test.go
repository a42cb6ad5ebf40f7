package endpoints_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/usage/usageapi"
)

// The usage group's rows in the cross-cutting tables: every operation is a
// GET with the beta header. The world's project gets one SDK payload, so
// the SDK version lists (after a rollup's snapshot) and evaluation series
// answer with items.

// usageWorld posts one Go SDK payload to the world's production
// environment (an SDK seen now, evaluations of the world's flag).
func usageWorld(tb testing.TB, w *apptest.World) {
	tb.Helper()
	e := apptest.GetEnv(tb, w.Srv, w.Project, "production")
	body := `[{"kind":"index","creationDate":1,"context":{"kind":"user","key":"usage-u1"}},` +
		`{"kind":"summary","startDate":1,"endDate":1700000000000,"features":{"` + w.Flag + `":{"default":false,"contextKinds":["user"],"counters":[{"variation":0,"version":1,"value":true,"count":2}]}}}]`
	res := w.Srv.Do(tb, http.MethodPost, "/bulk", body, "Authorization", e["apiKey"].(string), "User-Agent", "GoClient/7.14.6", "X-LaunchDarkly-Event-Schema", "4")
	if res.Status != http.StatusAccepted {
		tb.Fatalf("post SDK events: %d %s", res.Status, res.Body)
	}
	// The SDK version lists read the rollup's snapshot.
	if _, err := usageapi.Service(w.Srv.App).Rollup.Run(context.Background()); err != nil {
		tb.Fatalf("usage rollup: %v", err)
	}
}

func init() {
	get := func(path string) func(testing.TB, *apptest.World) apptest.Request {
		return func(testing.TB, *apptest.World) apptest.Request {
			return apptest.Request{Path: api + "/usage/" + path, Headers: betaHeader}
		}
	}
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
		answerRequests[id] = get(path)
	}
	answerRequests["getSdkAllVersions"] = func(tb testing.TB, w *apptest.World) apptest.Request {
		usageWorld(tb, w)
		return apptest.Request{Path: api + "/usage/sdk-versions/all", Headers: betaHeader}
	}
	answerRequests["getSdkVersionsDetails"] = func(tb testing.TB, w *apptest.World) apptest.Request {
		usageWorld(tb, w)
		return apptest.Request{Path: api + "/usage/sdk-versions/details", Headers: betaHeader}
	}
	answerRequests["getEvaluationsUsage"] = func(tb testing.TB, w *apptest.World) apptest.Request {
		usageWorld(tb, w)
		return apptest.Request{Path: api + "/usage/evaluations/" + w.Project + "/production/" + w.Flag + "?from=1699000000000&to=1700100000000", Headers: betaHeader}
	}

	timestampTable = append(timestampTable, timestampRow{
		resource: "usage series", source: "spec 2.23: a point's time is Unix ms, an integer",
		reads: []timestampRead{
			tsGet(func(*apptest.World) string { return api + "/usage/total-contexts?groupBy=sdkName" }),
			tsGet(func(*apptest.World) string { return api + "/usage/ai-runs?granularity=hourly" }),
			tsGet(func(w *apptest.World) string {
				return api + "/usage/evaluations/" + w.Project + "/production/" + w.Flag + "?from=1699000000000&to=1700100000000"
			}),
		},
		fields: []timestampField{tsInteger("series[].time")},
	})
}
