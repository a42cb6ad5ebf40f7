package api_test

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/logtest"
)

// logBuffer collects JSON log lines written by concurrent requests.
type logBuffer struct{ logtest.Buffer }

// lines decodes every line written so far.
func (b *logBuffer) lines(tb testing.TB) []map[string]any {
	tb.Helper()
	var out []map[string]any
	for _, raw := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if raw == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			tb.Fatalf("log line is not JSON: %s", raw)
		}
		out = append(out, m)
	}
	return out
}

// accessLine returns the one access line of the request with id.
func (b *logBuffer) accessLine(tb testing.TB, id string) map[string]any {
	tb.Helper()
	var found []map[string]any
	for _, l := range b.lines(tb) {
		if l["msg"] == "request" && l["requestId"] == id {
			found = append(found, l)
		}
	}
	if len(found) != 1 {
		tb.Fatalf("%d access lines for request %s, want 1", len(found), id)
	}
	return found[0]
}

const secretToken = "api-11111111-2222-4333-8444-555555555555"

// loggedKit serves a few operations through the real router, logging JSON into the returned buffer.
func loggedKit(tb testing.TB) (*httptest.Server, *logBuffer) {
	tb.Helper()
	ops := []catalog.Operation{
		{ID: "getThing", Group: "things", Method: "GET", Path: "/api/v2/things/{key}", Scope: catalog.Read, Resource: "webhook/{key}"},
		{ID: "failThing", Group: "things", Method: "GET", Path: "/api/v2/fail", Scope: catalog.Read, Resource: "webhook/*"},
		{ID: "getPing", Group: "things", Method: "GET", Path: "/ping", Scope: catalog.Read, Public: true},
		{ID: "deleteThing", Group: "things", Method: "DELETE", Path: "/api/v2/things/{key}", Scope: catalog.Write, Resource: "webhook/{key}", Action: "deleteWebhook"},
	}
	ok := func(w http.ResponseWriter, r *http.Request) error {
		api.WriteJSON(w, http.StatusOK, map[string]string{"ok": "yes"})
		return nil
	}
	handlers := map[string]api.Handler{
		"getThing":    ok,
		"failThing":   func(http.ResponseWriter, *http.Request) error { return errors.New("disk on fire") },
		"getPing":     ok,
		"deleteThing": ok,
	}
	authn := fakeAuthn{secretToken: principal(tb, identity.RoleAdmin, "tok-7")}
	h, err := api.NewRouter(ops, api.Routes{Handlers: handlers, Authn: authn})
	if err != nil {
		tb.Fatal(err)
	}
	logs := &logBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(api.WithLogger(r.Context(), logger)))
	}))
	tb.Cleanup(srv.Close)
	return srv, logs
}

func TestRequestIDs(t *testing.T) {
	srv, _ := loggedKit(t)
	tests := []struct {
		name   string
		sent   string // "" sends no header
		echoed bool   // the answer carries exactly the id sent
	}{
		{"a client's id of letters, digits and . _ : - is kept", "Trace-1.2_3:abc", true},
		{"a client's id of exactly 128 characters is kept", strings.Repeat("a", 128), true},
		{"a client's id of 129 characters is replaced", strings.Repeat("a", 129), false},
		{"a client's id with a space is replaced", "two words", false},
		{"a client's id with a slash is replaced", "a/b", false},
		{"a client's id with a non-ASCII letter is replaced", "café", false},
		{"a client's id with a percent sign is replaced", "a%0Ab", false},
		{"a request without an id gets one", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var headers []string
			if tt.sent != "" {
				headers = []string{"X-Request-Id", tt.sent}
			}
			a := call(t, srv, "GET", "/api/v2/things/k", nil, headers...)
			got := a.header.Get("X-Request-Id")
			if tt.echoed && got != tt.sent {
				t.Errorf("X-Request-Id %q, want the client's %q", got, tt.sent)
			}
			if !tt.echoed && (got == "" || got == tt.sent) {
				t.Errorf("X-Request-Id %q, want a fresh one", got)
			}
			// Without a token this is a 401: its body carries the same id.
			if e := a.wantError(t, http.StatusUnauthorized, fault.Unauthorized); e.ID != got {
				t.Errorf("error body id %q, header %q", e.ID, got)
			}
		})
	}
}

func TestAccessLog(t *testing.T) {
	srv, logs := loggedKit(t)
	tests := []struct {
		name      string
		path      string
		token     string
		status    int
		route     string
		principal string
		level     string
	}{
		{"a served request is logged with its catalog route, not its raw path", "/api/v2/things/my-secret-key", secretToken, 200, "/api/v2/things/{key}", "tok-7", "INFO"},
		{"a request without a token is logged with no principal", "/api/v2/things/k", "", 401, "/api/v2/things/{key}", "", "INFO"},
		{"a request with an unknown token is logged with no principal", "/api/v2/things/k", "api-unknown", 401, "/api/v2/things/{key}", "", "INFO"},
		{"a public operation is logged with its route", "/ping", "", 200, "/ping", "", "INFO"},
		{"a path no operation serves is logged without a route", "/api/v2/nowhere/at-all", secretToken, 404, "-", "", "INFO"},
		{"a 500 is logged at error level", "/api/v2/fail", secretToken, 500, "/api/v2/fail", "tok-7", "ERROR"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := "case-" + string(rune('a'+i))
			headers := []string{"X-Request-Id", id}
			if tt.token != "" {
				headers = append(headers, "Authorization", tt.token)
			}
			if a := call(t, srv, "GET", tt.path, nil, headers...); a.status != tt.status {
				t.Fatalf("status %d, want %d: %s", a.status, tt.status, a.body)
			}
			line := logs.accessLine(t, id)
			want := map[string]any{
				"method": "GET", "route": tt.route, "status": float64(tt.status),
				"principal": tt.principal, "level": tt.level, "requestId": id,
			}
			for k, v := range want {
				if line[k] != v {
					t.Errorf("%s is %v, want %v (line %v)", k, line[k], v, line)
				}
			}
			if d, ok := line["durationMs"].(float64); !ok || d < 0 {
				t.Errorf("durationMs %v", line["durationMs"])
			}
		})
	}
	t.Run("a request tunnelled by X-HTTP-Method-Override is logged with the method served", func(t *testing.T) {
		if a := call(t, srv, "POST", "/api/v2/things/k", nil, "X-Request-Id", "tunnel", "Authorization", secretToken, "X-HTTP-Method-Override", "DELETE"); a.status != 200 {
			t.Fatalf("status %d: %s", a.status, a.body)
		}
		if line := logs.accessLine(t, "tunnel"); line["method"] != "DELETE" || line["route"] != "/api/v2/things/{key}" {
			t.Errorf("line %v", line)
		}
	})
	t.Run("no line shows the access token or a raw path", func(t *testing.T) {
		for _, l := range logs.lines(t) {
			raw, _ := json.Marshal(l)
			if strings.Contains(string(raw), secretToken) || strings.Contains(string(raw), "my-secret-key") {
				t.Errorf("log line shows the token or raw path: %s", raw)
			}
		}
	})
}
