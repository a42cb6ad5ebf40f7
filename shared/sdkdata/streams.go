package sdkdata

import (
	"bytes"
	"context"
	"log/slog"
	"sync"

	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
)

// Event is one message of a streaming connection. As LaunchDarkly's
// server-side SDKs read it: put (the whole data set), patch (one flag or
// segment created or changed) or delete (one flag or segment gone). As
// its client-side and mobile SDKs read it: put (every visible flag
// evaluated), patch (one flag evaluated again), delete (one flag gone or
// no longer visible) or ping (poll).
type Event struct {
	Name string
	Data []byte
}

// streamBuffer is how many events a connection may have waiting. A
// change whose events do not fit is sent as one put of the whole data
// instead (see deliver); a connection that cannot take even that is ended,
// and its SDK reconnects and gets a put. Every open stream holds its
// buffer: 16 events are 640 bytes, where 256 were 10 KB of each stream.
const streamBuffer = 16

// Streams follows the commits of this process and tells every open
// streaming connection what changed in its environment: server-side
// streams the flag data, client-side and mobile streams the evaluations
// of their context. It works in one process only: in AWS, where every
// request may land on another instance, SDKs poll instead.
type Streams struct {
	s *Service

	mu      sync.Mutex
	subs    map[*Subscription]struct{}
	started bool
	closed  bool
	wakeCh  chan struct{}
	done    chan struct{}
	logger  *slog.Logger
	// onOpen are told of every stream opened (see streamhooks.go).
	onOpen []func(context.Context, StreamOpened)
}

func newStreams(s *Service) *Streams {
	return &Streams{s: s, subs: map[*Subscription]struct{}{}, wakeCh: make(chan struct{}, 1), done: make(chan struct{}), logger: slog.Default()}
}

// SetLogger sets where failures to refresh streams are logged.
func (st *Streams) SetLogger(l *slog.Logger) {
	st.mu.Lock()
	st.logger = l
	st.mu.Unlock()
}

// Subscription is one open streaming connection.
type Subscription struct {
	ref    EnvRef
	kind   environment.CredentialKind
	secret string

	events  chan Event
	end     chan struct{}
	endOnce sync.Once
	why     string

	last *Snapshot
	// view is a client-side or mobile stream's (nil for server-side).
	view *clientView
	// tombs are the versions of the deletes sent, by path ("/flags/<key>",
	// "/segments/<key>"), so a flag or segment created again with a lower
	// version is sent as a whole new data set, not a patch the SDK would
	// ignore.
	tombs map[string]int
}

// Events delivers the connection's events after the first.
func (sub *Subscription) Events() <-chan Event { return sub.events }

// Ended is closed when the connection must end: its credential was reset,
// it fell behind, or the server is stopping. Why says which.
func (sub *Subscription) Ended() <-chan struct{} { return sub.end }

// Why says why the subscription ended.
func (sub *Subscription) Why() string { return sub.why }

func (sub *Subscription) stop(why string) {
	sub.endOnce.Do(func() {
		sub.why = why
		close(sub.end)
	})
}

// Subscribe opens a stream of the environment the credential opens, with
// its first event: a put of every live flag. Close the subscription with
// Unsubscribe.
func (st *Streams) Subscribe(ctx context.Context, kind environment.CredentialKind, secret string) (*Subscription, Event, error) {
	return st.subscribe(ctx, kind, secret, nil)
}

// subscribe opens a server-side stream (view nil) or a client one.
func (st *Streams) subscribe(ctx context.Context, kind environment.CredentialKind, secret string, view *clientView) (*Subscription, Event, error) {
	env, err := st.s.Environment(ctx, kind, secret)
	if err != nil {
		return nil, Event{}, err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return nil, Event{}, fault.New(fault.Unavailable, "the server is stopping; reconnect shortly")
	}
	ref := RefOf(env)
	snap, err := st.s.Flags(ctx, ref)
	if err != nil {
		return nil, Event{}, err
	}
	sub := &Subscription{ref: ref, kind: kind, secret: secret, events: make(chan Event, streamBuffer),
		end: make(chan struct{}), last: snap, view: view}
	var first Event
	if view == nil {
		sub.tombs = map[string]int{}
		first = putEvent(snap)
	} else {
		first = view.first(ctx, snap)
	}
	st.subs[sub] = struct{}{}
	if !st.started {
		st.started = true
		go st.run()
	}
	return sub, first, nil
}

// Unsubscribe forgets a subscription whose connection closed.
func (st *Streams) Unsubscribe(sub *Subscription) {
	st.mu.Lock()
	delete(st.subs, sub)
	st.mu.Unlock()
	sub.stop("closed")
}

// Open is the number of open subscriptions.
func (st *Streams) Open() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.subs)
}

// Close ends every stream and refuses new ones: the server is stopping.
func (st *Streams) Close() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return
	}
	st.closed = true
	close(st.done)
	for sub := range st.subs {
		sub.stop("the server is stopping")
	}
	clear(st.subs)
}

// wake asks the loop to look for changes; it never blocks.
func (st *Streams) wake() {
	select {
	case st.wakeCh <- struct{}{}:
	default:
	}
}

func (st *Streams) run() {
	for {
		select {
		case <-st.done:
			return
		case <-st.wakeCh:
			st.refresh(context.Background())
		}
	}
}

// refresh reads each subscribed environment once and sends every
// subscription what changed since its last data; client streams of the
// same environment, kind and context share one evaluation.
func (st *Streams) refresh(ctx context.Context) {
	st.mu.Lock()
	defer st.mu.Unlock()
	snaps := map[EnvRef]*Snapshot{}
	evals := newClientRefresh()
	for sub := range st.subs {
		env, err := st.s.Environment(ctx, sub.kind, sub.secret)
		if fault.Is(err, fault.Unauthorized) || (err == nil && RefOf(env) != sub.ref) {
			st.end(sub, "the credential no longer opens this environment")
			continue
		}
		if err != nil {
			st.logger.Warn("stream refresh: credential check failed; will retry", "error", err.Error())
			continue
		}
		snap, ok := snaps[sub.ref]
		if !ok {
			if snap, err = st.s.Flags(ctx, sub.ref); err != nil {
				st.logger.Warn("stream refresh: reading flags failed; will retry", "project", sub.ref.ProjectKey, "environment", sub.ref.EnvKey, "error", err.Error())
				continue
			}
			snaps[sub.ref] = snap
		}
		if !sub.deliver(sub.changes(ctx, snap, evals)) {
			st.end(sub, "the connection fell behind")
		}
	}
}

// deliver queues evs for the connection. When they do not fit in what its
// buffer has free (a change of many flags at once, or a slow reader), one
// put of the subscription's last data takes their place; false when not
// even that fits.
func (sub *Subscription) deliver(evs []Event) bool {
	if len(evs) > cap(sub.events)-len(sub.events) {
		evs = []Event{sub.whole()}
	}
	for _, ev := range evs {
		select {
		case sub.events <- ev:
		default:
			return false
		}
	}
	return true
}

// whole is the put that gives the SDK the subscription's last data: it
// replaces all the SDK holds, so no delete's or patch's version is kept.
func (sub *Subscription) whole() Event {
	if sub.view != nil {
		return sub.view.whole()
	}
	clear(sub.tombs)
	return putEvent(sub.last)
}

func (st *Streams) end(sub *Subscription, why string) {
	delete(st.subs, sub)
	sub.stop(why)
}

// changes returns the events that take the subscription from its last
// data to next, and makes next its last.
func (sub *Subscription) changes(ctx context.Context, next *Snapshot, evals *clientRefresh) []Event {
	if sub.view == nil {
		return sub.diff(next)
	}
	prev := sub.last
	if prev == next {
		return nil
	}
	sub.last = next
	return sub.view.changes(ctx, prev, next, evals)
}

// diff returns the flag data events that take a server-side subscription
// from its last data to next, and makes next its last. Segments come first, so a flag that
// starts using a new segment finds it; a segment is only deleted once no
// flag uses it.
func (sub *Subscription) diff(next *Snapshot) []Event {
	prev := sub.last
	if prev == next {
		return nil
	}
	sub.last = next
	segs, ok := sub.diffKind("/segments/", entries(prev.segments, segmentEntry), entries(next.segments, segmentEntry))
	if !ok {
		clear(sub.tombs)
		return []Event{putEvent(next)}
	}
	flags, ok := sub.diffKind("/flags/", entries(prev.flags, flagEntry), entries(next.flags, flagEntry))
	if !ok {
		clear(sub.tombs)
		return []Event{putEvent(next)}
	}
	return append(segs, flags...)
}

// entries are the items SDKs receive (those with JSON), as entries.
func entries[T any](items []T, of func(T) entry) []entry {
	out := make([]entry, 0, len(items))
	for _, it := range items {
		if e := of(it); e.json != nil {
			out = append(out, e)
		}
	}
	return out
}

// diffKind returns the patches and deletes of one kind (path is
// "/flags/" or "/segments/") that take prev to next; false when an item
// came back with a version the SDK has seen, which only a put conveys.
func (sub *Subscription) diffKind(path string, prev, next []entry) ([]Event, bool) {
	before := make(map[string]entry, len(prev))
	for _, e := range prev {
		before[e.key] = e
	}
	var out []Event
	for _, e := range next {
		old, had := before[e.key]
		delete(before, e.key)
		if had && old.version == e.version && bytes.Equal(old.json, e.json) {
			continue
		}
		floor := sub.tombs[path+e.key]
		if had {
			floor = max(floor, old.version)
		}
		if e.version <= floor {
			return nil, false
		}
		out = append(out, Event{Name: "patch", Data: patchData(path+e.key, e.json)})
	}
	for _, old := range prev {
		if _, gone := before[old.key]; !gone {
			continue
		}
		v := max(old.version, sub.tombs[path+old.key]) + 1
		sub.tombs[path+old.key] = v
		out = append(out, Event{Name: "delete", Data: deleteData(path+old.key, v)})
	}
	return out, true
}

func putEvent(sn *Snapshot) Event {
	all := sn.All()
	b := make([]byte, 0, len(all)+24)
	b = append(b, `{"path":"/","data":`...)
	b = append(b, all...)
	return Event{Name: "put", Data: append(b, '}')}
}

func patchData(path string, data []byte) []byte {
	b := append([]byte(`{"path":`), appendString(nil, path)...)
	b = append(b, `,"data":`...)
	b = append(b, data...)
	return append(b, '}')
}

func deleteData(path string, version int) []byte {
	b := append([]byte(`{"path":`), appendString(nil, path)...)
	b = append(b, `,"version":`...)
	b = appendInt(b, version)
	return append(b, '}')
}

func appendInt(b []byte, n int) []byte {
	if n == 0 {
		return append(b, '0')
	}
	if n < 0 {
		b = append(b, '-')
		n = -n
	}
	var d [20]byte
	i := len(d)
	for n > 0 {
		i--
		d[i] = byte('0' + n%10)
		n /= 10
	}
	return append(b, d[i:]...)
}
