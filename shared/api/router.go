// Package api is the HTTP kit every resource group uses: routing derived
// from the operation catalog, error bodies and the one status map, JSON
// decoding with limits, links, paging, authentication, the beta header,
// request ids and panic recovery.
package api

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"time"

	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/fault"
)

// Handler serves one operation; a returned error is written as an error body.
type Handler func(w http.ResponseWriter, r *http.Request) error

// NotImplemented answers operations that are in the catalog but not built yet.
func NotImplemented(op catalog.Operation) Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		return fault.New(fault.NotImplemented, "%s (%s %s) is not implemented yet", op.ID, op.Method, op.Path)
	}
}

// Routes is what a router serves: handlers and the rights each operation
// needs (when they follow from the request, not from the catalog alone) by
// operation id, and the services the checks use.
type Routes struct {
	Handlers map[string]Handler
	Needs    map[string]Needs
	Authn    Authenticator
	// Tags, when set, gives resource tags to callers whose statements use them.
	Tags Tagger
	// Limits are the rate limits; the zero value limits nothing.
	Limits RateLimits
	// Now is the limits' clock; nil is time.Now.
	Now func() time.Time
	// CORSOrigins are the browser origins allowed to call (AnyOrigin for
	// all); none turns CORS off.
	CORSOrigins []string
}

// NewRouter routes every operation of ops to its handler in rt (by
// operation id), or to NotImplemented. A handler whose id is not among ops
// is an error, so a typo cannot leave a route unserved.
func NewRouter(ops []catalog.Operation, rt Routes) (http.Handler, error) {
	handlers := rt.Handlers
	if rt.Authn != nil {
		rt.Authn = notingAuthn{rt.Authn}
	}
	if err := rt.Limits.Check(); err != nil {
		return nil, err
	}
	if err := CheckCORSOrigins(rt.CORSOrigins); err != nil {
		return nil, err
	}
	lim := newLimiter(rt.Limits, rt.Now)
	known := map[string]bool{}
	mux := http.NewServeMux()
	for _, op := range ops {
		known[op.ID] = true
		h, ok := handlers[op.ID]
		if !ok {
			h = NotImplemented(op)
		}
		if err := register(mux, op.Pattern(), withRoute(op.Path, guard(op, rt, lim, h))); err != nil {
			return nil, err
		}
	}
	var unknown []string
	for id := range handlers {
		if !known[id] {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("handlers for operations not in the routed catalog: %v", unknown)
	}
	// CORS comes before routing, so preflights are answered for every path
	// with no token; method override too, so a tunnelled request is routed
	// by the method it names.
	return withRequestID(withAccessLog(withRecovery(withCORS(rt.CORSOrigins, ops, withMethodOverride(withAPIVersion(jsonFallbacks(mux))))))), nil
}

func register(mux *http.ServeMux, pattern string, h http.Handler) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("register %q: %v", pattern, v)
		}
	}()
	mux.Handle(pattern, h)
	return nil
}

// jsonFallbacks answers unknown paths (404) and known paths with another
// method (405, with Allow) with the same JSON error body as everything else.
func jsonFallbacks(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if pattern != "" {
			// ServeHTTP, not h: only the mux sets the request's path values.
			mux.ServeHTTP(w, r)
			return
		}
		// The mux's own answer tells 404 from 405 and sets Allow.
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", rec.Header().Get("Allow"))
			WriteError(w, r, fault.New(fault.MethodNotAllowed, "%s is not allowed on %s", r.Method, r.URL.Path))
			return
		}
		WriteError(w, r, fault.New(fault.NotFound, "no operation at %s %s", r.Method, r.URL.Path))
	})
}
