package eventapi

import (
	"testing"
	"time"
)

// SetPayloadWait shortens how long a payload waits for room among those
// in flight, for the test tb.
func SetPayloadWait(tb testing.TB, d time.Duration) {
	tb.Helper()
	old := payloadWait
	payloadWait = d
	tb.Cleanup(func() { payloadWait = old })
}
