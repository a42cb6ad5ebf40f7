package auditstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/flagplane/flagplane/shared/webhook"
)

// When the function fails a batch of the stream every retry (the webhook
// queue refusing messages for longer than the retries last), Lambda moves
// on and puts a record of the batch in the stream's dead-letter queue: its
// shard, sequence numbers and the times its first and last records
// reached the stream, not the records. The records are keys only and the
// entries are still in the audit log, so the same function, fed by that
// queue too, sends again every entry made in that time (with slack around
// it): no webhook or consumer misses a change, and entries sent twice are
// delivered under the ids receivers drop duplicates by. While the queue is
// still down the redrive fails and SQS offers the record again after its
// visibility timeout, for as long as the queue keeps messages (14 days).

// RedriveSlack widens a failed batch's time range on each side: the
// arrival times are approximate, and an entry's id carries the clock of the
// function that committed it.
const RedriveSlack = time.Minute

// FailedBatch is the record Lambda writes to the on-failure destination of
// a stream's event source mapping.
type FailedBatch struct {
	RequestContext struct {
		Condition string `json:"condition"`
	} `json:"requestContext"`
	Batch struct {
		ShardID   string    `json:"shardId"`
		StartSeq  string    `json:"startSequenceNumber"`
		EndSeq    string    `json:"endSequenceNumber"`
		First     time.Time `json:"approximateArrivalOfFirstRecord"`
		Last      time.Time `json:"approximateArrivalOfLastRecord"`
		BatchSize int       `json:"batchSize"`
	} `json:"DDBStreamBatchInfo"`
}

// ParseFailedBatch reads a dead-letter message; it refuses one that names
// no time range of the stream.
func ParseFailedBatch(body string) (FailedBatch, error) {
	var b FailedBatch
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		return FailedBatch{}, fmt.Errorf("not a failed stream batch: %w", err)
	}
	if b.Batch.First.IsZero() || b.Batch.Last.IsZero() || b.Batch.Last.Before(b.Batch.First) {
		return FailedBatch{}, errors.New("not a failed stream batch: no arrival times of its first and last records")
	}
	return b, nil
}

// Window is the time range whose entries a redrive of b sends again.
func (b FailedBatch) Window() (from, to time.Time) {
	return b.Batch.First.Add(-RedriveSlack), b.Batch.Last.Add(RedriveSlack)
}

// Entries visits the ids of the audit entries made from..to, inclusive
// (changefeed.AuditLog reads every shard of the log).
type Entries interface {
	Between(ctx context.Context, from, to time.Time, visit func(id string)) error
}

// Redrive sends one webhook message for every entry made in b's window,
// in id order, and returns how many it sent. An error means the redrive
// must run again: some messages may have gone, and will go twice.
func Redrive(ctx context.Context, log Entries, q Sender, b FailedBatch) (int, error) {
	from, to := b.Window()
	var ids []string
	if err := log.Between(ctx, from, to, func(id string) { ids = append(ids, id) }); err != nil {
		return 0, fmt.Errorf("redrive shard %s from %s: %w", b.Batch.ShardID, b.Batch.StartSeq, err)
	}
	slices.Sort(ids)
	for _, batch := range Batches(ids, MaxSendBatch) {
		msgs := make([]webhook.Message, len(batch))
		for i, id := range batch {
			msgs[i] = webhook.Message{EntryID: id}
		}
		failed, err := q.SendBatch(ctx, msgs)
		if err == nil && len(failed) > 0 {
			err = fmt.Errorf("the queue refused %d of %d messages", len(failed), len(msgs))
		}
		if err != nil {
			return 0, fmt.Errorf("redrive shard %s from %s: %w", b.Batch.ShardID, b.Batch.StartSeq, err)
		}
	}
	return len(ids), nil
}

// RedriveHandler is the function's handler for messages of the stream's
// dead-letter queue: each is redriven, and those that fail are reported as
// batch item failures, so SQS offers them again later. A message that is
// no failed batch is logged and dropped: no retry could change it.
func RedriveHandler(log Entries, q Sender, logf func(format string, args ...any)) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, m := range ev.Records {
			b, err := ParseFailedBatch(m.Body)
			if err != nil {
				logf("audit-stream: dropped dead-letter message %s: %v", m.MessageId, err)
				continue
			}
			n, err := Redrive(ctx, log, q, b)
			if err != nil {
				logf("audit-stream: %v", err)
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
				continue
			}
			from, to := b.Window()
			logf("audit-stream: redrove %d entries of %s to %s (shard %s, sequence %s to %s, %s)",
				n, from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339), b.Batch.ShardID, b.Batch.StartSeq, b.Batch.EndSeq, b.RequestContext.Condition)
		}
		return resp, nil
	}
}

// sourceOf is the part of an event Serve reads to tell the two sources apart.
type sourceOf struct {
	EventSource string `json:"eventSource"`
}

// Serve is the function's one handler: records of the table's stream go to
// stream, messages of its dead-letter queue to redrive.
func Serve(
	stream func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error),
	redrive func(context.Context, events.SQSEvent) (events.SQSEventResponse, error),
) func(context.Context, json.RawMessage) (any, error) {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		var peek struct {
			Records []sourceOf `json:"Records"`
		}
		if err := json.Unmarshal(raw, &peek); err != nil {
			return nil, fmt.Errorf("audit-stream: not an event: %w", err)
		}
		if len(peek.Records) > 0 && peek.Records[0].EventSource == "aws:sqs" {
			var ev events.SQSEvent
			if err := json.Unmarshal(raw, &ev); err != nil {
				return nil, fmt.Errorf("audit-stream: dead-letter event: %w", err)
			}
			return redrive(ctx, ev)
		}
		var ev events.DynamoDBEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("audit-stream: stream event: %w", err)
		}
		return stream(ctx, ev)
	}
}
