// Package sqsingest carries SDK event payloads on Amazon SQS: the ingest
// handler sends each payload as one message (cut into parts when it is
// larger than a message may be), and the SQS-triggered worker aggregates
// them, reporting failures per message.
package sqsingest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/uuid"

	"github.com/flagplane/flagplane/shared/ingest"
)

// Queue sends payloads to one SQS queue.
type Queue struct {
	client *sqs.Client
	url    string
}

// New returns a queue sending to url.
func New(client *sqs.Client, url string) *Queue { return &Queue{client: client, url: url} }

// Send puts the payload on the queue: one message, or one per part. A
// payload without an id gets one, so that each part is applied in marked
// steps and SQS delivering a message again counts it once.
func (q *Queue) Send(ctx context.Context, p ingest.Payload) error {
	if p.PayloadID == "" {
		p.PayloadID = uuid.NewString()
	}
	parts, err := ingest.Split(p, ingest.MaxMessage)
	if err != nil {
		return err
	}
	for _, part := range parts {
		body, err := json.Marshal(part)
		if err != nil {
			return fmt.Errorf("encode payload: %w", err)
		}
		if _, err := q.client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.url), MessageBody: aws.String(string(body))}); err != nil {
			return fmt.Errorf("send payload to the ingest queue: %w", err)
		}
	}
	return nil
}

// Handler aggregates one batch of messages; a message that failed comes
// back (partial batch response) and, after the queue's receive limit,
// goes to the dead-letter queue. A message that is not a payload is
// dropped: retrying cannot help it.
func Handler(agg *ingest.Aggregator, logger *slog.Logger) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, rec := range ev.Records {
			var p ingest.Payload
			if err := json.Unmarshal([]byte(rec.Body), &p); err != nil || p.EnvID == "" {
				logger.Warn("dropped a message that is not an event payload", "messageId", rec.MessageId)
				continue
			}
			if _, err := agg.Apply(ctx, p); err != nil {
				logger.Error("ingest payload failed", "messageId", rec.MessageId, "environmentId", p.EnvID, "err", err)
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
			}
		}
		return resp, nil
	}
}
