// Package sdkapi serves LaunchDarkly's SDKs: the flag data server-side SDKs
// poll (/sdk/latest-all) or stream (/all), and the evaluations client-side
// (/sdk/evalx/{clientSideId}/...) and mobile (/msdk/evalx/...) SDKs poll
// or stream (/eval/{clientSideId}/..., /meval/...); the streams are served
// by the local server only. It also serves OpenFeature's remote evaluation
// protocol (/ofrep/v1/evaluate/flags, see ofrep.go) to OpenFeature SDKs.
// These routes are the catalog's sdk group; they take no access token:
// each checks the SDK credential it is sent (the SDK key, mobile key or
// client-side id) itself.
package sdkapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/sdkdata"
)

// Operation ids of the sdk group.
const (
	OpLatestAll        = "getSDKLatestAll"
	OpLatestFlags      = "getSDKLatestFlags"
	OpLatestFlag       = "getSDKLatestFlag"
	OpStreamAll        = "streamSDKAll"
	OpClientEvalGet    = "getSDKClientSideEvaluations"
	OpClientEvalReport = "reportSDKClientSideEvaluations"
	OpMobileEvalGet    = "getSDKMobileEvaluations"
	OpMobileEvalReport = "reportSDKMobileEvaluations"
	// The client-side and mobile streams.
	OpClientStreamGet    = "streamSDKClientSideEvaluations"
	OpClientStreamReport = "streamSDKClientSideEvaluationsReport"
	OpClientPing         = "streamSDKClientSidePing"
	OpMobileStreamGet    = "streamSDKMobileEvaluations"
	OpMobileStreamReport = "streamSDKMobileEvaluationsReport"
	OpMobilePing         = "streamSDKMobilePing"
)

// DefaultHeartbeat is how often an idle stream gets a comment line, so
// proxies and the SDK know the connection is alive.
const DefaultHeartbeat = 3 * time.Minute

// Options tune the handlers.
type Options struct {
	// Heartbeat is the interval of stream heartbeats; DefaultHeartbeat when zero.
	Heartbeat time.Duration
	// NoStreaming answers the streams (/all, /eval, /meval, /ping, /mping)
	// with a 404 telling the SDK to poll: in AWS, where API Gateway and
	// Lambda hold no long-lived connection.
	NoStreaming bool
}

// Handlers returns the sdk group's handlers by operation id.
func Handlers(s *sdkdata.Service, o Options) map[string]api.Handler {
	if o.Heartbeat <= 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	h := handlers{s: s, o: o}
	return map[string]api.Handler{
		OpLatestAll:        h.latestAll,
		OpLatestFlags:      h.latestFlags,
		OpLatestFlag:       h.latestFlag,
		OpStreamAll:        h.stream,
		OpClientEvalGet:    h.clientEvalGet,
		OpClientEvalReport: h.clientEvalReport,
		OpMobileEvalGet:    h.mobileEvalGet,
		OpMobileEvalReport: h.mobileEvalReport,

		OpClientStreamGet:    h.clientStreamGet,
		OpClientStreamReport: h.clientStreamReport,
		OpClientPing:         h.clientPing,
		OpMobileStreamGet:    h.mobileStreamGet,
		OpMobileStreamReport: h.mobileStreamReport,
		OpMobilePing:         h.mobilePing,

		OpOFREPFlag:  h.ofrepFlag,
		OpOFREPFlags: h.ofrepFlags,
	}
}

type handlers struct {
	s *sdkdata.Service
	o Options
}

// snapshot authenticates the request's credential, counts it against
// its rate limit and reads its environment's flags.
func (h handlers) snapshot(w http.ResponseWriter, r *http.Request, kind environment.CredentialKind, cred string) (*sdkdata.Snapshot, error) {
	env, err := h.authenticate(w, r, kind, cred)
	if err != nil {
		return nil, err
	}
	return h.s.Flags(r.Context(), sdkdata.RefOf(env))
}

// authenticate resolves an SDK key to its environment and counts it
// against its rate limit.
func (h handlers) authenticate(w http.ResponseWriter, r *http.Request, kind environment.CredentialKind, cred string) (*environment.Environment, error) {
	if cred == "" {
		return nil, fault.New(fault.Unauthorized, "the Authorization header must carry the environment's SDK key")
	}
	env, err := h.s.Environment(r.Context(), kind, cred)
	if err != nil {
		return nil, err
	}
	if err := api.LimitCredential(w, r, environment.CredentialName(kind, env.ID)); err != nil {
		return nil, err
	}
	return env, nil
}

// writeData answers body with the snapshot's ETag, or 304 when the SDK
// already holds that version.
func writeData(w http.ResponseWriter, r *http.Request, etag string, body func() []byte) {
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", "private, max-age=0, must-revalidate")
	if matches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body())
}

// matches reports whether an If-None-Match value names etag (weak
// comparison, as RFC 9110 asks for If-None-Match).
func matches(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}

// latestAll is GET /sdk/latest-all: every live flag and the environment's segments.
func (h handlers) latestAll(w http.ResponseWriter, r *http.Request) error {
	snap, err := h.snapshot(w, r, environment.ServerCredential, api.SDKCredential(r))
	if err != nil {
		return err
	}
	writeData(w, r, snap.ETag, snap.All)
	return nil
}

// latestFlags is GET /sdk/latest-flags: the flags alone.
func (h handlers) latestFlags(w http.ResponseWriter, r *http.Request) error {
	snap, err := h.snapshot(w, r, environment.ServerCredential, api.SDKCredential(r))
	if err != nil {
		return err
	}
	writeData(w, r, snap.ETag, snap.FlagsJSON)
	return nil
}

// latestFlag is GET /sdk/latest-flags/{flagKey}: one flag.
func (h handlers) latestFlag(w http.ResponseWriter, r *http.Request) error {
	snap, err := h.snapshot(w, r, environment.ServerCredential, api.SDKCredential(r))
	if err != nil {
		return err
	}
	key := r.PathValue("flagKey")
	f, ok := snap.Flag(key)
	if !ok {
		return fault.New(fault.NotFound, "flag %q not found", key)
	}
	writeData(w, r, `"`+strings.Trim(snap.ETag, `"`)+`-`+key+`"`, func() []byte { return f.JSON })
	return nil
}

// clientEvalGet is GET /sdk/evalx/{clientSideId}/contexts/{contextBase64}.
func (h handlers) clientEvalGet(w http.ResponseWriter, r *http.Request) error {
	return h.evaluate(w, r, environment.ClientSideCredential, false)
}

// clientEvalReport is REPORT /sdk/evalx/{clientSideId}/context.
func (h handlers) clientEvalReport(w http.ResponseWriter, r *http.Request) error {
	return h.evaluate(w, r, environment.ClientSideCredential, true)
}

// mobileEvalGet is GET /msdk/evalx/contexts/{contextBase64}.
func (h handlers) mobileEvalGet(w http.ResponseWriter, r *http.Request) error {
	return h.evaluate(w, r, environment.MobileCredential, false)
}

// mobileEvalReport is REPORT /msdk/evalx/context.
func (h handlers) mobileEvalReport(w http.ResponseWriter, r *http.Request) error {
	return h.evaluate(w, r, environment.MobileCredential, true)
}

// evaluate answers a client-side or mobile SDK's request for its flags'
// values for a context: in the path (GET, base64url JSON) or the body
// (REPORT).
func (h handlers) evaluate(w http.ResponseWriter, r *http.Request, kind environment.CredentialKind, inBody bool) error {
	env, _, err := h.clientEnvironment(w, r, kind)
	if err != nil {
		return err
	}
	c, err := readContext(w, r, inBody)
	if err != nil {
		return err
	}
	if err := checkSecureMode(env, kind, c, r); err != nil {
		return err
	}
	snap, err := h.s.Flags(r.Context(), sdkdata.RefOf(env))
	if err != nil {
		return err
	}
	body, err := snap.EvaluateJSON(r.Context(), kind, c, withReasons(r))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "private, no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	return nil
}

// clientEnvironment resolves a client-side or mobile SDK's credential (the
// client-side id in the path, the mobile key in Authorization) and counts
// it against its rate limit. An unknown client-side id is a 404, as
// LaunchDarkly answers it (its browser SDK then says the environment was
// not found); an unknown mobile key a 401.
func (h handlers) clientEnvironment(w http.ResponseWriter, r *http.Request, kind environment.CredentialKind) (*environment.Environment, string, error) {
	cred := r.PathValue("clientSideId")
	if kind == environment.MobileCredential {
		cred = api.SDKCredential(r)
		if cred == "" {
			return nil, "", fault.New(fault.Unauthorized, "the Authorization header must carry the environment's mobile key")
		}
	}
	if cred == "" {
		return nil, "", fault.New(fault.NotFound, "the path must carry the environment's client-side id")
	}
	env, err := h.s.Environment(r.Context(), kind, cred)
	if kind == environment.ClientSideCredential && fault.Is(err, fault.Unauthorized) {
		return nil, "", fault.New(fault.NotFound, "no environment has the client-side id %q", cred)
	}
	if err != nil {
		return nil, "", err
	}
	if err := api.LimitCredential(w, r, environment.CredentialName(kind, env.ID)); err != nil {
		return nil, "", err
	}
	return env, cred, nil
}

// readContext reads the evaluation context of a client SDK's request:
// base64url JSON in the path (GET) or JSON in the body (REPORT).
func readContext(w http.ResponseWriter, r *http.Request, inBody bool) (ldcontext.Context, error) {
	var c ldcontext.Context
	var raw []byte
	var err error
	if inBody {
		if raw, err = api.ReadBody(w, r); err != nil {
			return c, err
		}
	} else if raw, err = decodeBase64(r.PathValue("contextBase64")); err != nil {
		return c, fault.Wrap(err, fault.Invalid, "the context in the path is not base64url-encoded JSON")
	}
	if err := c.UnmarshalJSON(raw); err != nil {
		return c, fault.Wrap(err, fault.Invalid, "invalid context: %s", err.Error())
	}
	return c, nil
}

// withReasons reports whether the SDK asks for evaluation reasons.
func withReasons(r *http.Request) bool { return r.URL.Query().Get("withReasons") == "true" }

// checkSecureMode refuses, in an environment with secure mode on, a
// client-side request whose h parameter is not the context's secure mode
// hash: the hex HMAC-SHA256 of its fully qualified key with the
// environment's SDK key, as LaunchDarkly's server-side SDKs compute it
// (SecureModeHash). Mobile SDKs are not asked for one.
func checkSecureMode(env *environment.Environment, kind environment.CredentialKind, c ldcontext.Context, r *http.Request) error {
	if !env.SecureMode || kind != environment.ClientSideCredential {
		return nil
	}
	got, err := hex.DecodeString(r.URL.Query().Get("h"))
	mac := hmac.New(sha256.New, []byte(env.APIKey))
	mac.Write([]byte(c.FullyQualifiedKey()))
	if err != nil || !hmac.Equal(got, mac.Sum(nil)) {
		return fault.New(fault.Forbidden, "secure mode is on for this environment: the h query parameter must be the context's secure mode hash "+
			"(the hex HMAC-SHA256 of its fully qualified key with the environment's SDK key, as the server-side SDKs' SecureModeHash computes it)")
	}
	return nil
}

// decodeBase64 reads base64url with or without padding, and, leniently,
// the standard alphabet.
func decodeBase64(s string) ([]byte, error) {
	t := strings.TrimRight(s, "=")
	b, err := base64.RawURLEncoding.DecodeString(t)
	if err == nil {
		return b, nil
	}
	if b, err2 := base64.RawStdEncoding.DecodeString(t); err2 == nil {
		return b, nil
	}
	return nil, err
}
