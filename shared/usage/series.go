package usage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/axiomhq/hyperloglog"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/store"
)

// Metric is what a series counts.
type Metric int

const (
	// Contexts are distinct context keys, by context kind.
	Contexts Metric = iota
	// MAU are distinct context keys of the primary context kind (user unless filtered).
	MAU
	// AIRuns are the AI SDKs' generation events.
	AIRuns
	// Events are the events received, all kinds together.
	Events
	// Exported are the events the data export destinations sent.
	Exported
	// Streams are the streaming connections server-side SDKs opened.
	Streams
)

func (m Metric) distinct() bool { return m == Contexts || m == MAU }

// PrimaryKind is the context kind MAU counts when no kind is asked for.
const PrimaryKind = "user"

// Aggregation types and granularities of the series.
const (
	MonthToDate = "month_to_date"
	Incremental = "incremental"
	Rolling30d  = "rolling_30d"
	Daily       = "daily"
	Monthly     = "monthly"
	Hourly      = "hourly"
)

// MaxRange is the longest time range a series covers.
const MaxRange = 365 * 24 * time.Hour

// MaxHourlyRange bounds hourly series, whose points are many.
const MaxHourlyRange = 31 * 24 * time.Hour

// Dimensions a series may be grouped by.
const (
	DimContextKind = "contextKind"
	DimProjectID   = "projectId"
	DimEnvID       = "environmentId"
	DimSDKName     = "sdkName"
	DimSDKType     = "sdkType"
	DimSDKVersion  = "sdkVersion"
	DimSDKAppID    = "sdkAppId"
	DimAnonymous   = "anonymousV2"
	// DimSide is client or server (the legacy MAU's sdktype).
	DimSide = "side"
	// DimCategory is browser, mobile or backend (MAU by category).
	DimCategory = "category"
)

// Request is one series to compute.
type Request struct {
	Metric Metric
	// Side keeps client-side SDKs (mobile, browser) or server-side ones; "" keeps all.
	Side        string
	From, To    time.Time
	Aggregation string
	Granularity string
	// Filters; an empty one keeps everything.
	Projects, Envs, Kinds, SDKNames, SDKTypes, SDKVersions, AppIDs, Anonymous []string
	// EnvIDs keeps these environment ids (the export counters know only ids); nil keeps all.
	EnvIDs  []string
	GroupBy []string
	// ProjectID names a project's _id for the projectId dimension.
	ProjectID func(projectKey string) string
}

// Series is a computed series: points of time (Unix ms) and one count per
// group, under the group's index as a string, and what each group is.
type Series struct {
	Metadata []map[string]any
	Points   []map[string]int64
}

// Check validates the aggregation and granularity and the time range.
func (r *Request) Check(allowed map[string][]string) error {
	grans, ok := allowed[r.Aggregation]
	if !ok {
		return fault.New(fault.Invalid, "aggregationType %q is not one of %s", r.Aggregation, strings.Join(slices.Sorted(maps.Keys(allowed)), ", "))
	}
	okGran := false
	for _, g := range grans {
		okGran = okGran || g == r.Granularity
	}
	if !okGran {
		return fault.New(fault.Invalid, "granularity %q is not supported with aggregationType %q (allowed: %s)", r.Granularity, r.Aggregation, strings.Join(grans, ", "))
	}
	if r.To.Before(r.From) {
		return fault.New(fault.Invalid, "from must not be after to")
	}
	if r.To.Sub(r.From) > MaxRange {
		return fault.New(fault.Invalid, "the time range from..to is longer than 365 days")
	}
	if r.Granularity == Hourly && r.To.Sub(r.From) > MaxHourlyRange {
		return fault.New(fault.Invalid, "hourly granularity covers at most 31 days")
	}
	if len(r.Envs) > 0 && len(r.Projects) != 1 {
		return fault.New(fault.Invalid, "an environmentKey filter needs exactly one projectKey")
	}
	for _, a := range r.Anonymous {
		if a != "true" && a != "false" {
			return fault.New(fault.Invalid, "anonymous %q is not true or false", a)
		}
	}
	return nil
}

// Reader computes series from the rolled-up days and the live hour
// cells the rollup has not reached yet.
type Reader struct {
	table store.Table
	now   func() time.Time
}

// NewReader reads the usage items of table, on the clock now (time.Now when nil).
func NewReader(table store.Table, now func() time.Time) *Reader {
	if now == nil {
		now = time.Now
	}
	return &Reader{table: table, now: now}
}

// bucket is one group's values by bucket start (Unix ms): a sketch for
// distinct metrics, a count otherwise.
type bucket struct {
	sketches map[int64]*hyperloglog.Sketch
	counts   map[int64]int64
}

// Compute answers r: it reads each month partition the window needs, once
// per project filtered on (or once when none is).
func (rd *Reader) Compute(ctx context.Context, r Request) (Series, error) {
	from, to := r.From.UTC(), r.To.UTC()
	unit := 24 * time.Hour
	if r.Granularity == Hourly {
		unit = time.Hour
	}
	first := from.Truncate(unit)
	loadFrom := from.Truncate(24 * time.Hour)
	switch r.Aggregation {
	case MonthToDate:
		loadFrom = monthStart(from)
	case Rolling30d:
		loadFrom = loadFrom.Add(-29 * 24 * time.Hour)
	}
	loadTo := to.Truncate(24 * time.Hour)

	groups := map[string]*bucket{}
	meta := map[string]map[string]any{}
	add := func(dims []dimValue, at int64, s *hyperloglog.Sketch, n int64) error {
		key, md := groupKey(dims)
		b := groups[key]
		if b == nil {
			b = &bucket{sketches: map[int64]*hyperloglog.Sketch{}, counts: map[int64]int64{}}
			groups[key], meta[key] = b, md
		}
		if s == nil {
			b.counts[at] += n
			return nil
		}
		if into := b.sketches[at]; into != nil {
			return into.Merge(s)
		}
		b.sketches[at] = s
		return nil
	}
	prefixes := []string{store.UsageDayProjectPrefix("")[:2]}
	switch {
	case r.Metric == Exported:
		prefixes = []string{store.UsageDayExportPrefix}
	case r.Metric == Streams:
		prefixes = []string{store.UsageDayStreamPrefix}
	case len(r.Projects) > 0:
		prefixes = prefixes[:0]
		for _, p := range dedupe(r.Projects) {
			prefixes = append(prefixes, store.UsageDayProjectPrefix(p))
		}
	}
	// The hours after the rollup's watermark are read from their live
	// cells (one Get, then one Query per such hour).
	liveFrom, err := rd.liveFrom(ctx, loadFrom, to)
	if err != nil {
		return Series{}, err
	}
	// covered is the last hour each rolled-up day item holds, by its sort
	// key: a live cell of a later hour adds to it, an earlier one is in it
	// already (a rollup that stopped before moving the watermark).
	covered := map[string]string{}
	months := []time.Time{}
	if r.Granularity == Monthly {
		// Rolled-up months, and the days of any month to cuts short or
		// that has hours not rolled up yet (a sketch cannot be cut either).
		spilled, err := rd.loadMonths(ctx, r, prefixes, monthStart(from), to, monthStart(liveFrom), add)
		if err != nil {
			return Series{}, err
		}
		months = spilled
	} else {
		for m := monthStart(loadFrom); !m.After(loadTo); m = m.AddDate(0, 1, 0) {
			months = append(months, m)
		}
	}
	for _, m := range months {
		for _, prefix := range prefixes {
			q := store.Query{PK: store.UsageDayPartition(m.Format(monthLayout)), SKPrefix: prefix}
			err := record.Each(ctx, rd.table, q, "usage items "+q.PK, func(it store.Item) error {
				switch r.Metric {
				case Exported:
					return rd.addExport(r, it, loadFrom, loadTo, covered, add)
				case Streams:
					return rd.addStreams(r, it, loadFrom, loadTo, covered, add)
				}
				return rd.addDay(r, it, loadFrom, loadTo, covered, add)
			})
			if err != nil {
				return Series{}, err
			}
		}
	}
	// Hours after now have no cells yet.
	for h := liveFrom; !h.After(to) && !h.After(rd.now()); h = h.Add(time.Hour) {
		if err := rd.addLiveHour(ctx, r, h, covered, add); err != nil {
			return Series{}, err
		}
	}
	return finish(r, groups, meta, first, to, unit)
}

// liveFrom is the first hour at or after loadFrom the rollup has not
// rolled up: the hour after its watermark (before the first rollup, as
// far back as cells are kept before to, from loadFrom).
func (rd *Reader) liveFrom(ctx context.Context, loadFrom, to time.Time) (time.Time, error) {
	if kept := to.Add(-ingest.CellTTL).Truncate(time.Hour); kept.After(loadFrom) {
		loadFrom = kept
	}
	it, err := rd.table.Get(ctx, store.UsageRollupWatermarkKey())
	if errors.Is(err, store.ErrNotFound) {
		return loadFrom, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("read usage rollup watermark: %w", err)
	}
	var wm Watermark
	if err := json.Unmarshal(it.Data, &wm); err != nil {
		return time.Time{}, fmt.Errorf("decode usage rollup watermark: %w", err)
	}
	t, err := time.Parse(hourLayout, wm.Hour)
	if err != nil {
		return time.Time{}, fmt.Errorf("usage rollup watermark %q: %w", wm.Hour, err)
	}
	if next := t.Add(time.Hour); next.After(loadFrom) {
		return next, nil
	}
	return loadFrom, nil
}

// addLiveHour adds the live counters of hour h the metric reads (one
// Query of the hour's partition), shaped as the rollup would shape them,
// except those a rolled-up day item holds already.
func (rd *Reader) addLiveHour(ctx context.Context, r Request, h time.Time, covered map[string]string, add adder) error {
	hour, hh := h.Format(hourLayout), h.Format("15")
	day := h.Truncate(24 * time.Hour)
	month, dd, at := day.Format(monthLayout), day.Format("02"), day.UnixMilli()
	fresh := func(k store.Key) bool { return hour > covered[k.SK] }
	switch r.Metric {
	case Exported:
		return record.Each(ctx, rd.table, store.Query{PK: store.DataExportHourKey(hour, "").PK}, "data export counts of "+hour, func(it store.Item) error {
			var x exportHour
			if err := json.Unmarshal(it.Data, &x); err != nil {
				return fmt.Errorf("decode data export hour %s/%s: %w", it.PK, it.SK, err)
			}
			if !fresh(store.UsageDayExportKey(month, it.SK, dd)) {
				return nil
			}
			return addExported(r, ExportDay{EnvID: it.SK, Events: x.Events, Hourly: map[string]int64{hh: x.Events}}, at, add)
		})
	case Streams:
		return record.Each(ctx, rd.table, store.Query{PK: store.UsageStreamPartition(hour)}, "stream counters of "+hour, func(it store.Item) error {
			var s StreamHour
			if err := json.Unmarshal(it.Data, &s); err != nil {
				return fmt.Errorf("decode stream counter %s/%s: %w", it.PK, it.SK, err)
			}
			sdk := it.SK[strings.LastIndexByte(it.SK, '#')+1:]
			if !fresh(store.UsageDayStreamKey(month, s.ProjectKey, s.EnvKey, dd, sdk)) {
				return nil
			}
			sd := StreamDay{ProjectKey: s.ProjectKey, EnvKey: s.EnvKey, SDKName: s.SDKName, SDKVersion: s.SDKVersion,
				Opened: s.Opened, Hourly: map[string]int64{hh: s.Opened}}
			return addCounts(r, sd.asDay(), at, it.SK, add)
		})
	}
	return record.Each(ctx, rd.table, store.Query{PK: store.UsageCellPartition(hour)}, "usage cells of "+hour, func(it store.Item) error {
		var c ingest.Cell
		if err := json.Unmarshal(it.Data, &c); err != nil {
			return fmt.Errorf("decode usage cell %s/%s: %w", it.PK, it.SK, err)
		}
		_, cell, _ := strings.Cut(it.SK, "#")
		if !fresh(store.UsageDayKey(month, c.ProjectKey, c.EnvKey, dd, cell)) {
			return nil
		}
		d := Day{Sender: c.Sender, Events: c.Events, AIRuns: c.AIRuns, Sketches: c.Sketches,
			HourlyEvents: map[string]int64{}, HourlyAIRuns: map[string]int64{}}
		for _, n := range c.Events {
			d.HourlyEvents[hh] += n
		}
		d.HourlyAIRuns[hh] = c.AIRuns
		return addCounts(r, d, at, it.PK+"/"+it.SK, add)
	})
}

type dimValue struct {
	name  string
	value string
	// extra metadata shown beside the value (a project's key beside its id).
	extraName, extra string
}

func groupKey(dims []dimValue) (string, map[string]any) {
	var sb strings.Builder
	md := map[string]any{}
	for _, d := range dims {
		sb.WriteString(d.value)
		sb.WriteByte(0)
		md[d.name] = d.value
		if d.extraName != "" {
			md[d.extraName] = d.extra
		}
	}
	return sb.String(), md
}

func (rd *Reader) addDay(r Request, it store.Item, loadFrom, loadTo time.Time, covered map[string]string, add adder) error {
	var d Day
	if err := json.Unmarshal(it.Data, &d); err != nil {
		return fmt.Errorf("decode usage day %s: %w", it.SK, err)
	}
	covered[it.SK] = d.Through
	day, err := time.Parse(dayLayout, d.Day)
	if err != nil || day.Before(loadFrom) || day.After(loadTo) {
		return nil
	}
	return addCounts(r, d, day.UnixMilli(), it.SK, add)
}

// adder adds a sketch (distinct metrics) or a count to a group's bucket at a time.
type adder func(dims []dimValue, at int64, s *hyperloglog.Sketch, n int64) error

// addCounts adds one rolled-up sender cell (a day, or a month shaped as
// one) at bucket time at, if the filters keep it.
func addCounts(r Request, d Day, at int64, name string, add adder) error {
	side := sideOf(d.SDKType)
	if (r.Side != "" && r.Side != side) || !keep(r.Projects, d.ProjectKey) || !keep(r.Envs, d.EnvKey) || !keep(r.SDKNames, d.SDKName) ||
		!keep(r.SDKVersions, d.SDKVersion) || !keep(r.AppIDs, d.AppID) || !keepType(r.SDKTypes, d.SDKType) {
		return nil
	}
	switch r.Metric {
	case AIRuns, Events, Streams:
		hourly, total := d.HourlyAIRuns, d.AIRuns
		if r.Metric != AIRuns {
			hourly, total = d.HourlyEvents, 0
			for _, n := range d.Events {
				total += n
			}
		}
		dims := r.dims(d, "", "")
		if r.Granularity != Hourly {
			return add(dims, at, nil, total)
		}
		for hh, n := range hourly {
			h, _ := strconv.Atoi(hh)
			if err := add(dims, at+int64(h)*int64(time.Hour/time.Millisecond), nil, n); err != nil {
				return err
			}
		}
		return nil
	}
	kinds := r.Kinds
	if r.Metric == MAU && len(kinds) == 0 {
		kinds = []string{PrimaryKind}
	}
	for _, sk := range slices.Sorted(maps.Keys(d.Sketches)) {
		kind, anon, _ := strings.Cut(sk, "|")
		if !keep(kinds, kind) || !keep(r.Anonymous, anon) {
			continue
		}
		s := hyperloglog.New14()
		if err := s.UnmarshalBinary(d.Sketches[sk]); err != nil {
			return fmt.Errorf("decode sketch %s of %s: %w", sk, name, err)
		}
		if err := add(r.dims(d, kind, anon), at, s, 0); err != nil {
			return err
		}
	}
	return nil
}

func (rd *Reader) addStreams(r Request, it store.Item, loadFrom, loadTo time.Time, covered map[string]string, add adder) error {
	var sd StreamDay
	if err := json.Unmarshal(it.Data, &sd); err != nil {
		return fmt.Errorf("decode stream day %s: %w", it.SK, err)
	}
	covered[it.SK] = sd.Through
	day, err := time.Parse(dayLayout, sd.Day)
	if err != nil || day.Before(loadFrom) || day.After(loadTo) {
		return nil
	}
	return addCounts(r, sd.asDay(), day.UnixMilli(), it.SK, add)
}

func (rd *Reader) addExport(r Request, it store.Item, loadFrom, loadTo time.Time, covered map[string]string, add adder) error {
	var x ExportDay
	if err := json.Unmarshal(it.Data, &x); err != nil {
		return fmt.Errorf("decode export day %s: %w", it.SK, err)
	}
	covered[it.SK] = x.Through
	day, err := time.Parse(dayLayout, x.Day)
	if err != nil || day.Before(loadFrom) || day.After(loadTo) {
		return nil
	}
	return addExported(r, x, day.UnixMilli(), add)
}

func addExported(r Request, x ExportDay, at int64, add adder) error {
	if r.EnvIDs != nil && !contains(r.EnvIDs, x.EnvID) {
		return nil
	}
	var dims []dimValue
	for _, g := range r.GroupBy {
		if g == DimEnvID {
			dims = append(dims, dimValue{name: DimEnvID, value: x.EnvID})
		}
	}
	if r.Granularity != Hourly {
		return add(dims, at, nil, x.Events)
	}
	for hh, n := range x.Hourly {
		h, _ := strconv.Atoi(hh)
		if err := add(dims, at+int64(h)*int64(time.Hour/time.Millisecond), nil, n); err != nil {
			return err
		}
	}
	return nil
}

// loadMonths adds the rolled-up months from..to (monthly granularity): one
// Query per year partition and prefix. A month whose item holds hours
// after to (to cuts it short) cannot be cut from a sketch: those months
// are returned, to be read from their days instead.
func (rd *Reader) loadMonths(ctx context.Context, r Request, prefixes []string, from, to, live time.Time, add adder) ([]time.Time, error) {
	type pending struct {
		at   time.Time
		day  *Day
		expo *ExportDay
	}
	var kept []pending
	spill := map[time.Time]bool{}
	limit := to.UTC().Format(hourLayout)
	for y := from.Year(); y <= to.Year(); y++ {
		for _, prefix := range prefixes {
			q := store.Query{PK: store.UsageMonthPartition(strconv.Itoa(y)), SKPrefix: prefix}
			err := record.Each(ctx, rd.table, q, "usage items "+q.PK, func(it store.Item) error {
				var m Month
				var x ExportMonth
				if r.Metric == Exported {
					if err := json.Unmarshal(it.Data, &x); err != nil {
						return fmt.Errorf("decode export month %s: %w", it.SK, err)
					}
					m.Month, m.Through = x.Month, x.Through
				} else if err := json.Unmarshal(it.Data, &m); err != nil {
					return fmt.Errorf("decode usage month %s: %w", it.SK, err)
				}
				at, err := time.Parse(monthLayout, m.Month)
				if err != nil || at.Before(from) || at.After(to) {
					return nil
				}
				if m.Through > limit || !at.Before(live) {
					spill[at] = true
					return nil
				}
				if r.Metric == Exported {
					e := ExportDay{EnvID: x.EnvID}
					for _, n := range x.Days {
						e.Events += n
					}
					kept = append(kept, pending{at: at, expo: &e})
					return nil
				}
				d := m.asDay()
				kept = append(kept, pending{at: at, day: &d})
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	for _, p := range kept {
		if spill[p.at] {
			continue
		}
		var err error
		if p.expo != nil {
			err = addExported(r, *p.expo, p.at.UnixMilli(), add)
		} else {
			err = addCounts(r, *p.day, p.at.UnixMilli(), p.at.Format(monthLayout), add)
		}
		if err != nil {
			return nil, err
		}
	}
	var out []time.Time
	for m := range spill {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out, nil
}

// dims are a day's values of the requested dimensions; context series
// always group by context kind first.
func (r Request) dims(d Day, kind, anon string) []dimValue {
	var out []dimValue
	if r.Metric == Contexts {
		out = append(out, dimValue{name: DimContextKind, value: kind})
	}
	for _, g := range r.GroupBy {
		switch g {
		case DimContextKind:
			if r.Metric != Contexts {
				out = append(out, dimValue{name: DimContextKind, value: kind})
			}
		case DimProjectID:
			id := d.ProjectKey
			if r.ProjectID != nil {
				id = r.ProjectID(d.ProjectKey)
			}
			out = append(out, dimValue{name: DimProjectID, value: id, extraName: "projectKey", extra: d.ProjectKey})
		case DimEnvID:
			out = append(out, dimValue{name: DimEnvID, value: d.EnvID, extraName: "environmentKey", extra: d.EnvKey})
		case DimSDKName:
			out = append(out, dimValue{name: DimSDKName, value: d.SDKName})
		case DimSDKType:
			out = append(out, dimValue{name: DimSDKType, value: d.SDKType})
		case DimSDKVersion:
			out = append(out, dimValue{name: DimSDKVersion, value: d.SDKVersion})
		case DimSDKAppID:
			out = append(out, dimValue{name: DimSDKAppID, value: d.AppID})
		case DimAnonymous:
			out = append(out, dimValue{name: DimAnonymous, value: anon})
		case DimSide:
			out = append(out, dimValue{name: DimSide, value: sideOf(d.SDKType)})
		case DimCategory:
			out = append(out, dimValue{name: DimCategory, value: categoryOf(d.SDKType)})
		}
	}
	return out
}

func sideOf(sdkType string) string {
	if sdkType == "mobile" || sdkType == "browser" {
		return "client"
	}
	return "server"
}

func categoryOf(sdkType string) string {
	if sdkType == "mobile" || sdkType == "browser" {
		return sdkType
	}
	return "backend"
}

func keep(filter []string, v string) bool {
	if len(filter) == 0 {
		return true
	}
	for _, f := range filter {
		if f == v {
			return true
		}
	}
	return false
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// keepType matches an SDK type filter: server, mobile, browser, or client (mobile and browser).
func keepType(filter []string, sdkType string) bool {
	if len(filter) == 0 {
		return true
	}
	for _, f := range filter {
		if f == sdkType || f == sideOf(sdkType) {
			return true
		}
	}
	return false
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range in {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func monthStart(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// finish turns the groups' buckets into points from first to to, by the aggregation.
func finish(r Request, groups map[string]*bucket, meta map[string]map[string]any, first, to time.Time, unit time.Duration) (Series, error) {
	if r.Metric == Exported && len(groups) == 0 && len(r.GroupBy) == 0 {
		// The counters are read whether or not anything was exported: none is a count of zero.
		groups[""], meta[""] = &bucket{counts: map[int64]int64{}}, map[string]any{}
	}
	keys := slices.Sorted(maps.Keys(groups))
	out := Series{Metadata: make([]map[string]any, 0, len(keys)), Points: []map[string]int64{}}
	for _, k := range keys {
		out.Metadata = append(out.Metadata, meta[k])
	}
	var times []time.Time
	if r.Granularity == Monthly {
		for m := monthStart(first); !m.After(to); m = m.AddDate(0, 1, 0) {
			times = append(times, m)
		}
	} else {
		for t := first; !t.After(to); t = t.Add(unit) {
			times = append(times, t)
		}
	}
	for range times {
		out.Points = append(out.Points, map[string]int64{})
	}
	for i, t := range times {
		out.Points[i]["time"] = t.UnixMilli()
	}
	for gi, k := range keys {
		b := groups[k]
		name := strconv.Itoa(gi)
		for i, t := range times {
			// The buckets whose union this point counts.
			var lo, hi time.Time
			switch {
			case r.Granularity == Monthly:
				lo, hi = t, t.AddDate(0, 1, 0).Add(-time.Millisecond)
			case r.Aggregation == MonthToDate:
				lo, hi = monthStart(t), t
			case r.Aggregation == Rolling30d:
				lo, hi = t.Add(-29*24*time.Hour), t
			default:
				lo, hi = t, t
			}
			v, err := b.value(lo.UnixMilli(), hi.UnixMilli(), r.Metric.distinct())
			if err != nil {
				return Series{}, err
			}
			out.Points[i][name] = v
		}
	}
	return out, nil
}

// value is the count of the union of buckets lo..hi (bucket starts, inclusive).
func (b *bucket) value(lo, hi int64, distinct bool) (int64, error) {
	if !distinct {
		var n int64
		for at, c := range b.counts {
			if at >= lo && at <= hi {
				n += c
			}
		}
		return n, nil
	}
	merged := hyperloglog.New14()
	any := false
	for at, s := range b.sketches {
		if at >= lo && at <= hi {
			if err := merged.Merge(s); err != nil {
				return 0, fmt.Errorf("merge sketches: %w", err)
			}
			any = true
		}
	}
	if !any {
		return 0, nil
	}
	return int64(merged.Estimate()), nil
}
