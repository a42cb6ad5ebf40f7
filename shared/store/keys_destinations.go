package store

// Warehouse destinations (shared/destination) and the data export spool
// that SDK events pass through on their way to the stage (written by
// shared/ingest, drained by the destinations' export job).

const (
	destinationSKPrefix      = "DEST#"
	destinationSetupSKPrefix = "DESTSETUP#"
	destinationsIndexPK      = "DESTINATIONS"
	destinationKeyPairPrefix = "DESTKEY#"
	// DataExportEnvsPK is the partition of the environments whose events
	// are spooled for export: one item each, sort key the environment _id.
	DataExportEnvsPK    = "DXENVS"
	dataExportSpoolPK   = "DXSPOOL#"
	dataExportSeenPK    = "DXSEEN#"
	dataExportBatchSK   = "BATCH"
	dataExportSeenSK    = "DXSEEN"
	destinationKeyPairS = "DESTKEY"
	// DataExportSpoolPrefix starts the sort key of every spooled part of
	// an environment's spool partition; the open batch sorts before them.
	DataExportSpoolPrefix = "P#"
)

// DestinationEnvPrefix selects one environment's destinations in its project's partition.
func DestinationEnvPrefix(envKey string) string { return destinationSKPrefix + envKey + "#" }

// DestinationKey is one warehouse destination of an environment, in its
// project's partition (deleting the project deletes it).
func DestinationKey(projectKey, envKey, id string) Key {
	return Key{PK: ProjectPartition(projectKey), SK: DestinationEnvPrefix(envKey) + id}
}

// DestinationIndexKeys place a destination in the account-wide list.
func DestinationIndexKeys(projectKey, envKey, id string) (gsi1pk, gsi1sk string) {
	return destinationsIndexPK, projectKey + "#" + envKey + "#" + id
}

// DestinationsIndexPK is the GSI1 partition listing every destination.
const DestinationsIndexPK = destinationsIndexPK

// DestinationSetupKey is the pending setup of one kind of warehouse in one
// environment: what the setup script was generated with, until complete-setup.
func DestinationSetupKey(projectKey, envKey, kind string) Key {
	return Key{PK: ProjectPartition(projectKey), SK: destinationSetupSKPrefix + envKey + "#" + kind}
}

// DestinationKeyPairKey is one generated key pair, by the SHA-256 of its
// public key (DER); the private key is stored encrypted.
func DestinationKeyPairKey(fingerprint string) Key {
	return Key{PK: destinationKeyPairPrefix + fingerprint, SK: destinationKeyPairS}
}

// DataExportEnvKey marks an environment whose events are exported: its
// active destinations, which the ingest tap reads before spooling.
func DataExportEnvKey(envID string) Key { return Key{PK: DataExportEnvsPK, SK: envID} }

// DataExportSpoolPartition holds an environment's spooled events and its open batch.
func DataExportSpoolPartition(envID string) string { return dataExportSpoolPK + envID }

// DataExportSpoolKey is one spooled part of one payload's events (NDJSON).
func DataExportSpoolKey(envID, part string) Key {
	return Key{PK: DataExportSpoolPartition(envID), SK: DataExportSpoolPrefix + part}
}

// DataExportBatchKey is an environment's open batch: the spooled parts
// being written to the stage, fixed before the write so a rerun writes
// the same object.
func DataExportBatchKey(envID string) Key {
	return Key{PK: DataExportSpoolPartition(envID), SK: dataExportBatchSK}
}

// DataExportSeenKey remembers (with a ttl) that a payload part was
// spooled, so a payload delivered again after its export is not exported twice.
func DataExportSeenKey(envID, part string) Key {
	return Key{PK: dataExportSeenPK + envID + "#" + part, SK: dataExportSeenSK}
}
