package app_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/flagplane/flagplane/shared/app"
	_ "github.com/flagplane/flagplane/shared/integration/integrationapi"
)

// TestIntegrationConfigurationsOnDynamoDB holds the integrations group to
// its access patterns on DynamoDB: its list index (GSI1) read with one
// Query, no Scan, and what a read by id costs (the stored integration key
// and tags policies check, then the answer).
func TestIntegrationConfigurationsOnDynamoDB(t *testing.T) {
	api := newDynamoAPI(t, app.Settings{})
	api.serve(t, "integrations")
	do := func(tb testing.TB, method, path, body string, want int) []byte {
		tb.Helper()
		return api.do(tb, method, path, "", body, want, "SVC-API-Version", "beta")
	}
	const list = "/api/v2/integration-configurations/keys/datadog"
	create := `{"name":"DD","tags":["ops"],"configValues":{"apiKey":"0123456789abcdef0123456789abcdef"}}`
	var made struct {
		ID string `json:"_id"`
	}
	if err := json.Unmarshal(do(t, "POST", list, create, http.StatusCreated), &made); err != nil || made.ID == "" {
		t.Fatalf("create: %v", err)
	}
	one := "/api/v2/integration-configurations/" + made.ID

	api.checkCalls(t, []callsCase{
		{"a list is one Query of the integration key's index", "GET", list, "", 200, map[string]int{"Query": 1}},
		{"a read is two GetItems: the stored key and tags to authorize, then the answer", "GET", one, "", 200, map[string]int{"GetItem": 2}},
		{"a create counts the key's configurations and writes in one transaction", "POST", list, create, 201,
			map[string]int{"Query": 1, "TransactWriteItems": 1, "DeleteItem": 1}},
		{"a patch is the two reads and one transaction", "PATCH", one, `[{"op":"replace","path":"/name","value":"DD2"}]`, 200,
			map[string]int{"GetItem": 2, "TransactWriteItems": 1, "DeleteItem": 1}},
	}, "SVC-API-Version", "beta")
	t.Run("the list shows both configurations, oldest first", func(t *testing.T) {
		var got struct {
			Items []struct {
				ID string `json:"_id"`
			} `json:"items"`
		}
		if err := json.Unmarshal(do(t, "GET", list, "", http.StatusOK), &got); err != nil || len(got.Items) != 2 || got.Items[0].ID != made.ID {
			t.Fatalf("list %+v %v", got, err)
		}
	})
}
