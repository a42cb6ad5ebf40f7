package store

import "fmt"

// Scheduled removals of contexts from segments' included or excluded
// targets sit beside flags' (see ExpiringKey) in the project partition,
// under a prefix of their own so the reads of flags' removals (by flag, by
// user) never meet them, and in a GSI1 partition of their own, by due time,
// which the same expiry job reads.
const (
	expiringSegmentSKPrefix = "EXPIRESEG#"
	// ExpiringSegmentIndexPK is the GSI1 partition of segments' scheduled removals, by due time.
	ExpiringSegmentIndexPK = "EXPIRING#SEGMENT"
)

// ExpiringSegmentPrefix selects the scheduled removals of one segment of one environment.
func ExpiringSegmentPrefix(envKey, segmentKey string) string {
	return expiringSegmentSKPrefix + envKey + "#" + segmentKey + "#"
}

// ExpiringSegmentKey is the scheduled removal of one context from a
// segment's included or excluded targets (targetType).
func ExpiringSegmentKey(projectKey, envKey, segmentKey, targetType, kind, contextKey string) Key {
	return Key{PK: ProjectPartition(projectKey), SK: ExpiringSegmentPrefix(envKey, segmentKey) + targetType + "#" + kind + "#" + contextKey}
}

// ExpiringSegmentIndexKeys place a segment's scheduled removal in the
// due-time index; ExpiringDueTo bounds it as it bounds flags'.
func ExpiringSegmentIndexKeys(dueMs int64, projectKey, envKey, segmentKey, targetType, kind, contextKey string) (gsi1pk, gsi1sk string) {
	return ExpiringSegmentIndexPK, fmt.Sprintf("%013d#%s#%s#%s#%s#%s#%s", dueMs, projectKey, envKey, segmentKey, targetType, kind, contextKey)
}
