package apptest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/api"
)

// recorder is a testing.TB that keeps what Errorf reports.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestCheckAnswer(t *testing.T) {
	spec := func(method, path string, headers ...string) *http.Request {
		req, err := http.NewRequest(method, "http://127.0.0.1"+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		return req
	}
	tests := []struct {
		name   string
		req    *http.Request
		status int
		body   string
		want   string // a part of the failure; "" for none
	}{
		{"an answer the document declares passes", spec("GET", "/api/v2/openapi.json"), 304, "", ""},
		{"a missing required member fails the test, naming operation, status and member",
			spec("GET", "/api/v2/openapi.json"), 200, `{"info":{}}`, `GET /api/v2/openapi.json: the answer is not what the OpenAPI document declares: getOpenapiSpec answered 200: $ lacks the required member`},
		{"a status the operation does not declare fails the test", spec("GET", "/api/v2/openapi.json"), 409, `{}`, "getOpenapiSpec answered 409, a status the document does not declare"},
		{"a path of no operation is not checked", spec("GET", "/api/v2/no-such-thing"), 404, `{"message":"Not Found"}`, ""},
		{"a method of no operation is not checked", spec("PUT", "/api/v2/openapi.json"), 405, ``, ""},
		{"a HEAD has no body to check", spec("HEAD", "/api/v2/openapi.json"), 200, ``, ""},
		{"a tunnelled method is checked as the operation it names",
			spec("POST", "/api/v2/projects/p", api.MethodOverrideHeader, "DELETE"), 301, ``, "deleteProject answered 301"},
		{"an unknown tunnelled method is refused before routing and not checked",
			spec("POST", "/api/v2/projects/p", api.MethodOverrideHeader, "TRACE"), 400, `{}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{TB: t}
			CheckAnswer(rec, tc.req, tc.status, []byte(tc.body))
			switch {
			case tc.want == "" && len(rec.errors) > 0:
				t.Fatalf("unexpected failure: %q", rec.errors)
			case tc.want != "" && len(rec.errors) != 1:
				t.Fatalf("failures %q, want one with %q", rec.errors, tc.want)
			case tc.want != "" && !strings.Contains(rec.errors[0], tc.want):
				t.Fatalf("failure %q lacks %q", rec.errors[0], tc.want)
			}
		})
	}
}
