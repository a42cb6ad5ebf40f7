package allgroups_test

import (
	"net/http"
	"sync"
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

func init() {
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
