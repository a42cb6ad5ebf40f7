package store

// Feature store configurations: the delivery configurations (featureStore)
// and big segment store integrations of shared/featurestore, one item each,
// listed through IndexGSI1; their sync status and sync lease live apart so
// that a sync never bumps, nor races with, the configuration's version.

const (
	featureStorePrefix       = "FSTORE#"
	featureStoreStatusPrefix = "FSTORESTATUS#"
	featureStoreLeasePrefix  = "FSTORELEASE#"
	// FeatureStoresIndexPK is the IndexGSI1 partition of every configuration.
	FeatureStoresIndexPK = "FSTORES"
)

// FeatureStoreKey holds one configuration (JSON featurestore.Config).
func FeatureStoreKey(id string) Key { return Key{PK: featureStorePrefix + id, SK: "CONFIG"} }

// FeatureStoreIndexSK sorts a configuration in FeatureStoresIndexPK by
// capability, then environment, so one environment's are one prefix.
func FeatureStoreIndexSK(capability, projectKey, envKey, id string) string {
	return FeatureStoreIndexPrefix(capability, projectKey, envKey) + id
}

// FeatureStoreIndexPrefix selects a capability's configurations, or one
// project's when projectKey is set, one environment's when envKey is too.
func FeatureStoreIndexPrefix(capability, projectKey, envKey string) string {
	switch {
	case projectKey == "":
		return capability + "#"
	case envKey == "":
		return capability + "#" + projectKey + "#"
	}
	return capability + "#" + projectKey + "#" + envKey + "#"
}

// FeatureStoreStatusKey holds a configuration's last sync and errors.
func FeatureStoreStatusKey(id string) Key {
	return Key{PK: featureStoreStatusPrefix + id, SK: "STATUS"}
}

// FeatureStoreLeaseKey is held (with a TTL) while a sync of the
// configuration runs, so two syncs never interleave their writes.
func FeatureStoreLeaseKey(id string) Key { return Key{PK: featureStoreLeasePrefix + id, SK: "LEASE"} }
