package lambdafn_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/flagplane/flagplane/shared/account"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/audit"
	_ "github.com/flagplane/flagplane/shared/coderefs/coderefsapi" // the code-refs function's group, as its main links it
	"github.com/flagplane/flagplane/shared/lambdafn"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

// TestSampleEvents feeds every sample API Gateway v2 event of events/ to
// its group's handler, as the Lambda runtime would, in order.
func TestSampleEvents(t *testing.T) {
	table, err := bolt.Open(filepath.Join(t.TempDir(), "events.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { table.Close() })
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	acct, adminToken, err := account.Bootstrap(t.Context(), table, audit.Discard{}, logger)
	if err != nil {
		t.Fatal(err)
	}
	a := app.New(table, audit.Discard{}, app.Settings{Approvals: true, AccountID: acct.ID}, logger)

	steps := []struct {
		name   string
		file   string
		group  string
		status int
	}{
		{"a project is created", "projects-create.json", "projects", 201},
		{"an environment is created", "environments-create.json", "environments", 201},
		{"approval settings at creation are refused", "environments-create-with-approvals.json", "environments", 400},
		{"the environment is patched", "environments-patch.json", "environments", 200},
		{"the environment is read", "environments-get.json", "environments", 200},
		{"environments are listed with a filter and sort", "environments-list.json", "environments", 200},
		{"the project is read with its environments", "projects-get.json", "projects", 200},
		{"the audit log is listed", "auditlog-list.json", "auditlog", 200},
		{"webhooks are listed", "webhooks-list.json", "webhooks", 200},
		{"extinctions are listed by the code-refs function (none yet)", "code-refs-extinctions.json", "code-refs", 200},
	}
	// What some answers must hold, beyond their status.
	wantBody := map[string]string{"code-refs-extinctions.json": `"items":{}`}
	dir := filepath.Join("..", "..", "events", "apigw-v2")
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != len(steps) {
		t.Fatalf("%d sample events in %s but %d steps: every sample needs a step", len(files), dir, len(steps))
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, st.file))
			if err != nil {
				t.Fatal(err)
			}
			var ev events.APIGatewayV2HTTPRequest
			if err := json.Unmarshal(raw, &ev); err != nil {
				t.Fatalf("decode %s: %v", st.file, err)
			}
			ev.Headers["authorization"] = adminToken
			h, err := a.Handler(st.group)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := lambdafn.Adapt(h)(t.Context(), ev)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != st.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, st.status, resp.Body)
			}
			if !strings.Contains(resp.Body, wantBody[st.file]) {
				t.Fatalf("answer %s does not hold %s", resp.Body, wantBody[st.file])
			}
			if resp.Headers["Content-Type"] != "application/json" {
				t.Fatalf("content type %q", resp.Headers["Content-Type"])
			}
		})
	}
}
