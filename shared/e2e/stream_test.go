package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/auditstream"
	"github.com/flagplane/flagplane/shared/lambdaemu"
)

// hookProxy forwards to target; when hook is set, it runs on every request
// after the target answered and before the answer goes back.
type hookProxy struct {
	srv  *httptest.Server
	hook atomic.Pointer[func(r *http.Request, reqBody []byte, status int)]
}

func newHookProxy(target string) (*hookProxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	p := &hookProxy{}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(res *http.Response) error {
		if h := p.hook.Load(); h != nil {
			body, _ := res.Request.Context().Value(bodyKey{}).([]byte)
			(*h)(res.Request, body, res.StatusCode)
		}
		return nil
	}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), bodyKey{}, body)))
	}))
	return p, nil
}

type bodyKey struct{}

// startStream starts the audit-stream function, its SQS calls passing a
// proxy tests can hook, and the table stream's event source mapping
// feeding it, filtered as the stack's is.
func (s *stack) startStream(ctx context.Context) error {
	d, err := s.ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.table)})
	if err != nil {
		return fmt.Errorf("describe table: %w", err)
	}
	arn := aws.ToString(d.Table.LatestStreamArn)
	if arn == "" {
		return fmt.Errorf("table %s has no stream: dynamo.TableInput must enable it", s.table)
	}
	proxy, err := newHookProxy(s.sqsEndpoint)
	if err != nil {
		return err
	}
	s.streamSQS = proxy
	s.onTearDown(func(context.Context) error { proxy.srv.Close(); return nil })
	cfg := s.functionConfig("audit-stream", 1) // Lambda runs one invocation per shard at a time
	cfg.HostEnv["AWS_ENDPOINT_URL_SQS"] = proxy.srv.URL
	fn, err := lambdaemu.New(cfg)
	if err != nil {
		return err
	}
	s.functions["audit-stream"] = fn
	s.onTearDown(func(context.Context) error { return fn.Close() })

	client := dynamodbstreams.NewFromConfig(aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider("flagplane", "flagplane", "")},
		func(o *dynamodbstreams.Options) { o.BaseEndpoint = aws.String(s.dynamoEndpoint) })
	src, err := lambdaemu.StartStreamSource(lambdaemu.StreamSourceConfig{
		Client: client, StreamARN: arn, Function: fn, Filter: auditstream.Match, BatchSize: auditstream.BatchSize, Region: region,
		Logf: func(format string, args ...any) { fmt.Fprintf(s.logs, format+"\n", args...) },
	})
	if err != nil {
		return err
	}
	s.stream = src
	s.onTearDown(func(context.Context) error { src.Close(); return nil })
	return nil
}

// projectHook is a webhook for project creations and its receiver, which
// records the project keys delivered.
type projectHook struct {
	mu  sync.Mutex
	got map[string]int
	srv *httptest.Server
}

func newProjectHook(t *testing.T, s *stack) *projectHook {
	h := &projectHook{got: map[string]int{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		// The entry names the resource "proj/<key>".
		for _, part := range strings.Split(string(body), `"proj/`)[1:] {
			if end := strings.IndexByte(part, '"'); end > 0 {
				h.got[part[:end]]++
			}
		}
	}))
	t.Cleanup(h.srv.Close)
	res := s.do(t, http.MethodPost, "/api/v2/webhooks", map[string]any{"url": h.srv.URL, "sign": false, "on": true,
		"statements": []map[string]any{{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"createProject"}}}})
	if res.Status != http.StatusOK {
		t.Fatalf("create webhook: %d %s", res.Status, res.Body)
	}
	id, _ := res.Map(t)["_id"].(string)
	t.Cleanup(func() { s.do(t, http.MethodDelete, "/api/v2/webhooks/"+id, nil) })
	return h
}

// missing returns the keys not delivered yet.
func (h *projectHook) missing(keys []string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, k := range keys {
		if h.got[k] == 0 {
			out = append(out, k)
		}
	}
	return out
}

// createProjects creates n projects with keys of a new prefix, one after
// another, and returns their keys.
func (s *stack) createProjects(t *testing.T, prefix string, n int) []string {
	t.Helper()
	prefix = uniqueKey(prefix)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s-%02d", prefix, i)
		if res := s.do(t, http.MethodPost, "/api/v2/projects", map[string]any{"key": keys[i], "name": keys[i]}); res.Status != http.StatusCreated {
			t.Fatalf("create project %s: %d %s", keys[i], res.Status, res.Body)
		}
	}
	return keys
}

// awaitDelivered pumps the webhook queue until every key reached h.
func (s *stack) awaitDelivered(t *testing.T, h *projectHook, keys []string, within time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for len(h.missing(keys)) > 0 {
		if ctx.Err() != nil {
			t.Fatalf("not delivered within %s: %v", within, h.missing(keys))
		}
		s.pumpWebhookQueue(t, ctx)
	}
}

// TestAuditStreamConsumerKilledMidBatch kills the audit-stream function
// while it sends a batch of 25 changes to the webhook queue (after its
// first SendMessageBatch call of ten landed, during the second): the
// event source retries the batch from its checkpoint, and every change
// reaches the webhook.
func TestAuditStreamConsumerKilledMidBatch(t *testing.T) {
	s := e2eStack(t)
	h := newProjectHook(t, s)

	// Everything written so far is handed off first, so the paused stream
	// then gathers the 25 changes alone: one batch, three sends of 10, 10, 5.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.stream.Sync(ctx); err != nil {
		t.Fatalf("stream sync: %v", err)
	}
	s.stream.Pause()
	resumed := false
	defer func() {
		if !resumed {
			s.stream.Resume()
		}
	}()
	keys := s.createProjects(t, "killbatch", 25)

	var sends, killed atomic.Int32
	hook := func(r *http.Request, body []byte, status int) {
		// The messages name entry ids only; the stream holds nothing but the 25 changes now.
		if !strings.Contains(r.Header.Get("X-Amz-Target"), "SendMessageBatch") {
			return
		}
		if sends.Add(1) == 2 {
			killed.Add(int32(s.functions["audit-stream"].KillBusy()))
		}
	}
	s.streamSQS.hook.Store(&hook)
	defer s.streamSQS.hook.Store(nil)
	before := s.stream.Stats()
	s.stream.Resume()
	resumed = true

	s.awaitDelivered(t, h, keys, 2*time.Minute)
	after := s.stream.Stats()
	if killed.Load() != 1 {
		t.Errorf("the audit-stream function was killed %d times during its second send, want once", killed.Load())
	}
	if after.Failed <= before.Failed {
		t.Errorf("no invocation failed (%+v then %+v): the kill did not hit a batch", before, after)
	}
	t.Logf("audit stream: %d sends of the batch's messages, invocations %d (failed %d) while the 25 changes were handed off",
		sends.Load(), after.Invocations-before.Invocations, after.Failed-before.Failed)
}

// TestCommitSurvivesAPIKilledAfterCommit SIGKILLs the API function the
// moment DynamoDB answers its commit's transaction, before the function
// sees the answer: the client gets an error, yet the change is there and
// reaches the webhook, since the commit's stream record is the hand-off.
func TestCommitSurvivesAPIKilledAfterCommit(t *testing.T) {
	s := e2eStack(t)
	h := newProjectHook(t, s)
	key := uniqueKey("killapi")

	proxy, err := newHookProxy(s.dynamoEndpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.srv.Close()
	cfg := s.functionConfig("projects", 1)
	cfg.HostEnv["AWS_ENDPOINT_URL_DYNAMODB"] = proxy.srv.URL
	cfg.HostEnv[app.EnvRateLimitGlobal] = "0"
	fn, err := lambdaemu.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer fn.Close()
	var killed atomic.Int32
	var outboxWritten atomic.Bool
	hook := func(r *http.Request, body []byte, status int) {
		if !strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".TransactWriteItems") || !bytes.Contains(body, []byte(key)) {
			return
		}
		if bytes.Contains(body, []byte(`"OUTBOX"`)) {
			outboxWritten.Store(true)
		}
		if status == http.StatusOK {
			killed.Add(int32(fn.KillBusy()))
		}
	}
	proxy.hook.Store(&hook)
	front, err := s.newFront(map[string]*lambdaemu.Function{"projects": fn})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(front)
	defer srv.Close()

	body := fmt.Sprintf(`{"key":%q,"name":%q}`, key, key)
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v2/projects", strings.NewReader(body))
	req.Header.Set("Authorization", s.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if killed.Load() != 1 || res.StatusCode < 500 {
		t.Fatalf("killed %d processes; the client got %d %s, want the function's crash", killed.Load(), res.StatusCode, answer)
	}
	if outboxWritten.Load() {
		t.Error("the commit wrote an outbox record: with the stream it writes none")
	}
	if got := s.do(t, http.MethodGet, "/api/v2/projects/"+key, nil); got.Status != http.StatusOK {
		t.Fatalf("the committed project is not there: %d %s", got.Status, got.Body)
	}
	s.awaitDelivered(t, h, []string{key}, 2*time.Minute)
}

// TestStreamDeadLetterRedrive plays a stream batch that failed every
// retry: with the stream stalled, three changes are made, and the
// dead-letter record Lambda would write for their batch is handed to the
// audit-stream function as its dead-letter queue's mapping would. The
// function reads the span's entries from the (sharded) audit log and sends
// them again, and they reach the webhook though the stream never did.
func TestStreamDeadLetterRedrive(t *testing.T) {
	s := e2eStack(t)
	h := newProjectHook(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.stream.Sync(ctx); err != nil {
		t.Fatalf("stream sync: %v", err)
	}
	s.stream.Pause()
	defer s.stream.Resume()

	first := time.Now()
	keys := s.createProjects(t, "redrive", 3)
	last := time.Now()

	record, _ := json.Marshal(map[string]any{
		"requestContext": map[string]any{"condition": "RetryAttemptsExhausted", "approximateInvokeCount": 101},
		"version":        "1.0",
		"DDBStreamBatchInfo": map[string]any{
			"shardId": "shardId-e2e", "startSequenceNumber": "1", "endSequenceNumber": "3", "batchSize": 3,
			"approximateArrivalOfFirstRecord": first.UTC().Format(time.RFC3339Nano),
			"approximateArrivalOfLastRecord":  last.UTC().Format(time.RFC3339Nano),
		},
	})
	event, _ := json.Marshal(events.SQSEvent{Records: []events.SQSMessage{{MessageId: "dead-letter-1", Body: string(record), EventSource: "aws:sqs"}}})
	out, err := s.functions["audit-stream"].Invoke(ctx, event)
	if err != nil {
		t.Fatalf("invoke audit-stream with the dead letter: %v", err)
	}
	var resp events.SQSEventResponse
	if err := json.Unmarshal(out, &resp); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("answer %s (%v): want no failures", out, err)
	}
	s.awaitDelivered(t, h, keys, time.Minute)
}
