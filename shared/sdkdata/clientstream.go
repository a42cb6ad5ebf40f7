package sdkdata

import (
	"context"
	"encoding/json"
	"maps"

	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"

	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
)

// clientView is what a client-side or mobile stream follows: the flags
// of its environment visible to its credential kind, evaluated for its
// context, as the SDK last received them. A ping stream (ping set) only
// learns that its environment's flag data changed, and polls.
type clientView struct {
	c    ldcontext.Context
	key  evalKey
	ping bool

	// flags are the evaluations last sent, and eval the evaluation they
	// are: shared with every view of the same evaluation key since the same
	// refresh, and never written.
	flags map[string]ClientFlag
	eval  *evaluated
	// held are the versions the SDK holds where they are above the
	// evaluation's: LaunchDarkly's client SDKs drop a patch or delete whose
	// version is not above the one they hold, so a value that changed with
	// the flag's version unchanged (a segment changed, the flag became
	// available again after a delete) is sent with one more than held.
	held map[string]int
}

// evalKey is what an evaluation depends on besides the environment's
// data: the credential kind (which flags are visible), the reasons, and
// the context (its JSON).
type evalKey struct {
	kind        environment.CredentialKind
	withReasons bool
	context     string
}

// evalRef names one evaluation of one environment's data in a refresh:
// subscriptions with the same evalRef share it.
type evalRef struct {
	env EnvRef
	key evalKey
}

// evaluated is the flags evaluated for one evalRef at one moment.
type evaluated struct {
	flags map[string]ClientFlag
}

// clientRefresh is what the client streams of one refresh share: the
// evaluations made, and the diffs computed from one evaluation to the
// next (views that held the same evaluation, and no versions of their
// own, get the same events).
type clientRefresh struct {
	evals map[evalRef]*evaluated
	diffs map[[2]*evaluated]clientDiff
}

// clientDiff is the events of one step and the versions the SDK then holds.
type clientDiff struct {
	events []Event
	held   map[string]int
}

func newClientRefresh() *clientRefresh {
	return &clientRefresh{evals: map[evalRef]*evaluated{}, diffs: map[[2]*evaluated]clientDiff{}}
}

// SubscribeClient opens a stream of the evaluations of c for a client-side
// (kind ClientSideCredential, secret the client-side id) or mobile (kind
// MobileCredential, secret the mobile key) SDK, with its first event: a
// put of every flag visible to that kind of SDK, evaluated for c, as
// /sdk/evalx answers. Later events are a patch for each flag whose
// evaluation changed or that became visible, and a delete for each flag
// gone or no longer visible. Close it with Unsubscribe.
func (st *Streams) SubscribeClient(ctx context.Context, kind environment.CredentialKind, secret string, c ldcontext.Context, withReasons bool) (*Subscription, Event, error) {
	if kind == environment.ServerCredential {
		return nil, Event{}, fault.New(fault.Invalid, "server-side SDKs stream flag data (Subscribe), not evaluations")
	}
	view := &clientView{c: c, key: evalKey{kind: kind, withReasons: withReasons, context: c.JSONString()}}
	return st.subscribe(ctx, kind, secret, view)
}

// SubscribePing opens a stream that sends a ping event whenever the flag
// data of the credential's environment changes: the client-side SDKs that
// cannot send a REPORT stream (a browser's EventSource) follow it and
// poll. Its first event is a ping too.
func (st *Streams) SubscribePing(ctx context.Context, kind environment.CredentialKind, secret string) (*Subscription, Event, error) {
	if kind == environment.ServerCredential {
		return nil, Event{}, fault.New(fault.Invalid, "server-side SDKs stream flag data (Subscribe), not pings")
	}
	return st.subscribe(ctx, kind, secret, &clientView{ping: true})
}

// pingEvent is a ping. Its data is not read, but a browser's EventSource
// dispatches no event without data.
var pingEvent = Event{Name: "ping", Data: []byte("{}")}

// first is the view's first event, for the snapshot it starts from.
func (v *clientView) first(ctx context.Context, snap *Snapshot) Event {
	if v.ping {
		return pingEvent
	}
	v.eval = &evaluated{flags: snap.Evaluate(ctx, v.key.kind, v.c, v.key.withReasons)}
	v.flags = v.eval.flags
	return clientPutEvent(v.flags)
}

// whole is the event that gives the SDK the view's last evaluations: a
// put, which replaces every flag the SDK holds, versions included; a ping
// for a ping stream.
func (v *clientView) whole() Event {
	if v.ping {
		return pingEvent
	}
	v.held = nil
	return clientPutEvent(v.flags)
}

// changes returns the view's events from prev to next, evaluating next
// for its context, and diffing, at most once per refresh (r; nil shares
// nothing).
func (v *clientView) changes(ctx context.Context, prev, next *Snapshot, r *clientRefresh) []Event {
	// The evaluations change with the flag data (the ETag), and, in an
	// environment with big segments, with their members too, which the
	// ETag does not cover.
	if prev.ETag == next.ETag && !next.hasBigSegments() {
		return nil
	}
	if v.ping {
		return []Event{pingEvent}
	}
	if r == nil {
		r = newClientRefresh()
	}
	ref := evalRef{next.Ref, v.key}
	e, ok := r.evals[ref]
	if !ok {
		e = &evaluated{flags: next.Evaluate(ctx, v.key.kind, v.c, v.key.withReasons)}
		r.evals[ref] = e
	}
	if len(v.held) > 0 {
		return v.diff(e)
	}
	step := [2]*evaluated{v.eval, e}
	if d, ok := r.diffs[step]; ok {
		v.eval, v.flags, v.held = e, e.flags, maps.Clone(d.held)
		return d.events
	}
	events := v.diff(e)
	r.diffs[step] = clientDiff{events: events, held: maps.Clone(v.held)}
	return events
}

// diff returns the patches and deletes that take the SDK from the view's
// last evaluations to next, and makes next the last.
func (v *clientView) diff(e *evaluated) []Event {
	prev, next := v.flags, e.flags
	v.eval, v.flags = e, e.flags
	var out []Event
	for key, f := range next {
		old, had := prev[key]
		if had && sameEvaluation(old, f) {
			continue
		}
		held, bumped := v.held[key]
		if !bumped && had {
			held = old.Version
		}
		if f.Version <= held {
			f.Version = held + 1
			v.hold(key, f.Version)
		} else {
			delete(v.held, key)
		}
		out = append(out, Event{Name: "patch", Data: clientPatchData(key, f)})
	}
	for key, old := range prev {
		if _, ok := next[key]; ok {
			continue
		}
		held, bumped := v.held[key]
		if !bumped {
			held = old.Version
		}
		v.hold(key, held+1)
		out = append(out, Event{Name: "delete", Data: clientDeleteData(key, held+1)})
	}
	return out
}

func (v *clientView) hold(key string, version int) {
	if v.held == nil {
		v.held = map[string]int{}
	}
	v.held[key] = version
}

// sameEvaluation reports whether two evaluations of a flag send the SDK
// the same thing.
func sameEvaluation(a, b ClientFlag) bool {
	if a.Version != b.Version || a.FlagVersion != b.FlagVersion || a.TrackEvents != b.TrackEvents ||
		a.TrackReason != b.TrackReason || !a.Value.Equal(b.Value) {
		return false
	}
	if (a.Variation == nil) != (b.Variation == nil) || a.Variation != nil && *a.Variation != *b.Variation {
		return false
	}
	return (a.Reason == nil) == (b.Reason == nil) && (a.Reason == nil || *a.Reason == *b.Reason)
}

// clientPutEvent is a client stream's put: the evaluations by flag key,
// the form /sdk/evalx answers.
func clientPutEvent(flags map[string]ClientFlag) Event {
	data, err := json.Marshal(flags)
	if err != nil {
		// ClientFlag holds JSON values only; this cannot fail.
		panic(err)
	}
	return Event{Name: "put", Data: data}
}

// clientPatchData is one evaluation with its flag key, as LaunchDarkly's
// client SDKs read a patch.
func clientPatchData(key string, f ClientFlag) []byte {
	data, err := json.Marshal(struct {
		Key string `json:"key"`
		ClientFlag
	}{key, f})
	if err != nil {
		panic(err)
	}
	return data
}

func clientDeleteData(key string, version int) []byte {
	b := append([]byte(`{"key":`), appendString(nil, key)...)
	b = append(b, `,"version":`...)
	b = appendInt(b, version)
	return append(b, '}')
}

// hasBigSegments reports whether a segment of the snapshot is a big
// segment, whose members are read at evaluation.
func (sn *Snapshot) hasBigSegments() bool {
	for _, s := range sn.segments {
		if s.Model != nil && s.Model.Unbounded {
			return true
		}
	}
	return false
}
