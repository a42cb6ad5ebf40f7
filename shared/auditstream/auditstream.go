// Package auditstream hands committed changes to the webhook queue from the
// table's DynamoDB stream, in AWS: every new audit entry is an INSERT of a
// key whose partition begins with "AUDIT" (any shard of the log), and its
// sort key is the entry id, whose first 12 hex digits are its millisecond.
// The stream is the outbox: a commit writes no outbox record, deletes none
// and sends nothing; the audit-stream function, fed by Lambda's event
// source mapping (filtered to those records, batches of up to 100), sends
// one webhook message per entry to the queue in SendMessageBatch calls of
// up to 10. webhook-delivery and every consumer read the queue as before.
package auditstream

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/changefeed"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/webhook"
)

// MaxSendBatch is SQS's limit of entries per SendMessageBatch call.
const MaxSendBatch = 10

// BatchSize is the event source mapping's batch: up to 100 stream records
// per invocation (ten SendMessageBatch calls).
const BatchSize = 100

// InsertEvent is the stream's event name of a new item.
const InsertEvent = "INSERT"

// Filter is the event source mapping's filter, as Lambda's filter
// grammar: INSERTs whose partition key begins with the audit log's
// partition. Resource writes, updates and expiries never invoke the
// function (and are not billed as invocations).
func Filter() string {
	f := map[string]any{
		"eventName": []string{InsertEvent},
		"dynamodb": map[string]any{
			"Keys": map[string]any{
				store.AttrPK: map[string]any{"S": []any{map[string]string{"prefix": store.AuditPK}}},
			},
		},
	}
	b, _ := json.Marshal(f)
	return string(b)
}

// Match is Filter in Go: the end-to-end tier's event source applies it,
// and the handler skips what it would not have let through.
func Match(r events.DynamoDBEventRecord) bool {
	if r.EventName != InsertEvent {
		return false
	}
	pk, ok := r.Change.Keys[store.AttrPK]
	return ok && pk.DataType() == events.DataTypeString && strings.HasPrefix(pk.String(), store.AuditPK)
}

// Outbox is the record the entry of r stands for: its id is the sort key,
// its date the id's leading millisecond.
func Outbox(r events.DynamoDBEventRecord) (audit.Outbox, error) {
	sk, ok := r.Change.Keys[store.AttrSK]
	if !ok || sk.DataType() != events.DataTypeString {
		return audit.Outbox{}, fmt.Errorf("stream record %s: no string sort key", r.Change.SequenceNumber)
	}
	id := sk.String()
	at, ok := changefeed.IDTime(id)
	if !ok {
		return audit.Outbox{}, fmt.Errorf("stream record %s: %q is not an audit entry id", r.Change.SequenceNumber, id)
	}
	return audit.Outbox{EntryID: id, Date: at.UnixMilli()}, nil
}

// Sender sends messages to the webhook queue in one SendMessageBatch call
// (at most MaxSendBatch). It returns the indexes of the messages SQS did
// not take; an error means none can be counted as sent.
type Sender interface {
	SendBatch(ctx context.Context, msgs []webhook.Message) (failed []int, err error)
}

// pending is one message and the stream record it came from.
type pending struct {
	msg webhook.Message
	seq string
}

// Batches cuts msgs into SendMessageBatch calls of at most size each, in order.
func Batches[T any](msgs []T, size int) [][]T {
	var out [][]T
	for len(msgs) > size {
		out = append(out, msgs[:size:size])
		msgs = msgs[size:]
	}
	if len(msgs) > 0 {
		out = append(out, msgs)
	}
	return out
}

// Handler is the audit-stream function: it sends one message per matching
// record and reports the records whose message was not taken as batch
// item failures (by sequence number). Lambda then retries the batch from
// the first of them (bisecting on errors when asked), so a record is never
// skipped: at worst a message is sent twice, and deliveries carry ids
// receivers drop duplicates by. A record that is no audit entry id at all
// is logged and skipped, since no retry could change it.
func Handler(q Sender, logf func(format string, args ...any)) func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		var resp events.DynamoDBEventResponse
		var todo []pending
		for _, r := range ev.Records {
			if !Match(r) {
				continue
			}
			rec, err := Outbox(r)
			if err != nil {
				logf("audit-stream: skipped: %v", err)
				continue
			}
			todo = append(todo, pending{msg: webhook.Message{EntryID: rec.EntryID}, seq: r.Change.SequenceNumber})
		}
		for _, batch := range Batches(todo, MaxSendBatch) {
			msgs := make([]webhook.Message, len(batch))
			for i, p := range batch {
				msgs[i] = p.msg
			}
			failed, err := q.SendBatch(ctx, msgs)
			if err != nil {
				logf("audit-stream: send %d messages: %v", len(msgs), err)
				failed = failed[:0]
				for i := range batch {
					failed = append(failed, i)
				}
			}
			for _, i := range failed {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: batch[i].seq})
			}
		}
		return resp, nil
	}
}
