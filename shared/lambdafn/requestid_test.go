package lambdafn_test

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/app/allgroups"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/lambdafn"
	"github.com/flagplane/flagplane/shared/logtest"
)

// gatewayEvent is a payload 2.0 event as API Gateway sends it.
func gatewayEvent(method, path, requestID string, headers map[string]string) events.APIGatewayV2HTTPRequest {
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: method + " " + path, RawPath: path, Headers: headers,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RequestID: requestID, Stage: "$default", DomainName: "flagplane.example",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path, Protocol: "HTTP/1.1", SourceIP: "192.0.2.10"},
		},
	}
	if ev.Headers == nil {
		ev.Headers = map[string]string{}
	}
	return ev
}

func TestGatewayRequestID(t *testing.T) {
	logs := &logtest.Buffer{}
	a := app.New(openTable(t), audit.Discard{}, app.Settings{}, slog.New(slog.NewJSONHandler(logs, nil)), allgroups.List()...)
	h, err := a.Handler("projects")
	if err != nil {
		t.Fatal(err)
	}
	fn := lambdafn.Adapt(h)

	tests := []struct {
		name      string
		event     events.APIGatewayV2HTTPRequest
		status    int
		wantID    string // "" means any fresh id
		errorBody bool
	}{
		{"the health check answers with API Gateway's request id",
			gatewayEvent("GET", "/healthz", "Jz8pEhXgIAMEYcA=", nil), 200, "Jz8pEhXgIAMEYcA=", false},
		{"API Gateway's id wins over the client's X-Request-Id",
			gatewayEvent("GET", "/healthz", "Kx9qFiYhJBNFZdB=", map[string]string{"x-request-id": "client-chose-this"}), 200, "Kx9qFiYhJBNFZdB=", false},
		{"an error body carries API Gateway's id",
			gatewayEvent("GET", "/api/v2/projects/p", "Ly0rGjZiKCOGaeC=", nil), 401, "Ly0rGjZiKCOGaeC=", true},
		{"an event without a request id still gets one",
			gatewayEvent("GET", "/healthz", "", nil), 200, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := fn(t.Context(), tt.event)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, resp.Body)
			}
			got := resp.Headers["X-Request-Id"]
			if got == "" || (tt.wantID != "" && got != tt.wantID) {
				t.Fatalf("X-Request-Id %q, want %q", got, tt.wantID)
			}
			if tt.errorBody {
				var e struct{ ID string }
				if err := json.Unmarshal([]byte(resp.Body), &e); err != nil || e.ID != got {
					t.Errorf("error body %s, want id %q", resp.Body, got)
				}
			}
			if !strings.Contains(logs.String(), `"requestId":"`+got+`"`) {
				t.Errorf("no log line with request id %s:\n%s", got, logs.String())
			}
		})
	}
}
