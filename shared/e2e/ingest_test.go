package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/flagplane/flagplane/infra"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/lambdaemu"
)

// ingestPayload is a server SDK's flush: 10 new contexts (index events),
// custom events, and the summary of 20 flags; 400 events in all.
func ingestPayload(seq int) string {
	now := time.Now().UnixMilli()
	var parts []string
	for i := 0; i < 10; i++ {
		parts = append(parts, fmt.Sprintf(`{"kind":"index","creationDate":%d,"context":{"kind":"user","key":"e2e-%d-%d","plan":"p%d"}}`, now, seq, i, i%3))
	}
	for len(parts) < 399 {
		parts = append(parts, fmt.Sprintf(`{"kind":"custom","creationDate":%d,"key":"click","contextKeys":{"user":"e2e-%d-%d"}}`, now, seq, len(parts)%10))
	}
	var flags []string
	for f := 0; f < 20; f++ {
		flags = append(flags, fmt.Sprintf(`"flag-%d":{"counters":[{"variation":0,"version":1,"value":false,"count":40}]}`, f))
	}
	parts = append(parts, fmt.Sprintf(`{"kind":"summary","startDate":%d,"endDate":%d,"features":{%s}}`, now-5000, now, strings.Join(flags, ",")))
	return "[" + strings.Join(parts, ",") + "]"
}

// TestIngestThroughSQS runs SDK event ingestion as AWS does: the events
// function (its real bootstrap) resolves the SDK key and queues each
// payload on an SQS queue (goaws), the events-ingest worker is invoked
// with batches as Lambda's event source would, and the contexts read back
// through the API. Every DynamoDB call passes the capacity proxy and every
// SQS call is counted, which gives the cost of a million events at the
// list prices of cost_test.go.
func TestIngestThroughSQS(t *testing.T) {
	s := e2eStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	q, err := s.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(s.table + "-ingest")})
	if err != nil {
		t.Fatalf("create the ingest queue: %v", err)
	}
	queueURL := aws.ToString(q.QueueUrl)
	defer s.sqs.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: q.QueueUrl})

	proxy := &capacityProxy{calls: map[string]int{}}
	ddb, sqsFront := proxy.dynamo(t, s.dynamoEndpoint), proxy.sqs(t, s.sqsEndpoint)
	start := func(name string) *lambdaemu.Function {
		cfg := s.functionConfig(name, 1)
		spec, _ := infra.SpecOf(name)
		cfg.Env = spec.Env(infra.Resources{TableName: s.table, IngestQueueURL: queueURL, AuditShards: e2eAuditShards})
		cfg.HostEnv = map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": ddb.URL, "AWS_ENDPOINT_URL_SQS": sqsFront.URL,
			app.EnvRateLimitGlobal: "0", app.EnvRateLimitRoute: "0"}
		fn, err := lambdaemu.New(cfg)
		if err != nil {
			t.Fatalf("function %s: %v", name, err)
		}
		t.Cleanup(func() { fn.Close() })
		return fn
	}
	eventsFn, worker := start(infra.IngestGroup), start("events-ingest")
	front, err := s.newFront(map[string]*lambdaemu.Function{infra.IngestGroup: eventsFn})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(front)
	defer srv.Close()

	p := uniqueKey("ingest")
	if res := s.do(t, http.MethodPost, api+"/projects", map[string]any{"key": p, "name": "Ingest"}); res.Status != http.StatusCreated {
		t.Fatalf("create project: %d %s", res.Status, res.Body)
	}
	var env struct {
		APIKey string `json:"apiKey"`
	}
	s.do(t, http.MethodGet, envPath(p, "production"), nil).JSON(t, &env)

	post := func(seq int) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/bulk", strings.NewReader(ingestPayload(seq)))
		req.Header.Set("Authorization", env.APIKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "GoClient/7.14.6")
		req.Header.Set("X-LaunchDarkly-Payload-ID", fmt.Sprintf("%s-%d", p, seq))
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusAccepted {
			t.Fatalf("post payload %d: %d", seq, res.StatusCode)
		}
	}
	// pump does what Lambda's event source does, counting its SQS calls.
	pumpCalls := 0
	pump := func() int {
		out, err := s.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		pumpCalls++
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		if len(out.Messages) == 0 {
			return 0
		}
		var ev events.SQSEvent
		for _, m := range out.Messages {
			ev.Records = append(ev.Records, events.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body), EventSource: "aws:sqs"})
		}
		payload, _ := json.Marshal(ev)
		raw, err := worker.Invoke(ctx, payload)
		if err != nil {
			t.Fatalf("invoke events-ingest: %v", err)
		}
		var resp events.SQSEventResponse
		if err := json.Unmarshal(raw, &resp); err != nil || len(resp.BatchItemFailures) > 0 {
			t.Fatalf("batch response %s (%v)", raw, err)
		}
		for _, m := range out.Messages {
			if _, err := s.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(queueURL), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			pumpCalls++ // Lambda deletes in batches of up to 10; counting one per message overstates it
		}
		return len(out.Messages)
	}

	post(0) // warm both functions and the SDK's path
	for pump() > 0 {
	}
	eventsFn.ResetStats()
	worker.ResetStats()
	proxy.reset()
	pumpCalls = 0

	const payloads = 20
	for i := 1; i <= payloads; i++ {
		post(i)
	}
	post(payloads) // a retry: counted once
	// goaws may answer a receive with nothing while a message is still on
	// its way to being visible, so an empty receive alone does not end the
	// pumping: keep on until every payload is in, then once more to see
	// that nothing extra follows.
	handled := 0
	for deadline := time.Now().Add(30 * time.Second); handled < payloads+1 && time.Now().Before(deadline); {
		handled += pump()
	}
	handled += pump()
	if handled != payloads+1 {
		t.Errorf("%d messages handled, want %d (one per payload)", handled, payloads+1)
	}

	res := s.do(t, http.MethodPost, envPath(p, "production")+"/contexts/search?limit=1", nil)
	var found struct {
		TotalCount int `json:"totalCount"`
	}
	res.JSON(t, &found)
	if found.TotalCount != 10*(payloads+1) {
		t.Errorf("totalCount %d, want %d contexts (the retry adds none)", found.TotalCount, 10*(payloads+1))
	}

	billedMs := 0.0
	for _, fn := range []*lambdaemu.Function{eventsFn, worker} {
		for _, d := range fn.Stats().Warm {
			billedMs += math.Ceil(float64(d.Microseconds()) / 1000)
		}
	}
	proxy.mu.Lock()
	rru, wru, sqsCalls, calls := proxy.readUnits, proxy.wrUnits, proxy.calls["SQS"]+pumpCalls, fmt.Sprint(proxy.calls)
	proxy.mu.Unlock()
	events := float64((payloads + 1) * 400)
	perM := 1e6 / events
	invocations := float64(len(eventsFn.Stats().Warm) + len(worker.Stats().Warm))
	gbs := billedMs / 1000 * float64(infra.FunctionMemoryMB) / 1024
	lambda := (invocations*priceLambdaPerM/1e6 + gbs*priceLambdaGBs) * perM
	dynamo := (rru*priceReadUnitPerM + wru*priceWriteUnitPerM) / 1e6 * perM
	sqsCost := float64(sqsCalls) * priceSQSPerM / 1e6 * perM
	apigw := float64(payloads+1) * priceAPIGatewayPerM / 1e6 * perM
	total := apigw + lambda + dynamo + sqsCost
	t.Logf("per payload of 400 events: %.1f read units, %.1f write units, %.1f SQS calls, %.0f billed Lambda ms; calls %s",
		rru/(payloads+1), wru/(payloads+1), float64(sqsCalls)/(payloads+1), billedMs/(payloads+1), calls)
	t.Logf("per million events: API Gateway $%.4f, Lambda $%.4f, DynamoDB $%.4f, SQS $%.4f: $%.3f in all", apigw, lambda, dynamo, sqsCost, total)
	if total >= 0.50 {
		t.Errorf("a million events cost $%.3f, over the $0.50 target", total)
	}
}
