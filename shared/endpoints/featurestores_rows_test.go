package endpoints_test

import (
	"net/http"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// The delivery-configurations and big-segments groups' rows in the
// cross-cutting tables. The configurations name a Redis at 127.0.0.1:1:
// nothing listens there (and the test server's guard refuses loopback), so
// a big segment store's status check fails fast, as a real check would.

const (
	featureStoresPath = api + "/integration-capabilities/featureStore"
	bigSegmentsPath   = api + "/integration-capabilities/big-segment-store"
)

func storeBody(name string) map[string]any {
	return map[string]any{"name": name, "on": false, "tags": []string{"ops"},
		"config": map[string]any{"host": "127.0.0.1", "port": 1, "password": "s3cret-password", "prefix": "matrix"}}
}

// storeConfig creates a configuration of the world's production
// environment under base and returns its path.
func storeConfig(tb testing.TB, w *world, base string) string {
	tb.Helper()
	path := base + "/" + w.project + "/production/redis"
	id := worldStr(tb, w.must(tb, http.StatusCreated, http.MethodPost, path, storeBody(w.unique("store")), betaHeader...), "_id")
	return path + "/" + id
}

func init() {
	rows := map[string]func(tb testing.TB, w *world) answerRequest{
		"getIntegrationDeliveryConfigurations": func(tb testing.TB, w *world) answerRequest {
			storeConfig(tb, w, featureStoresPath)
			return answerRequest{path: featureStoresPath, headers: betaHeader}
		},
		"getIntegrationDeliveryConfigurationByEnvironment": func(tb testing.TB, w *world) answerRequest {
			storeConfig(tb, w, featureStoresPath)
			return answerRequest{path: featureStoresPath + "/" + w.project + "/production", headers: betaHeader}
		},
		"createIntegrationDeliveryConfiguration": func(_ testing.TB, w *world) answerRequest {
			return answerRequest{path: featureStoresPath + "/" + w.project + "/production/redis", body: storeBody(w.unique("store")), headers: betaHeader}
		},
		"getIntegrationDeliveryConfigurationById": func(tb testing.TB, w *world) answerRequest {
			return answerRequest{path: storeConfig(tb, w, featureStoresPath), headers: betaHeader}
		},
		"patchIntegrationDeliveryConfiguration": func(tb testing.TB, w *world) answerRequest {
			return answerRequest{path: storeConfig(tb, w, featureStoresPath), body: []apptest.PatchOp{apptest.Replace("/name", "Renamed")}, headers: betaHeader}
		},
		"deleteIntegrationDeliveryConfiguration": func(tb testing.TB, w *world) answerRequest {
			return answerRequest{path: storeConfig(tb, w, featureStoresPath), headers: betaHeader}
		},
		"validateIntegrationDeliveryConfiguration": func(tb testing.TB, w *world) answerRequest {
			return answerRequest{path: storeConfig(tb, w, featureStoresPath) + "/validate", headers: betaHeader}
		},
		"getBigSegmentStoreIntegrations": func(tb testing.TB, w *world) answerRequest {
			storeConfig(tb, w, bigSegmentsPath)
			return answerRequest{path: bigSegmentsPath, headers: betaHeader}
		},
		"createBigSegmentStoreIntegration": func(_ testing.TB, w *world) answerRequest {
			return answerRequest{path: bigSegmentsPath + "/" + w.project + "/production/redis", body: storeBody(w.unique("store")), headers: betaHeader}
		},
		"getBigSegmentStoreIntegration": func(tb testing.TB, w *world) answerRequest {
			return answerRequest{path: storeConfig(tb, w, bigSegmentsPath), headers: betaHeader}
		},
		"patchBigSegmentStoreIntegration": func(tb testing.TB, w *world) answerRequest {
			return answerRequest{path: storeConfig(tb, w, bigSegmentsPath), body: []apptest.PatchOp{apptest.Replace("/on", true)}, headers: betaHeader}
		},
		"deleteBigSegmentStoreIntegration": func(tb testing.TB, w *world) answerRequest {
			return answerRequest{path: storeConfig(tb, w, bigSegmentsPath), headers: betaHeader}
		},
	}
	for id, row := range rows {
		answerRequests[id] = row
	}

	// 2.20: the status's lastSync and lastError are Unix ms as strings.
	specTypes["BigSegmentStoreStatus"] = map[string]string{"lastSync": "string", "lastError": "string"}

	// No timestampTable row: lastSync, lastError and timestamp fall outside
	// the table's timestamp name pattern; the answers test holds the status
	// to the spec's types through specTypes above.
}
