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

func insightsQuery(w *apptest.World) string {
	return "projectKey=" + w.Project + "&environmentKey=production"
}

// worldInsights are the deployment id and insight group key each world
// holds, made on first use through plain HTTP (the timestamp table's
// paths get no testing.TB).
var worldInsights sync.Map // *apptest.World → [2]string

// deployEvent records one deployment event of the world's application web.
func deployEvent(w *apptest.World, version, event string, at int64) {
	worldSend(w, http.MethodPost, insightsPath+"/deployment-events", map[string]any{"projectKey": w.Project,
		"environmentKey": "production", "applicationKey": "web", "version": version, "eventType": event, "eventTime": at}, nil)
}

// worldInsight returns the world's finished deployment and insight group.
func worldInsight(w *apptest.World) (deploymentID, groupKey string) {
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
	groupKey = w.Unique("insight-group")
	worldSend(w, http.MethodPost, insightsPath+"/insights/group", map[string]any{"key": groupKey, "name": "World group",
		"projectKey": w.Project, "environmentKey": "production"}, nil)
	worldInsights.Store(w, [2]string{deploymentID, groupKey})
	return deploymentID, groupKey
}

// repoMapping creates a code-reference repository and maps it to the world's project.
func repoMapping(tb testing.TB, w *apptest.World) string {
	tb.Helper()
	name := w.Unique("insight-repo")
	w.Must(tb, http.StatusOK, http.MethodPost, api+"/code-refs/repositories", map[string]any{"name": name, "sourceLink": "https://git.example.com/" + name})
	w.Must(tb, http.StatusOK, http.MethodPut, insightsPath+"/repositories/projects",
		map[string]any{"mappings": []any{map[string]any{"repositoryKey": name, "projectKey": w.Project}}}, betaHeader...)
	return name
}

func init() {
	rows := map[string]func(tb testing.TB, w *apptest.World) apptest.Request{
		"createDeploymentEvent": func(_ testing.TB, w *apptest.World) apptest.Request {
			return apptest.Post(insightsPath+"/deployment-events", map[string]any{"projectKey": w.Project, "environmentKey": "production",
				"applicationKey": "api", "version": w.Unique("v"), "eventType": "started"})
		},
		"getDeployments": func(_ testing.TB, w *apptest.World) apptest.Request {
			worldInsight(w)
			return apptest.Request{Path: insightsPath + "/deployments?" + insightsQuery(w)}
		},
		"getDeployment": func(_ testing.TB, w *apptest.World) apptest.Request {
			id, _ := worldInsight(w)
			return apptest.Request{Path: insightsPath + "/deployments/" + id}
		},
		"updateDeployment": func(_ testing.TB, w *apptest.World) apptest.Request {
			id, _ := worldInsight(w)
			return apptest.Patch(insightsPath+"/deployments/"+id, apptest.Replace("/metadata", map[string]any{"by": w.Unique("ci")}))
		},
		"getFlagEvents": func(_ testing.TB, w *apptest.World) apptest.Request {
			return apptest.Request{Path: insightsPath + "/flag-events?" + insightsQuery(w)}
		},
		"getInsightsScores": func(_ testing.TB, w *apptest.World) apptest.Request {
			worldInsight(w)
			return apptest.Request{Path: insightsPath + "/insights/scores?" + insightsQuery(w)}
		},
		"createInsightGroup": func(_ testing.TB, w *apptest.World) apptest.Request {
			return apptest.Post(insightsPath+"/insights/group", map[string]any{"key": w.Unique("group"), "name": "New group",
				"projectKey": w.Project, "environmentKey": "production", "applicationKeys": []string{"web"}})
		},
		"getInsightGroups": func(_ testing.TB, w *apptest.World) apptest.Request {
			worldInsight(w)
			return apptest.Request{Path: insightsPath + "/insights/groups"}
		},
		"getInsightGroup": func(_ testing.TB, w *apptest.World) apptest.Request {
			_, key := worldInsight(w)
			return apptest.Request{Path: insightsPath + "/insights/groups/" + key}
		},
		"patchInsightGroup": func(_ testing.TB, w *apptest.World) apptest.Request {
			_, key := worldInsight(w)
			return apptest.Patch(insightsPath+"/insights/groups/"+key, apptest.Replace("/name", w.Unique("Renamed")))
		},
		"deleteInsightGroup": func(tb testing.TB, w *apptest.World) apptest.Request {
			key := w.Unique("doomed-group")
			w.Must(tb, http.StatusCreated, http.MethodPost, insightsPath+"/insights/group", map[string]any{"key": key, "name": "Doomed",
				"projectKey": w.Project, "environmentKey": "production"}, betaHeader...)
			return apptest.Request{Path: insightsPath + "/insights/groups/" + key}
		},
		"getInsightsRepositories": func(tb testing.TB, w *apptest.World) apptest.Request {
			repoMapping(tb, w)
			return apptest.Request{Path: insightsPath + "/repositories"}
		},
		"associateRepositoriesAndProjects": func(tb testing.TB, w *apptest.World) apptest.Request {
			name := w.Unique("insight-repo")
			w.Must(tb, http.StatusOK, http.MethodPost, api+"/code-refs/repositories", map[string]any{"name": name})
			return apptest.Request{Path: insightsPath + "/repositories/projects",
				Body: map[string]any{"mappings": []any{map[string]any{"repositoryKey": name, "projectKey": w.Project}}}}
		},
		"deleteRepositoryProject": func(tb testing.TB, w *apptest.World) apptest.Request {
			return apptest.Request{Path: insightsPath + "/repositories/" + repoMapping(tb, w) + "/projects/" + w.Project}
		},
	}
	for id, mk := range rows {
		answerRequests[id] = func(tb testing.TB, w *apptest.World) apptest.Request {
			r := mk(tb, w)
			r.Headers = append(r.Headers, betaHeader...)
			return r
		}
	}
	answerRequests["postAuditLogEntries"] = func(_ testing.TB, w *apptest.World) apptest.Request {
		return apptest.Post(api+"/auditlog?limit=5", []any{map[string]any{"effect": "allow", "resources": []string{"proj/" + w.Project + ":env/*:flag/*"}, "actions": []string{"*"}}})
	}
	answerRequests["postAuditLogEntryCounts"] = func(_ testing.TB, w *apptest.World) apptest.Request {
		after := strconv.FormatInt(time.Now().Add(-time.Hour).UnixMilli(), 10)
		return apptest.Post(api+"/auditlog/counts?buckets=6&after="+after, []any{map[string]any{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"*"}}})
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
				tsGet(func(w *apptest.World) string { id, _ := worldInsight(w); return insightsPath + "/deployments/" + id }),
				tsList(func(w *apptest.World) string {
					worldInsight(w)
					return insightsPath + "/deployments?" + insightsQuery(w)
				}),
			},
			// leadTime is a duration (ms), an integer like the times.
			fields: []timestampField{tsInteger("startedAt"), tsInteger("endedAt"), tsWhenSet(tsInteger("leadTime"))},
			skip:   []string{"metadata"}},
		timestampRow{resource: "insight groups", source: "spec 2.5",
			reads: []timestampRead{
				tsGet(func(w *apptest.World) string {
					_, k := worldInsight(w)
					return insightsPath + "/insights/groups/" + k + "?expand=scores"
				}),
				tsList(func(w *apptest.World) string { worldInsight(w); return insightsPath + "/insights/groups?expand=scores" }),
			},
			fields: []timestampField{tsString("createdAt"), tsString("scoreMetadata.period.startTime"), tsString("scoreMetadata.period.endTime"),
				tsString("scoreMetadata.lastPeriod.startTime"), tsString("scoreMetadata.lastPeriod.endTime")}},
		timestampRow{resource: "flag events", source: "spec 2.22",
			reads: []timestampRead{
				tsList(func(w *apptest.World) string { return insightsPath + "/flag-events?" + insightsQuery(w) }),
			},
			fields: []timestampField{tsString("eventTime")}},
	)
}
