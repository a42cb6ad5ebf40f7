package store

import "fmt"

// Integration configurations (shared/integration): one item per
// configuration, listed per integration key through GSI1 in creation
// order, and the markers of event-hook deliveries already made.
const (
	integrationConfigPrefix  = "INTCFG#"
	integrationConfigSK      = "INTCFG"
	integrationConfigsIndex  = "INTCFGS#"
	integrationDeliveredPfx  = "INTHOOK#"
	integrationDeliveredMark = "DELIVERED#"
)

// IntegrationConfigKey is one integration configuration, by id.
func IntegrationConfigKey(id string) Key {
	return Key{PK: integrationConfigPrefix + id, SK: integrationConfigSK}
}

// IntegrationConfigIndexKeys place a configuration in the list of its
// integration key, ordered by creation time then id.
func IntegrationConfigIndexKeys(integrationKey string, createdAt int64, id string) (gsi1pk, gsi1sk string) {
	return IntegrationConfigsIndexPK(integrationKey), fmt.Sprintf("%013d#%s", createdAt, id)
}

// IntegrationConfigsIndexPK is the GSI1 partition listing the
// configurations of one integration key.
func IntegrationConfigsIndexPK(integrationKey string) string {
	return integrationConfigsIndex + integrationKey
}

// IntegrationDeliveredKey marks that audit entry entryID was delivered to
// configuration configID, so a retried message does not send it again.
func IntegrationDeliveredKey(entryID, configID string) Key {
	return Key{PK: integrationDeliveredPfx + entryID, SK: integrationDeliveredMark + configID}
}
