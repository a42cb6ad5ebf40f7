package destinationapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/example"
)

const examplesPath = "/api/v2/destinations"

// exampleDestination creates a BigQuery destination in the world's
// production environment and returns its path.
func exampleDestination(w *example.World) string {
	d := w.Must(http.StatusCreated, http.MethodPost, examplesPath+"/"+w.Project+"/production",
		map[string]any{"name": w.Unique("warehouse"), "kind": "bigquery", "on": true, "config": `{"projectId":"my-gcp-project"}`})
	return examplesPath + "/" + w.Project + "/production/" + example.Str(d, "_id")
}

func exampleSetupPath(w *example.World, kind, op string) string {
	return examplesPath + "/projects/" + w.Project + "/environments/production/kinds/" + kind + "/" + op
}

func examples() example.Set {
	return example.Set{
		Calls: map[string]example.Example{
			"getDestinations": func(w *example.World) example.Call {
				exampleDestination(w)
				return example.Get(examplesPath)
			},
			"postDestination": func(w *example.World) example.Call {
				return example.Post(examplesPath+"/"+w.Project+"/test", map[string]any{"kind": "databricks", "config": map[string]any{"host": "dbc-1.cloud.databricks.com"}})
			},
			"getDestination":    func(w *example.World) example.Call { return example.Get(exampleDestination(w)) },
			"deleteDestination": func(w *example.World) example.Call { return example.Get(exampleDestination(w)) },
			"patchDestination": func(w *example.World) example.Call {
				return example.Patch(exampleDestination(w), example.Replace("/on", false))
			},
			"postGenerateWarehouseDestinationKeyPair": func(*example.World) example.Call {
				return example.Post(examplesPath+"/generate-warehouse-destination-key-pair", nil)
			},
			"postGenerateProjectEnvWarehouseDestinationKeyPair": func(w *example.World) example.Call {
				return example.Post(examplesPath+"/projects/"+w.Project+"/environments/production/generate-warehouse-destination-key-pair", nil)
			},
			"postGenerateTrustPolicy": func(w *example.World) example.Call {
				return example.Post(examplesPath+"/projects/"+w.Project+"/environments/production/generate-trust-policy", nil)
			},
			"postGenerateWarehouseDestinationSetupScript": func(w *example.World) example.Call {
				return example.Post(exampleSetupPath(w, "redshift", "setup"), map[string]any{
					"clusterIdentifier": "analytics", "clusterRegion": "us-east-1", "clusterAwsAccountId": "123456789012"})
			},
			"postCompleteWarehouseDestinationSetup": func(w *example.World) example.Call {
				w.Must(http.StatusCreated, http.MethodPost, exampleSetupPath(w, "clickhouse", "setup"), map[string]any{"endpoint": "abc.clickhouse.cloud"})
				return example.Post(exampleSetupPath(w, "clickhouse", "complete-setup"), map[string]any{"endpoint": "abc.clickhouse.cloud"})
			},
		},
		// 2.16: a destination's createdAt is Unix ms as a string.
		SpecTypes: map[string]map[string]string{"Destination": {"createdAt": "string"}},
		Dated:     map[string][]string{"Destination": {"createdAt"}},
	}
}
