package lambdafn_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/app/allgroups"
	"github.com/flagplane/flagplane/shared/audit"
	_ "github.com/flagplane/flagplane/shared/coderefs/coderefsapi" // the code-refs function's group, as its main links it
	"github.com/flagplane/flagplane/shared/lambdafn"
)

// TestSampleEvents feeds every sample API Gateway v2 event of events/ to
// its group's handler, as the Lambda runtime would, in order.
func TestSampleEvents(t *testing.T) {
	table, accountID, adminToken := bootstrapped(t)
	a := app.New(table, audit.Discard{}, app.Settings{Approvals: true, AccountID: accountID}, quiet, allgroups.List()...)

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
	files, _ := filepath.Glob(filepath.Join(sampleDir, "*.json"))
	if len(files) != len(steps) {
		t.Fatalf("%d sample events in %s but %d steps: every sample needs a step", len(files), sampleDir, len(steps))
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			h, err := a.Handler(st.group)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := lambdafn.Adapt(h)(t.Context(), sampleEvent(t, st.file, adminToken))
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
