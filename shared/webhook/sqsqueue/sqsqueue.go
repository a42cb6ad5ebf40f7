// Package sqsqueue runs webhook delivery on Amazon SQS: the queue that
// carries fan-out and delivery messages, and the handler of the
// SQS-triggered function, which retries with backoff through message
// visibility and reports failures per message.
package sqsqueue

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/flagplane/flagplane/shared/webhook"
)

// Queue sends webhook messages to one SQS queue.
type Queue struct {
	client *sqs.Client
	url    string
}

// New returns a queue sending to url.
func New(client *sqs.Client, url string) *Queue { return &Queue{client: client, url: url} }

// Send puts m on the queue.
func (q *Queue) Send(ctx context.Context, m webhook.Message) error {
	body, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode webhook message: %w", err)
	}
	if _, err := q.client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.url), MessageBody: aws.String(string(body))}); err != nil {
		return fmt.Errorf("send webhook message: %w", err)
	}
	return nil
}

// Handler handles one batch: each message runs on its own, and only the
// ones that failed come back (partial batch response), after a backoff
// set through their visibility. The queue's redrive policy moves a message
// that failed its last receive to the dead-letter queue.
func (q *Queue) Handler(d *webhook.Dispatcher) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, rec := range ev.Records {
			var m webhook.Message
			if err := json.Unmarshal([]byte(rec.Body), &m); err != nil || m.EntryID == "" {
				continue // a message no delivery can ever come of; retrying cannot help
			}
			attempt, _ := strconv.Atoi(rec.Attributes["ApproximateReceiveCount"])
			attempt = max(attempt, 1)
			if err := d.Handle(ctx, m, attempt); err != nil {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
				q.delay(ctx, rec.ReceiptHandle, attempt)
			}
		}
		return resp, nil
	}
}

// delay makes a failed message visible again after the backoff; if that
// call fails, the queue's own visibility timeout still brings it back.
func (q *Queue) delay(ctx context.Context, receipt string, attempt int) {
	secs := int32(webhook.Backoff(attempt).Seconds())
	_, _ = q.client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl: aws.String(q.url), ReceiptHandle: aws.String(receipt), VisibilityTimeout: secs,
	})
}
