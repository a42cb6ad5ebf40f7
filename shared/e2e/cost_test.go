package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flagplane/flagplane/infra"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/lambdaemu"
)

// AWS list prices (us-east-1, on-demand, arm64) the cost figures use. They
// are inputs, not measurements: update them here when AWS changes them.
const (
	priceAPIGatewayPerM = 1.00         // HTTP API, per million requests (first 300 million a month)
	priceLambdaPerM     = 0.20         // per million invocations
	priceLambdaGBs      = 0.0000133334 // per GB-second, arm64
	priceReadUnitPerM   = 0.125        // DynamoDB on-demand, per million read request units
	priceWriteUnitPerM  = 0.625        // DynamoDB on-demand, per million write request units
	priceSQSPerM        = 0.40         // standard queue, per million requests
)

// capacityProxy sits between the functions and DynamoDB Local: it asks for
// the consumed capacity of every call (ReturnConsumedCapacity TOTAL, which
// changes nothing else) and adds up the units DynamoDB reports, reads and
// writes apart, and it counts the calls to SQS.
type capacityProxy struct {
	mu                 sync.Mutex
	readUnits, wrUnits float64
	calls              map[string]int
}

var readOps = map[string]bool{"GetItem": true, "Query": true, "Scan": true, "BatchGetItem": true, "TransactGetItems": true}

// transactionalOps are billed twice the units of the same reads and writes
// outside a transaction (DynamoDB's pricing). DynamoDB Local reports the
// plain units (TestDynamoDBLocalReportsTransactionsUnbilled in
// shared/store/dynamo holds it to that), so the proxy doubles them.
var transactionalOps = map[string]bool{"TransactWriteItems": true, "TransactGetItems": true}

func (p *capacityProxy) reset() {
	p.mu.Lock()
	p.readUnits, p.wrUnits, p.calls = 0, 0, map[string]int{}
	p.mu.Unlock()
}

func (p *capacityProxy) dynamo(tb testing.TB, target string) *httptest.Server {
	tb.Helper()
	u, err := url.Parse(target)
	if err != nil {
		tb.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(res *http.Response) error {
		op := strings.TrimPrefix(res.Request.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			return err
		}
		res.Body = io.NopCloser(bytes.NewReader(body)) // unchanged: the SDK checks its CRC32
		var out struct {
			ConsumedCapacity json.RawMessage
		}
		_ = json.Unmarshal(body, &out)
		units := 0.0
		var one struct{ CapacityUnits float64 }
		var many []struct{ CapacityUnits float64 }
		if json.Unmarshal(out.ConsumedCapacity, &one) == nil {
			units = one.CapacityUnits
		} else if json.Unmarshal(out.ConsumedCapacity, &many) == nil {
			for _, c := range many {
				units += c.CapacityUnits
			}
		}
		if transactionalOps[op] {
			units *= 2
		}
		p.mu.Lock()
		p.calls[op]++
		if readOps[op] {
			p.readUnits += units
		} else {
			p.wrUnits += units
		}
		p.mu.Unlock()
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var doc map[string]json.RawMessage
		if json.Unmarshal(body, &doc) == nil && doc["ReturnConsumedCapacity"] == nil && r.Header.Get("X-Amz-Target") != "" {
			doc["ReturnConsumedCapacity"] = json.RawMessage(`"TOTAL"`)
			body, _ = json.Marshal(doc)
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		r.Header.Del("Content-Length")
		rp.ServeHTTP(w, r)
	}))
	tb.Cleanup(srv.Close)
	return srv
}

func (p *capacityProxy) sqs(tb testing.TB, target string) *httptest.Server {
	tb.Helper()
	u, err := url.Parse(target)
	if err != nil {
		tb.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.calls["SQS"]++
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// mixStep is one request of the typical mix.
type mixStep struct {
	method, path string
	body         any
}

// BenchmarkTypicalMixCost runs a typical mix of API requests (per ten: four
// reads of one resource, three lists, three patches) through the front
// against warm functions whose DynamoDB calls pass the capacity proxy, and
// reports what a million such requests cost on AWS at the prices above:
// API Gateway, Lambda (the harness's measured invoke time per request,
// billed by the started millisecond, at the stack's memory size), DynamoDB
// (the capacity units it reported) and SQS (the change hand-offs). Also:
// the peak memory of the functions' processes.
//
//	make bench-e2e
func BenchmarkTypicalMixCost(b *testing.B) {
	s := e2eStack(b)
	proxy := &capacityProxy{calls: map[string]int{}}
	ddb, sqsFront := proxy.dynamo(b, s.dynamoEndpoint), proxy.sqs(b, s.sqsEndpoint)
	groups := []string{"projects", "environments", "flags"}
	fns := map[string]*lambdaemu.Function{}
	for _, g := range groups {
		cfg := s.functionConfig(g, 2)
		cfg.HostEnv = map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": ddb.URL, "AWS_ENDPOINT_URL_SQS": sqsFront.URL,
			// The run sends thousands of requests in seconds; limits would only cut it short.
			app.EnvRateLimitGlobal: "0", app.EnvRateLimitRoute: "0"}
		fn, err := lambdaemu.New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		fns[g] = fn
	}
	defer func() {
		for _, fn := range fns {
			fn.Close()
		}
	}()
	front, err := s.newFront(fns)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(front)
	defer srv.Close()

	do := func(st mixStep) {
		var body io.Reader
		if st.body != nil {
			raw, _ := json.Marshal(st.body)
			body = bytes.NewReader(raw)
		}
		req, _ := http.NewRequest(st.method, srv.URL+st.path, body)
		req.Header.Set("Authorization", s.token)
		req.Header.Set("Content-Type", "application/json")
		res, err := srv.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode >= 300 {
			b.Fatalf("%s %s: %d", st.method, st.path, res.StatusCode)
		}
	}
	p := uniqueKey("cost")
	do(mixStep{"POST", api + "/projects", map[string]any{"key": p, "name": "Cost"}})
	for i := range 20 {
		do(mixStep{"POST", api + "/flags/" + p, map[string]any{"key": fmt.Sprintf("flag-%02d", i), "name": fmt.Sprintf("Flag %d", i)}})
	}
	on := false
	mix := func() []mixStep {
		on = !on
		return []mixStep{
			{"GET", envPath(p, "production"), nil},
			{"GET", api + "/flags/" + p + "/flag-01", nil},
			{"GET", api + "/projects/" + p, nil},
			{"GET", api + "/flags/" + p + "/flag-02", nil},
			{"GET", api + "/flags/" + p + "?limit=20", nil},
			{"GET", envsPath(p), nil},
			{"GET", api + "/flags/" + p + "?limit=20&filter=query:flag-1", nil},
			{"PATCH", api + "/flags/" + p + "/flag-03", []map[string]any{{"op": "replace", "path": "/environments/production/on", "value": on}}},
			{"PATCH", api + "/flags/" + p + "/flag-04", []map[string]any{{"op": "replace", "path": "/description", "value": fmt.Sprintf("on %v", on)}}},
			{"PATCH", envPath(p, "test"), []map[string]any{{"op": "replace", "path": "/name", "value": fmt.Sprintf("Test %v", on)}}},
		}
	}
	for _, st := range mix() { // warm every function and path
		do(st)
	}
	for _, fn := range fns {
		fn.ResetStats()
	}
	// The table's stream hands the changes to the queue: the audit-stream
	// function's invocations, run time and SendMessageBatch calls are part
	// of the cost (Lambda's reads of the stream are free).
	streamCtx, cancelStream := context.WithTimeout(context.Background(), time.Minute)
	defer cancelStream()
	if err := s.stream.Sync(streamCtx); err != nil {
		b.Fatal(err)
	}
	var streamSends atomic.Int64
	countSends := func(r *http.Request, _ []byte, _ int) {
		if strings.Contains(r.Header.Get("X-Amz-Target"), "SendMessage") {
			streamSends.Add(1)
		}
	}
	s.streamSQS.hook.Store(&countSends)
	defer s.streamSQS.hook.Store(nil)
	s.stream.ResetStats()
	s.functions["audit-stream"].ResetStats()
	proxy.reset()
	requests := 0
	b.ResetTimer()
	for b.Loop() {
		for _, st := range mix() {
			do(st)
			requests++
		}
	}
	b.StopTimer()
	if err := s.stream.Sync(streamCtx); err != nil {
		b.Fatal(err)
	}
	stream := s.stream.Stats()
	streamMs := 0.0
	for _, d := range s.functions["audit-stream"].Stats().Warm {
		streamMs += math.Ceil(float64(d.Microseconds()) / 1000)
	}

	billedMs := 0.0
	var invokes []time.Duration
	for _, fn := range fns {
		for _, d := range fn.Stats().Warm {
			billedMs += math.Ceil(float64(d.Microseconds()) / 1000)
			invokes = append(invokes, d)
		}
	}
	for _, fn := range fns {
		fn.Close()
	}
	peak := int64(0)
	for _, fn := range fns {
		peak = max(peak, fn.Stats().PeakRSS)
	}
	proxy.mu.Lock()
	rru, wru, sqsCalls := proxy.readUnits, proxy.wrUnits, proxy.calls["SQS"]
	calls := fmt.Sprint(proxy.calls)
	proxy.mu.Unlock()

	perM := 1e6 / float64(requests)
	gbs := billedMs / 1000 * float64(infra.FunctionMemoryMB) / 1024
	streamGBs := streamMs / 1000 * float64(infra.FunctionMemoryMB) / 1024
	lambda := priceLambdaPerM + gbs*priceLambdaGBs*perM +
		float64(stream.Invocations)*perM/1e6*priceLambdaPerM + streamGBs*priceLambdaGBs*perM
	sqsCalls += int(streamSends.Load())
	dynamo := rru*perM/1e6*priceReadUnitPerM + wru*perM/1e6*priceWriteUnitPerM
	sqs := float64(sqsCalls) * perM / 1e6 * priceSQSPerM
	total := priceAPIGatewayPerM + lambda + dynamo + sqs
	b.ReportMetric(billedMs/float64(requests), "billed-ms/req")
	b.ReportMetric(float64(quantile(invokes, 0.5).Microseconds())/1000, "invoke-p50-ms")
	b.ReportMetric(rru/float64(requests), "rru/req")
	b.ReportMetric(wru/float64(requests), "wru/req")
	b.ReportMetric(lambda, "lambda-$/M")
	b.ReportMetric(dynamo, "dynamodb-$/M")
	b.ReportMetric(sqs, "sqs-$/M")
	b.ReportMetric(total, "total-$/M")
	b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
	b.ReportMetric(float64(stream.Records)/math.Max(float64(stream.Invocations), 1), "stream-records/invoke")
	b.Logf("%d requests: billed %.0f ms, %.1f read and %.1f write units, %d SQS calls, calls %s; audit stream: %d records in %d invocations, billed %.0f ms, %d sends; per million: API Gateway $%.2f, Lambda $%.2f, DynamoDB $%.2f, SQS $%.2f, total $%.2f; peak RSS %.1f MiB",
		requests, billedMs, rru, wru, sqsCalls, calls, stream.Records, stream.Invocations, streamMs, streamSends.Load(), priceAPIGatewayPerM, lambda, dynamo, sqs, total, float64(peak)/(1<<20))
}
