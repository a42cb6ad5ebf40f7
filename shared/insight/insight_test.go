package insight

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/flag"
)

func TestImpactSizes(t *testing.T) {
	cases := []struct {
		pct  float64
		want string
	}{{0, ImpactNone}, {0.1, ImpactSmall}, {19.9, ImpactSmall}, {20, ImpactMedium}, {80, ImpactMedium}, {80.1, ImpactLarge}, {100, ImpactLarge}}
	for _, c := range cases {
		t.Run("a change of "+jsonOf(c.pct)+"% is "+c.want, func(t *testing.T) {
			if got := SizeOf(c.pct); got != c.want {
				t.Errorf("SizeOf(%v) = %s", c.pct, got)
			}
		})
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestMeasureComparesTheSharesOfEachVariation(t *testing.T) {
	f := &flag.Flag{Variations: []flag.Variation{{Value: json.RawMessage(`"red"`)}, {Value: json.RawMessage(`{"n":1}`)}}}
	cases := []struct {
		name          string
		before, after map[string]int64
		size, reason  string
		pct           float64
	}{
		{"no evaluations at all", nil, nil, ImpactNone, ReasonNoEvaluations, 0},
		{"evaluations only after", nil, map[string]int64{"0": 3}, ImpactNone, ReasonNoneBefore, 0},
		{"evaluations only before", map[string]int64{"0": 3}, nil, ImpactNone, ReasonNoneAfter, 0},
		{"the same shares at other volumes", map[string]int64{"0": 10, "1": 10}, map[string]int64{"0": 50, "1": 50}, ImpactNone, ReasonShiftedEvaluations, 0},
		{"a tenth moved", map[string]int64{"0": 100}, map[string]int64{"0": 90, "1": 10}, ImpactSmall, ReasonShiftedEvaluations, 10},
		{"half moved", map[string]int64{"0": 100}, map[string]int64{"0": 50, "1": 50}, ImpactMedium, ReasonShiftedEvaluations, 50},
		{"everything moved", map[string]int64{"0": 100}, map[string]int64{"1": 7}, ImpactLarge, ReasonShiftedEvaluations, 100},
		{"the fallback value counts as its own variation", map[string]int64{"0": 4}, map[string]int64{"default": 4}, ImpactLarge, ReasonShiftedEvaluations, 100},
	}
	for _, c := range cases {
		t.Run(c.name+" is "+c.size, func(t *testing.T) {
			imp := measure(f, c.before, c.after)
			if imp.Size != c.size || imp.Reason != c.reason || imp.Percentage != c.pct {
				t.Errorf("impact %+v, want %s %s %v", imp, c.size, c.reason, c.pct)
			}
		})
	}
	t.Run("variations show their values, by index first", func(t *testing.T) {
		imp := measure(f, map[string]int64{"default": 1, "1": 2}, map[string]int64{"0": 3})
		want := []VariationEvals{{"red", 0, 3}, {`{"n":1}`, 2, 0}, {"default", 1, 0}}
		if jsonOf(imp.Variations) != jsonOf(want) {
			t.Errorf("variations %+v, want %+v", imp.Variations, want)
		}
	})
	t.Run("a deleted flag's variations show their index", func(t *testing.T) {
		imp := measure(nil, map[string]int64{"0": 1}, map[string]int64{"1": 1})
		if imp.Variations[0].Value != "0" || imp.Variations[1].Value != "1" {
			t.Errorf("variations %+v", imp.Variations)
		}
	})
}

func TestDeploymentEvents(t *testing.T) {
	in := func(event string) EventInput {
		return EventInput{ProjectKey: "p", EnvironmentKey: "e", ApplicationKey: "a", Version: "1", EventType: event, ApplicationKind: "server"}
	}
	started := applyEvent(nil, in(EventStarted), "id", 1000)
	finished := applyEvent(started, in(EventFinished), "id", 5000)
	cases := []struct {
		name       string
		old        *Deployment
		event      string
		at         int64
		status     string
		start, end int64
	}{
		{"a first started event starts it", nil, EventStarted, 1000, StatusStarted, 1000, 0},
		{"a first finished event starts and ends it at once", nil, EventFinished, 1000, StatusFinished, 1000, 1000},
		{"finished ends a started deployment", started, EventFinished, 5000, StatusFinished, 1000, 5000},
		{"failed ends it as failed", started, EventFailed, 5000, StatusFailed, 1000, 5000},
		{"a late start moves the start back", started, EventStarted, 500, StatusStarted, 500, 0},
		{"a start after the end deploys the version again", finished, EventStarted, 9000, StatusStarted, 9000, 0},
		{"an old finished event after a later one is ignored", finished, EventFinished, 4000, StatusFinished, 1000, 5000},
		{"a finish before the start ends it at the start", started, EventFinished, 10, StatusFinished, 1000, 1000},
		{"a custom event changes no status", started, EventCustom, 7000, StatusStarted, 1000, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := applyEvent(c.old, in(c.event), "id", c.at)
			if d.Status != c.status || d.StartedAt != c.start || d.EndedAt != c.end {
				t.Errorf("got %s %d-%d, want %s %d-%d", d.Status, d.StartedAt, d.EndedAt, c.status, c.start, c.end)
			}
		})
	}
	t.Run("the same event again changes nothing", func(t *testing.T) {
		if again := applyEvent(finished, in(EventFinished), "id", 5000); jsonOf(again) != jsonOf(finished) {
			t.Errorf("%+v then %+v", finished, again)
		}
	})
	t.Run("ids depend on every part of the version's name", func(t *testing.T) {
		ids := map[string]bool{}
		for _, parts := range [][4]string{{"p", "e", "a", "1"}, {"p", "e", "a", "2"}, {"p", "e", "b", "1"}, {"p", "f", "a", "1"}, {"q", "e", "a", "1"}, {"p", "e", "a1", ""}} {
			ids[DeploymentID(parts[0], parts[1], parts[2], parts[3])] = true
		}
		if len(ids) != 6 {
			t.Errorf("%d distinct ids of 6 versions", len(ids))
		}
	})
}

func TestScoreFormulas(t *testing.T) {
	day := 24 * time.Hour.Milliseconds()
	period := Period{Start: 0, End: 30 * day}
	dep := func(status string, dur int64) *Deployment {
		return &Deployment{Status: status, StartedAt: day, EndedAt: day + dur}
	}
	deps := func(n int, status string, dur int64) []*Deployment {
		var out []*Deployment
		for range n {
			out = append(out, dep(status, dur))
		}
		return out
	}
	hour := time.Hour.Milliseconds()
	cases := []struct {
		name   string
		in     periodInput
		metric string
		want   int
		calc   bool
	}{
		{"no deployments leave the frequency uncalculated", periodInput{}, MetricDeploymentFrequency, 0, false},
		{"a deployment a day scores 100", periodInput{deployments: deps(30, StatusFinished, hour)}, MetricDeploymentFrequency, 100, true},
		{"more than one a day still scores 100", periodInput{deployments: deps(90, StatusFinished, hour)}, MetricDeploymentFrequency, 100, true},
		{"three in thirty days score 10", periodInput{deployments: deps(3, StatusFinished, hour)}, MetricDeploymentFrequency, 10, true},
		{"one failure in four scores 75", periodInput{deployments: append(deps(3, StatusFinished, hour), dep(StatusFailed, hour))}, MetricDeploymentFailureRate, 75, true},
		{"running deployments leave the failure rate uncalculated", periodInput{deployments: deps(2, StatusStarted, 0)}, MetricDeploymentFailureRate, 0, false},
		{"an hour's lead time scores 100", periodInput{deployments: deps(1, StatusFinished, hour)}, MetricLeadTime, 100, true},
		{"a week's lead time scores 0", periodInput{deployments: deps(1, StatusFinished, 168*hour)}, MetricLeadTime, 0, true},
		{"a day's lead time scores 38", periodInput{deployments: deps(1, StatusFinished, 24*hour)}, MetricLeadTime, 38, true},
		{"half the changes large scores 50", periodInput{impacts: []Impact{{Size: ImpactLarge}, {Size: ImpactSmall}}}, MetricImpactSize, 50, true},
		{"a medium change counts half", periodInput{impacts: []Impact{{Size: ImpactMedium}, {Size: ImpactSmall}}}, MetricImpactSize, 75, true},
		{"unmeasurable changes leave impact uncalculated", periodInput{impacts: []Impact{{Size: ImpactNone, Reason: ReasonNoEvaluations}}}, MetricImpactSize, 0, false},
		{"removing one flag per two created scores 50", periodInput{created: 2, removed: 1}, MetricCreationRatio, 50, true},
		{"removing without creating scores 100", periodInput{removed: 1}, MetricCreationRatio, 100, true},
		{"experiments are never calculated", periodInput{}, MetricExperimentationCoverage, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.in.period = period
			got := c.in.scores()[c.metric]
			if got.Score != c.want || got.Calculated != c.calc {
				t.Errorf("%s = %+v, want %d (calculated %v)", c.metric, got, c.want, c.calc)
			}
		})
	}
	t.Run("aggregates average their calculated members only", func(t *testing.T) {
		in := periodInput{period: period, deployments: append(deps(2, StatusFinished, hour), dep(StatusFailed, hour))}
		sc := in.scores()
		// failure rate 67, impact not calculated: risk is the failure rate alone.
		if sc[MetricRisk].Score != sc[MetricDeploymentFailureRate].Score || !sc[MetricRisk].Calculated {
			t.Errorf("risk %+v, failure rate %+v", sc[MetricRisk], sc[MetricDeploymentFailureRate])
		}
		if sc[MetricEfficiency].Calculated {
			t.Errorf("efficiency without any member: %+v", sc[MetricEfficiency])
		}
	})
	t.Run("flag health counts evaluated, live and referenced flags", func(t *testing.T) {
		old := period.End - 60*day
		stale := &flag.Flag{Key: "stale", Temporary: true, CreationDate: old, Environments: map[string]*flag.EnvConfig{"e": {On: true, LastModified: old}}}
		rolled := &flag.Flag{Key: "rolled", Temporary: true, CreationDate: old, Environments: map[string]*flag.EnvConfig{"e": {On: true, LastModified: old, Rules: []flag.Rule{{}}}}}
		fresh := &flag.Flag{Key: "fresh", Temporary: true, CreationDate: period.End - day}
		quiet := &flag.Flag{Key: "quiet"}
		in := periodInput{period: period, flags: []*flag.Flag{stale, rolled, fresh, quiet},
			evaluated: map[string]bool{"stale": true, "rolled": true, "fresh": true}}
		if got := in.scores()[MetricFlagHealth].Score; got != 50 {
			t.Errorf("health %d, want 50 (rolled and fresh of four)", got)
		}
		in.refsKnown, in.refs = true, map[string]bool{"rolled": true}
		if got := in.scores()[MetricFlagHealth].Score; got != 25 {
			t.Errorf("health with code references %d, want 25 (rolled only)", got)
		}
	})
}

func TestIndicators(t *testing.T) {
	for score, want := range map[int]string{100: IndicatorExcellent, 80: IndicatorExcellent, 79: IndicatorGood, 60: IndicatorGood,
		59: IndicatorFair, 40: IndicatorFair, 39: IndicatorNeedsAttention, 0: IndicatorNeedsAttention} {
		r := IndicatorRanges[Indicator(score)]
		if Indicator(score) != want || score < r.Min || score > r.Max {
			t.Errorf("score %d: %s %+v, want %s", score, Indicator(score), r, want)
		}
	}
}
