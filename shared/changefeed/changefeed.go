// Package changefeed tells a process of the commits other processes make
// to the table, without reading the table: every commit leaves an entry in
// a log whose entry ids begin with the time they were made (the audit
// partition), and the feed polls that log for ids it has not seen yet,
// calling back once per poll that found any. The relay calls the SDK data
// service's Changed with it, as the local server does after its own commits.
//
// Entry ids carry their writer's clock at the start of its commit, so an
// entry can become visible after entries with later ids: a slow commit, a
// writer whose clock is behind, an eventually consistent read. Each poll
// therefore reads back Margin before the start of the last poll that
// succeeded, and drops the ids it has already seen.
package changefeed

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// Log is where commits leave entries: the audit partition today (see
// AuditLog); its shards once issue 26 splits it.
type Log interface {
	// Since calls visit with the id of every entry made at from or later
	// (by the time its id begins with), reading every page. An entry may be
	// visited more than once. When reading fails part way, the entries
	// visited so far were visited, and the error says what failed.
	Since(ctx context.Context, from time.Time, visit func(id string)) error
}

// Defaults of Options.
const (
	DefaultPoll   = 200 * time.Millisecond
	DefaultMargin = 5 * time.Second
	DefaultResync = 30 * time.Second
	// MaxCatchUp is how far back a feed reads after it could not read for
	// a while; beyond it, it tells of a change (everything is read again)
	// rather than read the log back.
	MaxCatchUp = time.Minute
)

// Options tune a feed; the zero value takes the defaults.
type Options struct {
	// Poll is how often the log is read.
	Poll time.Duration
	// Margin is how long after the time its id begins with an entry may
	// become visible: the longest commit, the clock skew between writers
	// and the lag of an eventually consistent read, together.
	Margin time.Duration
	// Resync is how often the feed tells of a change even when the log
	// holds none, for changes that leave no entry; negative: never.
	Resync time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Logger gets the failures to read the log and the recoveries.
	Logger *slog.Logger
}

// Stats count what a feed did since it started.
type Stats struct {
	// Polls are the reads of the log that succeeded, Failures those that did not.
	Polls, Failures int64
	// Entries are the new entries found; Changes the calls of changed
	// (resyncs included) and Resyncs those of the resync timer.
	Entries, Changes, Resyncs int64
}

// Feed polls a Log. Its zero value is not usable: call New.
type Feed struct {
	log     Log
	changed func()
	o       Options

	mu sync.Mutex
	// from is where the next poll reads from (before the margin): the
	// start of the last poll that succeeded.
	from time.Time
	// seen are the ids found at or after from minus the margin, with the
	// time each begins with.
	seen    map[string]time.Time
	failing int // polls failed in a row
	stats   Stats
}

// New returns a feed of log that calls changed after each poll that found
// entries it had not seen. It reads from now minus the margin: what was
// committed before, the process reads with its first request.
func New(log Log, changed func(), o Options) *Feed {
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.Margin <= 0 {
		o.Margin = DefaultMargin
	}
	if o.Resync == 0 {
		o.Resync = DefaultResync
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Feed{log: log, changed: changed, o: o, from: o.Now(), seen: map[string]time.Time{}}
}

// Run polls every Poll, and resyncs every Resync, until ctx ends. A failed
// poll is logged and the next one reads back over it.
func (f *Feed) Run(ctx context.Context) {
	poll := time.NewTicker(f.o.Poll)
	defer poll.Stop()
	var resync <-chan time.Time
	if f.o.Resync > 0 {
		t := time.NewTicker(f.o.Resync)
		defer t.Stop()
		resync = t.C
	}
	for {
		_, _ = f.Poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-poll.C:
		case <-resync:
			f.mu.Lock()
			f.stats.Resyncs++
			f.stats.Changes++
			f.mu.Unlock()
			f.changed()
		}
	}
}

// Poll reads the log once and calls changed when it found entries not
// seen before; it returns how many.
func (f *Feed) Poll(ctx context.Context) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	start := f.o.Now()
	from, behind := f.from, false
	if start.Sub(from) > MaxCatchUp {
		// Reading back that far could be many pages: read what the margin
		// covers, and have everything read again instead.
		from, behind = start, true
	}
	found := 0
	err := f.log.Since(ctx, from.Add(-f.o.Margin), func(id string) {
		if _, ok := f.seen[id]; ok {
			return
		}
		t, ok := IDTime(id)
		if !ok {
			return // not an entry of the log
		}
		f.seen[id] = t
		found++
	})
	f.stats.Entries += int64(found)
	if found > 0 || (behind && err == nil) {
		// Also when the read failed part way: what it found will not be
		// found again.
		f.stats.Changes++
		f.changed()
	}
	if err != nil {
		f.stats.Failures++
		f.failing++
		if f.failing == 1 || f.failing%100 == 0 {
			f.o.Logger.Warn("change feed: reading the log failed; the next poll reads back over it",
				"failedInARow", f.failing, "error", err.Error())
		}
		return found, err
	}
	if f.failing > 0 {
		f.o.Logger.Info("change feed: reading the log again", "failedInARow", f.failing,
			"readingBack", start.Sub(f.from).Round(time.Millisecond).String())
		f.failing = 0
	}
	f.stats.Polls++
	f.from = start
	// Ids made before the next poll's start will not be read again.
	floor := start.Add(-f.o.Margin).UnixMilli()
	for id, t := range f.seen {
		if t.UnixMilli() < floor {
			delete(f.seen, id)
		}
	}
	return found, nil
}

// Stats returns what the feed did so far.
func (f *Feed) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

// IDTime is the time an entry id begins with: its first 12 hex digits
// are Unix milliseconds (see audit.NewID); false when id has no such start.
func IDTime(id string) (time.Time, bool) {
	if len(id) < 12 {
		return time.Time{}, false
	}
	ms, err := strconv.ParseUint(id[:12], 16, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(int64(ms)), true
}
