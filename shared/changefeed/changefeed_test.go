package changefeed_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/changefeed"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// memLog is a Log in memory: the entries visible now, and whether reading fails.
type memLog struct {
	mu    sync.Mutex
	ids   []string
	fail  bool
	froms []time.Time // the from of every read
}

func (l *memLog) add(tb testing.TB, made time.Time) string {
	tb.Helper()
	id, err := audit.NewID(made)
	if err != nil {
		tb.Fatal(err)
	}
	l.mu.Lock()
	l.ids = append(l.ids, id)
	l.mu.Unlock()
	return id
}

func (l *memLog) setFailing(v bool) {
	l.mu.Lock()
	l.fail = v
	l.mu.Unlock()
}

func (l *memLog) Since(_ context.Context, from time.Time, visit func(string)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.froms = append(l.froms, from)
	if l.fail {
		return errors.New("the log does not answer")
	}
	for _, id := range l.ids {
		if t, _ := changefeed.IDTime(id); t.UnixMilli() >= from.UnixMilli() {
			visit(id)
		}
	}
	return nil
}

func (l *memLog) lastFrom() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.froms[len(l.froms)-1]
}

// clock is a settable time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fixture is a feed over a memLog on a settable clock, counting the changes it tells of.
type fixture struct {
	log     *memLog
	clock   *clock
	feed    *changefeed.Feed
	changes atomic.Int64
}

const margin = 5 * time.Second

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	f := &fixture{log: &memLog{}, clock: &clock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}}
	f.feed = changefeed.New(f.log, func() { f.changes.Add(1) }, changefeed.Options{
		Margin: margin, Now: f.clock.now, Logger: quiet,
	})
	return f
}

// poll polls once and checks how many new entries it found and how many changes were told of in all.
func (f *fixture) poll(tb testing.TB, wantFound int, wantChanges int64) {
	tb.Helper()
	found, err := f.feed.Poll(context.Background())
	if err != nil {
		tb.Fatalf("poll: %v", err)
	}
	if found != wantFound {
		tb.Errorf("the poll found %d new entries, want %d", found, wantFound)
	}
	if got := f.changes.Load(); got != wantChanges {
		tb.Errorf("%d changes told of, want %d", got, wantChanges)
	}
}

func TestFeed(t *testing.T) {
	t.Run("an entry committed after the feed started is told of once", func(t *testing.T) {
		f := newFixture(t)
		f.poll(t, 0, 0)
		f.clock.advance(time.Second)
		f.log.add(t, f.clock.now())
		f.clock.advance(200 * time.Millisecond)
		f.poll(t, 1, 1)
		f.clock.advance(200 * time.Millisecond)
		f.poll(t, 0, 1)
	})
	t.Run("several entries found by one poll are one change", func(t *testing.T) {
		f := newFixture(t)
		for range 3 {
			f.clock.advance(time.Millisecond)
			f.log.add(t, f.clock.now())
		}
		f.poll(t, 3, 1)
	})
	t.Run("an entry that shows after later ones were seen, its id older by less than the margin, is found", func(t *testing.T) {
		f := newFixture(t)
		f.clock.advance(10 * time.Second)
		f.log.add(t, f.clock.now())
		f.poll(t, 1, 1)
		// A writer whose clock is 3 s behind, or whose commit took 3 s, commits now.
		f.clock.advance(200 * time.Millisecond)
		f.log.add(t, f.clock.now().Add(-3*time.Second))
		f.poll(t, 1, 2)
	})
	t.Run("each poll reads back the margin before the start of the last poll", func(t *testing.T) {
		f := newFixture(t)
		f.poll(t, 0, 0)
		polled := f.clock.now()
		f.clock.advance(200 * time.Millisecond)
		f.poll(t, 0, 0)
		if got, want := f.log.lastFrom(), polled.Add(-margin); !got.Equal(want) {
			t.Errorf("the poll read from %s, want %s", got, want)
		}
	})
	t.Run("after failed reads the next poll reads back over them", func(t *testing.T) {
		f := newFixture(t)
		f.poll(t, 0, 0)
		lastGood := f.clock.now()
		f.log.setFailing(true)
		for range 50 {
			f.clock.advance(200 * time.Millisecond)
			if _, err := f.feed.Poll(context.Background()); err == nil {
				t.Fatal("a poll of a failing log succeeded")
			}
		}
		// Committed during the outage, 10 s ago: beyond a margin from now.
		f.log.add(t, lastGood.Add(100*time.Millisecond))
		f.log.setFailing(false)
		f.clock.advance(200 * time.Millisecond)
		f.poll(t, 1, 1)
		if got, want := f.log.lastFrom(), lastGood.Add(-margin); !got.Equal(want) {
			t.Errorf("the recovering poll read from %s, want %s", got, want)
		}
		if s := f.feed.Stats(); s.Failures != 50 || s.Polls != 2 {
			t.Errorf("stats %+v, want 50 failures and 2 polls", s)
		}
	})
	t.Run("after failing for longer than MaxCatchUp the feed tells of a change instead of reading back", func(t *testing.T) {
		f := newFixture(t)
		f.poll(t, 0, 0)
		f.log.setFailing(true)
		f.clock.advance(changefeed.MaxCatchUp + time.Second)
		if _, err := f.feed.Poll(context.Background()); err == nil {
			t.Fatal("a poll of a failing log succeeded")
		}
		f.log.setFailing(false)
		f.clock.advance(time.Second)
		f.poll(t, 0, 1)
		if got, want := f.log.lastFrom(), f.clock.now().Add(-margin); !got.Equal(want) {
			t.Errorf("the poll read from %s, want %s (the margin only)", got, want)
		}
	})
	t.Run("entries seen are not told of again while the window still holds them", func(t *testing.T) {
		f := newFixture(t)
		f.log.add(t, f.clock.now())
		f.poll(t, 1, 1)
		for range 30 { // 6 s of polls: the entry leaves the window after 5 s
			f.clock.advance(200 * time.Millisecond)
			f.poll(t, 0, 1)
		}
	})
}

func TestRun(t *testing.T) {
	t.Run("the resync timer tells of a change with no entry in the log", func(t *testing.T) {
		var changes atomic.Int64
		feed := changefeed.New(&memLog{}, func() { changes.Add(1) }, changefeed.Options{
			Poll: 5 * time.Millisecond, Resync: 20 * time.Millisecond, Logger: quiet,
		})
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		feed.Run(ctx)
		s := feed.Stats()
		if s.Resyncs < 3 || changes.Load() != s.Resyncs {
			t.Errorf("%d changes and stats %+v in 200 ms, want one change per resync and at least 3", changes.Load(), s)
		}
		if s.Polls < 10 {
			t.Errorf("%d polls in 200 ms at 5 ms, want at least 10", s.Polls)
		}
	})
	t.Run("a negative resync never resyncs", func(t *testing.T) {
		feed := changefeed.New(&memLog{}, func() {}, changefeed.Options{Poll: 5 * time.Millisecond, Resync: -1, Logger: quiet})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		feed.Run(ctx)
		if s := feed.Stats(); s.Resyncs != 0 || s.Changes != 0 {
			t.Errorf("stats %+v, want no resync and no change", s)
		}
	})
}

func TestAuditLog(t *testing.T) {
	table, err := bolt.Open(filepath.Join(t.TempDir(), "feed.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { table.Close() })
	ctx := context.Background()
	base := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	// 1,500 entries, 10 ms apart: more than one page of any backend.
	var want []string
	var batch []store.Write
	for i := range 1500 {
		id, err := audit.NewID(base.Add(time.Duration(i) * 10 * time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, store.Put(store.Item{PK: store.AuditPK, SK: id, Data: []byte(`{}`)}, store.Cond{}))
		if len(batch) == store.MaxWrites {
			if err := table.Transact(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = nil
		}
		if i >= 500 {
			want = append(want, id)
		}
	}
	// Another partition's items are not entries.
	if err := table.Put(ctx, store.Item{PK: store.OutboxPK, SK: want[0], Data: []byte(`{}`)}, store.Cond{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		from time.Time
		want []string
	}{
		{"every entry made at the time or later is visited, in id order", base.Add(5 * time.Second), want},
		{"an entry of the very millisecond is visited", base.Add(14990*time.Millisecond + 500*time.Microsecond), want[len(want)-1:]},
		{"nothing is visited after the last entry", base.Add(time.Hour), nil},
	}
	paged := &pagedTable{Table: table}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			if err := (changefeed.AuditLog{Table: paged}).Since(ctx, tc.from, func(id string) { got = append(got, id) }); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("visited %d ids (%s), want %d (%s)", len(got), ends(got), len(tc.want), ends(tc.want))
			}
		})
	}
	t.Run("the entries are read a page at a time, eventually consistent", func(t *testing.T) {
		if paged.queries < 10 || !paged.eventual {
			t.Errorf("%d Queries (eventual: %v) for 1,000 entries in pages of 100", paged.queries, paged.eventual)
		}
	})
}

// pagedTable answers Queries a hundred items at a time, as DynamoDB
// answers a megabyte at a time, and notes how it was asked.
type pagedTable struct {
	store.Table
	queries  int
	eventual bool
}

func (p *pagedTable) Query(ctx context.Context, q store.Query) (store.Page, error) {
	p.queries++
	p.eventual = q.Eventual
	if q.Limit == 0 || q.Limit > 100 {
		q.Limit = 100
	}
	return p.Table.Query(ctx, q)
}

func ends(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return fmt.Sprintf("%s..%s", ids[0], ids[len(ids)-1])
}

func TestIDTime(t *testing.T) {
	made := time.UnixMilli(1748779200123)
	id, err := audit.NewID(made)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		id   string
		want time.Time
		ok   bool
	}{
		{"an audit entry id gives the millisecond it was made", id, made, true},
		{"a short id gives none", "0197", time.Time{}, false},
		{"an id that does not begin with hex digits gives none", "zz0000000000aaaaaaaaaaaa", time.Time{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := changefeed.IDTime(tc.id)
			if ok != tc.ok || !got.Equal(tc.want) {
				t.Errorf("IDTime(%q) = %s, %v; want %s, %v", tc.id, got, ok, tc.want, tc.ok)
			}
		})
	}
}
