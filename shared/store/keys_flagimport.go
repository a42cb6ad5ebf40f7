package store

// Flag import configurations live in their project's partition, so a
// project delete takes them along. A configuration's run state (status,
// lease, errors) is a second item beside it: runs write it without moving
// the configuration's version, so a patch never loses to a running import.
// Both are in one GSI1 partition, config then run, for the account-wide list.

const (
	flagImportPrefix  = "FLAGIMPORT#"
	flagImportRunSufx = "#RUN"
	flagImportsIndex  = "FLAGIMPORTS"
)

// FlagImportKey is one flag import configuration, by project, source
// system (integration key) and id.
func FlagImportKey(projectKey, integrationKey, id string) Key {
	return Key{PK: ProjectPartition(projectKey), SK: flagImportPrefix + integrationKey + "#" + id}
}

// FlagImportRunKey is the run state of one configuration. Its sort key
// extends the configuration's, so one Query with FlagImportKey's SK as
// prefix reads both.
func FlagImportRunKey(projectKey, integrationKey, id string) Key {
	return Key{PK: ProjectPartition(projectKey), SK: flagImportPrefix + integrationKey + "#" + id + flagImportRunSufx}
}

// IsFlagImportRun tells a run item from a configuration item.
func IsFlagImportRun(sk string) bool {
	return len(sk) > len(flagImportRunSufx) && sk[len(sk)-len(flagImportRunSufx):] == flagImportRunSufx
}

// FlagImportIndexKeys place a configuration (run false) or its run state
// in the account-wide list, ordered by project, integration key and id.
func FlagImportIndexKeys(projectKey, integrationKey, id string, run bool) (gsi1pk, gsi1sk string) {
	sk := projectKey + "#" + integrationKey + "#" + id
	if run {
		sk += flagImportRunSufx
	}
	return flagImportsIndex, sk
}

// FlagImportsIndexPK is the GSI1 partition listing every configuration of the account.
const FlagImportsIndexPK = flagImportsIndex
