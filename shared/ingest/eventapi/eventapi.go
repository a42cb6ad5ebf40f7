// Package eventapi serves the events group: the routes LaunchDarkly's SDKs
// post events to. Each authenticates with the environment's credential
// (SDK key, mobile key or client-side id), counts it against its rate
// limit, checks the body's media type and shape, hands the payload to the
// ingest queue (the local server's inbox, the ingest queue in AWS) as one
// message and answers 202.
package eventapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/ingest"
)

// New is the events group over a.
func New(a *app.App) app.Group {
	// One budget of payload bytes for every event route of the app.
	h := handlers{envs: a.Services.Environments, queue: a.Services.Ingest, budget: newPayloadBudget(), now: a.Now}
	accepted := api.Answer{Status: http.StatusAccepted}
	return app.Group{
		Name: "events",
		Handlers: map[string]api.Handler{
			"postServerEvents":              h.postServerEvents,
			"postDiagnosticEvent":           h.postDiagnosticEvent,
			"postMobileEvents":              h.postMobileEvents,
			"postClientSideEvents":          h.postClientSideEvents,
			"postMobileDiagnosticEvent":     h.postMobileDiagnosticEvent,
			"postClientSideDiagnosticEvent": h.postClientSideDiagnosticEvent,
		},
		Answers: map[string]api.Answer{
			"postServerEvents":              accepted,
			"postDiagnosticEvent":           accepted,
			"postMobileEvents":              accepted,
			"postClientSideEvents":          accepted,
			"postMobileDiagnosticEvent":     accepted,
			"postClientSideDiagnosticEvent": accepted,
		},
	}
}

// handlers are the event routes: each takes one source's payloads with
// one kind of credential.
type handlers struct {
	envs   *environment.Service
	queue  ingest.Queue
	budget payloadBudget
	now    func() time.Time
}

func (h handlers) postServerEvents(w http.ResponseWriter, r *http.Request) error {
	return h.accept(w, r, ingest.SourceServer, environment.ServerCredential)
}

func (h handlers) postDiagnosticEvent(w http.ResponseWriter, r *http.Request) error {
	return h.accept(w, r, ingest.SourceDiagnostic, environment.ServerCredential)
}

func (h handlers) postMobileEvents(w http.ResponseWriter, r *http.Request) error {
	return h.accept(w, r, ingest.SourceMobile, environment.MobileCredential)
}

func (h handlers) postClientSideEvents(w http.ResponseWriter, r *http.Request) error {
	return h.accept(w, r, ingest.SourceClient, environment.ClientSideCredential)
}

func (h handlers) postMobileDiagnosticEvent(w http.ResponseWriter, r *http.Request) error {
	return h.accept(w, r, ingest.SourceMobileDiagnostic, environment.MobileCredential)
}

func (h handlers) postClientSideDiagnosticEvent(w http.ResponseWriter, r *http.Request) error {
	return h.accept(w, r, ingest.SourceClientDiagnostic, environment.ClientSideCredential)
}

// accept takes a payload of source, sent with a credential of kind, to the queue.
func (h handlers) accept(w http.ResponseWriter, r *http.Request, source string, kind environment.CredentialKind) error {
	secret := r.PathValue("clientSideId")
	if kind != environment.ClientSideCredential {
		secret = api.SDKCredential(r)
	}
	env, err := h.envs.ByCredential(r.Context(), kind, secret)
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
	release, err := h.budget.take(r.Context(), size)
	if err != nil {
		w.Header().Set(api.HeaderRetryAfter, "1")
		return err
	}
	defer release()
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
		ReceivedAt: h.now().UnixMilli(), Body: body,
	}
	if err := h.queue.Send(r.Context(), p); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// The payload bytes the event routes hold at once, from reading a body
// until the queue has taken it: without a bound, twenty SDKs flushing
// 5 MB each at the same moment raised the local server's memory from
// 35 MB to 500 MB. Small payloads, what SDKs nearly always send, have
// room of their own, so large ones waiting their turn, or a client
// trickling one in, never hold them up.
const (
	// SmallPayload is the largest payload counted as small.
	SmallPayload = 256 << 10
	// SmallPayloadsInFlight is the room of small payloads (16 or more).
	SmallPayloadsInFlight = 4 << 20
	// LargePayloadsInFlight is the room of larger ones: one of the largest.
	LargePayloadsInFlight = ingest.MaxBody
)

// payloadWait is how long a payload waits for room before it is answered
// 503 with Retry-After (LaunchDarkly's SDKs send it again once); tests
// shorten it.
var payloadWait = 10 * time.Second

// payloadBudget is the room of payloads in flight. A payload waits for
// its room before its body is read, so a waiting one costs only its
// connection.
type payloadBudget struct{ small, large *semaphore.Weighted }

func newPayloadBudget() payloadBudget {
	return payloadBudget{small: semaphore.NewWeighted(SmallPayloadsInFlight), large: semaphore.NewWeighted(LargePayloadsInFlight)}
}

// take waits for room for size bytes and returns what gives it back; a
// payload that finds none within payloadWait is answered 503.
func (b payloadBudget) take(ctx context.Context, size int64) (release func(), err error) {
	room := b.large
	if size <= SmallPayload {
		room = b.small
	}
	wait, cancel := context.WithTimeout(ctx, payloadWait)
	defer cancel()
	if err := room.Acquire(wait, size); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err() // the SDK gave up: nobody reads the answer
		}
		return nil, fault.New(fault.Unavailable, "the server holds as many event payloads as it takes at once; send this one again in a moment")
	}
	return func() { room.Release(size) }, nil
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
