package store

// Data export counters: written by the destinations' export worker, read by
// the usage rollup (the data-export-events series). Defined apart from both
// so neither group's package depends on the other.

const dataExportHourPrefix = "DXHOUR#"

// DataExportHourKey holds the events one environment's destinations
// exported in one hour (yyyymmddhh, UTC): JSON
// {"hour": "2026112315", "environmentId": "...", "events": 123}, one
// partition per hour, which the rollup reads for the hours it rolls up.
func DataExportHourKey(hour, envID string) Key {
	return Key{PK: dataExportHourPrefix + hour, SK: envID}
}
