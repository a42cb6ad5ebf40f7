package ldcompat_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	ldapi "github.com/launchdarkly/api-client-go/v17"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/catalog"
)

// usageNotInClient are the usage operations api-client-go v17 has no call
// for (they came to the reference after it), or answers in an older model. Each is driven here through
// the client's configuration and decoded into the model the reference
// names (SeriesListRep, SdkVersionDetailsRep), which v17 has.
var usageNotInClient = map[string]string{
	"getAIRunsUsage":                "AI runs usage is not in api-client-go v17",
	"getContextsClientsideUsage":    "context usage series are not in api-client-go v17",
	"getContextsServersideUsage":    "context usage series are not in api-client-go v17",
	"getContextsTotalUsage":         "context usage series are not in api-client-go v17",
	"getMAUClientsideUsage":         "client-side MAU usage is not in api-client-go v17",
	"getMAUTotalUsage":              "total MAU usage is not in api-client-go v17",
	"getExperimentationEventsUsage": "experimentation events usage is not in api-client-go v17",
	"getObservabilityErrorsUsage":   "observability usage is not in api-client-go v17",
	"getObservabilityLogsUsage":     "observability usage is not in api-client-go v17",
	"getObservabilityMetricsUsage":  "observability usage is not in api-client-go v17",
	"getObservabilitySessionsUsage": "observability usage is not in api-client-go v17",
	"getObservabilityTracesUsage":   "observability usage is not in api-client-go v17",
	"getSdkAllVersions":             "SDK version usage is not in api-client-go v17",
	"getSdkVersionsDetails":         "SDK version usage is not in api-client-go v17",
	"getVegaAIUsage":                "Vega AI usage is not in api-client-go v17",
	"getWarehouseExportUsage":       "warehouse export usage is not in api-client-go v17",
	// v17 has the call but decodes SeriesIntervalsRep (one value per point),
	// an older shape than the reference's SeriesListRep (counts by group).
	"getDataExportEventsUsage": "data export events: v17's model is SeriesIntervalsRep; the reference's is SeriesListRep",
}

// The main test leaves the usage operations to TestLaunchDarklyClientUsage.
func init() {
	leaveToOwnTest("usage", "driven through the client's AccountUsageBetaApi (or as it would send the call) by TestLaunchDarklyClientUsage (usage_test.go), with its own coverage check")
}

// TestLaunchDarklyClientUsage drives the usage group: through the client's
// AccountUsageBetaApi where v17 has the call, else as the client would
// send it, decoded into its models. Like the code-refs tier, it keeps its
// own coverage list (the group registers from its own package).
func TestLaunchDarklyClientUsage(t *testing.T) {
	srv := apptest.New(t)
	tr := newTier(t, srv)
	ld, ctx := tr.ld, tr.ctx
	u := ld.AccountUsageBetaApi
	// Spec 2.23 (and the reference's own example) put Unix ms in each
	// point's time; v17's SeriesListRep decodes every value of a point as
	// int32, which no time since 1970-01-25 fits: a deviation of the model.
	const seriesTime = "series[].*"
	for _, op := range catalog.All() {
		if op.Group == "usage" && !strings.Contains(op.Path, "sdk") {
			tr.devs[op.ID+" "+seriesTime] = devInfo{op: op.ID, field: seriesTime,
				reason: "spec 2.23: a series point's time is Unix ms; api-client-go v17's SeriesListRep has int32 values"}
		}
	}
	srv.MustCreateProject(t, "usage-client")
	res := srv.Do(t, http.MethodPost, "/api/v2/flags/usage-client", map[string]any{"key": "usage-flag", "name": "Usage flag"})
	if res.Status != http.StatusCreated {
		t.Fatalf("create flag: %d %s", res.Status, res.Body)
	}

	check(tr, "getEvaluationsUsage", "evaluations of a flag", http.StatusOK, u.GetEvaluationsUsage(ctx, "usage-client", "production", "usage-flag").Tz("UTC").Execute)
	check(tr, "getEventsUsage", "events received", http.StatusOK, u.GetEventsUsage(ctx, "received").Execute)
	check(tr, "getMauUsage", "legacy MAU grouped by SDK", http.StatusOK, u.GetMauUsage(ctx).Groupby("sdk").AggregationType("month_to_date").Execute)
	check(tr, "getMauUsageByCategory", "MAU by category", http.StatusOK, u.GetMauUsageByCategory(ctx).Execute)
	check(tr, "getMauSdksByType", "server SDKs", http.StatusOK, u.GetMauSdksByType(ctx).Sdktype("server").Execute)
	check(tr, "getStreamUsage", "server streams", http.StatusOK, u.GetStreamUsage(ctx, "server").Execute)
	check(tr, "getStreamUsageBySdkVersion", "client streams by SDK version", http.StatusOK, u.GetStreamUsageBySdkVersion(ctx, "client").Sdk("JSClient").Execute)
	check(tr, "getStreamUsageSdkversion", "stream SDK versions", http.StatusOK, u.GetStreamUsageSdkversion(ctx, "server").Execute)
	check(tr, "getExperimentationKeysUsage", "experimentation keys", http.StatusOK, u.GetExperimentationKeysUsage(ctx).Execute)
	check(tr, "getServiceConnectionsUsage", "service connections", http.StatusOK, u.GetServiceConnectionUsage(ctx).Execute)

	for _, op := range catalog.All() {
		if usageNotInClient[op.ID] == "" {
			continue
		}
		if strings.Contains(op.Path, "sdk-versions") {
			check(tr, op.ID, "as the client would send it", http.StatusOK, send[[]ldapi.SdkVersionRep](tr, http.MethodGet, op.Path, "", nil))
			continue
		}
		check(tr, op.ID, "as the client would send it", http.StatusOK, send[ldapi.SeriesListRep](tr, http.MethodGet, op.Path, "", nil))
	}

	var problems []string
	// The deviation shows wherever a series has points; the not-collected ones have none.
	for _, id := range []string{"getEvaluationsUsage", "getEventsUsage", "getMauUsage", "getContextsTotalUsage", "getAIRunsUsage"} {
		if !tr.seen[id+" "+seriesTime] {
			problems = append(problems, fmt.Sprintf("  %-30s deviation: %s no longer fails to decode: drop it", id, seriesTime))
		}
	}
	tr.ownCheck(30, groupOps("usage"), problems...)
}
