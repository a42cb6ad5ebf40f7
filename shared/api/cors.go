package api

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/fault"
)

// AnyOrigin in a list of CORS origins allows every origin.
const AnyOrigin = "*"

// CORSAllowHeaders are the request headers a browser may send: the access
// token, JSON bodies, the version and beta headers, method override and
// request ids.
var CORSAllowHeaders = []string{
	"Accept", "Accept-Encoding", "Authorization", "Content-Length", "Content-Type",
	BetaHeader, LDVersionHeader, MethodOverrideHeader, RequestIDHeader,
	// LaunchDarkly's client-side SDKs send these to the sdk group's routes.
	"X-LaunchDarkly-User-Agent", "X-LaunchDarkly-Wrapper", "X-LaunchDarkly-Tags",
	"X-LaunchDarkly-Event-Schema", "X-LaunchDarkly-Payload-ID",
	// OpenFeature's OFREP providers: OFREP's API key header, and the ETag
	// of the last bulk evaluation when they poll.
	"X-API-Key", "If-None-Match",
}

// CORSExposeHeaders are the answer headers a browser script may read:
// the rate-limit state, the request id, and the ETag OFREP's web provider
// sends back in If-None-Match when it polls.
var CORSExposeHeaders = []string{
	HeaderGlobalRemaining, HeaderRouteRemaining, HeaderReset, HeaderRetryAfter, RequestIDHeader, "ETag",
}

// corsMaxAge is how long a browser may keep a preflight answer, in seconds.
const corsMaxAge = "300"

// CheckCORSOrigins refuses an origin that is not "*" or scheme://host[:port].
func CheckCORSOrigins(origins []string) error {
	for _, o := range origins {
		if o == AnyOrigin {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(o, "/") {
			return fmt.Errorf("CORS origin %q is not * or scheme://host[:port], e.g. https://app.example.com", o)
		}
	}
	return nil
}

// withCORS answers browsers as the reference describes: the request's
// Origin, when allowed, is echoed in Access-Control-Allow-Origin (with
// AnyOrigin and no Origin, the answer is *), and a preflight (OPTIONS with
// Access-Control-Request-Method) from an allowed origin is answered 204
// with the allowed methods and headers, without a token and before any
// route, rate limit or check. Other requests go on unchanged, so a
// disallowed origin simply gets no CORS headers. nil origins: no CORS.
func withCORS(origins []string, ops []catalog.Operation, next http.Handler) http.Handler {
	if len(origins) == 0 {
		return next
	}
	anyOrigin := slices.Contains(origins, AnyOrigin)
	allowed := map[string]bool{}
	for _, o := range origins {
		allowed[strings.ToLower(o)] = true
	}
	methods := []string{http.MethodOptions}
	for _, op := range ops {
		if !slices.Contains(methods, op.Method) {
			methods = append(methods, op.Method)
		}
	}
	slices.Sort(methods)
	allowMethods := []string{strings.Join(methods, ", ")}
	allowHeaders := []string{strings.Join(CORSAllowHeaders, ", ")}
	expose := []string{strings.Join(CORSExposeHeaders, ", ")}
	maxAge := []string{corsMaxAge}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		origin := r.Header.Get("Origin")
		h.Add("Vary", "Origin") // the answer depends on the request's Origin
		switch {
		case origin == "" && anyOrigin:
			h["Access-Control-Allow-Origin"] = []string{AnyOrigin}
			h["Access-Control-Expose-Headers"] = expose
		case origin != "" && (anyOrigin || allowed[strings.ToLower(origin)]):
			h["Access-Control-Allow-Origin"] = []string{origin}
			h["Access-Control-Expose-Headers"] = expose
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h["Access-Control-Allow-Methods"] = allowMethods
				h["Access-Control-Allow-Headers"] = allowHeaders
				h["Access-Control-Max-Age"] = maxAge
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// MethodOverrideHeader lets a client that can only send GET and POST
// tunnel PATCH, PUT and DELETE through POST, as the reference describes.
const MethodOverrideHeader = "X-HTTP-Method-Override"

// withMethodOverride serves a POST carrying X-HTTP-Method-Override as the
// method it names (PATCH, PUT or DELETE), before routing, so the tunnelled
// request meets the same route and checks as the direct one. Any other
// value is a 400 naming the header. On other methods the header is
// ignored: a GET can never become a DELETE.
func withMethodOverride(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := r.Header.Get(MethodOverrideHeader)
		if v == "" || r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		var method string
		switch strings.ToUpper(strings.TrimSpace(v)) {
		case http.MethodPatch:
			method = http.MethodPatch
		case http.MethodPut:
			method = http.MethodPut
		case http.MethodDelete:
			method = http.MethodDelete
		default:
			WriteError(w, r, fault.New(fault.Invalid, "header %s must be PATCH, PUT or DELETE, not %q", MethodOverrideHeader, v))
			return
		}
		r = r.WithContext(r.Context()) // a shallow copy: the caller's request stays as it came
		r.Method = method
		if n := noteOf(r.Context()); n != nil {
			n.method = method
		}
		next.ServeHTTP(w, r)
	})
}
