package app_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/flagplane/flagplane/shared/app"
)

// TestAPIOnDynamoDB holds the API to the access patterns of the
// design (one read for one resource, one Query for a page, no Scan) and
// checks concurrent writers on real DynamoDB transactions.
func TestAPIOnDynamoDB(t *testing.T) {
	api := newDynamoAPI(t, app.Settings{Approvals: true})
	api.serve(t, "")
	counter, adminToken, h := api.Counter, api.Token, api.h
	do := func(tb testing.TB, method, path, body string, want int) {
		tb.Helper()
		api.do(tb, method, path, "", body, want)
	}
	do(t, "POST", "/api/v2/projects", `{"key":"p","name":"P"}`, http.StatusCreated)
	do(t, "POST", "/api/v2/projects/p/environments", `{"key":"e","name":"E","color":"00AA00"}`, http.StatusCreated)

	api.checkCalls(t, []callsCase{
		{"getting one environment is one GetItem", "GET", "/api/v2/projects/p/environments/e", "", 200, map[string]int{"GetItem": 1}},
		{"a page of environments is one Query", "GET", "/api/v2/projects/p/environments?limit=2", "", 200, map[string]int{"Query": 1}},
		{"patching an environment is one read, one transaction and the outbox hand-off",
			"PATCH", "/api/v2/projects/p/environments/e", `[{"op":"replace","path":"/name","value":"E2"}]`, 200,
			map[string]int{"GetItem": 1, "TransactWriteItems": 1, "DeleteItem": 1}},
		{"a page of the audit log is one Query", "GET", "/api/v2/auditlog?limit=2", "", 200, map[string]int{"Query": 1}},
		{"getting a project is one GetItem", "GET", "/api/v2/projects/p", "", 200, map[string]int{"GetItem": 1}},
	})
	if n := counter.Counts()["Scan"]; n != 0 {
		t.Fatalf("%d Scan calls", n)
	}

	t.Run("concurrent patches lose nothing: each applies on the latest version or gets 409", func(t *testing.T) {
		const writers = 10
		statuses := make([]int, writers)
		var wg sync.WaitGroup
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := fmt.Sprintf(`[{"op":"add","path":"/tags/-","value":"w%d"}]`, i)
				req := httptest.NewRequest("PATCH", "/api/v2/projects/p/environments/e", bytes.NewBufferString(body))
				req.Header.Set("Authorization", adminToken)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				statuses[i] = rec.Code
			}()
		}
		wg.Wait()
		req := httptest.NewRequest("GET", "/api/v2/projects/p/environments/e", nil)
		req.Header.Set("Authorization", adminToken)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var env struct{ Tags []string }
		if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
			t.Fatal(err)
		}
		want := map[string]bool{}
		for i, st := range statuses {
			switch st {
			case http.StatusOK:
				want[fmt.Sprintf("w%d", i)] = true
			case http.StatusConflict:
			default:
				t.Fatalf("writer %d got status %d", i, st)
			}
		}
		if len(env.Tags) != len(want) {
			t.Fatalf("stored tags %v, but %d patches succeeded", env.Tags, len(want))
		}
		for _, tag := range env.Tags {
			if !want[tag] {
				t.Fatalf("stored tag %q from a patch that was refused", tag)
			}
		}
	})
}
