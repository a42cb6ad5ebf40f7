package consoleapi_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

// The console through the router, as the local server and the console
// function serve it: no token, the page at / and its files at their three
// depths, the console's security headers, and the API's JSON 404 for any
// name the tree lacks.
func TestThePageAndFilesAreServedWithoutAToken(t *testing.T) {
	srv := apptest.New(t)
	tests := []struct {
		name, method, path string
		status             int
		contentType, part  string // part: a piece of the body
	}{
		{name: "the page is served at / without a token", method: "GET", path: "/", status: 200, contentType: "text/html", part: "<!doctype html>"},
		{name: "a file at the top of the tree is served", method: "GET", path: "/console/console.css", status: 200, contentType: "text/css"},
		{name: "a script under js/ is served", method: "GET", path: "/console/js/app.js", status: 200, contentType: "text/javascript", part: "import"},
		{name: "a page module under js/pages/ is served", method: "GET", path: "/console/js/pages/projects.js", status: 200, contentType: "text/javascript", part: "export function register"},
		{name: "HEAD of the page answers its headers", method: "HEAD", path: "/", status: 200, contentType: "text/html"},
		{name: "a file the tree lacks is the API's JSON 404", method: "GET", path: "/console/js/nope.js", status: 404, contentType: "application/json", part: "the console has no file /console/js/nope.js"},
		{name: "a folder is no file", method: "GET", path: "/console/js", status: 404, contentType: "application/json"},
		{name: "the page is not served again under /console/", method: "GET", path: "/console/index.html", status: 404, contentType: "application/json"},
		{name: "a path no operation names is still the API's 404, not the page", method: "GET", path: "/no/such/path", status: 404, contentType: "application/json", part: "no operation at"},
		{name: "the page takes no other method", method: "POST", path: "/", status: 405, contentType: "application/json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := srv.Do(t, tc.method, tc.path, nil, "Authorization", "")
			if res.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", res.Status, tc.status, res.Body)
			}
			if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, tc.contentType) {
				t.Errorf("Content-Type %q, want %s", ct, tc.contentType)
			}
			if !bytes.Contains(res.Body, []byte(tc.part)) {
				t.Errorf("the body lacks %q: %.200s", tc.part, res.Body)
			}
			if tc.status == 200 {
				if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
					t.Errorf("Content-Security-Policy %q", csp)
				}
			}
		})
	}
}

// In AWS the console function answers through API Gateway: a gzipped
// file is binary, so the adapter must send it base64-encoded, and it must
// gunzip to the page.
func TestGzippedFilesCrossTheGatewayBase64Encoded(t *testing.T) {
	srv := apptest.New(t)
	h, err := srv.App.Handler("console")
	if err != nil {
		t.Fatal(err)
	}
	fn := lambdafn.Adapt(h)
	for _, tc := range []struct {
		name, path, encoding string
		gzipped              bool
	}{
		{name: "the page to a browser taking gzip is gzipped and base64-encoded", path: "/", encoding: "gzip, deflate, br", gzipped: true},
		{name: "the page to a client not taking gzip is plain text", path: "/"},
		{name: "a script to a browser taking gzip is gzipped", path: "/console/js/pages/projects.js", encoding: "gzip", gzipped: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := events.APIGatewayV2HTTPRequest{
				Version: "2.0", RouteKey: "GET " + tc.path, RawPath: tc.path, Headers: map[string]string{"accept-encoding": tc.encoding},
				RequestContext: events.APIGatewayV2HTTPRequestContext{
					RequestID: "r1", Stage: "$default", DomainName: "flagplane.example",
					HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: tc.path, Protocol: "HTTP/1.1", SourceIP: "192.0.2.10"},
				},
			}
			res, err := fn(context.Background(), ev)
			if err != nil || res.StatusCode != http.StatusOK {
				raw, _ := json.Marshal(res)
				t.Fatalf("status %d, error %v: %.300s", res.StatusCode, err, raw)
			}
			body := []byte(res.Body)
			if res.IsBase64Encoded {
				if body, err = base64.StdEncoding.DecodeString(res.Body); err != nil {
					t.Fatal(err)
				}
			}
			if tc.gzipped {
				if !res.IsBase64Encoded || res.Headers["Content-Encoding"] != "gzip" {
					t.Fatalf("base64 %v, Content-Encoding %q: want a base64-encoded gzip body", res.IsBase64Encoded, res.Headers["Content-Encoding"])
				}
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			if len(body) == 0 || !strings.Contains(string(body), map[bool]string{true: "<!doctype html>", false: "export"}[tc.path == "/"]) {
				t.Errorf("the body is not the file: %.200s", body)
			}
		})
	}
}
