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
func worldDestination(tb testing.TB, w *world) string {
	tb.Helper()
	d := w.must(tb, http.StatusCreated, http.MethodPost, destinationsPath+"/"+w.project+"/production",
		map[string]any{"name": w.unique("warehouse"), "kind": "bigquery", "on": true, "config": `{"projectId":"my-gcp-project"}`})
	return destinationsPath + "/" + w.project + "/production/" + worldStr(tb, d, "_id")
}

func destinationSetupPath(w *world, kind, op string) string {
	return destinationsPath + "/projects/" + w.project + "/environments/production/kinds/" + kind + "/" + op
}

func init() {
	rows := map[string]func(tb testing.TB, w *world) answerRequest{
		"getDestinations": func(tb testing.TB, w *world) answerRequest {
			worldDestination(tb, w)
			return answerRequest{path: destinationsPath}
		},
		"postDestination": func(_ testing.TB, w *world) answerRequest {
			return postOf(destinationsPath+"/"+w.project+"/test", map[string]any{"kind": "databricks", "config": map[string]any{"host": "dbc-1.cloud.databricks.com"}})
		},
		"getDestination":    func(tb testing.TB, w *world) answerRequest { return answerRequest{path: worldDestination(tb, w)} },
		"deleteDestination": func(tb testing.TB, w *world) answerRequest { return answerRequest{path: worldDestination(tb, w)} },
		"patchDestination": func(tb testing.TB, w *world) answerRequest {
			return patchOf(worldDestination(tb, w), apptest.Replace("/on", false))
		},
		"postGenerateWarehouseDestinationKeyPair": func(testing.TB, *world) answerRequest {
			return postOf(destinationsPath+"/generate-warehouse-destination-key-pair", nil)
		},
		"postGenerateProjectEnvWarehouseDestinationKeyPair": func(_ testing.TB, w *world) answerRequest {
			return postOf(destinationsPath+"/projects/"+w.project+"/environments/production/generate-warehouse-destination-key-pair", nil)
		},
		"postGenerateTrustPolicy": func(_ testing.TB, w *world) answerRequest {
			return postOf(destinationsPath+"/projects/"+w.project+"/environments/production/generate-trust-policy", nil)
		},
		"postGenerateWarehouseDestinationSetupScript": func(_ testing.TB, w *world) answerRequest {
			return postOf(destinationSetupPath(w, "redshift", "setup"), map[string]any{
				"clusterIdentifier": "analytics", "clusterRegion": "us-east-1", "clusterAwsAccountId": "123456789012"})
		},
		"postCompleteWarehouseDestinationSetup": func(tb testing.TB, w *world) answerRequest {
			w.must(tb, http.StatusCreated, http.MethodPost, destinationSetupPath(w, "clickhouse", "setup"), map[string]any{"endpoint": "abc.clickhouse.cloud"})
			return postOf(destinationSetupPath(w, "clickhouse", "complete-setup"), map[string]any{"endpoint": "abc.clickhouse.cloud"})
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
			tsGet(func(w *world) string { return destinationOf(w) }),
			tsList(func(*world) string { return destinationsPath }),
		},
		fields: []timestampField{tsString("createdAt")}})
}

// destinationOf creates a destination without a testing.TB (the
// timestamp table's paths take none) and returns its path; a failure
// shows as the read's error.
func destinationOf(w *world) string {
	var d struct {
		ID string `json:"_id"`
	}
	body := map[string]any{"kind": "bigquery", "on": true, "config": map[string]any{"projectId": "my-gcp-project"}}
	if worldSend(w, http.MethodPost, destinationsPath+"/"+w.project+"/production", body, &d) == 0 {
		return destinationsPath + "/create-failed"
	}
	return destinationsPath + "/" + w.project + "/production/" + d.ID
}
