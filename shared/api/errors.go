package api

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/flagplane/flagplane/shared/fault"
)

// statusOf is the one map from error codes to HTTP statuses.
var statusOf = map[fault.Code]int{
	fault.Invalid:          http.StatusBadRequest,
	fault.Unauthorized:     http.StatusUnauthorized,
	fault.Forbidden:        http.StatusForbidden,
	fault.NotFound:         http.StatusNotFound,
	fault.MethodNotAllowed: http.StatusMethodNotAllowed,
	fault.Conflict:         http.StatusConflict,
	fault.OptimisticLock:   http.StatusConflict,
	fault.SequenceConflict: http.StatusConflict,
	fault.TooLarge:         http.StatusRequestEntityTooLarge,
	fault.UnsupportedMedia: http.StatusUnsupportedMediaType,
	fault.PatchFailed:      http.StatusUnprocessableEntity,
	fault.RateLimited:      http.StatusTooManyRequests,
	fault.NotImplemented:   http.StatusNotImplemented,
	fault.Unavailable:      http.StatusServiceUnavailable,
	fault.Internal:         http.StatusInternalServerError,
}

// Status returns the HTTP status for err.
func Status(err error) int {
	if s, ok := statusOf[fault.CodeOf(err)]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// ErrorBody is the body of every error response.
type ErrorBody struct {
	Code    fault.Code `json:"code"`
	Message string     `json:"message"`
	ID      string     `json:"id"`
}

// WriteError writes err as an error body. Internal errors are logged with
// the request id and shown to the client only as a generic sentence.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	code := fault.CodeOf(err)
	status := Status(err)
	id := RequestID(r.Context())
	if status >= 500 && code != fault.NotImplemented {
		logger(r.Context()).Error("request failed", "requestId", id, "method", r.Method, "path", r.URL.Path, "error", err.Error())
		// Unavailable's message names only what failed, never why: the cause is in the log line above.
		if code != fault.Unavailable {
			code = fault.Internal
		}
	}
	WriteJSON(w, status, ErrorBody{Code: code, Message: fault.MessageOf(err), ID: id})
}

type loggerKey struct{}

// WithLogger attaches the logger used for internal errors.
func WithLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, l)
}

func logger(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}
