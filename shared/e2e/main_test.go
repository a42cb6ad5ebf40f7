package e2e_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/flagplane/flagplane/infra"
	"github.com/flagplane/flagplane/shared/account"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/lambdaemu"
	"github.com/flagplane/flagplane/shared/store/dynamo"
)

// Environment variables of the tier.
const (
	envGate       = "FLAGPLANE_E2E"
	envDynamo     = "FLAGPLANE_DYNAMODB_ENDPOINT"
	envSQS        = "FLAGPLANE_SQS_ENDPOINT"
	envBootstraps = "FLAGPLANE_E2E_BOOTSTRAPS"
)

// Where the emulated deployment lives, and how many execution environments
// each function may run at once (the stack leaves concurrency unreserved;
// four is plenty for the tests and keeps the process count low).
const (
	region       = "us-east-1"
	accountID    = "000000000000"
	maxInstances = 4
)

// stack is everything one run of the tier starts.
type stack struct {
	dynamoEndpoint, sqsEndpoint, bootstraps string

	table            string
	queueURL, dlqURL string
	token            string
	accountID        string

	ddb *dynamodb.Client
	sqs *sqs.Client

	functions map[string]*lambdaemu.Function
	// stream plays the event source mapping of the table's stream to the
	// audit-stream function, which hands changes to the webhook queue.
	stream *lambdaemu.StreamSource
	// streamSQS is the audit-stream function's way to SQS, which tests hook.
	streamSQS *hookProxy
	server    *httptest.Server
	logs      *logSink

	cleanups []func(context.Context) error // run last first
}

// running is the run's stack; nil when the tier is off.
var running *stack

// e2eAuditShards spreads the tier's audit log over four partitions, so
// every list, search, feed and webhook of the tier reads a sharded log the
// way a deployment with flagplane:auditShards does (the default, one, is
// what every other tier runs).
const e2eAuditShards = 4

func TestMain(m *testing.M) {
	if os.Getenv(envGate) != "1" {
		os.Exit(m.Run()) // every test skips
	}
	s := &stack{logs: &logSink{}}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	err := s.setUp(ctx)
	cancel()
	code := 1
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: set-up failed: %v\n", err)
	} else {
		running = s
		code = m.Run()
	}
	ctx, cancel = context.WithTimeout(context.Background(), 2*time.Minute)
	if err := s.tearDown(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: tear-down: %v\n", err)
		code = max(code, 1)
	}
	cancel()
	os.Exit(code)
}

// e2eStack returns the running stack, skipping when the tier is off, and
// sends the functions' output to tb's log while tb runs.
func e2eStack(tb testing.TB) *stack {
	tb.Helper()
	if os.Getenv(envGate) != "1" {
		tb.Skipf("the end-to-end tier is off; run `make test-e2e` (it sets %s=1)", envGate)
	}
	if running == nil {
		tb.Fatal("the end-to-end stack is not running")
	}
	running.logs.attach(tb)
	return running
}

// setUp creates the table and queues, the admin token, one function per
// catalog group and the front. What it made is undone by tearDown, also
// when it fails half way.
func (s *stack) setUp(ctx context.Context) error {
	var err error
	if s.dynamoEndpoint, err = loopbackURL(envDynamo); err != nil {
		return err
	}
	if s.sqsEndpoint, err = loopbackURL(envSQS); err != nil {
		return err
	}
	if s.bootstraps = os.Getenv(envBootstraps); s.bootstraps == "" {
		return fmt.Errorf("%s is not set: name the directory of <group>/bootstrap (make build-e2e)", envBootstraps)
	}
	for _, g := range catalog.Groups() {
		if _, err := os.Stat(s.bootstrap(g)); err != nil {
			return fmt.Errorf("bootstrap of group %s: %w (make build-e2e)", g, err)
		}
	}

	cfg := aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider("flagplane", "flagplane", "")}
	s.ddb = dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(s.dynamoEndpoint) })
	s.sqs = sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(s.sqsEndpoint) })

	var b [4]byte
	_, _ = rand.Read(b[:])
	s.table = fmt.Sprintf("flagplane-e2e-%s-%s", time.Now().UTC().Format("20060102T150405"), hex.EncodeToString(b[:]))
	if err := dynamo.CreateTable(ctx, s.ddb, s.table); err != nil {
		return fmt.Errorf("table: %w", err)
	}
	s.onTearDown(func(ctx context.Context) error { return dynamo.DeleteTable(ctx, s.ddb, s.table) })

	if err := s.createQueues(ctx); err != nil {
		return err
	}

	table, err := dynamo.New(s.ddb, s.table, dynamo.Options{})
	if err != nil {
		return fmt.Errorf("open table: %w", err)
	}
	acct, token, err := account.Bootstrap(ctx, table, audit.Discard{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return fmt.Errorf("bootstrap the account: %w", err)
	}
	if token == "" {
		return fmt.Errorf("table %s already had an account: no admin token", s.table)
	}
	s.token, s.accountID = token, acct.ID

	s.functions = map[string]*lambdaemu.Function{}
	// The API groups and the webhook delivery worker, which the tests feed
	// from the queue as Lambda's SQS event source would; startStream adds
	// the audit stream's function, fed from the table's stream.
	for _, g := range append(catalog.Groups(), "webhook-delivery") {
		fn, err := lambdaemu.New(s.functionConfig(g, maxInstances))
		if err != nil {
			return err
		}
		s.functions[g] = fn
		s.onTearDown(func(context.Context) error { return fn.Close() })
	}
	if err := s.startStream(ctx); err != nil {
		return err
	}
	front, err := s.newFront(s.functions)
	if err != nil {
		return err
	}
	s.server = httptest.NewServer(front) // on 127.0.0.1
	s.onTearDown(func(context.Context) error { s.server.Close(); return nil })
	return nil
}

// functionConfig is group's function as the stack deploys it, pointed at
// the emulators.
func (s *stack) functionConfig(group string, instances int) lambdaemu.Config {
	// The group's spec is what the stack deploys from: same environment, same timeout.
	spec, ok := infra.SpecOf(group)
	if !ok {
		panic(fmt.Sprintf("no function spec for group %q", group))
	}
	return lambdaemu.Config{
		Name:      "flagplane-" + group,
		Bootstrap: s.bootstrap(group),
		// The stack generates the destinations' key-sealing secret; the harness makes one up.
		Env: spec.Env(infra.Resources{TableName: s.table, WebhookQueueURL: s.queueURL, DestinationKeySecret: "e2e-destination-key-secret-0123456789abcdef", AuditStream: true,
			AuditShards: e2eAuditShards}),
		HostEnv: map[string]string{
			"AWS_ENDPOINT_URL_DYNAMODB": s.dynamoEndpoint,
			"AWS_ENDPOINT_URL_SQS":      s.sqsEndpoint,
			// The tests' webhook receivers listen on loopback, which AWS deployments refuse.
			app.EnvAllowPrivateWebhooks: "true",
		},
		Credentials:  lambdaemu.Credentials{AccessKeyID: "flagplane", SecretAccessKey: "flagplane"},
		Region:       region,
		AccountID:    accountID,
		MemoryMB:     infra.FunctionMemoryMB,
		Timeout:      spec.Timeout,
		MaxInstances: instances,
		Output:       s.logs,
	}
}

// newFront routes every catalog operation whose group is in fns to it.
func (s *stack) newFront(fns map[string]*lambdaemu.Function) (*lambdaemu.Front, error) {
	invokers := map[string]lambdaemu.Invoker{}
	for g, fn := range fns {
		invokers[g] = fn
	}
	var routes []lambdaemu.Route
	for _, op := range catalog.All() {
		if _, ok := fns[op.Group]; ok {
			// The gateway's route key (the console's "GET /"), not the ServeMux pattern.
			routes = append(routes, lambdaemu.Route{Key: op.Method + " " + op.Path, Function: op.Group})
		}
	}
	return lambdaemu.NewFront(lambdaemu.FrontConfig{
		Routes: routes, Functions: invokers, AccountID: accountID, APIID: "flagplane-e2e",
		Logf: func(format string, args ...any) { fmt.Fprintf(s.logs, format+"\n", args...) },
	})
}

func (s *stack) bootstrap(group string) string {
	return filepath.Join(s.bootstraps, group, "bootstrap")
}

// createQueues makes the webhook queue with its dead-letter queue, as the stack does.
func (s *stack) createQueues(ctx context.Context) error {
	dlq, err := s.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(s.table + "-webhooks-dlq")})
	if err != nil {
		return fmt.Errorf("create the dead-letter queue: %w", err)
	}
	s.dlqURL = aws.ToString(dlq.QueueUrl)
	s.onTearDown(func(ctx context.Context) error { return s.deleteQueue(ctx, s.dlqURL) })
	attrs, err := s.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: dlq.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
	})
	if err != nil {
		return fmt.Errorf("dead-letter queue ARN: %w", err)
	}
	redrive, err := json.Marshal(map[string]string{
		"deadLetterTargetArn": attrs.Attributes["QueueArn"],
		"maxReceiveCount":     strconv.Itoa(infra.DefaultDeadLetterMaxReceives),
	})
	if err != nil {
		return err
	}
	q, err := s.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{
		QueueName: aws.String(s.table + "-webhooks"),
		Attributes: map[string]string{
			"RedrivePolicy":     string(redrive),
			"VisibilityTimeout": strconv.Itoa(int(infra.WebhookQueueVisibility.Seconds())),
		},
	})
	if err != nil {
		return fmt.Errorf("create the webhook queue: %w", err)
	}
	s.queueURL = aws.ToString(q.QueueUrl)
	s.onTearDown(func(ctx context.Context) error { return s.deleteQueue(ctx, s.queueURL) })
	return nil
}

func (s *stack) deleteQueue(ctx context.Context, u string) error {
	if _, err := s.sqs.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(u)}); err != nil {
		return fmt.Errorf("delete queue %s: %w", u, err)
	}
	return nil
}

// onTearDown registers an undo step for tearDown.
func (s *stack) onTearDown(f func(context.Context) error) { s.cleanups = append(s.cleanups, f) }

// tearDown stops every server and process and removes the table and
// queues, last made first, and reports every failure.
func (s *stack) tearDown(ctx context.Context) error {
	var errs []error
	for i := len(s.cleanups) - 1; i >= 0; i-- {
		if err := s.cleanups[i](ctx); err != nil {
			errs = append(errs, err)
		}
	}
	s.cleanups = nil
	return errors.Join(errs...)
}

// loopbackURL reads an endpoint that must be on the loopback interface.
func loopbackURL(name string) (string, error) {
	raw := os.Getenv(name)
	if raw == "" {
		return "", fmt.Errorf("%s is not set", name)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return "", fmt.Errorf("%s=%q is not an http://host:port URL", name, raw)
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		return "", fmt.Errorf("%s=%q: the tier talks to the emulators on 127.0.0.1 only", name, raw)
	}
	return strings.TrimRight(raw, "/"), nil
}

// logSink takes the functions' output and writes it to the log of the test
// that runs, or to stderr between tests.
type logSink struct {
	mu sync.Mutex
	tb testing.TB
}

// attach sends the output to tb's log until tb ends.
func (l *logSink) attach(tb testing.TB) {
	l.mu.Lock()
	prev := l.tb
	l.tb = tb
	l.mu.Unlock()
	tb.Cleanup(func() {
		l.mu.Lock()
		l.tb = prev
		l.mu.Unlock()
	})
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tb != nil {
		l.tb.Log(strings.TrimRight(string(p), "\n"))
		return len(p), nil
	}
	return os.Stderr.Write(p)
}

// do sends a request through the front and reads the whole answer. body is
// nil (none), a string or []byte (as is) or any other value (as JSON).
// headers are name, value pairs replacing the defaults (Authorization: the
// admin token); an empty value removes the header.
func (s *stack) do(tb testing.TB, method, path string, body any, headers ...string) *apptest.Response {
	tb.Helper()
	if len(headers)%2 != 0 {
		tb.Fatalf("%s %s: headers must be name, value pairs", method, path)
	}
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			tb.Fatalf("%s %s: encode body: %v", method, path, err)
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, s.server.URL+path, r)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", s.token)
	replaced := map[string]bool{}
	for i := 0; i < len(headers); i += 2 {
		name := http.CanonicalHeaderKey(headers[i])
		if !replaced[name] {
			req.Header.Del(name)
			replaced[name] = true
		}
		if headers[i+1] != "" {
			req.Header.Add(name, headers[i+1])
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := s.server.Client().Do(req.WithContext(ctx))
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatalf("%s %s: read body: %v", method, path, err)
	}
	// A function's answer (it carries the request id) is checked against the
	// OpenAPI document; API Gateway's own answers ({"message": ...}) are not the API's.
	if res.Header.Get("X-Request-Id") != "" {
		apptest.CheckAnswer(tb, req, res.StatusCode, data)
	}
	return &apptest.Response{Status: res.StatusCode, Header: res.Header, Body: data}
}
