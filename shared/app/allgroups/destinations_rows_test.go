package allgroups_test

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// The destinations group's rows in the cross-cutting tables.

const destinationsPath = api + "/destinations"

func init() {

	azBodies["postDestination"] = func(*azFixture) any {
		return map[string]any{"kind": "bigquery", "config": map[string]any{"projectId": "my-gcp-project"}}
	}

	timestampTable = append(timestampTable, timestampRow{resource: "destinations", source: "spec 2.16",
		reads: []timestampRead{
			tsGet(func(w *apptest.World) string { return destinationOf(w) }),
			tsList(func(*apptest.World) string { return destinationsPath }),
		},
		fields: []timestampField{tsString("createdAt")}})
}

// destinationOf creates a destination without a testing.TB (the
// timestamp table's paths take none) and returns its path; a failure
// shows as the read's error.
func destinationOf(w *apptest.World) string {
	var d struct {
		ID string `json:"_id"`
	}
	body := map[string]any{"kind": "bigquery", "on": true, "config": map[string]any{"projectId": "my-gcp-project"}}
	if worldSend(w, http.MethodPost, destinationsPath+"/"+w.Project+"/production", body, &d) == 0 {
		return destinationsPath + "/create-failed"
	}
	return destinationsPath + "/" + w.Project + "/production/" + d.ID
}
