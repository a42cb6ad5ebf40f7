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
func storeConfig(tb testing.TB, w *apptest.World, base string) string {
	tb.Helper()
	path := base + "/" + w.Project + "/production/redis"
	id := apptest.Str(tb, w.Must(tb, http.StatusCreated, http.MethodPost, path, storeBody(w.Unique("store")), betaHeader...), "_id")
	return path + "/" + id
}

func init() {
	rows := map[string]func(tb testing.TB, w *apptest.World) apptest.Request{
		"getIntegrationDeliveryConfigurations": func(tb testing.TB, w *apptest.World) apptest.Request {
			storeConfig(tb, w, featureStoresPath)
			return apptest.Request{Path: featureStoresPath, Headers: betaHeader}
		},
		"getIntegrationDeliveryConfigurationByEnvironment": func(tb testing.TB, w *apptest.World) apptest.Request {
			storeConfig(tb, w, featureStoresPath)
			return apptest.Request{Path: featureStoresPath + "/" + w.Project + "/production", Headers: betaHeader}
		},
		"createIntegrationDeliveryConfiguration": func(_ testing.TB, w *apptest.World) apptest.Request {
			return apptest.Request{Path: featureStoresPath + "/" + w.Project + "/production/redis", Body: storeBody(w.Unique("store")), Headers: betaHeader}
		},
		"getIntegrationDeliveryConfigurationById": func(tb testing.TB, w *apptest.World) apptest.Request {
			return apptest.Request{Path: storeConfig(tb, w, featureStoresPath), Headers: betaHeader}
		},
		"patchIntegrationDeliveryConfiguration": func(tb testing.TB, w *apptest.World) apptest.Request {
			return apptest.Request{Path: storeConfig(tb, w, featureStoresPath), Body: []apptest.PatchOp{apptest.Replace("/name", "Renamed")}, Headers: betaHeader}
		},
		"deleteIntegrationDeliveryConfiguration": func(tb testing.TB, w *apptest.World) apptest.Request {
			return apptest.Request{Path: storeConfig(tb, w, featureStoresPath), Headers: betaHeader}
		},
		"validateIntegrationDeliveryConfiguration": func(tb testing.TB, w *apptest.World) apptest.Request {
			return apptest.Request{Path: storeConfig(tb, w, featureStoresPath) + "/validate", Headers: betaHeader}
		},
		"getBigSegmentStoreIntegrations": func(tb testing.TB, w *apptest.World) apptest.Request {
			storeConfig(tb, w, bigSegmentsPath)
			return apptest.Request{Path: bigSegmentsPath, Headers: betaHeader}
		},
		"createBigSegmentStoreIntegration": func(_ testing.TB, w *apptest.World) apptest.Request {
			return apptest.Request{Path: bigSegmentsPath + "/" + w.Project + "/production/redis", Body: storeBody(w.Unique("store")), Headers: betaHeader}
		},
		"getBigSegmentStoreIntegration": func(tb testing.TB, w *apptest.World) apptest.Request {
			return apptest.Request{Path: storeConfig(tb, w, bigSegmentsPath), Headers: betaHeader}
		},
		"patchBigSegmentStoreIntegration": func(tb testing.TB, w *apptest.World) apptest.Request {
			return apptest.Request{Path: storeConfig(tb, w, bigSegmentsPath), Body: []apptest.PatchOp{apptest.Replace("/on", true)}, Headers: betaHeader}
		},
		"deleteBigSegmentStoreIntegration": func(tb testing.TB, w *apptest.World) apptest.Request {
			return apptest.Request{Path: storeConfig(tb, w, bigSegmentsPath), Headers: betaHeader}
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
