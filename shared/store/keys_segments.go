package store

import "strings"

// Segments live in their project's partition, one item each, sorted by
// environment then key, so one Query reads an environment's segments (the
// SDK payload) and never a flag.

const (
	segmentSKPrefix    = "SEGMENT#"
	segmentRefSKPrefix = "SEGREF#"
)

// SegmentEnvPrefix selects every segment of one environment in
// ProjectPartition(projectKey).
func SegmentEnvPrefix(envKey string) string { return segmentSKPrefix + envKey + "#" }

// SegmentKey is one segment of one environment.
func SegmentKey(projectKey, envKey, segmentKey string) Key {
	return Key{PK: ProjectPartition(projectKey), SK: SegmentEnvPrefix(envKey) + segmentKey}
}

// SegmentRefKey is a segment's reference marker: a flag change that starts
// using the segment bumps it, and a delete of the segment checks it has not
// moved since the delete looked for flags using the segment.
func SegmentRefKey(projectKey, envKey, segmentKey string) Key {
	return Key{PK: ProjectPartition(projectKey), SK: segmentRefSKPrefix + envKey + "#" + segmentKey}
}

// IsSegmentRef reports whether sk is a segment reference marker's sort key:
// markers outlive their segments, environments and projects, so that the
// generations of a big segment made again count on.
func IsSegmentRef(sk string) bool { return strings.HasPrefix(sk, segmentRefSKPrefix) }
