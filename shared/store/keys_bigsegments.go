package store

import (
	"fmt"
	"hash/fnv"
)

// Big segments keep their members apart from the segment item, one item
// per context key and list (included, excluded), in partitions of their
// own per segment generation: a segment deleted and created again starts
// a new generation and so never shows the old members. A generation's
// members are spread over BigSegmentShards partitions by a hash of the
// context key, so that writing a million of them is not throttled by one
// DynamoDB partition's write limit, and a read of one key is one Get.
//
// Staged batches (the keys of an import, of a targets update too large
// for one transaction) are items of a partition per batch, each holding
// a slice of the keys: the import worker and the big segment store sync
// read them chunk by chunk, and expire with the batch.

const (
	bigSegmentMemberPrefix = "BIGSEGM#"
	bigSegmentBatchPrefix  = "BIGSEGBATCH#"
	bigSegmentJobPrefix    = "BIGSEGJOB#"
	bigSegmentJobsIndex    = "BIGSEGJOBS"
	bigSegmentSyncPrefix   = "BIGSEGSYNC#"
	// BigSegmentShards is how many partitions hold one generation's members.
	BigSegmentShards = 16
)

// The lists of a big segment a member item belongs to.
const (
	BigSegmentIncluded = "i"
	BigSegmentExcluded = "e"
)

// BigSegmentPartition is the shard partition of one generation of a big
// segment (0 <= shard < BigSegmentShards).
func BigSegmentPartition(projectKey, envKey, segmentKey string, generation, shard int) string {
	return fmt.Sprintf("%s%s#%s#%s#%d#%02d", bigSegmentMemberPrefix, projectKey, envKey, segmentKey, generation, shard)
}

// BigSegmentMemberKey is the item that says contextKey is on list (one of
// BigSegmentIncluded and BigSegmentExcluded) of a big segment generation.
func BigSegmentMemberKey(projectKey, envKey, segmentKey string, generation int, list, contextKey string) Key {
	h := fnv.New32a()
	h.Write([]byte(contextKey))
	shard := int(h.Sum32() % BigSegmentShards)
	return Key{PK: BigSegmentPartition(projectKey, envKey, segmentKey, generation, shard), SK: BigSegmentListPrefix(list) + contextKey}
}

// BigSegmentListPrefix selects one list's items in a shard partition.
func BigSegmentListPrefix(list string) string { return list + "#" }

// BigSegmentBatchPartition holds the chunks of one staged batch.
func BigSegmentBatchPartition(batchID string) string { return bigSegmentBatchPrefix + batchID }

// BigSegmentBatchChunkKey is chunk n of a staged batch, in order.
func BigSegmentBatchChunkKey(batchID string, n int) Key {
	return Key{PK: BigSegmentBatchPartition(batchID), SK: fmt.Sprintf("%08d", n)}
}

// BigSegmentJobKey is an import or export record (kind "import" or
// "export") of a segment, in its project's partition.
func BigSegmentJobKey(projectKey, envKey, segmentKey, kind, id string) Key {
	return Key{PK: ProjectPartition(projectKey), SK: bigSegmentJobPrefix + envKey + "#" + segmentKey + "#" + kind + "#" + id}
}

// BigSegmentJobPrefix selects a segment's jobs of one kind.
func BigSegmentJobPrefix(envKey, segmentKey, kind string) string {
	return bigSegmentJobPrefix + envKey + "#" + segmentKey + "#" + kind + "#"
}

// BigSegmentJobsIndexPK is the GSI1 partition of unfinished jobs of every
// project, which the worker reads to take up a job a crash left behind;
// a finished job leaves the index.
const BigSegmentJobsIndexPK = bigSegmentJobsIndex

// BigSegmentSyncKey records how far a big segment store integration has
// written a staged batch, so a sync cut short resumes there.
func BigSegmentSyncKey(configID, batchID string) Key {
	return Key{PK: bigSegmentSyncPrefix + configID, SK: batchID}
}

// BigSegmentSyncsIndexPK is the GSI1 partition of the unfinished batch
// syncs of every store integration, which the refresh worker carries on;
// a finished sync leaves it.
const BigSegmentSyncsIndexPK = "BIGSEGSYNCS"
