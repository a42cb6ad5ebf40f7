package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/ingest"
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
	do(t, http.MethodPost, "/bulk", env.APIKey, payload, http.StatusAccepted, tags...) // a retry
	if n := counter.Counts()["Scan"]; n != 0 {
		t.Errorf("ingestion made %d Scans", n)
	}
	if n := counter.Counts()["TransactWriteItems"]; n != 0 {
		t.Errorf("item-by-item ingestion made %d transactions", n)
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
