package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sqsEvents "github.com/aws/aws-lambda-go/events"

	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/ingest/sqsingest"
	"github.com/flagplane/flagplane/shared/sdkcontext"
	"github.com/flagplane/flagplane/shared/store"
)

// TestIngestOnDynamoDB runs SDK event ingestion on DynamoDB as the Lambda
// paths do (item by item): a payload reads back as contexts and counters,
// a retried payload counts once, and no call is a Scan.
func TestIngestOnDynamoDB(t *testing.T) {
	api := newDynamoAPI(t, app.Settings{Approvals: true})
	api.directIngest()
	api.serve(t, "")
	table, counter, adminToken, do := api.Table, api.Counter, api.Token, api.do
	do(t, http.MethodPost, "/api/v2/projects", adminToken, `{"key":"dyn","name":"Dyn"}`, http.StatusCreated)
	var env struct {
		APIKey string `json:"apiKey"`
	}
	_ = json.Unmarshal(do(t, http.MethodGet, "/api/v2/projects/dyn/environments/production", adminToken, "", http.StatusOK), &env)
	now := time.Now().UnixMilli()
	payload := fmt.Sprintf(`[{"kind":"index","creationDate":%d,"context":{"kind":"multi","user":{"key":"u1","plan":"gold"},"org":{"key":"acme"}}},`+
		`{"kind":"summary","startDate":%d,"endDate":%d,"features":{"f":{"counters":[{"variation":1,"version":1,"value":true,"count":3}]}}}]`, now, now, now)
	tags := []string{"X-LaunchDarkly-Payload-ID", "dyn-1", "X-LaunchDarkly-Tags", "application-id/dyn-app application-version/3"}

	counter.Reset()
	do(t, http.MethodPost, "/bulk", env.APIKey, payload, http.StatusAccepted, tags...)
	if n := counter.Counts()["Scan"]; n != 0 {
		t.Errorf("ingestion made %d Scans", n)
	}
	counter.Reset()
	do(t, http.MethodPost, "/bulk", env.APIKey, payload, http.StatusAccepted, tags...) // a retry
	if n := counter.Counts()["TransactWriteItems"] + counter.Counts()["PutItem"] + counter.Counts()["Scan"]; n != 0 {
		t.Errorf("a retried payload made %d writes or scans; want it found a duplicate by its mark", n)
	}
	body := string(do(t, http.MethodGet, "/api/v2/projects/dyn/environments/production/contexts/org/acme", adminToken, "", http.StatusOK))
	if !strings.Contains(body, `"associatedContexts":2`) || !strings.Contains(body, `"totalCount":1`) {
		t.Errorf("want the multi-kind context once: %s", body)
	}
	it, err := table.Get(t.Context(), store.FlagEvalKey("dyn", "production", "f", time.UnixMilli(now).UTC().Format("2006010215")))
	if err != nil {
		t.Fatal(err)
	}
	var evals ingest.FlagEvals
	if err := json.Unmarshal(it.Data, &evals); err != nil || evals.Counts["1"] != 3 {
		t.Errorf("counters %v (%v), want 3 evaluations of variation 1, counted once", evals.Counts, err)
	}
	apps := string(do(t, http.MethodGet, "/api/v2/applications/dyn-app/versions", adminToken, "", http.StatusOK, "LD-API-Version", "beta"))
	if !strings.Contains(apps, `"key":"3"`) {
		t.Errorf("want the application's version: %s", apps)
	}
}

// failingPart is DynamoDB failing one write, once: the first that
// reaches the evaluation counters of the second part of a payload (the
// first part counts 3 flags), before or after it lands, as a timeout
// leaves it. It knows nothing of how the aggregator orders its writes.
type failingPart struct {
	store.Table
	after bool
	mu    sync.Mutex
	evals int
}

var errThrottled = errors.New("injected: throttled")

func (f *failingPart) Put(ctx context.Context, it store.Item, c store.Cond) error {
	return f.write([]store.Write{store.Put(it, c)}, func() error { return f.Table.Put(ctx, it, c) })
}

func (f *failingPart) Transact(ctx context.Context, ws []store.Write) error {
	return f.write(ws, func() error { return f.Table.Transact(ctx, ws) })
}

func (f *failingPart) write(ws []store.Write, do func() error) error {
	f.mu.Lock()
	before := f.evals
	for _, w := range ws {
		if strings.Contains(w.Item.SK, "FLAGEVAL#") {
			f.evals++
		}
	}
	fail := before <= 3 && f.evals > 3
	f.mu.Unlock()
	if !fail {
		return do()
	}
	if f.after {
		if err := do(); err != nil {
			return err
		}
	}
	return errThrottled
}

// TestIngestSQSRetryCountsOnce is SQS delivering a whole multi-part
// payload again after its second part failed part-way, on DynamoDB: the
// worker reports the part failed, SQS delivers every message again, and
// every context, counter and usage cell counts each event once.
func TestIngestSQSRetryCountsOnce(t *testing.T) {
	for _, after := range []bool{false, true} {
		name := map[bool]string{false: "before", true: "after"}[after]
		t.Run("the second part's counters fail "+name+" they commit, the whole payload comes again, and each event counts once", func(t *testing.T) {
			api := newDynamoAPI(t, app.Settings{})
			api.serve(t, "")
			proj := fmt.Sprintf("sqs%v", after)
			api.do(t, http.MethodPost, "/api/v2/projects", "", `{"key":"`+proj+`","name":"SQS"}`, http.StatusCreated)
			var env struct {
				ID string `json:"_id"`
			}
			_ = json.Unmarshal(api.do(t, http.MethodGet, "/api/v2/projects/"+proj+"/environments/production", "", "", http.StatusOK), &env)
			const users = 120
			now := time.Now().UnixMilli()
			var events []string
			for i := 0; i < users; i++ {
				events = append(events, fmt.Sprintf(`{"kind":"index","creationDate":%d,"context":{"kind":"user","key":"sqs-%d","email":"sqs-%d@example.com"}}`, now, i, i),
					fmt.Sprintf(`{"kind":"summary","startDate":%d,"endDate":%d,"features":{"f%d":{"counters":[{"variation":1,"version":1,"value":true,"count":2}]}}}`, now, now, i%3))
			}
			whole := ingest.Payload{Source: ingest.SourceServer, ProjectKey: proj, EnvKey: "production", EnvID: env.ID, PayloadID: "sqs-retry",
				UserAgent: "GoClient/7.14.6", ReceivedAt: now, Body: []byte("[" + strings.Join(events, ",") + "]")}
			parts, err := ingest.Split(whole, 12<<10)
			if err != nil {
				t.Fatal(err)
			}
			if len(parts) < 3 {
				t.Fatalf("the payload is %d parts; want at least 3", len(parts))
			}
			var batch sqsEvents.SQSEvent
			for i, p := range parts {
				body, _ := json.Marshal(p)
				batch.Records = append(batch.Records, sqsEvents.SQSMessage{MessageId: fmt.Sprint("m", i), Body: string(body)})
			}
			// Both workers' clocks stand still, so the usage cell is one hour's.
			clock := func() time.Time { return time.UnixMilli(now) }
			flaky := &failingPart{Table: api.Table, after: after}
			first := ingest.NewAggregator(flaky, api.Logger, clock).PerItemWrites()
			resp, err := sqsingest.Handler(first, api.Logger)(t.Context(), batch)
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "m1" {
				t.Fatalf("failures %+v, want the second part's message alone", resp.BatchItemFailures)
			}
			// SQS delivers every message again (a batch that failed whole), to a new worker.
			second := ingest.NewAggregator(api.Table, api.Logger, clock).PerItemWrites()
			resp, err = sqsingest.Handler(second, api.Logger)(t.Context(), batch)
			if err != nil || len(resp.BatchItemFailures) != 0 {
				t.Fatalf("delivery again: %+v, %v", resp.BatchItemFailures, err)
			}

			var count sdkcontext.Count
			readItem(t, api.Table, store.ContextCountKey(env.ID), &count)
			if count.Total != users {
				t.Errorf("context count %d, want %d", count.Total, users)
			}
			var key sdkcontext.AttrName
			readItem(t, api.Table, store.ContextAttrNameKey(env.ID, "user", "email"), &key)
			if key.Weight != users || key.Values != users {
				t.Errorf("attribute email: weight %d, %d values; want %d of each", key.Weight, key.Values, users)
			}
			hour := time.UnixMilli(now).UTC().Format("2006010215")
			for f := 0; f < 3; f++ {
				var evals ingest.FlagEvals
				readItem(t, api.Table, store.FlagEvalKey(proj, "production", fmt.Sprint("f", f), hour), &evals)
				if want := int64(2 * users / 3); evals.Counts["1"] != want {
					t.Errorf("flag f%d: %d evaluations of variation 1, want %d", f, evals.Counts["1"], want)
				}
			}
			var cell ingest.Cell
			sdk := whole.SDK()
			readItem(t, api.Table, store.UsageCellKey(hour, env.ID, ingest.CellID(sdk.Type, sdk.Name, sdk.Version, "")), &cell)
			if cell.Events["index"] != users || cell.Events["summary"] != users || cell.Payloads != int64(len(parts)) {
				t.Errorf("usage cell: %v events, %d payloads; want %d index and summary events in %d parts", cell.Events, cell.Payloads, users, len(parts))
			}
			for _, i := range []int{0, users / 2, users - 1} {
				body := string(api.do(t, http.MethodGet, fmt.Sprintf("/api/v2/projects/%s/environments/production/contexts/user/sqs-%d", proj, i), "", "", http.StatusOK))
				if !strings.Contains(body, `"totalCount":1`) {
					t.Errorf("context sqs-%d: %s", i, body)
				}
			}
		})
	}
}

func readItem(tb testing.TB, table store.Table, k store.Key, into any) {
	tb.Helper()
	it, err := table.Get(tb.Context(), k)
	if err != nil {
		tb.Fatalf("read %s/%s: %v", k.PK, k.SK, err)
	}
	if err := json.Unmarshal(it.Data, into); err != nil {
		tb.Fatalf("decode %s/%s: %v", k.PK, k.SK, err)
	}
}
