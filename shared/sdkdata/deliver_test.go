package sdkdata

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"

	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/flag"
)

// TestDeliver: a change of more flags than a stream's buffer holds is
// sent as one put, so a small buffer per stream ends no stream on a
// bulk change.
func TestDeliver(t *testing.T) {
	s, _ := newTestService(t, time.Now)
	ctx := context.Background()
	ref := EnvRef{"p", "test"}
	many := func(n int, version int64) []*flag.Flag {
		var out []*flag.Flag
		for i := range n {
			f := boolFlag(fmt.Sprintf("f%02d", i), version, false)
			// On and seen by client-side SDKs, so client streams evaluate it.
			f.ClientSideAvailability.UsingEnvironmentID = true
			f.Environments = map[string]*flag.EnvConfig{"test": {On: true, Fallthrough: flag.VariationOrRoll{Variation: new(int)}}}
			out = append(out, f)
		}
		return out
	}
	before := s.snapshot(ref, many(2, 1), nil)
	after := s.snapshot(ref, many(streamBuffer+4, 2), nil)
	names := func(sub *Subscription) []string {
		var out []string
		for len(sub.events) > 0 {
			ev := <-sub.events
			out = append(out, ev.Name+" "+string(ev.Data))
		}
		return out
	}

	t.Run("a server stream given more changes than its buffer holds gets one put of the new data", func(t *testing.T) {
		sub := &Subscription{ref: ref, last: before, tombs: map[string]int{"/flags/gone": 3}, events: make(chan Event, streamBuffer)}
		if !sub.deliver(sub.changes(ctx, after, nil)) {
			t.Fatal("the stream was ended")
		}
		got := names(sub)
		if len(got) != 1 || !strings.HasPrefix(got[0], `put {"path":"/","data":{"flags":{"f00":`) || !strings.Contains(got[0], fmt.Sprintf(`"f%02d":`, streamBuffer+3)) {
			t.Fatalf("events %q, want one put of every flag", got)
		}
		if len(sub.tombs) != 0 {
			t.Errorf("tombs %v kept after a put", sub.tombs)
		}
	})
	t.Run("changes that fit are sent as patches", func(t *testing.T) {
		sub := &Subscription{ref: ref, last: before, tombs: map[string]int{}, events: make(chan Event, streamBuffer)}
		if !sub.deliver(sub.changes(ctx, s.snapshot(ref, many(3, 1), nil), nil)) {
			t.Fatal("the stream was ended")
		}
		if got := names(sub); len(got) != 1 || !strings.HasPrefix(got[0], `patch {"path":"/flags/f02"`) {
			t.Fatalf("events %q, want the new flag's patch", got)
		}
	})
	t.Run("a client stream given more changes than its buffer holds gets one put of its evaluations", func(t *testing.T) {
		c := ldcontext.New("u1")
		v := &clientView{c: c, key: evalKey{kind: environment.ClientSideCredential, context: c.JSONString()}}
		v.first(ctx, before)
		v.hold("f00", 7)
		sub := &Subscription{ref: ref, last: before, view: v, events: make(chan Event, streamBuffer)}
		if !sub.deliver(sub.changes(ctx, after, newClientRefresh())) {
			t.Fatal("the stream was ended")
		}
		got := names(sub)
		if len(got) != 1 || !strings.HasPrefix(got[0], "put ") {
			t.Fatalf("events %q, want one put", got)
		}
		var put map[string]ClientFlag
		if err := json.Unmarshal([]byte(strings.TrimPrefix(got[0], "put ")), &put); err != nil || len(put) != streamBuffer+4 {
			t.Fatalf("the put holds %d flags (%v), want %d", len(put), err, streamBuffer+4)
		}
		if len(v.held) != 0 {
			t.Errorf("held versions %v kept after a put", v.held)
		}
	})
	t.Run("a stream whose buffer is full is ended", func(t *testing.T) {
		sub := &Subscription{ref: ref, last: before, tombs: map[string]int{}, events: make(chan Event, streamBuffer)}
		for range streamBuffer {
			sub.events <- Event{Name: "patch"}
		}
		if sub.deliver(sub.changes(ctx, after, nil)) {
			t.Fatal("a full buffer took another event")
		}
	})
	t.Run("no change delivers nothing", func(t *testing.T) {
		sub := &Subscription{ref: ref, last: before, tombs: map[string]int{}, events: make(chan Event, streamBuffer)}
		if !sub.deliver(sub.changes(ctx, before, nil)) || len(sub.events) != 0 {
			t.Fatalf("%d events for no change", len(sub.events))
		}
	})
}
