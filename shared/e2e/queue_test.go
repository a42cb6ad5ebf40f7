package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/flagplane/flagplane/infra"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/webhook"
)

// TestWebhookQueue checks the queues the functions are pointed at.
func TestWebhookQueue(t *testing.T) {
	s := e2eStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	t.Run("the audit stream's function gets the webhook queue's URL", func(t *testing.T) {
		env := s.functionConfig("audit-stream", 1).Env
		if env[infra.EnvWebhookQueueURL] != s.queueURL || !strings.HasPrefix(s.queueURL, "http://127.0.0.1:") {
			t.Errorf("%s=%q, want the queue %q on 127.0.0.1", infra.EnvWebhookQueueURL, env[infra.EnvWebhookQueueURL], s.queueURL)
		}
	})
	t.Run("API functions get no queue: the table's stream carries their changes", func(t *testing.T) {
		env := s.functionConfig("projects", 1).Env
		if env[infra.EnvWebhookQueueURL] != "" || env[app.EnvAuditStream] != "true" {
			t.Errorf("%s=%q, %s=%q", infra.EnvWebhookQueueURL, env[infra.EnvWebhookQueueURL], app.EnvAuditStream, env[app.EnvAuditStream])
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
		// Changes made by earlier tests are queued too: read until the probe
		// comes up, leaving the others (they are only made invisible a while).
		found, seen := false, 0
		for i := 0; i < 20 && !found; i++ {
			out, err := s.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(s.queueURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
			if err != nil {
				t.Fatalf("receive: %v", err)
			}
			seen += len(out.Messages)
			for _, m := range out.Messages {
				if aws.ToString(m.Body) != body {
					continue
				}
				found = true
				if _, err := s.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(s.queueURL), ReceiptHandle: m.ReceiptHandle}); err != nil {
					t.Errorf("delete message: %v", err)
				}
			}
		}
		if !found {
			t.Errorf("the message sent was not received among %d messages", seen)
		}
	})
}

// TestWebhookDeliveryThroughSQS runs the AWS path: an API function commits
// a change, the table's stream hands it to the audit-stream function,
// which sends it to the SQS queue (goaws); the real webhook-delivery
// bootstrap, fed batches as Lambda's event source would (receive, invoke,
// delete what did not fail), fans it out and delivers it, signed.
func TestWebhookDeliveryThroughSQS(t *testing.T) {
	s := e2eStack(t)
	var mu sync.Mutex
	var got [][]byte
	var sigs []string
	tries := map[string]int{}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		id := r.Header.Get(webhook.DeliveryHeader)
		if tries[id]++; tries[id] == 1 {
			w.WriteHeader(http.StatusBadGateway) // the first attempt of each delivery fails
			return
		}
		got, sigs = append(got, body), append(sigs, r.Header.Get(webhook.SignatureHeader))
	}))
	defer receiver.Close()

	res := s.do(t, http.MethodPost, "/api/v2/webhooks", map[string]any{"url": receiver.URL, "sign": true, "on": true,
		"statements": []map[string]any{{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"createProject"}}}})
	if res.Status != http.StatusOK {
		t.Fatalf("create webhook: %d %s", res.Status, res.Body)
	}
	secret, _ := res.Map(t)["secret"].(string)
	key := fmt.Sprintf("sqs-%d", time.Now().UnixNano())
	if res := s.do(t, http.MethodPost, "/api/v2/projects", map[string]any{"key": key, "name": "SQS"}); res.Status != http.StatusCreated {
		t.Fatalf("create project: %d %s", res.Status, res.Body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	delivered := func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, b := range got {
			if strings.Contains(string(b), `"proj/`+key+`"`) {
				return true
			}
		}
		return false
	}
	for !delivered() {
		if ctx.Err() != nil {
			t.Fatal("the change was not delivered within 60 s")
		}
		s.pumpWebhookQueue(t, ctx)
	}
	t.Run("the delivery is signed with the webhook's secret", func(t *testing.T) {
		mu.Lock()
		defer mu.Unlock()
		for i, b := range got {
			if sigs[i] != webhook.Sign(b, secret) {
				t.Fatalf("signature %q does not verify", sigs[i])
			}
		}
	})
	t.Run("the failed first attempt was retried with the same delivery id", func(t *testing.T) {
		mu.Lock()
		defer mu.Unlock()
		for id, n := range tries {
			if n < 2 {
				t.Fatalf("delivery %s tried %d times", id, n)
			}
		}
	})
}

// pumpWebhookQueue does once what Lambda's SQS event source does: receive
// a batch, invoke the delivery function with it, delete what did not fail.
// Failed messages come back when their visibility (the function's backoff) ends.
func (s *stack) pumpWebhookQueue(tb testing.TB, ctx context.Context) {
	tb.Helper()
	out, err := s.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(s.queueURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
	})
	if err != nil {
		tb.Fatalf("receive: %v", err)
	}
	if len(out.Messages) == 0 {
		return
	}
	var ev events.SQSEvent
	for _, m := range out.Messages {
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body),
			Attributes: m.Attributes, EventSource: "aws:sqs",
		})
	}
	payload, _ := json.Marshal(ev)
	raw, err := s.functions["webhook-delivery"].Invoke(ctx, payload)
	if err != nil {
		tb.Fatalf("invoke webhook-delivery: %v", err)
	}
	var resp events.SQSEventResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		tb.Fatalf("batch response %s: %v", raw, err)
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	for _, m := range out.Messages {
		if !failed[aws.ToString(m.MessageId)] {
			if _, err := s.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(s.queueURL), ReceiptHandle: m.ReceiptHandle}); err != nil {
				tb.Fatalf("delete: %v", err)
			}
		}
	}
}
