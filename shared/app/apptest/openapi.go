package apptest

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/openapi"
)

// routes finds the catalog operation of a request the way the router
// does: one http.ServeMux pattern per operation.
var routes = sync.OnceValues(func() (*http.ServeMux, map[string]catalog.Operation) {
	mux, ops := http.NewServeMux(), map[string]catalog.Operation{}
	for _, op := range catalog.All() {
		mux.Handle(op.Pattern(), http.NotFoundHandler())
		ops[op.Pattern()] = op
	}
	return mux, ops
})

// OperationOf is the catalog operation req goes to, as the server routes
// it (a POST tunnelling another method through X-HTTP-Method-Override is
// that method's); false when it goes to none.
func OperationOf(req *http.Request) (catalog.Operation, bool) {
	if req.Method == http.MethodPost {
		switch m := strings.ToUpper(strings.TrimSpace(req.Header.Get(api.MethodOverrideHeader))); m {
		case "":
		case http.MethodPatch, http.MethodPut, http.MethodDelete:
			req = req.Clone(req.Context())
			req.Method = m
		default:
			return catalog.Operation{}, false // refused before routing
		}
	}
	mux, ops := routes()
	_, pattern := mux.Handler(req)
	op, ok := ops[pattern]
	return op, ok
}

// CheckAnswer fails the test when an answer to req, routed to a catalog
// operation, is not what the OpenAPI document declares for it (status,
// required members, types at every depth), naming the operation, the
// status and the member. An answer to a request naming a dated
// LD-API-Version is checked in that form; a HEAD has no body to check.
func CheckAnswer(tb testing.TB, req *http.Request, status int, body []byte) {
	tb.Helper()
	op, ok := OperationOf(req)
	// The console's page and files are not the API's: the document leaves them out.
	if !ok || op.Console || req.Method == http.MethodHead {
		return
	}
	check := openapi.Check
	if api.NamesDatedVersion(req.Header) {
		check = openapi.CheckDated
	}
	if err := check(op.ID, status, body); err != nil {
		tb.Errorf("%s %s: the answer is not what the OpenAPI document declares: %v", req.Method, req.URL.Path, err)
	}
}
