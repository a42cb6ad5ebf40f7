package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/flagplane/flagplane/shared/identity"
)

// requestNote is what the access line learns while a request runs. It
// travels by pointer in the context because the handlers below see
// copies of the request, never the one the access log holds.
type requestNote struct {
	route     string // the catalog path, never the raw one: bounded, and free of keys
	method    string // the method served, when X-HTTP-Method-Override changed it
	principal string // the caller's token id, never the token
}

type requestNoteKey struct{}

func noteOf(ctx context.Context) *requestNote {
	n, _ := ctx.Value(requestNoteKey{}).(*requestNote)
	return n
}

// withAccessLog writes one line per request: method, route, status,
// duration, request id and principal. 5xx lines are errors, the rest info.
func withAccessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		note := &requestNote{route: "-"}
		sw := &statusWriter{ResponseWriter: w}
		ctx := context.WithValue(r.Context(), requestNoteKey{}, note)
		next.ServeHTTP(sw, r.WithContext(ctx))

		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		level := slog.LevelInfo
		if status >= 500 {
			level = slog.LevelError
		}
		l := logger(ctx)
		if !l.Enabled(ctx, level) {
			return
		}
		method := r.Method
		if note.method != "" {
			method = note.method
		}
		l.LogAttrs(ctx, level, "request",
			slog.String("method", method),
			slog.String("route", note.route),
			slog.Int("status", status),
			slog.Float64("durationMs", float64(time.Since(start).Microseconds())/1000),
			slog.String("requestId", RequestID(ctx)),
			slog.String("principal", note.principal),
		)
	})
}

// withRoute records the catalog path of the operation that matched.
func withRoute(path string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := noteOf(r.Context()); n != nil {
			n.route = path
		}
		next.ServeHTTP(w, r)
	})
}

// notingAuthn records who called for the access line, so the checks in
// guard need not know about logging. A caller later refused by a check is
// still named: that is who was refused.
type notingAuthn struct{ Authenticator }

func (a notingAuthn) Authenticate(ctx context.Context, token string) (identity.Principal, error) {
	p, err := a.Authenticator.Authenticate(ctx, token)
	if n := noteOf(ctx); err == nil && n != nil {
		n.principal = p.TokenID
	}
	return p, err
}

// statusWriter remembers the status a handler sent.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
