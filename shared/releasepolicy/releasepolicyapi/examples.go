package releasepolicyapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/example"
)

// examples are the group's successful calls, which the tests make on a
// world holding one of every built resource (its project has the policy
// "world").
func examples() example.Set {
	return example.Set{
		Calls: map[string]example.Example{
			"GetReleasePolicies": func(w *example.World) example.Call {
				return example.Get(policiesPath(w.Project), example.BetaHeader...)
			},
			"GetReleasePolicy": func(w *example.World) example.Call {
				return example.Get(policiesPath(w.Project)+"/world", example.BetaHeader...)
			},
			"PostReleasePolicy": func(w *example.World) example.Call {
				return example.Post(policiesPath(w.Project), guardedPolicy(w.Unique("policy")), example.BetaHeader...)
			},
			"PutReleasePolicy": func(w *example.World) example.Call {
				return example.Call{Path: policiesPath(w.Project) + "/world", Body: guardedPolicy("world"), Headers: example.BetaHeader}
			},
			"PostReleasePoliciesOrder": func(w *example.World) example.Call {
				return example.Post(policiesPath(w.Project)+"/order", keysReversed(w), example.BetaHeader...)
			},
			"DeleteReleasePolicy": func(w *example.World) example.Call {
				key := w.Unique("policy")
				w.Must(http.StatusCreated, http.MethodPost, policiesPath(w.Project), map[string]any{"key": key, "name": "Policy " + key, "releaseMethod": "progressive-release",
					"progressiveReleaseConfig": map[string]any{"stages": []map[string]any{{"allocation": 10000, "durationMillis": 1000}}}}, example.BetaHeader...)
				return example.Get(policiesPath(w.Project)+"/"+key, example.BetaHeader...)
			},
		},
	}
}

func policiesPath(project string) string { return example.ProjectPath(project) + "/release-policies" }

// guardedPolicy is a guarded release policy's create (and replace) body.
func guardedPolicy(key string) map[string]any {
	return map[string]any{"key": key, "name": "Policy " + key, "releaseMethod": "guarded-release",
		"scope": map[string]any{"environmentKeys": []string{"production"}, "flagTagKeys": []string{"frontend"}},
		"guardedReleaseConfig": map[string]any{"metricKeys": []string{"http-errors"}, "rolloutContextKindKey": "user", "minSampleSize": 100,
			"rollbackOnRegression": true, "stages": []map[string]any{{"allocation": 25000, "durationMillis": 60000}, {"allocation": 50000, "durationMillis": 60000}}}}
}

// keysReversed lists the world project's release policies, last rank first.
func keysReversed(w *example.World) []string {
	items := w.Must(http.StatusOK, http.MethodGet, policiesPath(w.Project), nil, example.BetaHeader...)["items"].([]any)
	keys := make([]string, len(items))
	for i, it := range items {
		keys[len(items)-1-i] = it.(map[string]any)["key"].(string)
	}
	return keys
}
