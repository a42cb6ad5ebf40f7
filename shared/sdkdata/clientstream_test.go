package sdkdata

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"
	"github.com/launchdarkly/go-sdk-common/v3/ldvalue"

	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/flag"
)

func clientFlag(version int, value bool) ClientFlag {
	v := 0
	if !value {
		v = 1
	}
	return ClientFlag{Value: ldvalue.Bool(value), Variation: &v, Version: version, FlagVersion: version}
}

func TestClientViewDiff(t *testing.T) {
	v := &clientView{flags: map[string]ClientFlag{"a": clientFlag(3, true), "b": clientFlag(5, true)}}
	steps := []struct {
		name string
		next map[string]ClientFlag
		want []string // each event's name and data, in key order
	}{
		{"the same evaluations: no event",
			map[string]ClientFlag{"a": clientFlag(3, true), "b": clientFlag(5, true)}, nil},
		{"a flag changed with its version: a patch at that version",
			map[string]ClientFlag{"a": clientFlag(4, false), "b": clientFlag(5, true)},
			[]string{`patch {"key":"a","value":false,"variation":1,"version":4,"flagVersion":4,"trackEvents":false}`}},
		{"a value changed at the same flag version (a segment changed): a patch one above the version held",
			map[string]ClientFlag{"a": clientFlag(4, true), "b": clientFlag(5, true)},
			[]string{`patch {"key":"a","value":true,"variation":0,"version":5,"flagVersion":4,"trackEvents":false}`}},
		{"and again: one above that",
			map[string]ClientFlag{"a": clientFlag(4, false), "b": clientFlag(5, true)},
			[]string{`patch {"key":"a","value":false,"variation":1,"version":6,"flagVersion":4,"trackEvents":false}`}},
		{"the flag's own version passes the one held: its version again",
			map[string]ClientFlag{"a": clientFlag(7, true), "b": clientFlag(5, true)},
			[]string{`patch {"key":"a","value":true,"variation":0,"version":7,"flagVersion":7,"trackEvents":false}`}},
		{"a flag no longer visible: a delete one above its version",
			map[string]ClientFlag{"a": clientFlag(7, true)},
			[]string{`delete {"key":"b","version":6}`}},
		{"visible again at the version deleted: a patch above the delete",
			map[string]ClientFlag{"a": clientFlag(7, true), "b": clientFlag(5, true)},
			[]string{`patch {"key":"b","value":true,"variation":0,"version":7,"flagVersion":5,"trackEvents":false}`}},
		{"a new flag: a patch at its version",
			map[string]ClientFlag{"a": clientFlag(7, true), "b": clientFlag(5, true), "c": clientFlag(1, true)},
			[]string{`patch {"key":"c","value":true,"variation":0,"version":1,"flagVersion":1,"trackEvents":false}`}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			var got []string
			for _, ev := range v.diff(&evaluated{flags: st.next}) {
				got = append(got, ev.Name+" "+string(ev.Data))
			}
			if strings.Join(got, "\n") != strings.Join(st.want, "\n") {
				t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(st.want, "\n"))
			}
		})
	}
}

// browserFlag is a flag on in env "test", visible to client-side SDKs, serving true.
func browserFlag(key string, version int64) *flag.Flag {
	f := boolFlag(key, version, false)
	f.ClientSideAvailability.UsingEnvironmentID = true
	f.Environments = map[string]*flag.EnvConfig{"test": {On: true, Fallthrough: flag.VariationOrRoll{Variation: new(int)}}}
	return f
}

func TestClientStreamsShareEvaluations(t *testing.T) {
	s, _ := newTestService(t, time.Now)
	ctx := context.Background()
	ref := EnvRef{"p", "test"}
	before := s.snapshot(ref, []*flag.Flag{browserFlag("a", 1)}, nil)
	after := s.snapshot(ref, []*flag.Flag{browserFlag("a", 2)}, nil)
	later := s.snapshot(ref, []*flag.Flag{browserFlag("a", 3)}, nil)
	sub := func(key string, kind environment.CredentialKind, reasons bool) *Subscription {
		c := ldcontext.New(key)
		v := &clientView{c: c, key: evalKey{kind: kind, withReasons: reasons, context: c.JSONString()}}
		v.first(ctx, before)
		return &Subscription{ref: ref, kind: kind, last: before, view: v}
	}
	u1, u1Again, u2 := sub("u1", environment.ClientSideCredential, false), sub("u1", environment.ClientSideCredential, false), sub("u2", environment.ClientSideCredential, false)
	u1Reasons, u1Mobile := sub("u1", environment.ClientSideCredential, true), sub("u1", environment.MobileCredential, false)
	all := []*Subscription{u1, u1Again, u2, u1Reasons, u1Mobile}
	r := newClientRefresh()
	for _, s := range all {
		s.changes(ctx, after, r)
	}
	// Streams opened apart held evaluations of their own; after one
	// change, those of the same context hold the same one.
	r2 := newClientRefresh()
	var events [][]Event
	for _, s := range all {
		events = append(events, s.changes(ctx, later, r2))
	}
	same := func(a, b *Subscription) bool {
		return reflect.ValueOf(a.view.flags).UnsafePointer() == reflect.ValueOf(b.view.flags).UnsafePointer()
	}
	tests := []struct {
		name string
		ok   bool
	}{
		{"a change is evaluated once per environment, kind, reasons and context: four evaluations for five streams", len(r.evals) == 4},
		{"the next change is diffed once per evaluation held: four diffs for five streams", len(r2.evals) == 4 && len(r2.diffs) == 4},
		{"and the streams of the same context are sent the same patch", len(events[0]) == 1 && string(events[0][0].Data) == string(events[1][0].Data)},
		{"two streams of the same context share one evaluation", same(u1, u1Again)},
		{"another context has its own", !same(u1, u2)},
		{"reasons or another kind of SDK have their own", !same(u1, u1Reasons) && !same(u1, u1Mobile)},
		{"the mobile stream does not see a flag only client-side SDKs see", len(u1Mobile.view.flags) == 0 && len(u1.view.flags) == 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.ok {
				t.Fatalf("evaluations %d then %d, diffs %d then %d", len(r.evals), len(r2.evals), len(r.diffs), len(r2.diffs))
			}
		})
	}
	t.Run("an unchanged snapshot is not evaluated again", func(t *testing.T) {
		again := newClientRefresh()
		if evs := u1.changes(ctx, later, again); len(evs) != 0 || len(again.evals) != 0 {
			t.Fatalf("events %d, evaluations %d", len(evs), len(again.evals))
		}
	})
	t.Run("the first event is a put of the evaluations", func(t *testing.T) {
		c := ldcontext.New("u1")
		ev := (&clientView{c: c, key: evalKey{kind: environment.ClientSideCredential, context: c.JSONString()}}).first(ctx, before)
		var put map[string]ClientFlag
		if err := json.Unmarshal(ev.Data, &put); err != nil || ev.Name != "put" || !put["a"].Value.Equal(ldvalue.Bool(true)) || put["a"].Version != 1 {
			t.Fatalf("%s %s (%v)", ev.Name, ev.Data, err)
		}
	})
}

// BenchmarkClientStreamsRefresh is one change reaching 1,000 client
// streams of a 100-flag environment, evaluated for 10 or 1,000 contexts:
// the cost of a change grows with the contexts, not the streams.
func BenchmarkClientStreamsRefresh(b *testing.B) {
	s, _ := newTestService(b, time.Now)
	ctx := context.Background()
	ref := EnvRef{"p", "test"}
	// Each change is every flag at a higher version.
	version := int64(0)
	change := func() *Snapshot {
		version++
		var flags []*flag.Flag
		for j := 0; j < 100; j++ {
			flags = append(flags, browserFlag(fmt.Sprintf("flag-%03d", j), version))
		}
		return s.snapshot(ref, flags, nil)
	}
	first := change()
	for _, contexts := range []int{10, 1000} {
		b.Run(fmt.Sprintf("%d contexts", contexts), func(b *testing.B) {
			subs := make([]*Subscription, 1000)
			for i := range subs {
				c := ldcontext.New(fmt.Sprintf("user-%d", i%contexts))
				v := &clientView{c: c, key: evalKey{kind: environment.ClientSideCredential, context: c.JSONString()}}
				v.first(ctx, first)
				subs[i] = &Subscription{ref: ref, kind: environment.ClientSideCredential, last: first, view: v}
			}
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				b.StopTimer()
				next := change()
				b.StartTimer()
				r := newClientRefresh()
				for _, sub := range subs {
					sub.changes(ctx, next, r)
				}
				if len(r.evals) != contexts {
					b.Fatalf("%d evaluations for %d contexts", len(r.evals), contexts)
				}
			}
		})
	}
}
