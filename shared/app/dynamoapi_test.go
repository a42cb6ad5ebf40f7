package app_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/flagplane/flagplane/shared/account"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/app/allgroups"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/store/dynamo"
	"github.com/flagplane/flagplane/shared/store/dynamo/dynamotest"
)

// dynamoAPI is the API on a fresh DynamoDB Local table with a bootstrapped
// account, as the DynamoDB tier's tests set it up: make it, set services
// on App where a test needs them (directIngest), then serve.
type dynamoAPI struct {
	App     *app.App
	Table   *dynamo.Table
	Counter *dynamo.CallCounter
	Logger  *slog.Logger
	// Token is the bootstrapped admin's, which do sends when given none.
	Token string
	h     http.Handler
}

func newDynamoAPI(tb testing.TB, settings app.Settings) *dynamoAPI {
	tb.Helper()
	table, counter := dynamotest.NewTable(tb)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	acct, adminToken, err := account.Bootstrap(tb.Context(), table, audit.Discard{}, logger)
	if err != nil {
		tb.Fatal(err)
	}
	settings.AccountID = acct.ID
	return &dynamoAPI{App: app.New(table, audit.Discard{}, settings, logger, allgroups.List()...), Table: table, Counter: counter, Logger: logger, Token: adminToken}
}

// directIngest has SDK events aggregated in the request, item by item, as
// the Lambda paths write them; it returns the aggregator.
func (d *dynamoAPI) directIngest() *ingest.Aggregator {
	agg := ingest.NewAggregator(d.Table, d.Logger, d.App.Now).PerItemWrites()
	d.App.Services.Ingest = ingest.Direct{Agg: agg}
	return agg
}

// serve builds the handler of a function's group ("" for every group).
func (d *dynamoAPI) serve(tb testing.TB, group string) {
	tb.Helper()
	h, err := d.App.Handler(group)
	if err != nil {
		tb.Fatal(err)
	}
	d.h = h
}

// do sends a JSON request with auth (the admin's token when empty) and the
// header pairs, fails unless the status is want, and returns the body.
func (d *dynamoAPI) do(tb testing.TB, method, path, auth, body string, want int, headers ...string) []byte {
	tb.Helper()
	req := httptest.NewRequest(method, path, bytes.NewBufferString(body))
	if auth == "" {
		auth = d.Token
	}
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	d.h.ServeHTTP(rec, req)
	if rec.Code != want {
		tb.Fatalf("%s %s: status %d, want %d: %s", method, path, rec.Code, want, rec.Body)
	}
	return rec.Body.Bytes()
}

// callsCase is a request and the DynamoDB calls it should make, by name.
type callsCase struct {
	name, method, path, body string
	status                   int
	want                     map[string]int
}

// checkCalls sends each case's request (as the admin, with the header
// pairs) in a subtest and checks it made exactly the calls it wants.
func (d *dynamoAPI) checkCalls(t *testing.T, cases []callsCase, headers ...string) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d.Counter.Reset()
			d.do(t, tc.method, tc.path, "", tc.body, tc.status, headers...)
			got := d.Counter.Counts()
			if len(got) != len(tc.want) {
				t.Fatalf("calls %v, want %v", got, tc.want)
			}
			for op, n := range tc.want {
				if got[op] != n {
					t.Fatalf("calls %v, want %v", got, tc.want)
				}
			}
		})
	}
}
