package endpoints_test

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/example"
)

// The rows of a flag's release through its phases (updatePhaseStatus,
// patchReleaseByFlagKey, deleteReleaseByFlagKey) in the cross-cutting tables.

// worldRelease creates a flag, adds it to the world's pipeline and returns
// the flag key and the release's phase ids.
func worldRelease(w *example.World) (string, []string) {
	key := w.Unique("released")
	w.Must(http.StatusCreated, http.MethodPost, apptest.FlagsPath(w.Project), map[string]any{"key": key, "name": key})
	rel := w.Must(http.StatusOK, http.MethodPut, apptest.FlagReleasePath(w.Project, key), map[string]any{"releasePipelineKey": "world"}, betaHeader...)
	var ids []string
	for _, p := range rel["phases"].([]any) {
		ids = append(ids, p.(map[string]any)["_id"].(string))
	}
	return key, ids
}

// completedReleasePath is the path of a new release whose first phase is
// complete, so its phases carry every timestamp (no testing.TB: the
// timestamp table's reads take none).
func completedReleasePath(w *apptest.World) string {
	key := w.Unique("completed")
	worldSend(w, http.MethodPost, apptest.FlagsPath(w.Project), map[string]any{"key": key, "name": key}, nil)
	worldSend(w, http.MethodPut, apptest.FlagReleasePath(w.Project, key), map[string]any{"releasePipelineKey": "world"}, nil)
	path := api + "/flags/" + w.Project + "/" + key + "/release"
	worldSend(w, http.MethodPatch, path, []apptest.PatchOp{apptest.Replace("/phases/0/complete", true)}, nil)
	return path
}

func init() {
	rows := map[string]func(w *example.World) example.Call{
		"updatePhaseStatus": func(w *example.World) example.Call {
			key, ids := worldRelease(w)
			return example.Call{Path: apptest.FlagReleasePath(w.Project, key) + "/phases/" + ids[0], Body: map[string]any{"status": "active"}, Headers: betaHeader}
		},
		"patchReleaseByFlagKey": func(w *example.World) example.Call {
			key, _ := worldRelease(w)
			return example.Call{Path: api + "/flags/" + w.Project + "/" + key + "/release", Body: []apptest.PatchOp{apptest.Replace("/phases/0/complete", true)}, Headers: betaHeader}
		},
		"deleteReleaseByFlagKey": func(w *example.World) example.Call {
			key, _ := worldRelease(w)
			return example.Call{Path: api + "/flags/" + w.Project + "/" + key + "/release", Headers: betaHeader}
		},
	}
	for id, row := range rows {
		answerRequests[id] = row
	}
	// No azBodies: the matrix names no flag with a release (its paths say
	// does-not-exist), so its lenient check (authorized, then 404) is the one that fits.
	timestampTable = append(timestampTable, timestampRow{resource: "flag releases with a completed phase", source: "the reference's ReleasePhase",
		reads:  []timestampRead{tsGet(completedReleasePath)},
		fields: []timestampField{tsInteger("phases[]._creationDate"), tsInteger("phases[]._startedDate"), tsInteger("phases[]._completionDate")}})
}
