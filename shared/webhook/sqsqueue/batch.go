package sqsqueue

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/flagplane/flagplane/shared/webhook"
)

// SendBatch puts msgs (at most 10, SQS's limit) on the queue in one
// SendMessageBatch call and returns the indexes of those SQS did not take.
func (q *Queue) SendBatch(ctx context.Context, msgs []webhook.Message) ([]int, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	if len(msgs) > 10 {
		return nil, fmt.Errorf("send %d webhook messages: SQS takes at most 10 per batch", len(msgs))
	}
	entries := make([]types.SendMessageBatchRequestEntry, len(msgs))
	for i, m := range msgs {
		body, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("encode webhook message: %w", err)
		}
		entries[i] = types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(string(body))}
	}
	out, err := q.client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(q.url), Entries: entries})
	if err != nil {
		return nil, fmt.Errorf("send webhook messages: %w", err)
	}
	var failed []int
	for _, f := range out.Failed {
		i, err := strconv.Atoi(aws.ToString(f.Id))
		if err != nil || i < 0 || i >= len(msgs) {
			return nil, fmt.Errorf("send webhook messages: SQS names an unknown entry %q", aws.ToString(f.Id))
		}
		failed = append(failed, i)
	}
	return failed, nil
}
