package pipelineapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/example"
)

// examples are the group's successful calls, which the tests make on a
// world holding one of every built resource.
func examples() example.Set {
	return example.Set{
		Calls: map[string]example.Example{
			"updatePhaseStatus": func(w *example.World) example.Call {
				key, ids := exampleRelease(w)
				return example.Call{Path: example.FlagReleasePath(w.Project, key) + "/phases/" + ids[0], Body: map[string]any{"status": "active"}, Headers: example.BetaHeader}
			},
			"patchReleaseByFlagKey": func(w *example.World) example.Call {
				key, _ := exampleRelease(w)
				return example.Call{Path: example.FlagPath(w.Project, key) + "/release", Body: []example.Op{example.Replace("/phases/0/complete", true)}, Headers: example.BetaHeader}
			},
			"deleteReleaseByFlagKey": func(w *example.World) example.Call {
				key, _ := exampleRelease(w)
				return example.Call{Path: example.FlagPath(w.Project, key) + "/release", Headers: example.BetaHeader}
			},
			"createReleaseForFlag": func(w *example.World) example.Call {
				key := w.Unique("flag")
				w.Must(http.StatusCreated, http.MethodPost, example.FlagsPath(w.Project), map[string]any{"key": key, "name": key})
				return example.Call{Path: example.FlagReleasePath(w.Project, key), Body: map[string]any{"releasePipelineKey": "world"}, Headers: example.BetaHeader}
			},
			"deleteReleasePipeline": func(w *example.World) example.Call {
				key := w.Unique("doomed-pipe")
				w.Must(http.StatusCreated, http.MethodPost, example.PipelinesPath(w.Project), example.PipelineBody(key, "test"), example.BetaHeader...)
				return example.Call{Path: example.PipelinesPath(w.Project) + "/" + key, Headers: example.BetaHeader}
			},
			"getAllReleasePipelines": func(w *example.World) example.Call {
				return example.Call{Path: example.PipelinesPath(w.Project), Headers: example.BetaHeader}
			},
			"getAllReleaseProgressionsForReleasePipeline": func(w *example.World) example.Call {
				return example.Call{Path: example.PipelinesPath(w.Project) + "/world/releases", Headers: example.BetaHeader}
			},
			"getReleaseByFlagKey": func(w *example.World) example.Call {
				return example.Call{Path: example.API + "/flags/" + w.Project + "/" + w.Flag + "/release", Headers: example.BetaHeader}
			},
			"getReleasePipelineByKey": func(w *example.World) example.Call {
				return example.Call{Path: example.PipelinesPath(w.Project) + "/world", Headers: example.BetaHeader}
			},
			"postReleasePipeline": func(w *example.World) example.Call {
				return example.Call{Path: example.PipelinesPath(w.Project), Body: example.PipelineBody(w.Unique("pipe"), "production"), Headers: example.BetaHeader}
			},
			"putReleasePipeline": func(w *example.World) example.Call {
				return example.Call{Path: example.PipelinesPath(w.Project) + "/world", Body: example.PipelineBody("world", "test", "production"), Headers: example.BetaHeader}
			},
		},
	}
}

// exampleRelease creates a flag, adds it to the world's pipeline and
// returns the flag key and the release's phase ids.
func exampleRelease(w *example.World) (string, []string) {
	key := w.Unique("released")
	w.Must(http.StatusCreated, http.MethodPost, example.FlagsPath(w.Project), map[string]any{"key": key, "name": key})
	rel := w.Must(http.StatusOK, http.MethodPut, example.FlagReleasePath(w.Project, key), map[string]any{"releasePipelineKey": "world"}, example.BetaHeader...)
	var ids []string
	for _, p := range rel["phases"].([]any) {
		ids = append(ids, p.(map[string]any)["_id"].(string))
	}
	return key, ids
}
