package sdkdata

import "context"

// StreamOpened tells of one streaming connection opened by an SDK.
type StreamOpened struct {
	Env EnvRef
	// UserAgent is the SDK's, e.g. "GoClient/7.14.6".
	UserAgent string
}

// OnOpen registers fn to be told of every stream opened from now on (the
// usage group counts them). fn runs on the connection's goroutine before
// its first event is sent, so it must be quick and must not fail the stream.
func (st *Streams) OnOpen(fn func(context.Context, StreamOpened)) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.onOpen = append(st.onOpen, fn)
}

// Opened tells the registered functions that sub's connection opened.
func (st *Streams) Opened(ctx context.Context, sub *Subscription, userAgent string) {
	st.mu.Lock()
	fns := st.onOpen
	st.mu.Unlock()
	for _, fn := range fns {
		fn(ctx, StreamOpened{Env: sub.ref, UserAgent: userAgent})
	}
}
