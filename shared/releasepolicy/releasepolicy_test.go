package releasepolicy

import (
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/fault"
)

func TestValidateStages(t *testing.T) {
	cases := []struct {
		name   string
		stages []Stage
		want   string // "" when valid; else a part of the message
	}{
		{"growing allocations are taken", []Stage{{0, 1}, {25000, 1000}, {100000, 1}}, ""},
		{"a repeated allocation is taken, as in the reference's example", []Stage{{25000, 60000}, {25000, 60000}}, ""},
		{"no stage is refused", nil, "at least one stage"},
		{"a shrinking allocation is refused", []Stage{{50000, 1}, {40000, 1}}, "stages[1].allocation"},
		{"an allocation over the whole audience is refused", []Stage{{100001, 1}}, "stages[0].allocation"},
		{"a negative allocation is refused", []Stage{{-1, 1}}, "stages[0].allocation"},
		{"a zero duration is refused", []Stage{{1, 0}}, "stages[0].durationMillis"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := validStages("stages", c.stages)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !fault.Is(err, fault.Invalid) || !strings.Contains(err.Error(), c.want)):
				t.Errorf("got %v, want a 400 naming %q", err, c.want)
			}
		})
	}
}

func TestValidateMethodAndConfig(t *testing.T) {
	one := []Stage{{50000, 1000}}
	size := func(n int64) *int64 { return &n }
	cases := []struct {
		name string
		in   Input
		want string
	}{
		{"an immediate release needs no config", Input{Name: "n", ReleaseMethod: MethodImmediate}, ""},
		{"a guarded release with metrics and stages is taken", Input{Name: "n", ReleaseMethod: MethodGuarded,
			GuardedReleaseConfig: &GuardedConfig{MetricGroupKeys: []string{"g"}, MinSampleSize: size(1), Stages: one}}, ""},
		{"a guarded release needs its config", Input{Name: "n", ReleaseMethod: MethodGuarded}, "guardedReleaseConfig"},
		{"a progressive release needs its config", Input{Name: "n", ReleaseMethod: MethodProgressive}, "progressiveReleaseConfig"},
		{"an unknown method is refused", Input{Name: "n", ReleaseMethod: "later"}, "releaseMethod"},
		{"a negative minSampleSize is refused", Input{Name: "n", ReleaseMethod: MethodGuarded,
			GuardedReleaseConfig: &GuardedConfig{MetricKeys: []string{"m"}, MinSampleSize: size(-3), Stages: one}}, "minSampleSize"},
		{"a repeated flag tag is refused", Input{Name: "n", ReleaseMethod: MethodImmediate, Scope: &Scope{FlagTagKeys: []string{"a", "a"}}}, "scope.flagTagKeys[1]"},
		{"a blank name is refused", Input{Name: " ", ReleaseMethod: MethodImmediate}, "name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.in.Validate()
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !fault.Is(err, fault.Invalid) || !strings.Contains(err.Error(), c.want)):
				t.Errorf("got %v, want a 400 naming %q", err, c.want)
			}
		})
	}
}
