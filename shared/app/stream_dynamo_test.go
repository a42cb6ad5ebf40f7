package app_test

import (
	"net/http"
	"testing"

	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/store"
)

// TestAuditStreamOnDynamoDB holds the write path of the Lambda functions,
// where the table's stream carries the outbox, to one read and one
// transaction per change: no outbox record is written, none deleted.
func TestAuditStreamOnDynamoDB(t *testing.T) {
	api := newDynamoAPI(t, app.Settings{Approvals: true, AuditStream: true})
	api.serve(t, "")
	api.do(t, "POST", "/api/v2/projects", "", `{"key":"p","name":"P"}`, http.StatusCreated)
	api.do(t, "POST", "/api/v2/projects/p/environments", "", `{"key":"e","name":"E","color":"00AA00"}`, http.StatusCreated)
	api.checkCalls(t, []callsCase{
		{"patching an environment is one read and one transaction: the stream hands the entry off",
			"PATCH", "/api/v2/projects/p/environments/e", `[{"op":"replace","path":"/name","value":"E2"}]`, 200,
			map[string]int{"GetItem": 1, "TransactWriteItems": 1}},
	})
	page, err := api.Table.Query(t.Context(), store.Query{PK: store.OutboxPK})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 0 {
		t.Fatalf("%d outbox records: with the stream, commits write none", len(page.Items))
	}
}
