// Package usage computes the usage series (contexts, MAU, AI runs, events,
// data export) from the hour cells the ingest aggregator writes, through a
// rollup into daily items, and lists the SDK versions seen. Distinct
// counts are HyperLogLog sketches merged across hours, days and
// dimensions; exact sets of context keys are never stored. No HTTP here.
package usage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/axiomhq/hyperloglog"
	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/store"
)

// DayTTL keeps rolled-up days a little over a year, the longest range a
// series may ask for (365 days) plus the 30 days a rolling window looks back.
const DayTTL = 400 * 24 * time.Hour

// Grace is how long after an hour ends the rollup waits before taking it
// as complete: an event payload being aggregated at the turn of the hour
// still lands in the hour it was received in.
const Grace = 2 * time.Minute

const (
	hourLayout  = "2006010215"
	dayLayout   = "20060102"
	monthLayout = "200601"
)

// Day is one rolled-up day of one environment's sender cell: the sum of
// its hours' counters and the merge of their sketches. Written only by
// the rollup, recomputed whole from the hours each time (never added to).
type Day struct {
	Day string `json:"day"` // yyyymmdd
	ingest.Sender
	Events map[string]int64 `json:"events"`
	AIRuns int64            `json:"aiRuns,omitempty"`
	// HourlyEvents and HourlyAIRuns keep the counts by hour (hh), for the
	// series of hourly granularity.
	HourlyEvents map[string]int64  `json:"hourlyEvents,omitempty"`
	HourlyAIRuns map[string]int64  `json:"hourlyAiRuns,omitempty"`
	Sketches     map[string][]byte `json:"sketches"`
	// Through is the source watermark: the last hour (yyyymmddhh) whose
	// cells this item was computed from.
	Through string `json:"through"`
}

// ExportDay is one environment's rolled-up day of exported events.
type ExportDay struct {
	Day     string           `json:"day"`
	EnvID   string           `json:"environmentId"`
	Events  int64            `json:"events"`
	Hourly  map[string]int64 `json:"hourly,omitempty"`
	Through string           `json:"through"`
}

// Month is one rolled-up month of one environment's sender cell: the
// union of its days' sketches, and each day's counts kept by day (dd).
// Folding a day in again, after a rerun or with more of its hours,
// changes only what it should: a union with a sketch already merged
// (or with a subset of it) is the same union, and a day's counts replace
// that day's, never add to them.
type Month struct {
	Month string `json:"month"` // yyyymm
	ingest.Sender
	DayEvents map[string]int64  `json:"dayEvents"`
	DayAIRuns map[string]int64  `json:"dayAiRuns,omitempty"`
	Sketches  map[string][]byte `json:"sketches"`
	// Through is the last hour (yyyymmddhh) folded in.
	Through string `json:"through"`
}

// asDay shapes the month as one day's counts, for the series.
func (m Month) asDay() Day {
	d := Day{Sender: m.Sender, Events: map[string]int64{}, Sketches: m.Sketches}
	for _, n := range m.DayEvents {
		d.Events["all"] += n
	}
	for _, n := range m.DayAIRuns {
		d.AIRuns += n
	}
	return d
}

// ExportMonth is one environment's rolled-up month of exported events, by day.
type ExportMonth struct {
	Month   string           `json:"month"`
	EnvID   string           `json:"environmentId"`
	Days    map[string]int64 `json:"days"`
	Through string           `json:"through"`
}

// exportHour is the destinations worker's hour counter (store.DataExportHourKey).
type exportHour struct {
	Hour   string `json:"hour"`
	EnvID  string `json:"environmentId"`
	Events int64  `json:"events"`
}

// Watermark is the rollup's progress: every hour up to Hour is rolled up.
type Watermark struct {
	Hour string `json:"hour"`
	At   int64  `json:"at"`
}

// Rollup is the only writer of rolled-up days and of the watermark.
type Rollup struct {
	table store.Table
	now   func() time.Time
}

// NewRollup rolls up the cells of table; now is the clock (time.Now in production).
func NewRollup(table store.Table, now func() time.Time) *Rollup {
	if now == nil {
		now = time.Now
	}
	return &Rollup{table: table, now: now}
}

// Report says what one run did.
type Report struct {
	From, Through string // hours rolled up (yyyymmddhh); empty when nothing was due
	Days          int    // days recomputed
	Written       int    // items written (an unchanged item is not rewritten)
}

// Run rolls up every complete hour since the watermark: each day touched
// is recomputed whole from its hours and written where it changed, then
// the watermark moves. A run that stops half way leaves the watermark
// where it was, so the next one recomputes the same days; the items it
// wrote are overwritten with the same numbers. Without a watermark (first
// run) it starts as far back as hour cells are kept.
func (r *Rollup) Run(ctx context.Context) (Report, error) {
	rep, err := r.rollHours(ctx)
	// The SDK snapshot is taken once an hour, whether or not hours were
	// due, and a failure of either leaves the other done.
	if serr := r.SnapshotSDKs(ctx); serr != nil {
		err = errors.Join(err, serr)
	}
	return rep, err
}

func (r *Rollup) rollHours(ctx context.Context) (Report, error) {
	now := r.now().UTC()
	last := now.Add(-Grace).Truncate(time.Hour).Add(-time.Hour)
	wm, version, err := r.watermark(ctx)
	if err != nil {
		return Report{}, err
	}
	start := now.Add(-ingest.CellTTL).Truncate(time.Hour)
	if wm != "" {
		t, err := time.Parse(hourLayout, wm)
		if err != nil {
			return Report{}, fmt.Errorf("usage rollup watermark %q: %w", wm, err)
		}
		start = t.Add(time.Hour)
	}
	if start.After(last) {
		return Report{}, nil
	}
	rep := Report{From: start.Format(hourLayout), Through: last.Format(hourLayout)}
	for day := start.Truncate(24 * time.Hour); !day.After(last); day = day.Add(24 * time.Hour) {
		through := day.Add(23 * time.Hour)
		if through.After(last) {
			through = last
		}
		n, err := r.RollupDay(ctx, day, through)
		rep.Written += n
		if err != nil {
			return rep, err
		}
		rep.Days++
	}
	doc, _ := json.Marshal(Watermark{Hour: rep.Through, At: now.UnixMilli()})
	k := store.UsageRollupWatermarkKey()
	cond := store.IfNotExists()
	if version > 0 {
		cond = store.IfVersion(version)
	}
	// A concurrent run that moved the watermark first computed the same days: losing to it is fine.
	if err := r.table.Put(ctx, store.Item{PK: k.PK, SK: k.SK, Version: version + 1, Data: doc}, cond); err != nil && !errors.Is(err, store.ErrConditionFailed) {
		return rep, fmt.Errorf("move usage rollup watermark to %s: %w", rep.Through, err)
	}
	return rep, nil
}

func (r *Rollup) watermark(ctx context.Context) (string, int64, error) {
	it, err := r.table.Get(ctx, store.UsageRollupWatermarkKey())
	if errors.Is(err, store.ErrNotFound) {
		return "", 0, nil
	}
	if err != nil {
		return "", 0, fmt.Errorf("read usage rollup watermark: %w", err)
	}
	var wm Watermark
	if err := json.Unmarshal(it.Data, &wm); err != nil {
		return "", 0, fmt.Errorf("decode usage rollup watermark: %w", err)
	}
	return wm.Hour, it.Version, nil
}

// RollupDay recomputes the day starting at day (UTC midnight) from its
// hours up to through, and writes each item that changed. It returns the
// number of items written.
func (r *Rollup) RollupDay(ctx context.Context, day, through time.Time) (int, error) {
	days := map[store.Key]*dayAcc{}
	exports := map[string]*ExportDay{}
	streams := map[store.Key]*StreamDay{}
	var keys, streamKeys []store.Key
	dayStr := day.Format(dayLayout)
	throughStr := through.Format(hourLayout)
	for h := day; !h.After(through); h = h.Add(time.Hour) {
		hour := h.Format(hourLayout)
		err := record.Each(ctx, r.table, store.Query{PK: store.UsageCellPartition(hour)}, "usage cells of "+hour, func(it store.Item) error {
			var c ingest.Cell
			if err := json.Unmarshal(it.Data, &c); err != nil {
				return fmt.Errorf("decode usage cell %s/%s: %w", it.PK, it.SK, err)
			}
			_, cell, _ := strings.Cut(it.SK, "#")
			k := store.UsageDayKey(day.Format(monthLayout), c.ProjectKey, c.EnvKey, day.Format("02"), cell)
			acc := days[k]
			if acc == nil {
				acc = &dayAcc{d: Day{Day: dayStr, Sender: c.Sender, Events: map[string]int64{},
					Sketches: map[string][]byte{}, Through: throughStr}, sketches: map[string]*hyperloglog.Sketch{}}
				days[k] = acc
				keys = append(keys, k)
			}
			return acc.add(hour[8:], c)
		})
		if err != nil {
			return 0, err
		}
		if err := rollupStreams(ctx, r.table, day, hour, throughStr, streams, &streamKeys); err != nil {
			return 0, err
		}
		err = record.Each(ctx, r.table, store.Query{PK: store.DataExportHourKey(hour, "").PK}, "data export counts of "+hour, func(it store.Item) error {
			var x exportHour
			if err := json.Unmarshal(it.Data, &x); err != nil {
				return fmt.Errorf("decode data export hour %s/%s: %w", it.PK, it.SK, err)
			}
			e := exports[it.SK]
			if e == nil {
				e = &ExportDay{Day: dayStr, EnvID: it.SK, Hourly: map[string]int64{}, Through: throughStr}
				exports[it.SK] = e
			}
			e.Events += x.Events
			e.Hourly[hour[8:]] += x.Events
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	ttl := day.Add(DayTTL).Unix()
	written := 0
	for _, k := range keys {
		doc, err := days[k].doc()
		if err != nil {
			return written, err
		}
		n, err := r.overwrite(ctx, k, doc, ttl)
		written += n
		if err != nil {
			return written, err
		}
	}
	for _, k := range streamKeys {
		doc, err := json.Marshal(streams[k])
		if err != nil {
			return written, fmt.Errorf("encode stream day: %w", err)
		}
		n, err := r.overwrite(ctx, k, doc, ttl)
		written += n
		if err != nil {
			return written, err
		}
	}
	for _, k := range keys {
		n, err := r.foldMonth(ctx, day, k, days[k])
		written += n
		if err != nil {
			return written, err
		}
	}
	envs := make([]string, 0, len(exports))
	for env := range exports {
		envs = append(envs, env)
	}
	sort.Strings(envs)
	for _, env := range envs {
		doc, err := json.Marshal(exports[env])
		if err != nil {
			return written, fmt.Errorf("encode export day: %w", err)
		}
		n, err := r.overwrite(ctx, store.UsageDayExportKey(day.Format(monthLayout), env, day.Format("02")), doc, ttl)
		written += n
		if err != nil {
			return written, err
		}
		e := exports[env]
		n, err = r.update(ctx, store.UsageMonthExportKey(day.Format("2006"), env, day.Format("01")), monthTTL(day), func(old []byte) ([]byte, error) {
			m := ExportMonth{Month: day.Format(monthLayout), EnvID: env, Days: map[string]int64{}}
			if old != nil {
				if err := json.Unmarshal(old, &m); err != nil {
					return nil, fmt.Errorf("decode export month: %w", err)
				}
			}
			m.Days[day.Format("02")] = e.Events
			m.Through = max(m.Through, e.Through)
			return json.Marshal(m)
		})
		written += n
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

func monthTTL(day time.Time) int64 {
	return time.Date(day.Year(), day.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, 1, 0).Add(DayTTL).Unix()
}

// foldMonth folds a recomputed day into its month's item.
func (r *Rollup) foldMonth(ctx context.Context, day time.Time, dayKey store.Key, acc *dayAcc) (int, error) {
	d := acc.d
	cell := dayKey.SK[strings.LastIndexByte(dayKey.SK, '#')+1:]
	k := store.UsageMonthKey(day.Format("2006"), d.ProjectKey, d.EnvKey, day.Format("01"), cell)
	dd := day.Format("02")
	return r.update(ctx, k, monthTTL(day), func(old []byte) ([]byte, error) {
		m := Month{Month: day.Format(monthLayout), Sender: d.Sender, DayEvents: map[string]int64{}, Sketches: map[string][]byte{}}
		if old != nil {
			if err := json.Unmarshal(old, &m); err != nil {
				return nil, fmt.Errorf("decode usage month: %w", err)
			}
		}
		var total int64
		for _, n := range d.Events {
			total += n
		}
		m.DayEvents[dd] = total
		if d.AIRuns > 0 {
			if m.DayAIRuns == nil {
				m.DayAIRuns = map[string]int64{}
			}
			m.DayAIRuns[dd] = d.AIRuns
		}
		if err := ingest.MergeSketches(m.Sketches, acc.sketches); err != nil {
			return nil, err
		}
		m.Through = max(m.Through, d.Through)
		return json.Marshal(m)
	})
}

// update rewrites the item at k with what next makes of its data (nil
// when absent), unless that is what it holds, on the condition that
// nobody wrote it meanwhile; a lost race is read and computed again.
func (r *Rollup) update(ctx context.Context, k store.Key, ttl int64, next func(old []byte) ([]byte, error)) (int, error) {
	for attempt := 0; attempt < 3; attempt++ {
		var oldData []byte
		old, err := r.table.Get(ctx, k)
		cond, version := store.IfNotExists(), int64(1)
		switch {
		case err == nil:
			oldData, cond, version = old.Data, store.IfVersion(old.Version), old.Version+1
		case !errors.Is(err, store.ErrNotFound):
			return 0, fmt.Errorf("read usage item %s: %w", k.SK, err)
		}
		doc, err := next(oldData)
		if err != nil {
			return 0, err
		}
		if oldData != nil && bytes.Equal(oldData, doc) {
			return 0, nil
		}
		err = r.table.Put(ctx, store.Item{PK: k.PK, SK: k.SK, Version: version, TTL: ttl, Data: doc}, cond)
		if err == nil {
			return 1, nil
		}
		if !errors.Is(err, store.ErrConditionFailed) {
			return 0, fmt.Errorf("write usage item %s: %w", k.SK, err)
		}
	}
	return 0, fmt.Errorf("write usage item %s: %w", k.SK, store.ErrConflict)
}

// overwrite replaces the item at k with doc unless it holds doc already.
// Two runs compute the same doc from the same hours, so one that loses a
// race finds the item up to date on its retry.
func (r *Rollup) overwrite(ctx context.Context, k store.Key, doc []byte, ttl int64) (int, error) {
	return r.update(ctx, k, ttl, func([]byte) ([]byte, error) { return doc, nil })
}

type dayAcc struct {
	d        Day
	sketches map[string]*hyperloglog.Sketch
}

func (a *dayAcc) add(hh string, c ingest.Cell) error {
	var total int64
	for kind, n := range c.Events {
		a.d.Events[kind] += n
		total += n
	}
	a.d.AIRuns += c.AIRuns
	if total > 0 {
		if a.d.HourlyEvents == nil {
			a.d.HourlyEvents = map[string]int64{}
		}
		a.d.HourlyEvents[hh] += total
	}
	if c.AIRuns > 0 {
		if a.d.HourlyAIRuns == nil {
			a.d.HourlyAIRuns = map[string]int64{}
		}
		a.d.HourlyAIRuns[hh] += c.AIRuns
	}
	for name, raw := range c.Sketches {
		s := hyperloglog.New14()
		if err := s.UnmarshalBinary(raw); err != nil {
			return fmt.Errorf("decode sketch %s of hour %s: %w", name, c.Hour, err)
		}
		if into := a.sketches[name]; into != nil {
			if err := into.Merge(s); err != nil {
				return fmt.Errorf("merge sketch %s: %w", name, err)
			}
		} else {
			a.sketches[name] = s
		}
	}
	return nil
}

func (a *dayAcc) doc() ([]byte, error) {
	for name, s := range a.sketches {
		raw, err := ingest.Canonical(s).MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("encode sketch %s: %w", name, err)
		}
		a.d.Sketches[name] = raw
	}
	data, err := json.Marshal(a.d)
	if err != nil {
		return nil, fmt.Errorf("encode usage day: %w", err)
	}
	return data, nil
}
