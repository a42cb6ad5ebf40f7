package e2e_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/flagplane/flagplane/infra"
)

// TestWebhookQueue checks the queues the functions are pointed at. A test
// of webhook delivery joins here once the webhooks exist.
func TestWebhookQueue(t *testing.T) {
	s := e2eStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	t.Run("the functions get the webhook queue's URL", func(t *testing.T) {
		env := s.functionConfig("projects", 1).Env
		if env[infra.EnvWebhookQueueURL] != s.queueURL || !strings.HasPrefix(s.queueURL, "http://127.0.0.1:") {
			t.Errorf("%s=%q, want the queue %q on 127.0.0.1", infra.EnvWebhookQueueURL, env[infra.EnvWebhookQueueURL], s.queueURL)
		}
	})

	t.Run("the webhook queue redrives to the dead-letter queue", func(t *testing.T) {
		dlq, err := s.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
			QueueUrl: aws.String(s.dlqURL), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
		})
		if err != nil {
			t.Fatalf("dead-letter queue attributes: %v", err)
		}
		q, err := s.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
			QueueUrl: aws.String(s.queueURL), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll},
		})
		if err != nil {
			t.Fatalf("queue attributes: %v", err)
		}
		if arn := dlq.Attributes["QueueArn"]; arn == "" || !strings.Contains(q.Attributes["RedrivePolicy"], arn) {
			t.Errorf("redrive policy %q does not name the dead-letter queue %q", q.Attributes["RedrivePolicy"], arn)
		}
	})

	t.Run("a message sent to the webhook queue is received", func(t *testing.T) {
		body := "e2e-" + uniqueKey("probe")
		if _, err := s.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(s.queueURL), MessageBody: aws.String(body)}); err != nil {
			t.Fatalf("send: %v", err)
		}
		out, err := s.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(s.queueURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 5})
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		found := false
		for _, m := range out.Messages {
			if aws.ToString(m.Body) == body {
				found = true
			}
			if _, err := s.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(s.queueURL), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Errorf("delete message: %v", err)
			}
		}
		if !found {
			t.Errorf("the message sent was not received (got %d messages)", len(out.Messages))
		}
	})
}
