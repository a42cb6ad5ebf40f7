package featurestoreapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/example"
)

// The groups' examples. The configurations name a Redis at 127.0.0.1:1:
// nothing listens there (and the test server's guard refuses loopback), so
// a big segment store's status check fails fast, as a real check would.

const (
	featureStoresPath = "/api/v2/integration-capabilities/featureStore"
	bigSegmentsPath   = "/api/v2/integration-capabilities/big-segment-store"
)

func storeBody(name string) map[string]any {
	return map[string]any{"name": name, "on": false, "tags": []string{"ops"},
		"config": map[string]any{"host": "127.0.0.1", "port": 1, "password": "s3cret-password", "prefix": "matrix"}}
}

// storeConfig creates a configuration of the world's production
// environment under base and returns its path.
func storeConfig(w *example.World, base string) string {
	path := base + "/" + w.Project + "/production/redis"
	id := example.Str(w.Must(http.StatusCreated, http.MethodPost, path, storeBody(w.Unique("store")), example.BetaHeader...), "_id")
	return path + "/" + id
}

func deliveryExamples() example.Set {
	return example.Set{Calls: map[string]example.Example{"getIntegrationDeliveryConfigurations": func(w *example.World) example.Call {
		storeConfig(w, featureStoresPath)
		return example.Call{Path: featureStoresPath, Headers: example.BetaHeader}
	},
		"getIntegrationDeliveryConfigurationByEnvironment": func(w *example.World) example.Call {
			storeConfig(w, featureStoresPath)
			return example.Call{Path: featureStoresPath + "/" + w.Project + "/production", Headers: example.BetaHeader}
		},
		"createIntegrationDeliveryConfiguration": func(w *example.World) example.Call {
			return example.Call{Path: featureStoresPath + "/" + w.Project + "/production/redis", Body: storeBody(w.Unique("store")), Headers: example.BetaHeader}
		},
		"getIntegrationDeliveryConfigurationById": func(w *example.World) example.Call {
			return example.Call{Path: storeConfig(w, featureStoresPath), Headers: example.BetaHeader}
		},
		"patchIntegrationDeliveryConfiguration": func(w *example.World) example.Call {
			return example.Call{Path: storeConfig(w, featureStoresPath), Body: []example.Op{example.Replace("/name", "Renamed")}, Headers: example.BetaHeader}
		},
		"deleteIntegrationDeliveryConfiguration": func(w *example.World) example.Call {
			return example.Call{Path: storeConfig(w, featureStoresPath), Headers: example.BetaHeader}
		},
		"validateIntegrationDeliveryConfiguration": func(w *example.World) example.Call {
			return example.Call{Path: storeConfig(w, featureStoresPath) + "/validate", Headers: example.BetaHeader}
		},
	}}
}

func bigSegmentExamples() example.Set {
	return example.Set{
		Calls: map[string]example.Example{"getBigSegmentStoreIntegrations": func(w *example.World) example.Call {
			storeConfig(w, bigSegmentsPath)
			return example.Call{Path: bigSegmentsPath, Headers: example.BetaHeader}
		},
			"createBigSegmentStoreIntegration": func(w *example.World) example.Call {
				return example.Call{Path: bigSegmentsPath + "/" + w.Project + "/production/redis", Body: storeBody(w.Unique("store")), Headers: example.BetaHeader}
			},
			"getBigSegmentStoreIntegration": func(w *example.World) example.Call {
				return example.Call{Path: storeConfig(w, bigSegmentsPath), Headers: example.BetaHeader}
			},
			"patchBigSegmentStoreIntegration": func(w *example.World) example.Call {
				return example.Call{Path: storeConfig(w, bigSegmentsPath), Body: []example.Op{example.Replace("/on", true)}, Headers: example.BetaHeader}
			},
			"deleteBigSegmentStoreIntegration": func(w *example.World) example.Call {
				return example.Call{Path: storeConfig(w, bigSegmentsPath), Headers: example.BetaHeader}
			},
		},
		// 2.20: the status's lastSync and lastError are Unix ms as strings.
		SpecTypes: map[string]map[string]string{"BigSegmentStoreStatus": {"lastSync": "string", "lastError": "string"}},
		Dated:     map[string][]string{"BigSegmentStoreStatus": {"lastSync", "lastError"}},
	}
}
