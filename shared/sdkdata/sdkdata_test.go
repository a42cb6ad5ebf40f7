package sdkdata

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

// fakeResolver opens one environment with the secret "good" and counts its reads.
type fakeResolver struct {
	mu    sync.Mutex
	reads int
	good  string
}

func (r *fakeResolver) ByCredential(_ context.Context, kind environment.CredentialKind, secret string) (*environment.Environment, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads++
	if secret != r.good {
		return nil, fault.Wrap(errors.New("unknown"), fault.Unauthorized, "the credential is not a current %s of any environment", kind)
	}
	return &environment.Environment{ProjectKey: "p", Key: "test"}, nil
}

func (r *fakeResolver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reads
}

func newTestService(tb testing.TB, now func() time.Time) (*Service, *fakeResolver) {
	tb.Helper()
	table, err := bolt.Open(filepath.Join(tb.TempDir(), "sdkdata.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { table.Close() })
	r := &fakeResolver{good: "good"}
	s := NewService(table, r, now)
	tb.Cleanup(s.Streams().Close)
	return s, r
}

// boolFlag is a boolean flag at a store version, archived or not.
func boolFlag(key string, version int64, archived bool) *flag.Flag {
	return &flag.Flag{Key: key, ItemVersion: version, CreationDate: 1, Archived: archived,
		Variations: []flag.Variation{{Value: json.RawMessage("true")}, {Value: json.RawMessage("false")}}}
}

// userSegment is a segment including user keys, at a version.
func userSegment(key string, version int, included ...string) *segment.Segment {
	return &segment.Segment{Key: key, Version: version, ItemVersion: int64(version), CreationDate: 1, Salt: key, Included: included}
}

func TestSnapshot(t *testing.T) {
	s, _ := newTestService(t, time.Now)
	ref := EnvRef{"p", "test"}
	base := []*flag.Flag{boolFlag("b", 2, false), boolFlag("a", 1, false), boolFlag("old", 5, true)}
	segs := []*segment.Segment{userSegment("beta", 3, "u1", "u2")}
	snap := s.snapshot(ref, base, segs)
	tests := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"archived flags are left out and the rest are ordered by key", func(t *testing.T) {
			var doc struct {
				Flags    map[string]struct{ Key string } `json:"flags"`
				Segments map[string]any                  `json:"segments"`
			}
			if err := json.Unmarshal(snap.All(), &doc); err != nil {
				t.Fatalf("%v: %s", err, snap.All())
			}
			if len(doc.Flags) != 2 || doc.Flags["a"].Key != "a" || doc.Flags["b"].Key != "b" || len(doc.Segments) != 1 {
				t.Fatalf("payload %s", snap.All())
			}
			if !strings.HasPrefix(string(snap.FlagsJSON()), `{"a":`) || snap.Len() != 2 {
				t.Fatalf("flags %s", snap.FlagsJSON())
			}
		}},
		{"the SDK version of a flag is its store version", func(t *testing.T) {
			if f, ok := snap.Flag("b"); !ok || f.Version != 2 || f.Model.Version != 2 {
				t.Fatalf("flag b %+v", f)
			}
		}},
		{"segments are in the SDKs' model, at their version", func(t *testing.T) {
			var doc struct {
				Segments map[string]struct {
					Key      string   `json:"key"`
					Included []string `json:"included"`
					Version  int      `json:"version"`
					Salt     string   `json:"salt"`
				} `json:"segments"`
			}
			if err := json.Unmarshal(snap.All(), &doc); err != nil {
				t.Fatal(err)
			}
			if b := doc.Segments["beta"]; b.Key != "beta" || b.Version != 3 || b.Salt != "beta" || strings.Join(b.Included, ",") != "u1,u2" {
				t.Fatalf("segments %s", snap.All())
			}
			if sg, ok := snap.Segment("beta"); !ok || sg.Model.Version != 3 || len(snap.Segments()) != 1 {
				t.Fatalf("segment beta %+v", sg)
			}
		}},
		{"the ETag is the same for the same flags and segments", func(t *testing.T) {
			if again := s.snapshot(ref, base, segs); again.ETag != snap.ETag {
				t.Fatalf("%s then %s", snap.ETag, again.ETag)
			}
		}},
		{"the ETag changes with a flag's or a segment's version, either made again, a segment gone, and the environment", func(t *testing.T) {
			changed := s.snapshot(ref, []*flag.Flag{boolFlag("b", 3, false), base[1], base[2]}, segs)
			remade := boolFlag("a", 1, false)
			remade.CreationDate = 2
			again := s.snapshot(ref, []*flag.Flag{base[0], remade, base[2]}, segs)
			segChanged := s.snapshot(ref, base, []*segment.Segment{userSegment("beta", 4, "u1")})
			segRemade := userSegment("beta", 3, "u1", "u2")
			segRemade.CreationDate = 2
			segAgain := s.snapshot(ref, base, []*segment.Segment{segRemade})
			segGone := s.snapshot(ref, base, nil)
			other := s.snapshot(EnvRef{"p", "production"}, base, segs)
			for _, e := range []string{changed.ETag, again.ETag, segChanged.ETag, segAgain.ETag, segGone.ETag, other.ETag} {
				if e == snap.ETag {
					t.Fatalf("ETag unchanged: %s", e)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.check)
	}
}

func TestEnvironmentCache(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s, r := newTestService(t, func() time.Time { return now })
	ctx := context.Background()
	steps := []struct {
		name      string
		before    func()
		secret    string
		wantErr   bool
		wantReads int
	}{
		{"the first use reads the credential", func() {}, "good", false, 1},
		{"a second use within the TTL is served from the cache", func() {}, "good", false, 1},
		{"a commit of this process makes it read again", s.Changed, "good", false, 2},
		{"after the TTL it reads again", func() { now = now.Add(CredentialTTL) }, "good", false, 3},
		{"an unknown secret is refused, and refused again, reading each time", func() {}, "bad", true, 4},
		{"an unknown secret is never cached", func() {}, "bad", true, 5},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.before()
			_, err := s.Environment(ctx, environment.ServerCredential, st.secret)
			if (err != nil) != st.wantErr || (err != nil && !fault.Is(err, fault.Unauthorized)) {
				t.Fatalf("error %v", err)
			}
			if got := r.count(); got != st.wantReads {
				t.Fatalf("%d reads, want %d", got, st.wantReads)
			}
		})
	}
}

func TestSubscriptionDiff(t *testing.T) {
	s, _ := newTestService(t, time.Now)
	ref := EnvRef{"p", "test"}
	snap := func(flags ...*flag.Flag) *Snapshot { return s.snapshot(ref, flags, nil) }
	withSegs := func(segs []*segment.Segment, flags ...*flag.Flag) *Snapshot { return s.snapshot(ref, flags, segs) }
	a1, b1 := boolFlag("a", 1, false), boolFlag("b", 1, false)
	sub := &Subscription{last: snap(a1, b1), tombs: map[string]int{}}
	names := func(evs []Event) string {
		var out []string
		for _, e := range evs {
			out = append(out, e.Name+" "+string(e.Data))
		}
		return strings.Join(out, "\n")
	}
	steps := []struct {
		name string
		next *Snapshot
		want []string // each event's name and a part of its data
	}{
		{"nothing changed: no event", snap(a1, b1), nil},
		{"a flag at a higher version: a patch", snap(boolFlag("a", 2, false), b1), []string{`patch {"path":"/flags/a","data":{`}},
		{"a flag gone: a delete one version up", snap(boolFlag("a", 2, false)), []string{`delete {"path":"/flags/b","version":2}`}},
		{"a flag archived: a delete", snap(boolFlag("a", 3, true)), []string{`delete {"path":"/flags/a","version":3}`}},
		{"a flag made again below its delete's version: the whole data set", snap(boolFlag("b", 1, false)), []string{`put {"path":"/","data":{"flags":{"b":`}},
		{"a new flag: a patch", snap(boolFlag("b", 1, false), boolFlag("c", 1, false)), []string{`patch {"path":"/flags/c"`}},
		{"a new segment: a segment patch", withSegs([]*segment.Segment{userSegment("s", 1, "u1")}, boolFlag("b", 1, false), boolFlag("c", 1, false)),
			[]string{`patch {"path":"/segments/s","data":{`}},
		{"a segment changed with a flag: the segment's patch comes first", withSegs([]*segment.Segment{userSegment("s", 2, "u2")}, boolFlag("b", 2, false), boolFlag("c", 1, false)),
			[]string{`patch {"path":"/segments/s","data":{`, `patch {"path":"/flags/b"`}},
		{"a segment gone: a segment delete one version up", snap(boolFlag("b", 2, false), boolFlag("c", 1, false)),
			[]string{`delete {"path":"/segments/s","version":3}`}},
		{"a segment made again below its delete's version: the whole data set", withSegs([]*segment.Segment{userSegment("s", 1)}, boolFlag("b", 2, false), boolFlag("c", 1, false)),
			[]string{`put {"path":"/","data":{"flags":{"b":`}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			got := sub.diff(st.next)
			if len(got) != len(st.want) {
				t.Fatalf("events:\n%s", names(got))
			}
			for i, w := range st.want {
				if !strings.HasPrefix(got[i].Name+" "+string(got[i].Data), w) {
					t.Fatalf("event %d:\n%s\nwant %s", i, names(got), w)
				}
			}
		})
	}
}

func TestStreams(t *testing.T) {
	s, _ := newTestService(t, time.Now)
	ctx := context.Background()
	t.Run("a subscription opens with a put of the environment's flags", func(t *testing.T) {
		sub, first, err := s.Streams().Subscribe(ctx, environment.ServerCredential, "good")
		if err != nil || first.Name != "put" || string(first.Data) != `{"path":"/","data":{"flags":{},"segments":{}}}` {
			t.Fatalf("%v %s %s", err, first.Name, first.Data)
		}
		s.Streams().Unsubscribe(sub)
		if n := s.Streams().Open(); n != 0 {
			t.Fatalf("%d open after unsubscribe", n)
		}
	})
	t.Run("a wrong credential opens nothing", func(t *testing.T) {
		if _, _, err := s.Streams().Subscribe(ctx, environment.ServerCredential, "bad"); !fault.Is(err, fault.Unauthorized) {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("a credential that stops opening the environment ends its streams at the next commit", func(t *testing.T) {
		r := &fakeResolver{good: "good"}
		s.resolver = r
		sub, _, err := s.Streams().Subscribe(ctx, environment.ServerCredential, "good")
		if err != nil {
			t.Fatal(err)
		}
		r.mu.Lock()
		r.good = "new"
		r.mu.Unlock()
		s.Changed()
		select {
		case <-sub.Ended():
			if !strings.Contains(sub.Why(), "credential") {
				t.Fatalf("ended because %q", sub.Why())
			}
		case <-time.After(2 * time.Second):
			t.Fatal("the stream did not end")
		}
		r.mu.Lock()
		r.good = "good"
		r.mu.Unlock()
	})
	t.Run("closing ends every stream and refuses new ones", func(t *testing.T) {
		s.Changed() // the cached credential of the last step is stale
		sub, _, err := s.Streams().Subscribe(ctx, environment.ServerCredential, "good")
		if err != nil {
			t.Fatal(err)
		}
		s.Streams().Close()
		select {
		case <-sub.Ended():
		case <-time.After(time.Second):
			t.Fatal("the stream did not end")
		}
		if _, _, err := s.Streams().Subscribe(ctx, environment.ServerCredential, "good"); !fault.Is(err, fault.Unavailable) {
			t.Fatalf("after close: %v", err)
		}
	})
}
