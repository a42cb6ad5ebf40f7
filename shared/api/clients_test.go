package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/fault"
)

type serverT = httptest.Server

// These tests hold what LaunchDarkly's own clients and browsers send: the
// version header, method override, CORS and the rate-limit headers.

func TestLDVersionHeader(t *testing.T) {
	srv := kit(t)
	cases := []struct {
		name    string
		path    string
		headers []string
		pass    bool
	}{
		{"LD-API-Version: beta opens a beta operation", "/api/v2/beta-things", []string{"LD-API-Version", "beta"}, true},
		{"LD-API-Version: BETA opens it too", "/api/v2/beta-things", []string{"LD-API-Version", "BETA"}, true},
		{"LD-API-Version comma-joined with beta opens it", "/api/v2/beta-things", []string{"LD-API-Version", "20220603, beta"}, true},
		{"a dated LD-API-Version alone does not open a beta operation", "/api/v2/beta-things", []string{"LD-API-Version", "20220603"}, false},
		{"a dated LD-API-Version beside SVC-API-Version: beta opens it", "/api/v2/beta-things", []string{"LD-API-Version", "20220603", "SVC-API-Version", "beta"}, true},
		{"a dated LD-API-Version is accepted on a read", "/api/v2/things", []string{"LD-API-Version", "20220603"}, true},
		{"a dated LD-API-Version is accepted on an operation with a key", "/api/v2/things/k", []string{"LD-API-Version", "20240415"}, true},
		{"LD-API-Version: beta is accepted on a non-beta operation", "/api/v2/things", []string{"LD-API-Version", "beta"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := call(t, srv, "GET", c.path, nil, append([]string{"Authorization", "admin"}, c.headers...)...)
			if c.pass {
				if a.status != http.StatusOK {
					t.Errorf("status %d: %s", a.status, a.body)
				}
				return
			}
			e := a.wantError(t, http.StatusForbidden, fault.Forbidden)
			if !strings.Contains(e.Message, "SVC-API-Version: beta") {
				t.Errorf("message %q does not name the documented header", e.Message)
			}
		})
	}
	t.Run("a write with a dated version is accepted", func(t *testing.T) {
		a := call(t, srv, "POST", "/api/v2/things", strings.NewReader(`{"name":"a"}`), "Authorization", "admin", "LD-API-Version", "20220603")
		if a.status != http.StatusCreated {
			t.Errorf("status %d: %s", a.status, a.body)
		}
	})
}

// servedBy decodes which fake operation answered, and with which method.
func servedBy(t *testing.T, a answer) (op, method, body string) {
	t.Helper()
	var got struct{ Op, Method, Body string }
	if a.status != http.StatusOK {
		t.Fatalf("status %d: %s", a.status, a.body)
	}
	if err := json.Unmarshal(a.body, &got); err != nil {
		t.Fatalf("body %s: %v", a.body, err)
	}
	return got.Op, got.Method, got.Body
}

func TestMethodOverride(t *testing.T) {
	srv := kit(t)
	for _, c := range []struct{ value, op, method string }{
		{"PATCH", "patchThing", "PATCH"},
		{"PUT", "putThing", "PUT"},
		{"DELETE", "deleteThing", "DELETE"},
		{"patch", "patchThing", "PATCH"},
		{" delete ", "deleteThing", "DELETE"},
	} {
		t.Run("a POST with X-HTTP-Method-Override: "+c.value+" is served as "+c.method, func(t *testing.T) {
			a := call(t, srv, "POST", "/api/v2/things/k", strings.NewReader(`[{"op":"replace"}]`),
				"Authorization", "admin", "X-HTTP-Method-Override", c.value)
			op, method, body := servedBy(t, a)
			if op != c.op || method != c.method || body != `[{"op":"replace"}]` {
				t.Errorf("served by %s as %s with body %q", op, method, body)
			}
		})
	}
	for _, v := range []string{"GET", "POST", "OPTIONS", "TRACE", "PATCHX", "CONNECT"} {
		t.Run("X-HTTP-Method-Override: "+v+" is a 400 naming the header", func(t *testing.T) {
			e := call(t, srv, "POST", "/api/v2/things/k", nil, "Authorization", "admin", "X-HTTP-Method-Override", v).
				wantError(t, http.StatusBadRequest, fault.Invalid)
			if !strings.Contains(e.Message, "X-HTTP-Method-Override") {
				t.Errorf("message %q", e.Message)
			}
		})
	}
	t.Run("the header on a GET is ignored: a GET never becomes a DELETE", func(t *testing.T) {
		op, method, _ := servedBy(t, call(t, srv, "GET", "/api/v2/things/k", nil, "Authorization", "admin", "X-HTTP-Method-Override", "DELETE"))
		if op != "getThing" || method != "GET" {
			t.Errorf("served by %s as %s", op, method)
		}
	})
	t.Run("a tunnelled request meets the same checks: a reader may not tunnel a DELETE", func(t *testing.T) {
		call(t, srv, "POST", "/api/v2/things/k", nil, "Authorization", "reader", "X-HTTP-Method-Override", "DELETE").
			wantError(t, http.StatusForbidden, fault.Forbidden)
	})
	t.Run("a tunnelled request without a token is 401", func(t *testing.T) {
		call(t, srv, "POST", "/api/v2/things/k", nil, "X-HTTP-Method-Override", "DELETE").
			wantError(t, http.StatusUnauthorized, fault.Unauthorized)
	})
	t.Run("a tunnelled method the path does not take is 405", func(t *testing.T) {
		call(t, srv, "POST", "/api/v2/things", nil, "Authorization", "admin", "X-HTTP-Method-Override", "PATCH").
			wantError(t, http.StatusMethodNotAllowed, fault.MethodNotAllowed)
	})
}

func TestCORS(t *testing.T) {
	const origin = "https://app.example.com"
	anyOrigin := kitWith(t, func(rt *api.Routes) { rt.CORSOrigins = []string{api.AnyOrigin} })
	listed := kitWith(t, func(rt *api.Routes) { rt.CORSOrigins = []string{origin, "http://localhost:3000"} })
	off := kit(t)
	pre := func(t *testing.T, srv *serverT, o string) answer {
		t.Helper()
		return call(t, srv, "OPTIONS", "/api/v2/things/k", nil, "Origin", o,
			"Access-Control-Request-Method", "PATCH", "Access-Control-Request-Headers", "authorization,content-type,ld-api-version")
	}

	t.Run("a preflight is answered 204 without a token, echoing the origin", func(t *testing.T) {
		for name, srv := range map[string]*serverT{"any origin": anyOrigin, "listed origins": listed} {
			a := pre(t, srv, origin)
			if a.status != http.StatusNoContent {
				t.Fatalf("%s: status %d: %s", name, a.status, a.body)
			}
			if got := a.header.Get("Access-Control-Allow-Origin"); got != origin {
				t.Errorf("%s: Access-Control-Allow-Origin %q", name, got)
			}
			methods := a.header.Get("Access-Control-Allow-Methods")
			for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
				if !strings.Contains(methods, m) {
					t.Errorf("%s: Access-Control-Allow-Methods %q lacks %s", name, methods, m)
				}
			}
			headers := strings.ToLower(a.header.Get("Access-Control-Allow-Headers"))
			for _, h := range []string{"authorization", "content-type", "ld-api-version", "svc-api-version", "x-http-method-override", "x-request-id"} {
				if !strings.Contains(headers, h) {
					t.Errorf("%s: Access-Control-Allow-Headers %q lacks %s", name, headers, h)
				}
			}
			if a.header.Get("Access-Control-Max-Age") == "" {
				t.Errorf("%s: no Access-Control-Max-Age", name)
			}
		}
	})
	t.Run("a preflight to a path no operation has is answered too", func(t *testing.T) {
		if a := call(t, anyOrigin, "OPTIONS", "/api/v2/anything", nil, "Origin", origin, "Access-Control-Request-Method", "GET"); a.status != http.StatusNoContent {
			t.Errorf("status %d", a.status)
		}
	})
	t.Run("an answer echoes the allowed origin and exposes the rate-limit and request-id headers", func(t *testing.T) {
		a := call(t, listed, "GET", "/api/v2/things", nil, "Authorization", "admin", "Origin", origin)
		if a.status != http.StatusOK || a.header.Get("Access-Control-Allow-Origin") != origin {
			t.Fatalf("status %d, Access-Control-Allow-Origin %q", a.status, a.header.Get("Access-Control-Allow-Origin"))
		}
		expose := a.header.Get("Access-Control-Expose-Headers")
		for _, h := range []string{"X-Ratelimit-Global-Remaining", "X-Ratelimit-Route-Remaining", "X-Ratelimit-Reset", "Retry-After", "X-Request-Id"} {
			if !strings.Contains(expose, h) {
				t.Errorf("Access-Control-Expose-Headers %q lacks %s", expose, h)
			}
		}
		if !strings.Contains(strings.Join(a.header.Values("Vary"), ","), "Origin") {
			t.Errorf("Vary %q lacks Origin", a.header.Values("Vary"))
		}
	})
	t.Run("an error answer carries the CORS headers too, so the browser can read it", func(t *testing.T) {
		a := call(t, anyOrigin, "GET", "/api/v2/things", nil, "Origin", origin)
		a.wantError(t, http.StatusUnauthorized, fault.Unauthorized)
		if a.header.Get("Access-Control-Allow-Origin") != origin {
			t.Errorf("Access-Control-Allow-Origin %q", a.header.Get("Access-Control-Allow-Origin"))
		}
	})
	t.Run("with any origin allowed, a request without Origin gets the wildcard", func(t *testing.T) {
		a := call(t, anyOrigin, "GET", "/api/v2/things", nil, "Authorization", "admin")
		if a.header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("Access-Control-Allow-Origin %q", a.header.Get("Access-Control-Allow-Origin"))
		}
	})
	t.Run("an origin not listed gets no CORS headers, and its preflight no 2xx", func(t *testing.T) {
		a := pre(t, listed, "https://evil.example")
		if a.status < 300 || a.header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("status %d, Access-Control-Allow-Origin %q", a.status, a.header.Get("Access-Control-Allow-Origin"))
		}
		b := call(t, listed, "GET", "/api/v2/things", nil, "Authorization", "admin", "Origin", "https://evil.example")
		if b.status != http.StatusOK || b.header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("status %d, Access-Control-Allow-Origin %q", b.status, b.header.Get("Access-Control-Allow-Origin"))
		}
	})
	t.Run("with CORS off, nothing is added and OPTIONS is 405", func(t *testing.T) {
		a := pre(t, off, origin)
		a.wantError(t, http.StatusMethodNotAllowed, fault.MethodNotAllowed)
		if a.header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("Access-Control-Allow-Origin %q", a.header.Get("Access-Control-Allow-Origin"))
		}
	})
	t.Run("an origin that is not scheme://host is refused when routing", func(t *testing.T) {
		for _, o := range []string{"app.example.com", "https://app.example.com/", "https://app.example.com/path", "ftp://x.example", "https://a.example,https://b.example"} {
			if _, err := api.NewRouter(nil, api.Routes{CORSOrigins: []string{o}}); err == nil {
				t.Errorf("%q accepted", o)
			}
		}
	})
}

// clock is a settable time for the rate-limit windows.
type clock struct{ ms atomic.Int64 }

func (c *clock) now() time.Time { return time.UnixMilli(c.ms.Load()) }

func TestRateLimits(t *testing.T) {
	const start = 1_700_000_003_000 // 3 s into a ten-second window
	const reset = "1700000010000"
	newKit := func(t *testing.T, limits api.RateLimits) (*serverT, *clock) {
		c := &clock{}
		c.ms.Store(start)
		return kitWith(t, func(rt *api.Routes) { rt.Limits = limits; rt.Now = c.now }), c
	}
	get := func(t *testing.T, srv *serverT, path string) answer {
		t.Helper()
		return call(t, srv, "GET", path, nil, "Authorization", "admin")
	}

	t.Run("a route's limit", func(t *testing.T) {
		srv, clk := newKit(t, api.RateLimits{Global: 100, Route: 3})
		for i := 1; i <= 3; i++ {
			a := get(t, srv, "/api/v2/things")
			if a.status != http.StatusOK {
				t.Fatalf("request %d: status %d", i, a.status)
			}
			if got, want := a.header.Get("X-Ratelimit-Route-Remaining"), strconv.Itoa(3-i); got != want {
				t.Errorf("request %d: X-Ratelimit-Route-Remaining %q, want %s", i, got, want)
			}
			if got, want := a.header.Get("X-Ratelimit-Global-Remaining"), strconv.Itoa(100-i); got != want {
				t.Errorf("request %d: X-Ratelimit-Global-Remaining %q, want %s", i, got, want)
			}
			if got := a.header.Get("X-Ratelimit-Reset"); got != reset {
				t.Errorf("request %d: X-Ratelimit-Reset %q, want %s (epoch ms of the window's end)", i, got, reset)
			}
		}
		a := get(t, srv, "/api/v2/things")
		t.Run("is answered 429 rate_limited with Retry-After in seconds once used up", func(t *testing.T) {
			e := a.wantError(t, http.StatusTooManyRequests, fault.RateLimited)
			if a.header.Get("Retry-After") != "7" {
				t.Errorf("Retry-After %q, want 7", a.header.Get("Retry-After"))
			}
			if a.header.Get("X-Ratelimit-Route-Remaining") != "0" || a.header.Get("X-Ratelimit-Reset") != reset {
				t.Errorf("headers %v", a.header)
			}
			if !strings.Contains(e.Message, "GET /api/v2/things") || !strings.Contains(e.Message, "3 requests per 10 seconds") {
				t.Errorf("message %q", e.Message)
			}
		})
		t.Run("a refused request does not count against the global limit", func(t *testing.T) {
			if got := a.header.Get("X-Ratelimit-Global-Remaining"); got != "97" {
				t.Errorf("X-Ratelimit-Global-Remaining %q, want 97", got)
			}
		})
		t.Run("another route has a limit of its own", func(t *testing.T) {
			if a := get(t, srv, "/api/v2/things/k"); a.status != http.StatusOK || a.header.Get("X-Ratelimit-Route-Remaining") != "2" {
				t.Errorf("status %d, X-Ratelimit-Route-Remaining %q", a.status, a.header.Get("X-Ratelimit-Route-Remaining"))
			}
		})
		t.Run("one route is one pattern: other keys count against it", func(t *testing.T) {
			get(t, srv, "/api/v2/things/a")
			if a := get(t, srv, "/api/v2/things/b"); a.header.Get("X-Ratelimit-Route-Remaining") != "0" {
				t.Errorf("X-Ratelimit-Route-Remaining %q", a.header.Get("X-Ratelimit-Route-Remaining"))
			}
		})
		t.Run("the next window starts afresh", func(t *testing.T) {
			clk.ms.Store(start + 7000)
			a := get(t, srv, "/api/v2/things")
			if a.status != http.StatusOK || a.header.Get("X-Ratelimit-Route-Remaining") != "2" || a.header.Get("X-Ratelimit-Reset") != "1700000020000" {
				t.Errorf("status %d, headers %v", a.status, a.header)
			}
		})
	})

	t.Run("the global limit spans every route and every token", func(t *testing.T) {
		srv, _ := newKit(t, api.RateLimits{Global: 3, Route: 100})
		get(t, srv, "/api/v2/things")
		get(t, srv, "/api/v2/things/k")
		call(t, srv, "GET", "/api/v2/things", nil, "Authorization", "reader")
		a := call(t, srv, "GET", "/api/v2/things/x", nil, "Authorization", "writer")
		e := a.wantError(t, http.StatusTooManyRequests, fault.RateLimited)
		if !strings.Contains(e.Message, "account's limit of 3") || a.header.Get("X-Ratelimit-Global-Remaining") != "0" || a.header.Get("Retry-After") != "7" {
			t.Errorf("message %q, headers %v", e.Message, a.header)
		}
	})

	t.Run("Retry-After rounds up and is at least one second", func(t *testing.T) {
		srv, clk := newKit(t, api.RateLimits{Route: 1})
		clk.ms.Store(start + 6999) // 1 ms before the window ends
		get(t, srv, "/api/v2/things")
		if a := get(t, srv, "/api/v2/things"); a.header.Get("Retry-After") != "1" {
			t.Errorf("Retry-After %q", a.header.Get("Retry-After"))
		}
		srv, clk = newKit(t, api.RateLimits{Route: 1})
		clk.ms.Store(start + 1500) // 5.5 s left
		get(t, srv, "/api/v2/things")
		if a := get(t, srv, "/api/v2/things"); a.header.Get("Retry-After") != "6" {
			t.Errorf("Retry-After %q", a.header.Get("Retry-After"))
		}
	})

	t.Run("only the limits that are on show their header", func(t *testing.T) {
		srv, _ := newKit(t, api.RateLimits{Route: 5})
		a := get(t, srv, "/api/v2/things")
		if a.header.Get("X-Ratelimit-Global-Remaining") != "" || a.header.Get("X-Ratelimit-Route-Remaining") != "4" {
			t.Errorf("headers %v", a.header)
		}
	})

	t.Run("with no limits, no request is refused and no header is sent", func(t *testing.T) {
		srv := kit(t)
		for i := 0; i < 20; i++ {
			if a := get(t, srv, "/api/v2/things"); a.status != http.StatusOK || a.header.Get("X-Ratelimit-Reset") != "" {
				t.Fatalf("status %d, headers %v", a.status, a.header)
			}
		}
	})

	t.Run("a public operation and a preflight are never limited", func(t *testing.T) {
		c := &clock{}
		c.ms.Store(start)
		srv := kitWith(t, func(rt *api.Routes) {
			rt.Limits, rt.Now, rt.CORSOrigins = api.RateLimits{Global: 1, Route: 1}, c.now, []string{api.AnyOrigin}
		})
		get(t, srv, "/api/v2/things")
		if a := get(t, srv, "/api/v2/things"); a.status != http.StatusTooManyRequests {
			t.Fatalf("the limit is not used up: %d", a.status)
		}
		for i := 0; i < 5; i++ {
			if a := call(t, srv, "GET", "/ping", nil); a.status != http.StatusOK || a.header.Get("X-Ratelimit-Reset") != "" {
				t.Errorf("public operation: status %d, headers %v", a.status, a.header)
			}
			if a := call(t, srv, "OPTIONS", "/api/v2/things", nil, "Origin", "https://a.example", "Access-Control-Request-Method", "GET"); a.status != http.StatusNoContent {
				t.Errorf("preflight: status %d", a.status)
			}
		}
	})

	t.Run("a request without a valid token is not counted", func(t *testing.T) {
		srv, _ := newKit(t, api.RateLimits{Global: 1, Route: 1})
		for i := 0; i < 3; i++ {
			call(t, srv, "GET", "/api/v2/things", nil, "Authorization", "guess").wantError(t, http.StatusUnauthorized, fault.Unauthorized)
		}
		if a := get(t, srv, "/api/v2/things"); a.status != http.StatusOK {
			t.Errorf("status %d", a.status)
		}
	})

	t.Run("concurrent requests never admit more than the limit", func(t *testing.T) {
		srv, _ := newKit(t, api.RateLimits{Global: 1000, Route: 50})
		var ok, limited atomic.Int64
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 20; i++ {
					res, err := srv.Client().Get(srv.URL + "/ping")
					if err != nil {
						t.Error(err)
						return
					}
					res.Body.Close()
					req, _ := http.NewRequest("GET", srv.URL+"/api/v2/things", nil)
					req.Header.Set("Authorization", "admin")
					if res, err = srv.Client().Do(req); err != nil {
						t.Error(err)
						return
					}
					res.Body.Close()
					switch res.StatusCode {
					case http.StatusOK:
						ok.Add(1)
					case http.StatusTooManyRequests:
						limited.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		if ok.Load() != 50 || limited.Load() != 110 {
			t.Errorf("%d admitted and %d refused, want 50 and 110", ok.Load(), limited.Load())
		}
	})

	t.Run("a limit out of range is refused when routing", func(t *testing.T) {
		for _, l := range []api.RateLimits{{Global: -1}, {Route: -5}, {Route: api.MaxRateLimit + 1}} {
			if _, err := api.NewRouter([]catalog.Operation{}, api.Routes{Limits: l}); err == nil {
				t.Errorf("%+v accepted", l)
			}
		}
	})
}
