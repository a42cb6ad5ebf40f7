package insight

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/store"
)

// Impact sizes of a flag event.
const (
	ImpactNone   = "none"
	ImpactSmall  = "small"
	ImpactMedium = "medium"
	ImpactLarge  = "large"
)

// Impact reasons: why the size is what it is.
const (
	ReasonShiftedEvaluations = "evaluations-shifted"
	ReasonNoEvaluations      = "no-evaluations"
	ReasonNoneBefore         = "no-evaluations-before"
	ReasonNoneAfter          = "no-evaluations-after"
)

// Event types of flag events, from the actions of the audit entry.
const (
	EventFlagCreated         = "flag-created"
	EventFlagDeleted         = "flag-deleted"
	EventFlagArchived        = "flag-archived"
	EventFlagTargetingChange = "flag-targeting-updated"
	EventFlagSettingsChange  = "flag-settings-updated"
)

// FlagEvent is one change of a flag, with its measured impact.
type FlagEvent struct {
	ID              string
	ProjectID       string
	ProjectKey      string
	EnvironmentID   string
	EnvironmentKey  string // "" for a change of every environment (a global event)
	FlagKey         string
	EventType       string
	EventTime       int64
	Description     string
	AuditLogEntryID string
	Member          *EventMember
	Actions         []string
	Impact          Impact
}

// EventMember is the member who made the change.
type EventMember struct {
	ID, Email, FirstName, LastName string
}

// Impact measures how much a change moved the evaluations: Percentage is
// the share of evaluations (0-100) that the change moved from one
// variation to another, from the hourly counters before and after it.
type Impact struct {
	Size       string
	Percentage float64
	Reason     string
	Variations []VariationEvals
}

// VariationEvals are one variation's evaluations in the hour before the
// event's hour and in the event's hour.
type VariationEvals struct {
	Value  string
	Before int64
	After  int64
}

// Limits of a flag events request.
const (
	FlagEventsDefaultLimit = 20
	FlagEventsMaxLimit     = 100
	// DefaultFlagEventsWindow is how far back the window starts by default.
	DefaultFlagEventsWindow = 7 * 24 * time.Hour
)

// FlagEventQuery selects flag events of one environment, newest first.
type FlagEventQuery struct {
	ProjectKey, EnvironmentKey string
	// Applications keeps events of flags these applications evaluated.
	Applications []string
	// FlagQuery keeps flags whose key contains it (case-insensitive).
	FlagQuery string
	// ImpactSize keeps events of this size ("" = any).
	ImpactSize string
	// HasExperiments, when set, keeps events with (true) or without (false)
	// an experiment; no experiments exist, so true keeps none.
	HasExperiments *bool
	// ExcludeGlobal drops changes made to the flag in every environment.
	ExcludeGlobal bool
	From, To      int64
	Limit         int
	// After continues below this event id (older); Before above it (newer).
	After, Before string
}

// FlagEventPage is one page, the count of matching events in the part of
// the window examined, and the cursors of the older and newer pages.
type FlagEventPage struct {
	Items      []FlagEvent
	TotalCount int
	Next       string
	Prev       string
}

// MaxExaminedAuditEntries bounds the audit entries one flag events request
// examines: past it, the page ends with a next link below the last entry
// examined.
const MaxExaminedAuditEntries = 2000

// FlagEvents lists the flag changes of the window, each with its impact.
func (s *Service) FlagEvents(ctx context.Context, q FlagEventQuery) (FlagEventPage, error) {
	proj, err := s.projects.Get(ctx, q.ProjectKey)
	if err != nil {
		return FlagEventPage{}, err
	}
	env, err := s.envs.Get(ctx, q.ProjectKey, q.EnvironmentKey)
	if err != nil {
		return FlagEventPage{}, err
	}
	if q.HasExperiments != nil && *q.HasExperiments {
		return FlagEventPage{Items: []FlagEvent{}}, nil
	}
	sel, err := s.selector(ctx, q)
	if err != nil {
		return FlagEventPage{}, err
	}
	ev := s.newEvaluator(q.ProjectKey, q.EnvironmentKey, proj.ID, env.ID)
	page := FlagEventPage{Items: []FlagEvent{}}
	sq := audit.ScanQuery{After: q.From - 1, Before: q.To + 1, Below: q.After, Above: q.Before, Ascending: q.Before != "", Budget: MaxExaminedAuditEntries}
	var scanErr error
	res, err := s.log.Scan(ctx, sq, func(e audit.Entry) bool {
		fe, ok := sel.event(e)
		if !ok {
			return true
		}
		if q.ImpactSize != "" || len(page.Items) < q.Limit {
			if err := ev.fill(ctx, &fe); err != nil {
				scanErr = err
				return false
			}
			if q.ImpactSize != "" && fe.Impact.Size != q.ImpactSize {
				return true
			}
		}
		page.TotalCount++
		if len(page.Items) < q.Limit {
			page.Items = append(page.Items, fe)
		}
		// Past a full page only counting goes on, and with an impact
		// filter every count costs reads: stop there.
		return q.ImpactSize == "" || len(page.Items) < q.Limit
	})
	if scanErr != nil {
		return FlagEventPage{}, scanErr
	}
	if err != nil {
		return FlagEventPage{}, err
	}
	more := res.More || page.TotalCount > len(page.Items)
	n := len(page.Items)
	switch {
	case q.Before != "":
		slices.Reverse(page.Items)
		if n > 0 {
			page.Next = page.Items[n-1].ID
			if more {
				page.Prev = page.Items[0].ID
			}
		}
	default:
		switch {
		case page.TotalCount > n && n > 0:
			page.Next = page.Items[n-1].ID
		case more:
			page.Next = res.Last // the budget ran out: go on below what was examined
		}
		if q.After != "" && n > 0 {
			page.Prev = page.Items[0].ID
		}
	}
	return page, nil
}

// selector turns audit entries into the flag events a query keeps.
type selector struct {
	q     FlagEventQuery
	flags map[string]bool // nil: every flag
	proj  string
	env   string
}

func (s *Service) selector(ctx context.Context, q FlagEventQuery) (*selector, error) {
	sel := &selector{q: q, proj: q.ProjectKey, env: q.EnvironmentKey}
	if len(q.Applications) > 0 {
		flags, err := s.flagsOfApplications(ctx, q.ProjectKey, q.Applications)
		if err != nil {
			return nil, err
		}
		sel.flags = flags
	}
	return sel, nil
}

// flagsOfApplications returns the project's flags that the applications
// evaluated (from the records SDK events leave in each application).
func (s *Service) flagsOfApplications(ctx context.Context, projectKey string, apps []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, app := range apps {
		q := store.Query{PK: store.ApplicationPartition(app), SKPrefix: store.ApplicationFlagPrefix + projectKey + "#"}
		for {
			page, err := s.table.Query(ctx, q)
			if err != nil {
				return nil, fmt.Errorf("list flags of application %q: %w", app, err)
			}
			for _, it := range page.Items {
				out[strings.TrimPrefix(it.SK, store.ApplicationFlagPrefix+projectKey+"#")] = true
			}
			if page.Cursor == "" {
				break
			}
			q.Cursor = page.Cursor
		}
	}
	return out, nil
}

// event reports whether e is a change of a flag the query keeps, and the
// event without its impact.
func (sel *selector) event(e audit.Entry) (FlagEvent, bool) {
	if e.Kind != "flag" || len(e.Accesses) == 0 {
		return FlagEvent{}, false
	}
	proj, env, flagKey, ok := flagResource(e.Accesses[0].Resource)
	if !ok || proj != sel.proj {
		return FlagEvent{}, false
	}
	global := env == "" || env == "*"
	if global && sel.q.ExcludeGlobal || !global && env != sel.env {
		return FlagEvent{}, false
	}
	if sel.flags != nil && !sel.flags[flagKey] {
		return FlagEvent{}, false
	}
	if sel.q.FlagQuery != "" && !strings.Contains(strings.ToLower(flagKey), strings.ToLower(sel.q.FlagQuery)) {
		return FlagEvent{}, false
	}
	fe := FlagEvent{ID: e.ID, ProjectKey: proj, FlagKey: flagKey, EventTime: e.Date, Description: e.Description,
		AuditLogEntryID: e.ID, EventType: eventType(e, global)}
	if !global {
		fe.EnvironmentKey = env
	}
	for _, a := range e.Accesses {
		fe.Actions = append(fe.Actions, a.Action)
	}
	if e.Member != nil {
		fe.Member = &EventMember{ID: e.Member.ID, Email: e.Member.Email}
	}
	return fe, true
}

// flagResource reads "proj/p:env/e:flag/f" or "proj/p:flag/f".
func flagResource(s string) (proj, env, flagKey string, ok bool) {
	sp, err := policy.ParseSpecifier(s)
	if err != nil {
		return "", "", "", false
	}
	for _, seg := range sp.Segments {
		switch seg.Kind {
		case "proj":
			proj = seg.Name
		case "env":
			env = seg.Name
		case "flag":
			flagKey = seg.Name
		}
	}
	return proj, env, flagKey, proj != "" && flagKey != ""
}

func eventType(e audit.Entry, global bool) string {
	for _, a := range e.Accesses {
		switch a.Action {
		case "createFlag":
			return EventFlagCreated
		case "deleteFlag":
			return EventFlagDeleted
		case "updateGlobalArchived":
			return EventFlagArchived
		}
	}
	if global {
		return EventFlagSettingsChange
	}
	return EventFlagTargetingChange
}

// evaluator measures impacts and fills in names, reading each flag,
// member and counter once per request.
type evaluator struct {
	s             *Service
	proj, env     string
	projID, envID string
	// mu guards the caches: a score measures impacts in parallel. Reads
	// happen outside it; two may fetch the same item, harmlessly.
	mu       sync.Mutex
	flags    map[string]*flag.Flag
	members  map[string]*EventMember
	counters map[string]map[string]int64
}

func (s *Service) newEvaluator(proj, env, projID, envID string) *evaluator {
	return &evaluator{s: s, proj: proj, env: env, projID: projID, envID: envID,
		flags: map[string]*flag.Flag{}, members: map[string]*EventMember{}, counters: map[string]map[string]int64{}}
}

// fill sets the ids, the member's names and the impact of fe.
func (ev *evaluator) fill(ctx context.Context, fe *FlagEvent) error {
	fe.ProjectID = ev.projID
	if fe.EnvironmentKey != "" {
		fe.EnvironmentID = ev.envID
	}
	if fe.Member != nil {
		m, err := ev.member(ctx, fe.Member)
		if err != nil {
			return err
		}
		fe.Member = m
	}
	imp, err := ev.impact(ctx, fe.FlagKey, fe.EventTime)
	if err != nil {
		return err
	}
	fe.Impact = imp
	return nil
}

func (ev *evaluator) member(ctx context.Context, m *EventMember) (*EventMember, error) {
	ev.mu.Lock()
	got, ok := ev.members[m.ID]
	ev.mu.Unlock()
	if ok {
		return got, nil
	}
	out := &EventMember{ID: m.ID, Email: m.Email}
	if mem, err := ev.s.members.Get(ctx, m.ID); err == nil {
		out.Email, out.FirstName, out.LastName = mem.Email, mem.FirstName, mem.LastName
	} else if !fault.Is(err, fault.NotFound) {
		return nil, err
	}
	ev.mu.Lock()
	ev.members[m.ID] = out
	ev.mu.Unlock()
	return out, nil
}

// hourOf is the counters' hour (yyyymmddhh, UTC) of a Unix ms time.
func hourOf(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006010215") }

// counts returns the evaluations of a flag in the environment in one hour, by variation.
func (ev *evaluator) counts(ctx context.Context, flagKey, hour string) (map[string]int64, error) {
	id := flagKey + "\x00" + hour
	ev.mu.Lock()
	c, ok := ev.counters[id]
	ev.mu.Unlock()
	if ok {
		return c, nil
	}
	it, err := ev.s.table.Get(ctx, store.FlagEvalKey(ev.proj, ev.env, flagKey, hour))
	switch {
	case errors.Is(err, store.ErrNotFound):
		c = map[string]int64{}
	case err != nil:
		return nil, fmt.Errorf("load evaluations of flag %q in hour %s: %w", flagKey, hour, err)
	default:
		var doc ingest.FlagEvals
		if err := json.Unmarshal(it.Data, &doc); err != nil {
			return nil, fmt.Errorf("decode evaluations of flag %q in hour %s: %w", flagKey, hour, err)
		}
		c = doc.Counts
	}
	ev.mu.Lock()
	ev.counters[id] = c
	ev.mu.Unlock()
	return c, nil
}

// flag returns the flag, nil when it was deleted (its variations are then
// shown by index); any other failure to read it is an error, not a
// deleted flag.
func (ev *evaluator) flag(ctx context.Context, key string) (*flag.Flag, error) {
	ev.mu.Lock()
	f, ok := ev.flags[key]
	ev.mu.Unlock()
	if ok {
		return f, nil
	}
	f, err := ev.s.flags.Load(ctx, ev.proj, key)
	switch {
	case fault.Is(err, fault.NotFound):
		f = nil
	case err != nil:
		return nil, err
	}
	ev.mu.Lock()
	ev.flags[key] = f
	ev.mu.Unlock()
	return f, nil
}

// impact compares the share of evaluations each variation received in the
// hour before the event's hour with the event's hour: the percentage is
// half the sum of the shares' absolute changes (0 when nothing moved, 100
// when every evaluation moved to another variation).
func (ev *evaluator) impact(ctx context.Context, flagKey string, at int64) (Impact, error) {
	before, err := ev.counts(ctx, flagKey, hourOf(at-time.Hour.Milliseconds()))
	if err != nil {
		return Impact{}, err
	}
	after, err := ev.counts(ctx, flagKey, hourOf(at))
	if err != nil {
		return Impact{}, err
	}
	f, err := ev.flag(ctx, flagKey)
	if err != nil {
		return Impact{}, err
	}
	return measure(f, before, after), nil
}

// measure computes the impact from two hours' counters.
func measure(f *flag.Flag, before, after map[string]int64) Impact {
	keys := map[string]bool{}
	var nb, na int64
	for k, n := range before {
		keys[k] = true
		nb += n
	}
	for k, n := range after {
		keys[k] = true
		na += n
	}
	imp := Impact{Variations: []VariationEvals{}}
	order := make([]string, 0, len(keys))
	for k := range keys {
		order = append(order, k)
	}
	slices.SortFunc(order, func(a, b string) int {
		ia, ea := strconv.Atoi(a)
		ib, eb := strconv.Atoi(b)
		switch {
		case ea == nil && eb == nil:
			return ia - ib
		case ea == nil:
			return -1
		case eb == nil:
			return 1
		}
		return strings.Compare(a, b)
	})
	var moved float64
	for _, k := range order {
		imp.Variations = append(imp.Variations, VariationEvals{Value: variationValue(f, k), Before: before[k], After: after[k]})
		if nb > 0 && na > 0 {
			moved += math.Abs(float64(after[k])/float64(na) - float64(before[k])/float64(nb))
		}
	}
	switch {
	case nb == 0 && na == 0:
		imp.Size, imp.Reason = ImpactNone, ReasonNoEvaluations
		return imp
	case nb == 0:
		imp.Size, imp.Reason = ImpactNone, ReasonNoneBefore
		return imp
	case na == 0:
		imp.Size, imp.Reason = ImpactNone, ReasonNoneAfter
		return imp
	}
	imp.Percentage = math.Round(moved/2*1000) / 10
	imp.Reason = ReasonShiftedEvaluations
	imp.Size = SizeOf(imp.Percentage)
	return imp
}

// SizeOf names the impact of a percentage: none at 0, small under 20,
// medium from 20 to 80, large over 80.
func SizeOf(pct float64) string {
	switch {
	case pct <= 0:
		return ImpactNone
	case pct < 20:
		return ImpactSmall
	case pct <= 80:
		return ImpactMedium
	}
	return ImpactLarge
}

// variationValue shows a counter's variation: a string variation's text,
// any other value's JSON, or the counter's own name when the flag (or the
// variation) is gone.
func variationValue(f *flag.Flag, k string) string {
	i, err := strconv.Atoi(k)
	if err != nil || f == nil || i < 0 || i >= len(f.Variations) {
		return k
	}
	raw := f.Variations[i].Value
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
