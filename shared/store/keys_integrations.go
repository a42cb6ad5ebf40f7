package store

import "fmt"

// Integration configurations (shared/integration): one item per
// configuration, listed through GSI1 in one partition by integration key
// then creation order (the event hooks' consumer reads them all with one
// Query per audit entry), and the markers of event-hook deliveries made.
const (
	integrationConfigPrefix  = "INTCFG#"
	integrationConfigSK      = "INTCFG"
	integrationDeliveredPfx  = "INTHOOK#"
	integrationDeliveredMark = "DELIVERED#"
	// IntegrationConfigsIndexPK is the GSI1 partition of every configuration.
	IntegrationConfigsIndexPK = "INTCFGS"
)

// IntegrationConfigKey is one integration configuration, by id.
func IntegrationConfigKey(id string) Key {
	return Key{PK: integrationConfigPrefix + id, SK: integrationConfigSK}
}

// IntegrationConfigIndexSK places a configuration in
// IntegrationConfigsIndexPK, ordered by integration key, creation time, id.
func IntegrationConfigIndexSK(integrationKey string, createdAt int64, id string) string {
	return IntegrationConfigsIndexPrefix(integrationKey) + fmt.Sprintf("%013d#%s", createdAt, id)
}

// IntegrationConfigsIndexPrefix selects one integration key's
// configurations in IntegrationConfigsIndexPK.
func IntegrationConfigsIndexPrefix(integrationKey string) string { return integrationKey + "#" }

// IntegrationDeliveredKey marks that audit entry entryID was delivered to
// configuration configID, so a retried message does not send it again.
func IntegrationDeliveredKey(entryID, configID string) Key {
	return Key{PK: integrationDeliveredPfx + entryID, SK: integrationDeliveredMark + configID}
}
