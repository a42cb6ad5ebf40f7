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
	if h.o.NoStreaming {
		return fault.New(fault.NotFound, "streaming is not available in this deployment: configure the SDK to poll %s (for example ldcomponents.PollingDataSource())", "/sdk/latest-all")
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
