package endpoints_test

import (
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// The insights group (shared/insight/insightapi) and the audit log's
// search and counts in the cross-cutting tables: answer requests, the
// spec's string timestamps (2.5, 2.22) and the timestamp rows.

const insightsPath = api + "/engineering-insights"

func insightsQuery(w *world) string {
	return "projectKey=" + w.project + "&environmentKey=production"
}

// worldInsights are the deployment id and insight group key each world
// holds, made on first use through plain HTTP (the timestamp table's
// paths get no testing.TB).
var worldInsights sync.Map // *world → [2]string

// deployEvent records one deployment event of the world's application web.
func deployEvent(w *world, version, event string, at int64) {
	worldSend(w, http.MethodPost, insightsPath+"/deployment-events", map[string]any{"projectKey": w.project,
		"environmentKey": "production", "applicationKey": "web", "version": version, "eventType": event, "eventTime": at}, nil)
}

// worldInsight returns the world's finished deployment and insight group.
func worldInsight(w *world) (deploymentID, groupKey string) {
	if v, ok := worldInsights.Load(w); ok {
		ids := v.([2]string)
		return ids[0], ids[1]
	}
	start := time.Now().Add(-time.Hour).UnixMilli()
	deployEvent(w, "1.0", "started", start)
	deployEvent(w, "1.0", "finished", start+60_000)
	var list map[string]any
	worldSend(w, http.MethodGet, insightsPath+"/deployments?"+insightsQuery(w), nil, &list)
	if items, ok := list["items"].([]any); ok && len(items) > 0 {
		deploymentID, _ = items[0].(map[string]any)["id"].(string)
	}
	groupKey = w.unique("insight-group")
	worldSend(w, http.MethodPost, insightsPath+"/insights/group", map[string]any{"key": groupKey, "name": "World group",
		"projectKey": w.project, "environmentKey": "production"}, nil)
	worldInsights.Store(w, [2]string{deploymentID, groupKey})
	return deploymentID, groupKey
}

// repoMapping creates a code-reference repository and maps it to the world's project.
func repoMapping(tb testing.TB, w *world) string {
	tb.Helper()
	name := w.unique("insight-repo")
	w.must(tb, http.StatusOK, http.MethodPost, api+"/code-refs/repositories", map[string]any{"name": name, "sourceLink": "https://git.example.com/" + name})
	w.must(tb, http.StatusOK, http.MethodPut, insightsPath+"/repositories/projects",
		map[string]any{"mappings": []any{map[string]any{"repositoryKey": name, "projectKey": w.project}}}, betaHeader...)
	return name
}

func init() {
	rows := map[string]func(tb testing.TB, w *world) answerRequest{
		"createDeploymentEvent": func(_ testing.TB, w *world) answerRequest {
			return postOf(insightsPath+"/deployment-events", map[string]any{"projectKey": w.project, "environmentKey": "production",
				"applicationKey": "api", "version": w.unique("v"), "eventType": "started"})
		},
		"getDeployments": func(_ testing.TB, w *world) answerRequest {
			worldInsight(w)
			return answerRequest{path: insightsPath + "/deployments?" + insightsQuery(w)}
		},
		"getDeployment": func(_ testing.TB, w *world) answerRequest {
			id, _ := worldInsight(w)
			return answerRequest{path: insightsPath + "/deployments/" + id}
		},
		"updateDeployment": func(_ testing.TB, w *world) answerRequest {
			id, _ := worldInsight(w)
			return patchOf(insightsPath+"/deployments/"+id, apptest.Replace("/metadata", map[string]any{"by": w.unique("ci")}))
		},
		"getFlagEvents": func(_ testing.TB, w *world) answerRequest {
			return answerRequest{path: insightsPath + "/flag-events?" + insightsQuery(w)}
		},
		"getInsightsScores": func(_ testing.TB, w *world) answerRequest {
			worldInsight(w)
			return answerRequest{path: insightsPath + "/insights/scores?" + insightsQuery(w)}
		},
		"createInsightGroup": func(_ testing.TB, w *world) answerRequest {
			return postOf(insightsPath+"/insights/group", map[string]any{"key": w.unique("group"), "name": "New group",
				"projectKey": w.project, "environmentKey": "production", "applicationKeys": []string{"web"}})
		},
		"getInsightGroups": func(_ testing.TB, w *world) answerRequest {
			worldInsight(w)
			return answerRequest{path: insightsPath + "/insights/groups"}
		},
		"getInsightGroup": func(_ testing.TB, w *world) answerRequest {
			_, key := worldInsight(w)
			return answerRequest{path: insightsPath + "/insights/groups/" + key}
		},
		"patchInsightGroup": func(_ testing.TB, w *world) answerRequest {
			_, key := worldInsight(w)
			return patchOf(insightsPath+"/insights/groups/"+key, apptest.Replace("/name", w.unique("Renamed")))
		},
		"deleteInsightGroup": func(tb testing.TB, w *world) answerRequest {
			key := w.unique("doomed-group")
			w.must(tb, http.StatusCreated, http.MethodPost, insightsPath+"/insights/group", map[string]any{"key": key, "name": "Doomed",
				"projectKey": w.project, "environmentKey": "production"}, betaHeader...)
			return answerRequest{path: insightsPath + "/insights/groups/" + key}
		},
		"getInsightsRepositories": func(tb testing.TB, w *world) answerRequest {
			repoMapping(tb, w)
			return answerRequest{path: insightsPath + "/repositories"}
		},
		"associateRepositoriesAndProjects": func(tb testing.TB, w *world) answerRequest {
			name := w.unique("insight-repo")
			w.must(tb, http.StatusOK, http.MethodPost, api+"/code-refs/repositories", map[string]any{"name": name})
			return answerRequest{path: insightsPath + "/repositories/projects",
				body: map[string]any{"mappings": []any{map[string]any{"repositoryKey": name, "projectKey": w.project}}}}
		},
		"deleteRepositoryProject": func(tb testing.TB, w *world) answerRequest {
			return answerRequest{path: insightsPath + "/repositories/" + repoMapping(tb, w) + "/projects/" + w.project}
		},
	}
	for id, mk := range rows {
		answerRequests[id] = func(tb testing.TB, w *world) answerRequest {
			r := mk(tb, w)
			r.headers = append(r.headers, betaHeader...)
			return r
		}
	}
	answerRequests["postAuditLogEntries"] = func(_ testing.TB, w *world) answerRequest {
		return postOf(api+"/auditlog?limit=5", []any{map[string]any{"effect": "allow", "resources": []string{"proj/" + w.project + ":env/*:flag/*"}, "actions": []string{"*"}}})
	}
	answerRequests["postAuditLogEntryCounts"] = func(_ testing.TB, w *world) answerRequest {
		after := strconv.FormatInt(time.Now().Add(-time.Hour).UnixMilli(), 10)
		return postOf(api+"/auditlog/counts?buckets=6&after="+after, []any{map[string]any{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"*"}}})
	}
	answerQueries["getInsightGroup"] = []string{"?expand=scores,environment"}
	answerQueries["getInsightGroups"] = []string{"?expand=scores,environment,metadata"}
	answerQueries["getFlagEvents"] = []string{"&expand=experiments"}
	answerQueries["getInsightsRepositories"] = []string{"?expand=projects"}

	// 2.5: an insight group's createdAt and its scoreMetadata periods are
	// Unix ms as strings (the scores read shares the period schema).
	specTypes["InsightGroup"] = map[string]string{"createdAt": "string"}
	specTypes["InsightPeriod"] = map[string]string{"startTime": "string", "endTime": "string"}
	// 2.22: a flag event's eventTime is Unix ms as a string.
	specTypes["FlagEventRep"] = map[string]string{"eventTime": "string"}

	timestampTable = append(timestampTable,
		timestampRow{resource: "deployments", source: "the reference's DeploymentRep",
			reads: []timestampRead{
				tsGet(func(w *world) string { id, _ := worldInsight(w); return insightsPath + "/deployments/" + id }),
				tsList(func(w *world) string { worldInsight(w); return insightsPath + "/deployments?" + insightsQuery(w) }),
			},
			// leadTime is a duration (ms), an integer like the times.
			fields: []timestampField{tsInteger("startedAt"), tsInteger("endedAt"), tsWhenSet(tsInteger("leadTime"))},
			skip:   []string{"metadata"}},
		timestampRow{resource: "insight groups", source: "spec 2.5",
			reads: []timestampRead{
				tsGet(func(w *world) string {
					_, k := worldInsight(w)
					return insightsPath + "/insights/groups/" + k + "?expand=scores"
				}),
				tsList(func(w *world) string { worldInsight(w); return insightsPath + "/insights/groups?expand=scores" }),
			},
			fields: []timestampField{tsString("createdAt"), tsString("scoreMetadata.period.startTime"), tsString("scoreMetadata.period.endTime"),
				tsString("scoreMetadata.lastPeriod.startTime"), tsString("scoreMetadata.lastPeriod.endTime")}},
		timestampRow{resource: "flag events", source: "spec 2.22",
			reads: []timestampRead{
				tsList(func(w *world) string { return insightsPath + "/flag-events?" + insightsQuery(w) }),
			},
			fields: []timestampField{tsString("eventTime")}},
	)
}
