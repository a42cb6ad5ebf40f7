package endpoints_test

import (
	"net/http"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// The destinations group's rows in the cross-cutting tables.

const destinationsPath = api + "/destinations"

// worldDestination creates a BigQuery destination in the world's
// production environment and returns its path.
func worldDestination(tb testing.TB, w *apptest.World) string {
	tb.Helper()
	d := w.Must(tb, http.StatusCreated, http.MethodPost, destinationsPath+"/"+w.Project+"/production",
		map[string]any{"name": w.Unique("warehouse"), "kind": "bigquery", "on": true, "config": `{"projectId":"my-gcp-project"}`})
	return destinationsPath + "/" + w.Project + "/production/" + apptest.Str(tb, d, "_id")
}

func destinationSetupPath(w *apptest.World, kind, op string) string {
	return destinationsPath + "/projects/" + w.Project + "/environments/production/kinds/" + kind + "/" + op
}

func init() {
	rows := map[string]func(tb testing.TB, w *apptest.World) apptest.Request{
		"getDestinations": func(tb testing.TB, w *apptest.World) apptest.Request {
			worldDestination(tb, w)
			return apptest.Request{Path: destinationsPath}
		},
		"postDestination": func(_ testing.TB, w *apptest.World) apptest.Request {
			return apptest.Post(destinationsPath+"/"+w.Project+"/test", map[string]any{"kind": "databricks", "config": map[string]any{"host": "dbc-1.cloud.databricks.com"}})
		},
		"getDestination": func(tb testing.TB, w *apptest.World) apptest.Request {
			return apptest.Request{Path: worldDestination(tb, w)}
		},
		"deleteDestination": func(tb testing.TB, w *apptest.World) apptest.Request {
			return apptest.Request{Path: worldDestination(tb, w)}
		},
		"patchDestination": func(tb testing.TB, w *apptest.World) apptest.Request {
			return apptest.Patch(worldDestination(tb, w), apptest.Replace("/on", false))
		},
		"postGenerateWarehouseDestinationKeyPair": func(testing.TB, *apptest.World) apptest.Request {
			return apptest.Post(destinationsPath+"/generate-warehouse-destination-key-pair", nil)
		},
		"postGenerateProjectEnvWarehouseDestinationKeyPair": func(_ testing.TB, w *apptest.World) apptest.Request {
			return apptest.Post(destinationsPath+"/projects/"+w.Project+"/environments/production/generate-warehouse-destination-key-pair", nil)
		},
		"postGenerateTrustPolicy": func(_ testing.TB, w *apptest.World) apptest.Request {
			return apptest.Post(destinationsPath+"/projects/"+w.Project+"/environments/production/generate-trust-policy", nil)
		},
		"postGenerateWarehouseDestinationSetupScript": func(_ testing.TB, w *apptest.World) apptest.Request {
			return apptest.Post(destinationSetupPath(w, "redshift", "setup"), map[string]any{
				"clusterIdentifier": "analytics", "clusterRegion": "us-east-1", "clusterAwsAccountId": "123456789012"})
		},
		"postCompleteWarehouseDestinationSetup": func(tb testing.TB, w *apptest.World) apptest.Request {
			w.Must(tb, http.StatusCreated, http.MethodPost, destinationSetupPath(w, "clickhouse", "setup"), map[string]any{"endpoint": "abc.clickhouse.cloud"})
			return apptest.Post(destinationSetupPath(w, "clickhouse", "complete-setup"), map[string]any{"endpoint": "abc.clickhouse.cloud"})
		},
	}
	for id, row := range rows {
		answerRequests[id] = row
	}
	// 2.16: a destination's createdAt is Unix ms as a string.
	specTypes["Destination"] = map[string]string{"createdAt": "string"}

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
