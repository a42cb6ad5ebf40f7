package sdkapi

import (
	"net/http"
	"time"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/sdkdata"
)

// writeWait is how long one write of a stream may take before the
// connection is given up.
const writeWait = 30 * time.Second

// stream is GET /all: server-sent events as LaunchDarkly's server-side
// SDKs read them. A put of every live flag first, then a patch or delete
// for each flag created, changed or deleted, and a comment line every
// heartbeat. The stream ends when the SDK key is reset, the connection
// falls behind or the server stops; the SDK then reconnects.
func (h handlers) stream(w http.ResponseWriter, r *http.Request) error {
	if err := h.streaming("/sdk/latest-all", "for example ldcomponents.PollingDataSource()"); err != nil {
		return err
	}
	// Opening a stream counts as a request of its credential; what it
	// then sends does not.
	cred := api.SDKCredential(r)
	if _, err := h.authenticate(w, r, environment.ServerCredential, cred); err != nil {
		return err
	}
	sub, first, err := h.s.Streams().Subscribe(r.Context(), environment.ServerCredential, cred)
	if err != nil {
		return err
	}
	return h.serve(w, r, sub, first)
}

// clientStreamGet is GET /eval/{clientSideId}/{contextBase64}.
func (h handlers) clientStreamGet(w http.ResponseWriter, r *http.Request) error {
	return h.clientStream(w, r, environment.ClientSideCredential, false)
}

// clientStreamReport is REPORT /eval/{clientSideId}.
func (h handlers) clientStreamReport(w http.ResponseWriter, r *http.Request) error {
	return h.clientStream(w, r, environment.ClientSideCredential, true)
}

// mobileStreamGet is GET /meval/{contextBase64}.
func (h handlers) mobileStreamGet(w http.ResponseWriter, r *http.Request) error {
	return h.clientStream(w, r, environment.MobileCredential, false)
}

// mobileStreamReport is REPORT /meval.
func (h handlers) mobileStreamReport(w http.ResponseWriter, r *http.Request) error {
	return h.clientStream(w, r, environment.MobileCredential, true)
}

// clientStream serves a client-side or mobile SDK's stream: server-sent
// events as LaunchDarkly's client SDKs read them. A put of every flag
// visible to that kind of SDK evaluated for the context (in the path, or
// the body of a REPORT) first, as /sdk/evalx answers; then a patch for
// each flag whose evaluation changed or that became visible, a delete for
// each flag deleted, archived or no longer visible, and a comment line
// every heartbeat. A bad context is refused before the stream starts.
func (h handlers) clientStream(w http.ResponseWriter, r *http.Request, kind environment.CredentialKind, inBody bool) error {
	if err := h.streaming(evalxPath(kind), "streaming: false in the SDK's options"); err != nil {
		return err
	}
	env, cred, err := h.clientEnvironment(w, r, kind)
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
	sub, first, err := h.s.Streams().SubscribeClient(r.Context(), kind, cred, c, withReasons(r))
	if err != nil {
		return err
	}
	return h.serve(w, r, sub, first)
}

// clientPing is GET /ping/{clientSideId}, and mobilePing GET /mping: the
// streams of client SDKs that cannot stream a REPORT (a browser's
// EventSource sends GET only). A ping event whenever the environment's
// flag data changes tells the SDK to poll its evaluations again.
func (h handlers) clientPing(w http.ResponseWriter, r *http.Request) error {
	return h.ping(w, r, environment.ClientSideCredential)
}

func (h handlers) mobilePing(w http.ResponseWriter, r *http.Request) error {
	return h.ping(w, r, environment.MobileCredential)
}

func (h handlers) ping(w http.ResponseWriter, r *http.Request, kind environment.CredentialKind) error {
	if err := h.streaming(evalxPath(kind), "streaming: false in the SDK's options"); err != nil {
		return err
	}
	_, cred, err := h.clientEnvironment(w, r, kind)
	if err != nil {
		return err
	}
	sub, first, err := h.s.Streams().SubscribePing(r.Context(), kind, cred)
	if err != nil {
		return err
	}
	return h.serve(w, r, sub, first)
}

// streaming refuses a stream where streams are off (the Lambda
// functions), telling the SDK to poll path instead.
func (h handlers) streaming(path, how string) error {
	if h.o.NoStreaming {
		return fault.New(fault.NotFound, "streaming is not available in this deployment: configure the SDK to poll %s (%s)", path, how)
	}
	return nil
}

// evalxPath is where SDKs of the kind poll.
func evalxPath(kind environment.CredentialKind) string {
	if kind == environment.MobileCredential {
		return "/msdk/evalx"
	}
	return "/sdk/evalx"
}

// serve writes the subscription's events as server-sent events until the
// SDK goes, the subscription ends (its credential was reset, it fell
// behind, the server stops) or a write fails; the SDK then reconnects.
func (h handlers) serve(w http.ResponseWriter, r *http.Request, sub *sdkdata.Subscription, first sdkdata.Event) error {
	defer h.s.Streams().Unsubscribe(sub)
	h.s.Streams().Opened(r.Context(), sub, r.Header.Get("User-Agent"))

	// The server's read and write timeouts are for requests, not for
	// streams: lift the read deadline, and give each write its own.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream; charset=utf-8")
	hd.Set("Cache-Control", "no-cache, no-store")
	hd.Set("X-Accel-Buffering", "no")
	send := func(b []byte) error {
		_ = rc.SetWriteDeadline(time.Now().Add(writeWait))
		if _, err := w.Write(b); err != nil {
			return err
		}
		return rc.Flush()
	}
	w.WriteHeader(http.StatusOK)
	if send(eventBytes(first)) != nil {
		return nil
	}
	heartbeat := time.NewTicker(h.o.Heartbeat)
	defer heartbeat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return nil
		case <-sub.Ended():
			return nil
		case ev := <-sub.Events():
			if send(eventBytes(ev)) != nil {
				return nil
			}
		case <-heartbeat.C:
			if send([]byte(":\n\n")) != nil {
				return nil
			}
		}
	}
}

// eventBytes writes one server-sent event; data is one line of JSON.
func eventBytes(ev sdkdata.Event) []byte {
	b := make([]byte, 0, len(ev.Data)+len(ev.Name)+16)
	b = append(b, "event: "...)
	b = append(b, ev.Name...)
	b = append(b, "\ndata: "...)
	b = append(b, ev.Data...)
	return append(b, "\n\n"...)
}
