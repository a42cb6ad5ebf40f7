package allgroups_test

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/catalog"
)

// built are the operations with a handler; every other one answers 501.
var built = []string{
	"getProjects", "postProject", "getProject", "patchProject", "deleteProject",
	"getEnvironmentsByProject", "postEnvironment", "getEnvironment", "patchEnvironment", "deleteEnvironment",
	"getAuditLogEntries", "getAuditLogEntry",
}

var pathParam = regexp.MustCompile(`\{[^}]*\}`)

// TestOperationsNotImplemented calls every operation of the API (the
// catalog bar the console's page and files) and lists (go test -v) the
// ones still answering 501 not_implemented.
func TestOperationsNotImplemented(t *testing.T) {
	srv := apptest.New(t)
	ops := catalog.API()
	status := map[string]int{}
	var open []string
	for _, op := range ops {
		var body any
		if op.Method == http.MethodPost || op.Method == http.MethodPut || op.Method == http.MethodPatch {
			body = "{}"
		}
		res := srv.Do(t, op.Method, pathParam.ReplaceAllString(op.Path, "x"), body, "SVC-API-Version", "beta")
		status[op.ID] = res.Status
		var e struct{ Code, Message string }
		if res.Status >= 400 {
			res.JSON(t, &e)
		}
		switch {
		case res.Status == http.StatusNotImplemented:
			if e.Code != "not_implemented" || !strings.Contains(e.Message, op.ID) {
				t.Errorf("%s answers 501 with %s", op.ID, res.Body)
			}
			open = append(open, op.ID)
		case res.Status >= 500:
			t.Errorf("%s answers %d: %s", op.ID, res.Status, res.Body)
		case strings.HasPrefix(e.Message, "no operation at") || res.Status == http.StatusMethodNotAllowed:
			t.Errorf("%s %s is not routed: %s", op.Method, op.Path, res.Body)
		}
	}
	slices.Sort(open)
	t.Logf("%d of %d operations still answer 501 not_implemented:\n  %s", len(open), len(ops), strings.Join(open, "\n  "))

	t.Run("every built operation answers something other than 501", func(t *testing.T) {
		for _, id := range built {
			s, ok := status[id]
			if !ok {
				t.Errorf("%s is not in the catalog", id)
			} else if s == http.StatusNotImplemented {
				t.Errorf("%s answers 501", id)
			}
		}
	})

	var left []string
	for _, op := range ops {
		if (op.Group == "projects" || op.Group == "environments" || op.Group == "auditlog") && status[op.ID] == http.StatusNotImplemented {
			left = append(left, op.ID)
		}
	}
	t.Logf("not built yet in the projects, environments and auditlog groups: %v", left)
}
