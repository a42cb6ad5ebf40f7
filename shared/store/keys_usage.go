package store

import "fmt"

// Usage statistics (issue 11). Hour cells are written by the ingest
// aggregator; day items and the rollup watermark only by the usage rollup.

const (
	usageCellPrefix = "USAGECELL#"
	usageDayPrefix  = "USAGEDAY#"
	usageRollupPK   = "USAGEROLLUP"
)

// UsageCellKey holds one environment's hour (yyyymmddhh, UTC) for one
// sender: SDK type, name, version and application (cell is a hash of
// them). All environments of an hour share a partition, so the rollup
// reads an hour with one Query.
func UsageCellKey(hour, envID, cell string) Key {
	return Key{PK: UsageCellPartition(hour), SK: envID + "#" + cell}
}

// UsageCellPartition is the partition of every cell of one hour.
func UsageCellPartition(hour string) string { return usageCellPrefix + hour }

// UsageDayKey is one rolled-up day (dd) of one environment's sender cell.
// A month's days sit in one partition (yyyymm), sorted by project and
// environment key, so a project's month-to-date is one Query on the
// prefix UsageDayProjectPrefix.
func UsageDayKey(month, projectKey, envKey, day, cell string) Key {
	return Key{PK: UsageDayPartition(month), SK: UsageDayProjectPrefix(projectKey) + envKey + "#" + day + "#" + cell}
}

// UsageDayPartition is the partition of one month's (yyyymm) rolled-up days.
func UsageDayPartition(month string) string { return usageDayPrefix + month }

// UsageDayProjectPrefix selects one project's days in a month partition.
func UsageDayProjectPrefix(projectKey string) string { return "P#" + projectKey + "#" }

// UsageDayExportKey is one environment's rolled-up day of data export
// counts; the export counters know the environment's id only.
func UsageDayExportKey(month, envID, day string) Key {
	return Key{PK: UsageDayPartition(month), SK: UsageDayExportPrefix + envID + "#" + day}
}

// UsageDayExportPrefix selects the export days of a month partition.
const UsageDayExportPrefix = "X#"

// UsageRollupWatermarkKey holds the last complete hour the rollup rolled up.
func UsageRollupWatermarkKey() Key { return Key{PK: usageRollupPK, SK: "WATERMARK"} }

const usageMonthPrefix = "USAGEMONTH#"

// UsageMonthKey is one rolled-up month (mm) of one environment's sender
// cell; a year's (yyyy) months sit in one partition, sorted like the days.
func UsageMonthKey(year, projectKey, envKey, month, cell string) Key {
	return Key{PK: UsageMonthPartition(year), SK: UsageDayProjectPrefix(projectKey) + envKey + "#" + month + "#" + cell}
}

// UsageMonthPartition is the partition of one year's rolled-up months.
func UsageMonthPartition(year string) string { return usageMonthPrefix + year }

// UsageMonthExportKey is one environment's rolled-up month of data export counts.
func UsageMonthExportKey(year, envID, month string) Key {
	return Key{PK: UsageMonthPartition(year), SK: UsageDayExportPrefix + envID + "#" + month}
}

const usageStreamPrefix = "USAGESTREAM#"

// UsageStreamKey counts the streaming connections one SDK (name and
// version, hashed into sdk) opened to one environment in one hour.
func UsageStreamKey(hour, projectKey, envKey, sdk string) Key {
	return Key{PK: UsageStreamPartition(hour), SK: projectKey + "#" + envKey + "#" + sdk}
}

// UsageStreamPartition is the partition of every stream counter of one hour.
func UsageStreamPartition(hour string) string { return usageStreamPrefix + hour }

// UsageDayStreamKey is one rolled-up day of one SDK's streams to one environment.
func UsageDayStreamKey(month, projectKey, envKey, day, sdk string) Key {
	return Key{PK: UsageDayPartition(month), SK: UsageDayStreamPrefix + projectKey + "#" + envKey + "#" + day + "#" + sdk}
}

// UsageDayStreamPrefix selects the stream days of a month partition.
const UsageDayStreamPrefix = "S#"

// UsageSDKsPartition holds the rollup's hourly snapshot of the SDKs seen in
// the last 24 hours: chunks under "<generation>#<nnnn>" and the pointer
// UsageSDKsCurrentKey naming the generation readers use.
const UsageSDKsPartition = "USAGESDKS"

// UsageSDKsCurrentKey names the snapshot generation in use.
func UsageSDKsCurrentKey() Key { return Key{PK: UsageSDKsPartition, SK: "CURRENT"} }

// UsageSDKsChunkKey is one chunk of a snapshot generation.
func UsageSDKsChunkKey(generation string, n int) Key {
	return Key{PK: UsageSDKsPartition, SK: generation + "#" + fmt.Sprintf("%04d", n)}
}
