package api_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/identity"
)

// benchRouter routes one read through the real kit (request id, access
// log, recovery, CORS, override, guard) to a handler that writes nothing.
func benchRouter(tb testing.TB, limits api.RateLimits, origins []string) http.Handler {
	tb.Helper()
	ops := []catalog.Operation{{ID: "getThing", Group: "things", Method: "GET", Path: "/api/v2/things/{key}", Scope: catalog.Read, Resource: "webhook/{key}"}}
	h, err := api.NewRouter(ops, api.Routes{
		Handlers: map[string]api.Handler{"getThing": func(w http.ResponseWriter, r *http.Request) error {
			w.WriteHeader(http.StatusNoContent)
			return nil
		}},
		Authn:       fakeAuthn{"admin": principal(tb, identity.RoleAdmin, "t1")},
		Limits:      limits,
		CORSOrigins: origins,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// nopWriter is a ResponseWriter that keeps headers and drops the rest.
type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *nopWriter) WriteHeader(int)             {}

// BenchmarkRouterRateLimits compares the kit without limits and CORS to
// the kit with both on (limits too high to be reached), from as many
// goroutines as GOMAXPROCS: the difference is what they cost a request.
func BenchmarkRouterRateLimits(b *testing.B) {
	high := api.RateLimits{Global: api.MaxRateLimit, Route: api.MaxRateLimit}
	for _, bc := range []struct {
		name    string
		limits  api.RateLimits
		origins []string
	}{
		{"off", api.RateLimits{}, nil},
		{"limits", high, nil},
		{"limits+cors", high, []string{api.AnyOrigin}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := benchRouter(b, bc.limits, bc.origins)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				req := httptest.NewRequest("GET", "/api/v2/things/k", nil)
				req = req.WithContext(api.WithLogger(req.Context(), slog.New(slog.NewTextHandler(io.Discard, nil))))
				req.Header.Set("Authorization", "admin")
				req.Header.Set("Origin", "https://app.example.com")
				req.Header.Set(api.RequestIDHeader, "bench")
				w := &nopWriter{h: http.Header{}}
				for pb.Next() {
					clear(w.h)
					h.ServeHTTP(w, req)
				}
			})
		})
	}
}
