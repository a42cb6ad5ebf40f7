package insightapi

import (
	"net/http"
	"sync"
	"time"

	"github.com/flagplane/flagplane/shared/example"
)

const examplesPath = "/api/v2/engineering-insights"

func exampleQuery(w *example.World) string {
	return "projectKey=" + w.Project + "&environmentKey=production"
}

// exampleInsights are the deployment id and insight group key of each
// world (by its server's URL), made on first use.
var exampleInsights sync.Map

// exampleInsight returns the world's finished deployment and insight group.
func exampleInsight(w *example.World) (deploymentID, groupKey string) {
	if v, ok := exampleInsights.Load(w.URL); ok {
		ids := v.([2]string)
		return ids[0], ids[1]
	}
	start := time.Now().Add(-time.Hour).UnixMilli()
	for _, ev := range []struct {
		kind string
		at   int64
	}{{"started", start}, {"finished", start + 60_000}} {
		w.Must(http.StatusCreated, http.MethodPost, examplesPath+"/deployment-events", map[string]any{"projectKey": w.Project,
			"environmentKey": "production", "applicationKey": "web", "version": "1.0", "eventType": ev.kind, "eventTime": ev.at}, example.BetaHeader...)
	}
	list := w.Must(http.StatusOK, http.MethodGet, examplesPath+"/deployments?"+exampleQuery(w), nil, example.BetaHeader...)
	if items, ok := list["items"].([]any); ok && len(items) > 0 {
		deploymentID, _ = items[0].(map[string]any)["id"].(string)
	}
	groupKey = w.Unique("insight-group")
	w.Must(http.StatusCreated, http.MethodPost, examplesPath+"/insights/group", map[string]any{"key": groupKey, "name": "World group",
		"projectKey": w.Project, "environmentKey": "production"}, example.BetaHeader...)
	exampleInsights.Store(w.URL, [2]string{deploymentID, groupKey})
	return deploymentID, groupKey
}

// exampleRepoMapping creates a code-reference repository and maps it to the world's project.
func exampleRepoMapping(w *example.World) string {
	name := w.Unique("insight-repo")
	w.Must(http.StatusOK, http.MethodPost, "/api/v2/code-refs/repositories", map[string]any{"name": name, "sourceLink": "https://git.example.com/" + name})
	w.Must(http.StatusOK, http.MethodPut, examplesPath+"/repositories/projects",
		map[string]any{"mappings": []any{map[string]any{"repositoryKey": name, "projectKey": w.Project}}}, example.BetaHeader...)
	return name
}

func examples() example.Set {
	calls := map[string]example.Example{
		"createDeploymentEvent": func(w *example.World) example.Call {
			return example.Post(examplesPath+"/deployment-events", map[string]any{"projectKey": w.Project, "environmentKey": "production",
				"applicationKey": "api", "version": w.Unique("v"), "eventType": "started"})
		},
		"getDeployments": func(w *example.World) example.Call {
			exampleInsight(w)
			return example.Get(examplesPath + "/deployments?" + exampleQuery(w))
		},
		"getDeployment": func(w *example.World) example.Call {
			id, _ := exampleInsight(w)
			return example.Get(examplesPath + "/deployments/" + id)
		},
		"updateDeployment": func(w *example.World) example.Call {
			id, _ := exampleInsight(w)
			return example.Patch(examplesPath+"/deployments/"+id, example.Replace("/metadata", map[string]any{"by": w.Unique("ci")}))
		},
		"getFlagEvents": func(w *example.World) example.Call {
			return example.Get(examplesPath + "/flag-events?" + exampleQuery(w))
		},
		"getInsightsScores": func(w *example.World) example.Call {
			exampleInsight(w)
			return example.Get(examplesPath + "/insights/scores?" + exampleQuery(w))
		},
		"createInsightGroup": func(w *example.World) example.Call {
			return example.Post(examplesPath+"/insights/group", map[string]any{"key": w.Unique("group"), "name": "New group",
				"projectKey": w.Project, "environmentKey": "production", "applicationKeys": []string{"web"}})
		},
		"getInsightGroups": func(w *example.World) example.Call {
			exampleInsight(w)
			return example.Get(examplesPath + "/insights/groups")
		},
		"getInsightGroup": func(w *example.World) example.Call {
			_, key := exampleInsight(w)
			return example.Get(examplesPath + "/insights/groups/" + key)
		},
		"patchInsightGroup": func(w *example.World) example.Call {
			_, key := exampleInsight(w)
			return example.Patch(examplesPath+"/insights/groups/"+key, example.Replace("/name", w.Unique("Renamed")))
		},
		"deleteInsightGroup": func(w *example.World) example.Call {
			key := w.Unique("doomed-group")
			w.Must(http.StatusCreated, http.MethodPost, examplesPath+"/insights/group", map[string]any{"key": key, "name": "Doomed",
				"projectKey": w.Project, "environmentKey": "production"}, example.BetaHeader...)
			return example.Get(examplesPath + "/insights/groups/" + key)
		},
		"getInsightsRepositories": func(w *example.World) example.Call {
			exampleRepoMapping(w)
			return example.Get(examplesPath + "/repositories")
		},
		"associateRepositoriesAndProjects": func(w *example.World) example.Call {
			name := w.Unique("insight-repo")
			w.Must(http.StatusOK, http.MethodPost, "/api/v2/code-refs/repositories", map[string]any{"name": name})
			return example.Post(examplesPath+"/repositories/projects",
				map[string]any{"mappings": []any{map[string]any{"repositoryKey": name, "projectKey": w.Project}}})
		},
		"deleteRepositoryProject": func(w *example.World) example.Call {
			return example.Get(examplesPath + "/repositories/" + exampleRepoMapping(w) + "/projects/" + w.Project)
		},
	}
	// Every insights operation is beta.
	for id, mk := range calls {
		calls[id] = func(w *example.World) example.Call {
			c := mk(w)
			c.Headers = append(c.Headers, example.BetaHeader...)
			return c
		}
	}
	return example.Set{
		Calls: calls,
		Queries: map[string][]string{
			"getInsightGroup":         {"?expand=scores,environment"},
			"getInsightGroups":        {"?expand=scores,environment,metadata"},
			"getFlagEvents":           {"&expand=experiments"},
			"getInsightsRepositories": {"?expand=projects"},
		},
		// 2.5: an insight group's createdAt and its scoreMetadata periods
		// are Unix ms as strings (the scores read shares the period
		// schema); 2.22: a flag event's eventTime too.
		SpecTypes: map[string]map[string]string{
			"InsightGroup":  {"createdAt": "string"},
			"InsightPeriod": {"startTime": "string", "endTime": "string"},
			"FlagEventRep":  {"eventTime": "string"},
		},
		Dated: map[string][]string{"InsightGroup": {"createdAt"}, "InsightPeriod": {"startTime", "endTime"}, "FlagEventRep": {"eventTime"}},
	}
}
