package app_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/destination"
	_ "github.com/flagplane/flagplane/shared/destination/destinationapi" // the destinations routes
)

// TestExportOnDynamoDB runs the data export on DynamoDB as the Lambda
// functions do: a destination made through the API, SDK payloads (one of
// them retried) spooled by the ingest tap, and the export job writing one
// batch to the stage and counting it once, with no Scan anywhere.
func TestExportOnDynamoDB(t *testing.T) {
	t.Setenv(destination.EnvKeySecret, strings.Repeat("k", destination.MinSecretLength))
	api := newDynamoAPI(t, app.Settings{Approvals: true})
	api.directIngest()
	api.serve(t, "")
	table, counter, logger, adminToken, do := api.Table, api.Counter, api.Logger, api.Token, api.do
	do(t, http.MethodPost, "/api/v2/projects", adminToken, `{"key":"dx","name":"Export"}`, http.StatusCreated)
	var env struct {
		ID     string `json:"_id"`
		APIKey string `json:"apiKey"`
	}
	_ = json.Unmarshal(do(t, http.MethodGet, "/api/v2/projects/dx/environments/production", adminToken, "", http.StatusOK), &env)
	var pair struct {
		Body string `json:"public_key_pkcs8"`
	}
	_ = json.Unmarshal(do(t, http.MethodPost, "/api/v2/destinations/projects/dx/environments/production/generate-warehouse-destination-key-pair", adminToken, "", http.StatusCreated), &pair)
	do(t, http.MethodPost, "/api/v2/destinations/dx/production", adminToken, fmt.Sprintf(
		`{"kind":"snowflake-v2","on":true,"config":{"snowflakeHostAddress":"ab12345.snowflakecomputing.com","publicKey":%q}}`, pair.Body), http.StatusCreated)

	counter.Reset()
	events := func(prefix string, n int) string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf(`{"kind":"custom","key":"%s-%d","creationDate":%d,"contextKeys":{"user":"u"}}`, prefix, i, time.Now().UnixMilli()))
		}
		return "[" + strings.Join(out, ",") + "]"
	}
	do(t, http.MethodPost, "/bulk", env.APIKey, events("a", 7), http.StatusAccepted, "X-LaunchDarkly-Payload-ID", "dx-1")
	do(t, http.MethodPost, "/bulk", env.APIKey, events("a", 7), http.StatusAccepted, "X-LaunchDarkly-Payload-ID", "dx-1") // a retry
	do(t, http.MethodPost, "/bulk", env.APIKey, events("b", 5), http.StatusAccepted, "X-LaunchDarkly-Payload-ID", "dx-2")

	dir := t.TempDir()
	r, err := destination.NewExporter(table, destination.Folder{Dir: dir}, logger, api.App.Now).Run(t.Context())
	if err != nil || r.Batches != 1 || r.Events != 12 {
		t.Fatalf("export: %+v %v, want one batch of 12 events", r, err)
	}
	if n := counter.Counts()["Scan"]; n != 0 {
		t.Errorf("spooling and exporting made %d Scans", n)
	}
	var lines int
	_ = filepath.WalkDir(filepath.Join(dir, "events", env.ID), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(path)
			lines += bytes.Count(data, []byte("\n"))
		}
		return nil
	})
	if lines != 12 {
		t.Errorf("%d lines in the stage, want 12", lines)
	}
	n, err := destination.Counted(t.Context(), table, time.Now().UTC().Format("2006010215"), env.ID)
	if err != nil || n != 12 {
		t.Errorf("counted %d (%v), want 12", n, err)
	}
	if again, err := destination.NewExporter(table, destination.Folder{Dir: dir}, logger, api.App.Now).Run(t.Context()); err != nil || again.Batches != 0 {
		t.Errorf("a second run: %+v %v, want nothing left", again, err)
	}
}
