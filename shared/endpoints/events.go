package endpoints

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/ingest"
)

// Event ingestion: the routes LaunchDarkly's SDKs post events to. Each
// authenticates with the environment's credential (SDK key, mobile key or
// client-side id), checks the body's shape, hands the payload to the
// ingest queue as one message and answers 202.
func eventHandlers(s Services) map[string]api.Handler {
	return map[string]api.Handler{
		"postServerEvents":              ingestHandler(s, ingest.SourceServer, environment.ServerCredential),
		"postDiagnosticEvent":           ingestHandler(s, ingest.SourceDiagnostic, environment.ServerCredential),
		"postMobileEvents":              ingestHandler(s, ingest.SourceMobile, environment.MobileCredential),
		"postClientSideEvents":          ingestHandler(s, ingest.SourceClient, environment.ClientSideCredential),
		"postMobileDiagnosticEvent":     ingestHandler(s, ingest.SourceMobileDiagnostic, environment.MobileCredential),
		"postClientSideDiagnosticEvent": ingestHandler(s, ingest.SourceClientDiagnostic, environment.ClientSideCredential),
	}
}

func ingestHandler(s Services, source string, kind environment.CredentialKind) api.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		secret := r.PathValue("clientSideId")
		if kind != environment.ClientSideCredential {
			secret = sdkCredential(r.Header.Get("Authorization"))
		}
		env, err := s.Environments.ByCredential(r.Context(), kind, secret)
		if err != nil {
			return err
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, ingest.MaxBody))
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				return fault.New(fault.TooLarge, "the event payload is larger than %d bytes", ingest.MaxBody)
			}
			return fault.Wrap(err, fault.Invalid, "read the event payload")
		}
		if err := checkShape(source, body); err != nil {
			return err
		}
		p := ingest.Payload{
			Source: source, ProjectKey: env.ProjectKey, EnvKey: env.Key, EnvID: env.ID,
			PayloadID:  limitHeader(r.Header.Get("X-LaunchDarkly-Payload-ID"), 128),
			UserAgent:  limitHeader(firstOf(r.Header.Get("X-LaunchDarkly-User-Agent"), r.Header.Get("User-Agent")), 256),
			Wrapper:    limitHeader(r.Header.Get("X-LaunchDarkly-Wrapper"), 256),
			Tags:       limitHeader(r.Header.Get("X-LaunchDarkly-Tags"), 1024),
			ReceivedAt: time.Now().UnixMilli(), Body: body,
		}
		if err := s.Ingest.Send(r.Context(), p); err != nil {
			return err
		}
		w.WriteHeader(http.StatusAccepted)
		return nil
	}
}

// sdkCredential is the key of an Authorization header: the key alone, as
// server SDKs send it, or "api_key <key>", as mobile SDKs do.
func sdkCredential(h string) string {
	h = strings.TrimSpace(h)
	if rest, ok := strings.CutPrefix(h, "api_key "); ok {
		return strings.TrimSpace(rest)
	}
	return h
}

// checkShape refuses a body that is not JSON, or for events not an array:
// the events inside are checked one by one later, and a bad one skipped.
func checkShape(source string, body []byte) error {
	trimmed := bytes.TrimSpace(body)
	if !json.Valid(trimmed) {
		return fault.New(fault.Invalid, "the event payload is not valid JSON")
	}
	if ingest.IsDiagnostic(source) {
		if len(trimmed) == 0 || trimmed[0] != '{' {
			return fault.New(fault.Invalid, "a diagnostic payload is one JSON object")
		}
		return nil
	}
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return fault.New(fault.Invalid, "an event payload is a JSON array of events")
	}
	return nil
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// limitHeader keeps at most n bytes of a header's value.
func limitHeader(v string, n int) string {
	if len(v) > n {
		return v[:n]
	}
	return v
}
