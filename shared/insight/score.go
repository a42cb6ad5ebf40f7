package insight

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/store"
)

// ScorePeriod is the length of the period a score covers; the last
// period is the one just before it.
const ScorePeriod = 30 * 24 * time.Hour

// Score bounds of the work one score takes (per period).
const (
	maxScoreAuditEntries = 5000
	maxScoreImpacts      = 100
	maxHealthFlags       = 500
	// staleAfter is how long a temporary flag may serve one variation to
	// everyone before it counts as ready to remove.
	staleAfter = 30 * 24 * time.Hour
)

// Indicators of a score.
const (
	IndicatorExcellent      = "excellent"
	IndicatorGood           = "good"
	IndicatorFair           = "fair"
	IndicatorNeedsAttention = "needsAttention"
	IndicatorNotCalculated  = "notCalculated"
)

// Range is the span of scores an indicator covers.
type Range struct{ Min, Max int }

// IndicatorRanges are the score spans of each indicator.
var IndicatorRanges = map[string]Range{
	IndicatorExcellent: {80, 100}, IndicatorGood: {60, 79}, IndicatorFair: {40, 59}, IndicatorNeedsAttention: {0, 39},
	IndicatorNotCalculated: {0, 0},
}

// Indicator names the span a score falls in.
func Indicator(score int) string {
	switch {
	case score >= 80:
		return IndicatorExcellent
	case score >= 60:
		return IndicatorGood
	case score >= 40:
		return IndicatorFair
	}
	return IndicatorNeedsAttention
}

// Metric names, as the reference's InsightGroupScores.
const (
	MetricOverall                 = "overall"
	MetricDeploymentFrequency     = "deploymentFrequency"
	MetricDeploymentFailureRate   = "deploymentFailureRate"
	MetricLeadTime                = "leadTime"
	MetricImpactSize              = "impactSize"
	MetricExperimentationCoverage = "experimentationCoverage"
	MetricFlagHealth              = "flagHealth"
	MetricVelocity                = "velocity"
	MetricRisk                    = "risk"
	MetricEfficiency              = "efficiency"
	MetricCreationRatio           = "creationRatio"
)

// aggregates are the metrics made of others, in the order they are computed.
var aggregates = []struct {
	name string
	of   []string
}{
	{MetricVelocity, []string{MetricDeploymentFrequency, MetricLeadTime}},
	{MetricRisk, []string{MetricDeploymentFailureRate, MetricImpactSize}},
	{MetricEfficiency, []string{MetricExperimentationCoverage, MetricFlagHealth, MetricCreationRatio}},
	{MetricOverall, []string{MetricVelocity, MetricRisk, MetricEfficiency}},
}

// Score is one metric's score in one period. Calculated is false when the
// period holds no data for it (the score is then 0, notCalculated).
type Score struct {
	Score       int
	Calculated  bool
	AggregateOf []string
	// Diff is Score minus the last period's score (0 when either is not calculated).
	Diff int
	Last *Score
}

// IndicatorOf names the score's indicator.
func (s *Score) IndicatorOf() string {
	if !s.Calculated {
		return IndicatorNotCalculated
	}
	return Indicator(s.Score)
}

// Period is a span of time, Unix ms.
type Period struct{ Start, End int64 }

// Scores are every metric's score for a period, compared with the last.
type Scores struct {
	Period, LastPeriod Period
	Metrics            map[string]*Score
}

// ScoreQuery names what to score: one environment, some or all applications.
type ScoreQuery struct {
	ProjectKey, EnvironmentKey string
	Applications               []string
}

// Periods returns the current period (ending now) and the one before it.
func (s *Service) Periods() (cur, last Period) {
	end := s.now().UnixMilli()
	start := end - ScorePeriod.Milliseconds()
	return Period{start, end}, Period{start - ScorePeriod.Milliseconds(), start - 1}
}

// Scores computes the scores of the current period and the last one.
func (s *Service) Scores(ctx context.Context, q ScoreQuery) (*Scores, error) {
	proj, err := s.projects.Get(ctx, q.ProjectKey)
	if err != nil {
		return nil, err
	}
	env, err := s.envs.Get(ctx, q.ProjectKey, q.EnvironmentKey)
	if err != nil {
		return nil, err
	}
	cur, last := s.Periods()
	// One selector for both periods: the applications' flags are read once.
	sel, err := s.selector(ctx, FlagEventQuery{ProjectKey: q.ProjectKey, EnvironmentKey: q.EnvironmentKey, Applications: q.Applications})
	if err != nil {
		return nil, err
	}
	flags, err := s.healthFlags(ctx, q.ProjectKey, sel.flags)
	if err != nil {
		return nil, err
	}
	refs, refsKnown, err := s.references(ctx, q.ProjectKey)
	if err != nil {
		return nil, err
	}
	compute := func(p Period) (map[string]*Score, error) {
		in := periodInput{period: p, flags: flags, refs: refs, refsKnown: refsKnown}
		if in.deployments, err = s.periodDeployments(ctx, q, p); err != nil {
			return nil, err
		}
		if err := s.periodFlagEvents(ctx, q, sel, p, proj.ID, env.ID, &in); err != nil {
			return nil, err
		}
		if in.evaluated, err = s.evaluatedFlags(ctx, q, flags, p); err != nil {
			return nil, err
		}
		return in.scores(), nil
	}
	now, err := compute(cur)
	if err != nil {
		return nil, err
	}
	before, err := compute(last)
	if err != nil {
		return nil, err
	}
	for name, sc := range now {
		prev := before[name]
		sc.Last = prev
		if sc.Calculated && prev.Calculated {
			sc.Diff = sc.Score - prev.Score
		}
	}
	return &Scores{Period: cur, LastPeriod: last, Metrics: now}, nil
}

// references returns the project's flags referenced in code, and whether
// code references count for the project: some flag of it is referenced,
// or a repository is mapped to it (then an unreferenced flag is unhealthy).
func (s *Service) references(ctx context.Context, projectKey string) (map[string]bool, bool, error) {
	if s.codeRefs == nil {
		return nil, false, nil
	}
	refs, err := s.codeRefs.ReferencedFlags(ctx, projectKey)
	if err != nil {
		return nil, false, err
	}
	if len(refs) > 0 {
		return refs, true, nil
	}
	mappings, err := s.Mappings(ctx)
	if err != nil {
		return nil, false, err
	}
	for _, projects := range mappings {
		if slices.Contains(projects, projectKey) {
			return refs, true, nil
		}
	}
	return refs, false, nil
}

// periodInput is what one period's scores are computed from.
type periodInput struct {
	period      Period
	deployments []*Deployment
	// Flag events of the period: impacts measured (at most maxScoreImpacts)
	// and flags created and removed in the project.
	impacts          []Impact
	created, removed int
	// The flags scored for health, which of them were evaluated in the
	// period, and which a repository references (refsKnown: any uploads).
	flags     []*flag.Flag
	evaluated map[string]bool
	refs      map[string]bool
	refsKnown bool
}

func (s *Service) periodDeployments(ctx context.Context, q ScoreQuery, p Period) ([]*Deployment, error) {
	all, err := s.deploymentsIn(ctx, q.ProjectKey, q.EnvironmentKey, p.Start, p.End)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, d := range all {
		if !d.Archived && (len(q.Applications) == 0 || slices.Contains(q.Applications, d.ApplicationKey)) {
			out = append(out, d)
		}
	}
	return out, nil
}

func (s *Service) periodFlagEvents(ctx context.Context, q ScoreQuery, sel *selector, p Period, projID, envID string, in *periodInput) error {
	var measured []FlagEvent
	_, err := s.log.Scan(ctx, audit.ScanQuery{After: p.Start - 1, Before: p.End + 1, Budget: maxScoreAuditEntries}, func(e audit.Entry) bool {
		fe, ok := sel.event(e)
		if !ok {
			return true
		}
		switch fe.EventType {
		case EventFlagCreated:
			in.created++
		case EventFlagDeleted, EventFlagArchived:
			in.removed++
		default:
			if fe.EnvironmentKey != "" && len(measured) < maxScoreImpacts {
				measured = append(measured, fe)
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	// Each impact reads two counters.
	ev := s.newEvaluator(q.ProjectKey, q.EnvironmentKey, projID, envID)
	in.impacts = make([]Impact, len(measured))
	return parallel(len(measured), func(i int) error {
		var err error
		in.impacts[i], err = ev.impact(ctx, measured[i].FlagKey, measured[i].EventTime)
		return err
	})
}

// healthFlags are the flags scored for health: the project's live flags
// (those in used, the flags the named applications evaluated, unless nil).
func (s *Service) healthFlags(ctx context.Context, projectKey string, used map[string]bool) ([]*flag.Flag, error) {
	res, err := s.flags.List(ctx, projectKey, flag.ListQuery{Sort: "key", Limit: maxHealthFlags})
	if err != nil {
		return nil, err
	}
	if used == nil {
		return res.Items, nil
	}
	var out []*flag.Flag
	for _, f := range res.Items {
		if used[f.Key] {
			out = append(out, f)
		}
	}
	return out, nil
}

// evaluatedFlags reads, for each flag, whether any hourly counter of the
// environment falls in the period: one bounded Query (Limit 1) per flag,
// evalReaders at a time.
func (s *Service) evaluatedFlags(ctx context.Context, q ScoreQuery, flags []*flag.Flag, p Period) (map[string]bool, error) {
	found := make([]bool, len(flags))
	err := parallel(len(flags), func(i int) error {
		prefix := store.FlagEvalPrefix(q.EnvironmentKey, flags[i].Key)
		page, err := s.table.Query(ctx, store.Query{PK: store.ProjectPartition(q.ProjectKey),
			SKFrom: prefix + hourOf(p.Start), SKTo: prefix + hourOf(p.End), Limit: 1})
		if err != nil {
			return fmt.Errorf("read evaluations of flag %q: %w", flags[i].Key, err)
		}
		found[i] = len(page.Items) > 0
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(flags))
	for i, f := range flags {
		out[f.Key] = found[i]
	}
	return out, nil
}

// evalReaders is how many flags' counters a score reads at once.
const evalReaders = 16

// parallel runs f for 0 to n-1, evalReaders at a time, and returns the
// error of the lowest i that failed.
func parallel(n int, f func(i int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, evalReaders)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func calculated(v int) *Score { return &Score{Score: clamp(v), Calculated: true} }

func notCalculated() *Score { return &Score{} }

func clamp(v int) int { return max(0, min(100, v)) }

func (in *periodInput) scores() map[string]*Score {
	out := map[string]*Score{
		MetricDeploymentFrequency:     in.deploymentFrequency(),
		MetricDeploymentFailureRate:   in.failureRate(),
		MetricLeadTime:                in.leadTime(),
		MetricImpactSize:              in.impactSize(),
		MetricExperimentationCoverage: notCalculated(), // experiments are not built
		MetricFlagHealth:              in.flagHealth(),
		MetricCreationRatio:           in.creationRatio(),
	}
	for _, a := range aggregates {
		sum, n := 0, 0
		for _, m := range a.of {
			if sc := out[m]; sc.Calculated {
				sum += sc.Score
				n++
			}
		}
		sc := notCalculated()
		if n > 0 {
			sc = calculated(int(math.Round(float64(sum) / float64(n))))
		}
		sc.AggregateOf = a.of
		out[a.name] = sc
	}
	return out
}

// deploymentFrequency: 100 at one deployment a day or more, proportional below.
func (in *periodInput) deploymentFrequency() *Score {
	if len(in.deployments) == 0 {
		return notCalculated()
	}
	days := float64(in.period.End-in.period.Start) / float64(24*time.Hour.Milliseconds())
	return calculated(int(math.Round(100 * float64(len(in.deployments)) / days)))
}

// failureRate: 100 minus the percentage of ended deployments that failed.
func (in *periodInput) failureRate() *Score {
	ended, failed := 0, 0
	for _, d := range in.deployments {
		switch d.Status {
		case StatusFinished:
			ended++
		case StatusFailed:
			ended++
			failed++
		}
	}
	if ended == 0 {
		return notCalculated()
	}
	return calculated(int(math.Round(100 * (1 - float64(failed)/float64(ended)))))
}

// leadTime: from the median duration of finished deployments, 100 at an
// hour or less, 0 at a week or more, on a log scale between.
func (in *periodInput) leadTime() *Score {
	var ds []int64
	for _, d := range in.deployments {
		if d.Status == StatusFinished {
			ds = append(ds, d.DurationMs())
		}
	}
	if len(ds) == 0 {
		return notCalculated()
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	hours := float64(ds[len(ds)/2]) / float64(time.Hour.Milliseconds())
	if hours <= 1 {
		return calculated(100)
	}
	return calculated(int(math.Round(100 * (1 - math.Log(hours)/math.Log(168)))))
}

// impactSize: 100 minus the share of measured flag changes that were large
// (counting medium ones half).
func (in *periodInput) impactSize() *Score {
	n, weight := 0, 0.0
	for _, imp := range in.impacts {
		switch imp.Size {
		case ImpactNone:
			if imp.Reason != ReasonShiftedEvaluations {
				continue // nothing measurable
			}
		case ImpactMedium:
			weight += 0.5
		case ImpactLarge:
			weight++
		}
		n++
	}
	if n == 0 {
		return notCalculated()
	}
	return calculated(int(math.Round(100 * (1 - weight/float64(n)))))
}

// flagHealth: the percentage of flags that are healthy: evaluated in the
// period, not a temporary flag serving one variation to everyone for
// over 30 days, and (once any repository uploaded references for the
// project) referenced in code.
func (in *periodInput) flagHealth() *Score {
	if len(in.flags) == 0 {
		return notCalculated()
	}
	healthy := 0
	for _, f := range in.flags {
		if in.evaluated[f.Key] && !in.stale(f) && (!in.refsKnown || in.refs[f.Key]) {
			healthy++
		}
	}
	return calculated(int(math.Round(100 * float64(healthy) / float64(len(in.flags)))))
}

// stale reports a temporary flag that serves one variation to everyone in
// every environment and has not changed for staleAfter.
func (in *periodInput) stale(f *flag.Flag) bool {
	if !f.Temporary {
		return false
	}
	cutoff := in.period.End - staleAfter.Milliseconds()
	if f.CreationDate > cutoff {
		return false
	}
	for _, c := range f.Environments {
		if c == nil {
			continue
		}
		if c.LastModified > cutoff {
			return false
		}
		if c.On && (len(c.Targets) > 0 || len(c.ContextTargets) > 0 || len(c.Rules) > 0 || c.Fallthrough.Rollout != nil) {
			return false
		}
	}
	return true
}

// creationRatio: flags removed (deleted or archived) for each one created,
// as a percentage capped at 100; removing without creating scores 100.
func (in *periodInput) creationRatio() *Score {
	switch {
	case in.created == 0 && in.removed == 0:
		return notCalculated()
	case in.created == 0:
		return calculated(100)
	}
	return calculated(int(math.Round(100 * float64(in.removed) / float64(in.created))))
}
