package endpoints

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/ingest"
)

// Event ingestion: the routes LaunchDarkly's SDKs post events to. Each
// authenticates with the environment's credential (SDK key, mobile key or
// client-side id), counts it against its rate limit, checks the body's
// media type and shape, hands the payload to the ingest queue as one
// message and answers 202.
func eventHandlers(s Services) map[string]api.Handler {
	// One budget of payload bytes for every event route of this router.
	inFlight := semaphore.NewWeighted(PayloadBytesInFlight)
	return map[string]api.Handler{
		"postServerEvents":              ingestHandler(s, inFlight, ingest.SourceServer, environment.ServerCredential),
		"postDiagnosticEvent":           ingestHandler(s, inFlight, ingest.SourceDiagnostic, environment.ServerCredential),
		"postMobileEvents":              ingestHandler(s, inFlight, ingest.SourceMobile, environment.MobileCredential),
		"postClientSideEvents":          ingestHandler(s, inFlight, ingest.SourceClient, environment.ClientSideCredential),
		"postMobileDiagnosticEvent":     ingestHandler(s, inFlight, ingest.SourceMobileDiagnostic, environment.MobileCredential),
		"postClientSideDiagnosticEvent": ingestHandler(s, inFlight, ingest.SourceClientDiagnostic, environment.ClientSideCredential),
	}
}

// PayloadBytesInFlight bounds the payload bytes the event routes hold at
// once, from reading a body until the queue has taken it: without it,
// twenty SDKs flushing 5 MB each at the same moment raised the local
// server's memory from 35 MB to 500 MB. It admits one payload of the
// largest size and a mebibyte of small ones beside it. A payload waits
// its turn before its body is read, so a waiting one costs only its
// connection.
const PayloadBytesInFlight = ingest.MaxBody + 1<<20

// payloadWait is how long a payload waits for room in
// PayloadBytesInFlight before it is answered 503 with Retry-After
// (LaunchDarkly's SDKs send it again once); tests shorten it.
var payloadWait = 10 * time.Second

func ingestHandler(s Services, inFlight *semaphore.Weighted, source string, kind environment.CredentialKind) api.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		secret := r.PathValue("clientSideId")
		if kind != environment.ClientSideCredential {
			secret = sdkCredential(r.Header.Get("Authorization"))
		}
		env, err := s.Environments.ByCredential(r.Context(), kind, secret)
		if err != nil {
			return err
		}
		if err := api.LimitCredential(w, r, environment.CredentialName(kind, env.ID)); err != nil {
			return err
		}
		if err := api.RequireJSON(r); err != nil {
			return err
		}
		size := r.ContentLength
		if size > ingest.MaxBody {
			return tooLarge()
		}
		if size < 0 { // unknown until read (chunked): hold room for the largest
			size = ingest.MaxBody
		}
		wait, cancel := context.WithTimeout(r.Context(), payloadWait)
		err = inFlight.Acquire(wait, size)
		cancel()
		if err != nil {
			if r.Context().Err() != nil {
				return r.Context().Err() // the SDK gave up: nobody reads the answer
			}
			w.Header().Set(api.HeaderRetryAfter, "1")
			return fault.New(fault.Unavailable, "the server holds as many event payloads as it takes at once; send this one again in a moment")
		}
		defer inFlight.Release(size)
		body, err := readPayload(w, r)
		if err != nil {
			return err
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

// readPayload reads the body into one buffer of its announced length, so
// a payload costs its size once, not the doubling copies of a growing
// buffer; a body of unknown length is read up to ingest.MaxBody.
func readPayload(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, ingest.MaxBody)
	var (
		buf []byte
		err error
	)
	if r.ContentLength >= 0 {
		buf = make([]byte, r.ContentLength)
		_, err = io.ReadFull(body, buf)
	} else {
		buf, err = io.ReadAll(body)
	}
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, tooLarge()
		}
		return nil, fault.Wrap(err, fault.Invalid, "read the event payload")
	}
	return buf, nil
}

func tooLarge() error {
	return fault.New(fault.TooLarge, "the event payload is larger than %d bytes", ingest.MaxBody)
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
