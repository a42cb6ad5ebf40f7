package lambdafn_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/flagplane/flagplane/shared/account"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

// sampleDir holds the sample API Gateway v2 events.
var sampleDir = filepath.Join("..", "..", "events", "apigw-v2")

// quiet is the logger of tests that do not read the logs.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// openTable opens an embedded table in tb's temporary directory.
func openTable(tb testing.TB) *bolt.Table {
	tb.Helper()
	table, err := bolt.Open(filepath.Join(tb.TempDir(), "flagplane.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { table.Close() })
	return table
}

// bootstrapped opens a table with the account bootstrapped, and returns it
// with the account's id and its admin token.
func bootstrapped(tb testing.TB) (table *bolt.Table, accountID, adminToken string) {
	tb.Helper()
	table = openTable(tb)
	acct, token, err := account.Bootstrap(tb.Context(), table, audit.Discard{}, quiet)
	if err != nil {
		tb.Fatal(err)
	}
	return table, acct.ID, token
}

// sampleEvent reads the sample event file and sends it with token.
func sampleEvent(tb testing.TB, file, token string) events.APIGatewayV2HTTPRequest {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join(sampleDir, file))
	if err != nil {
		tb.Fatal(err)
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(raw, &ev); err != nil {
		tb.Fatalf("decode %s: %v", file, err)
	}
	ev.Headers["authorization"] = token
	return ev
}
