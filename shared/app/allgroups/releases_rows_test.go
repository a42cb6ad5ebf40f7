package allgroups_test

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// The rows of a flag's release through its phases (updatePhaseStatus,
// patchReleaseByFlagKey, deleteReleaseByFlagKey) in the cross-cutting tables.

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
	// No azBodies: the matrix names no flag with a release (its paths say
	// does-not-exist), so its lenient check (authorized, then 404) is the one that fits.
	timestampTable = append(timestampTable, timestampRow{resource: "flag releases with a completed phase", source: "the reference's ReleasePhase",
		reads:  []timestampRead{tsGet(completedReleasePath)},
		fields: []timestampField{tsInteger("phases[]._creationDate"), tsInteger("phases[]._startedDate"), tsInteger("phases[]._completionDate")}})
}
