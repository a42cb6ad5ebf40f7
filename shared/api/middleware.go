package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/identity"
)

type requestIDKey struct{}

// RequestID returns the id of the request in ctx, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// WithRequestID returns ctx carrying id as the request's id. The router
// keeps an id already in the context, so an adapter in front of it (the
// Lambda one, with API Gateway's id) decides the id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDHeader carries the request id both ways.
const RequestIDHeader = "X-Request-Id"

// maxRequestIDLen bounds the ids taken from clients.
const maxRequestIDLen = 128

// clientRequestID returns the client's X-Request-Id when it is safe to
// log and echo (1 to 128 of A-Z a-z 0-9 . _ : -), else "".
func clientRequestID(h http.Header) string {
	id := h.Get(RequestIDHeader)
	if id == "" || len(id) > maxRequestIDLen {
		return ""
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return ""
		}
	}
	return id
}

// withRequestID gives every request an id, returned in X-Request-Id and in
// error bodies: the one already in the context, else a valid one the
// client sent (so its traces line up with ours), else a new one.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := RequestID(r.Context())
		if id == "" {
			if id = clientRequestID(r.Header); id == "" {
				id = uuid.NewString()
			}
			r = r.WithContext(WithRequestID(r.Context(), id))
		}
		w.Header().Set(RequestIDHeader, id)
		next.ServeHTTP(w, r)
	})
}

// withRecovery turns a panic into a generic 500 so one bad request never takes the process down.
func withRecovery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				WriteError(w, r, fault.Wrap(fmt.Errorf("panic: %v", v), fault.Internal, "panic"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// Authenticator resolves the raw access token of a request to a principal.
// It returns a fault.Unauthorized error for unknown or expired tokens.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (identity.Principal, error)
}

// TokenFromHeader takes the token from Authorization, as the raw value or after "Bearer ".
func TokenFromHeader(h http.Header) string {
	v := strings.TrimSpace(h.Get("Authorization"))
	if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
		v = strings.TrimSpace(v[7:])
	}
	return v
}

// BetaHeader is the header beta operations require, with the value "beta".
// It is the spec's name and the one error messages give.
const BetaHeader = "SVC-API-Version"

// LDVersionHeader is LaunchDarkly's name for it, which LaunchDarkly's own
// clients send: "beta" there opts in to beta operations just the same.
// Its dated values (LaunchDarkly's Terraform provider sends 20240415 on
// every request) select an API version in the reference; flagplane serves
// one version, so they are accepted on every operation, and change only
// the type of the timestamps the spec has as strings (jsondoc.MillisString,
// written as integers then). They are not "beta": a beta operation still
// needs one of the two set to beta.
const LDVersionHeader = "LD-API-Version"

// hasBeta reports whether either header says beta. Each accepts the value
// sent once, repeated, or comma-joined.
func hasBeta(h http.Header) bool {
	return valuesHaveBeta(h.Values(BetaHeader)) || valuesHaveBeta(h.Values(LDVersionHeader))
}

func valuesHaveBeta(values []string) bool {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(part), "beta") {
				return true
			}
		}
	}
	return false
}

// guard runs the checks every operation shares, in order: credential,
// rate limits, beta header, then the caller's rights on the operation's
// resource. A Public operation (the health check, the OAuth token
// exchange, the SDK and event routes) skips them: it authenticates its
// caller itself. Those that take an SDK credential count it with
// LimitCredential once it has authenticated.
func guard(op catalog.Operation, rt Routes, lim *limiter, next Handler) http.Handler {
	needs := rt.Needs[op.ID]
	route := lim.route()
	var gate *credentialGate
	if op.Public && lim != nil && lim.credentials != nil {
		gate = &credentialGate{lim: lim, op: op}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := func() error {
			if op.Public {
				if gate != nil {
					r = r.WithContext(context.WithValue(r.Context(), credentialGateKey{}, gate))
				}
				return next(w, r)
			}
			token := TokenFromHeader(r.Header)
			if token == "" {
				return fault.New(fault.Unauthorized, "the Authorization header must carry an access token")
			}
			p, err := rt.Authn.Authenticate(r.Context(), token)
			if err != nil {
				return err
			}
			if lim.limitsTokens() {
				if err := lim.admit(w.Header(), op, route); err != nil {
					return err
				}
			}
			if op.Beta && !hasBeta(r.Header) {
				return fault.New(fault.Forbidden, "%s is a beta operation: send the header %s: beta", op.ID, BetaHeader)
			}
			r = r.WithContext(identity.With(r.Context(), p))
			if r, err = authorize(r, op, p, needs, rt.Tags); err != nil {
				return err
			}
			return next(w, r)
		}()
		if err != nil {
			WriteError(w, r, err)
		}
	})
}
