package openapiapi_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/openapi"
	"github.com/flagplane/flagplane/shared/openapi/openapiapi"
)

// server routes the catalog's operation to the handler with no
// authenticator: a request that needed a token would fail.
func server(tb testing.TB) *httptest.Server {
	tb.Helper()
	op, ok := catalog.ByID(openapiapi.OperationID)
	if !ok {
		tb.Fatalf("the catalog has no %s", openapiapi.OperationID)
	}
	h, err := api.NewRouter([]catalog.Operation{op}, api.Routes{Handlers: map[string]api.Handler{op.ID: openapiapi.Handler()}})
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return srv
}

func get(tb testing.TB, url string, headers ...string) (*http.Response, []byte) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/api/v2/openapi.json", nil)
	if err != nil {
		tb.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return res, body
}

func TestTheDocumentIsServed(t *testing.T) {
	srv := server(t)
	res, body := get(t, srv.URL)
	t.Run("without a token, as JSON, the committed bytes", func(t *testing.T) {
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("status %d, Content-Type %q", res.StatusCode, res.Header.Get("Content-Type"))
		}
		if !bytes.Equal(body, openapi.JSON()) {
			t.Fatalf("the body (%d bytes) is not the committed document (%d bytes)", len(body), len(openapi.JSON()))
		}
	})
	t.Run("the answer is what the document says of its own operation", func(t *testing.T) {
		if err := openapi.Check(openapiapi.OperationID, res.StatusCode, body); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a client naming the ETag gets 304 with no body", func(t *testing.T) {
		etag := res.Header.Get("ETag")
		if etag == "" {
			t.Fatal("no ETag")
		}
		again, body := get(t, srv.URL, "If-None-Match", etag)
		if again.StatusCode != http.StatusNotModified || len(body) != 0 {
			t.Fatalf("status %d with %d bytes", again.StatusCode, len(body))
		}
		if err := openapi.Check(openapiapi.OperationID, again.StatusCode, nil); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a client with another ETag gets the document", func(t *testing.T) {
		if again, body := get(t, srv.URL, "If-None-Match", `"old"`); again.StatusCode != http.StatusOK || !bytes.Equal(body, openapi.JSON()) {
			t.Fatalf("status %d with %d bytes", again.StatusCode, len(body))
		}
	})
}
