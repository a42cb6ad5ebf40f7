package ldcompat_test

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	ldapi "github.com/launchdarkly/api-client-go/v17"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// The main tier lists every built operation; the insights group and the
// audit log search are driven by TestLaunchDarklyClientInsights, on a
// server of their own, so the main tier names them here.
func init() {
	leaveToOwnTest("insights", "driven through the client's Insights*BetaApi by TestLaunchDarklyClientInsights (insights_test.go)")
	notInClient["postAuditLogEntries"] = "driven by TestLaunchDarklyClientInsights (insights_test.go) with the audit entries the insights calls make"
	notInClient["postAuditLogEntryCounts"] = "audit log entry counts are not in api-client-go v17; sent by TestLaunchDarklyClientInsights and decoded into the reference's CountBucketsResult"
}

// countBucketsResult is the reference's CountBucketsResult, which v17 lacks.
type countBucketsResult struct {
	Buckets []struct {
		Timestamp int64 `json:"timestamp"`
		Count     int64 `json:"count"`
	} `json:"buckets"`
	TotalCount       int64 `json:"totalCount"`
	BucketIntervalMs int64 `json:"bucketIntervalMs"`
}

// Deviations of the insights answers: the spec's part 2 gives these times
// as strings of Unix ms; LaunchDarkly's models have int64.
const (
	insightGroupTimes = "spec 2.5: an insight group's createdAt and scoreMetadata periods are Unix ms as JSON strings; LaunchDarkly's model has int64"
	flagEventTimes    = "spec 2.22: a flag event's eventTime is Unix ms as a JSON string; LaunchDarkly's model has int64"
)

var insightDeviations = []deviation{
	{[]string{"createInsightGroup", "getInsightGroup", "patchInsightGroup"}, "createdAt", insightGroupTimes},
	{[]string{"getInsightGroups"}, "items[].createdAt", insightGroupTimes},
	{[]string{"getInsightGroup"}, "scoreMetadata.period.startTime", insightGroupTimes},
	{[]string{"getInsightGroup"}, "scoreMetadata.period.endTime", insightGroupTimes},
	{[]string{"getInsightGroup"}, "scoreMetadata.lastPeriod.startTime", insightGroupTimes},
	{[]string{"getInsightGroup"}, "scoreMetadata.lastPeriod.endTime", insightGroupTimes},
	// The scores read shares the period schema (InsightPeriod) with scoreMetadata.
	{[]string{"getInsightsScores"}, "period.startTime", insightGroupTimes},
	{[]string{"getInsightsScores"}, "period.endTime", insightGroupTimes},
	{[]string{"getInsightsScores"}, "lastPeriod.startTime", insightGroupTimes},
	{[]string{"getInsightsScores"}, "lastPeriod.endTime", insightGroupTimes},
	{[]string{"getFlagEvents"}, "items[].eventTime", flagEventTimes},
	{[]string{"postAuditLogEntries"}, "items[].date", auditTimes},
	{[]string{"postAuditLogEntries"}, "items[].target", auditTarget},
}

// TestLaunchDarklyClientInsights drives every operation of the insights
// group through the client's Insights*BetaApi, and the audit log search,
// with the checks of the tier. It keeps its own coverage list, as the group
// registers its handlers from its own package.
func TestLaunchDarklyClientInsights(t *testing.T) {
	srv := apptest.New(t)
	tr := newTier(t, srv)
	for _, d := range insightDeviations {
		for _, op := range d.Ops {
			tr.devs[op+" "+d.Field] = devInfo{op: op, field: d.Field, reason: d.Reason}
		}
	}
	ld, ctx := tr.ld, tr.ctx
	const proj, env, app = "insights-client", "production", "web"
	srv.MustCreateProject(t, proj)
	if res := srv.Do(t, http.MethodPost, "/api/v2/flags/"+proj, map[string]any{"key": "f", "name": "F"}); res.Status != http.StatusCreated {
		t.Fatalf("create flag: %d %s", res.Status, res.Body)
	}

	start := time.Now().Add(-time.Hour).UnixMilli()
	for _, ev := range []struct {
		kind string
		at   int64
	}{{"started", start}, {"finished", start + 60_000}} {
		checkEmpty(tr, "createDeploymentEvent", ev.kind, http.StatusCreated, ld.InsightsDeploymentsBetaApi.CreateDeploymentEvent(ctx).PostDeploymentEventInput(ldapi.PostDeploymentEventInput{
			ProjectKey: proj, EnvironmentKey: env, ApplicationKey: app, Version: "1.0", EventType: ev.kind, EventTime: ptr(ev.at),
		}).Execute)
	}
	if list := check(tr, "getDeployments", "list", http.StatusOK, ld.InsightsDeploymentsBetaApi.GetDeployments(ctx).ProjectKey(proj).EnvironmentKey(env).Execute); list != nil && len(list.Items) == 1 {
		id := list.Items[0].Id
		check(tr, "getDeployment", "get", http.StatusOK, ld.InsightsDeploymentsBetaApi.GetDeployment(ctx, id).Execute)
		check(tr, "updateDeployment", "archive", http.StatusOK, ld.InsightsDeploymentsBetaApi.UpdateDeployment(ctx, id).PatchOperation([]ldapi.PatchOperation{replace("/archived", true)}).Execute)
	} else {
		t.Errorf("deployments: %+v, want the one deployment", list)
	}
	check(tr, "getFlagEvents", "list", http.StatusOK, ld.InsightsFlagEventsBetaApi.GetFlagEvents(ctx).ProjectKey(proj).EnvironmentKey(env).Expand("experiments").Execute)
	check(tr, "getInsightsScores", "scores", http.StatusOK, ld.InsightsScoresBetaApi.GetInsightsScores(ctx).ProjectKey(proj).EnvironmentKey(env).ApplicationKey(app).Execute)
	check(tr, "createInsightGroup", "create", http.StatusCreated, ld.InsightsScoresBetaApi.CreateInsightGroup(ctx).PostInsightGroupParams(ldapi.PostInsightGroupParams{
		Key: "web-team", Name: "Web team", ProjectKey: proj, EnvironmentKey: env, ApplicationKeys: []string{app},
	}).Execute)
	check(tr, "getInsightGroups", "list", http.StatusOK, ld.InsightsScoresBetaApi.GetInsightGroups(ctx).Query("web").Execute)
	check(tr, "getInsightGroup", "get with scores", http.StatusOK, ld.InsightsScoresBetaApi.GetInsightGroup(ctx, "web-team").Expand("scores").Execute)
	check(tr, "patchInsightGroup", "rename", http.StatusOK, ld.InsightsScoresBetaApi.PatchInsightGroup(ctx, "web-team").PatchOperation([]ldapi.PatchOperation{replace("/name", "Web")}).Execute)
	checkEmpty(tr, "deleteInsightGroup", "delete", http.StatusNoContent, ld.InsightsScoresBetaApi.DeleteInsightGroup(ctx, "web-team").Execute)

	const repo = "insights-repo"
	check(tr, "postRepository", "setup: a code-reference repository", http.StatusOK, ld.CodeReferencesApi.PostRepository(ctx).RepositoryPost(ldapi.RepositoryPost{Name: repo}).Execute)
	check(tr, "associateRepositoriesAndProjects", "map", http.StatusOK, ld.InsightsRepositoriesBetaApi.AssociateRepositoriesAndProjects(ctx).InsightsRepositoryProjectMappings(ldapi.InsightsRepositoryProjectMappings{
		Mappings: []ldapi.InsightsRepositoryProject{{RepositoryKey: repo, ProjectKey: proj}},
	}).Execute)
	check(tr, "getInsightsRepositories", "list with projects", http.StatusOK, ld.InsightsRepositoriesBetaApi.GetInsightsRepositories(ctx).Expand("projects").Execute)
	checkEmpty(tr, "deleteRepositoryProject", "unmap", http.StatusNoContent, ld.InsightsRepositoriesBetaApi.DeleteRepositoryProject(ctx, repo, proj).Execute)

	check(tr, "postAuditLogEntries", "search the deployments' entries", http.StatusOK, ld.AuditLogApi.PostAuditLogEntries(ctx).Limit(5).StatementPost([]ldapi.StatementPost{
		{Resources: []string{"deployment/*"}, Actions: []string{"*"}, Effect: "allow"},
	}).Execute)
	after := strconv.FormatInt(time.Now().Add(-time.Hour).UnixMilli(), 10)
	check(tr, "postAuditLogEntryCounts", "counts of the last hour", http.StatusOK,
		send[countBucketsResult](tr, http.MethodPost, "/api/v2/auditlog/counts?buckets=4&after="+after, "application/json", []ldapi.StatementPost{{Resources: []string{"proj/*"}, Actions: []string{"*"}, Effect: "allow"}}))

	var problems []string
	for _, d := range insightDeviations {
		for _, op := range d.Ops {
			if !tr.seen[op+" "+d.Field] {
				problems = append(problems, fmt.Sprintf("  %-34s deviation: %s no longer fails to decode: drop it", op, d.Field))
			}
		}
	}
	tr.ownCheck(34, append(groupOps("insights"), "postAuditLogEntries", "postAuditLogEntryCounts"), problems...)
}
