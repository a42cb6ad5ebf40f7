// Package releasepolicy holds release policies (beta): per project, ranked
// rules saying how flags in some environments (and with some tags) are
// released — at once, progressively in stages, or guarded by metrics.
package releasepolicy

import (
	"fmt"
	"strings"

	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
)

// Release methods, as the reference enumerates them.
const (
	MethodGuarded     = "guarded-release"
	MethodImmediate   = "immediate-release"
	MethodProgressive = "progressive-release"
)

// MaxAllocation is a whole audience in the units of a stage's allocation
// (thousandths of a percent: the reference's example 25000 is 25%).
const MaxAllocation = 100000

// MaxPerProject bounds the policies of a project, so that reordering all of
// them stays one transaction (with the audit entry and the guards).
const MaxPerProject = 90

// Stage is one step of a rollout.
type Stage struct {
	Allocation     int64 `json:"allocation"`
	DurationMillis int64 `json:"durationMillis"`
}

// Scope says which flags a policy applies to.
type Scope struct {
	EnvironmentKeys []string `json:"environmentKeys,omitempty"`
	FlagTagKeys     []string `json:"flagTagKeys,omitempty"`
	ViewKeys        []string `json:"viewKeys,omitempty"`
}

// ProgressiveConfig configures a progressive release.
type ProgressiveConfig struct {
	RolloutContextKindKey string  `json:"rolloutContextKindKey,omitempty"`
	Stages                []Stage `json:"stages"`
}

// GuardedConfig configures a guarded release.
type GuardedConfig struct {
	MetricKeys            []string `json:"metricKeys,omitempty"`
	MetricGroupKeys       []string `json:"metricGroupKeys,omitempty"`
	RolloutContextKindKey string   `json:"rolloutContextKindKey,omitempty"`
	MinSampleSize         *int64   `json:"minSampleSize,omitempty"`
	Stages                []Stage  `json:"stages"`
	RollbackOnRegression  bool     `json:"rollbackOnRegression"`
}

// Policy is one release policy as stored.
type Policy struct {
	ID                       string             `json:"_id"`
	Key                      string             `json:"key"`
	Name                     string             `json:"name"`
	Rank                     int                `json:"rank"`
	ReleaseMethod            string             `json:"releaseMethod"`
	Scope                    *Scope             `json:"scope,omitempty"`
	GuardedReleaseConfig     *GuardedConfig     `json:"guardedReleaseConfig,omitempty"`
	ProgressiveReleaseConfig *ProgressiveConfig `json:"progressiveReleaseConfig,omitempty"`
	Version                  int64              `json:"-"`
}

// Input is the body of a create (Key set) or a replace (Key ignored).
type Input struct {
	Key                      string             `json:"key"`
	Name                     string             `json:"name"`
	ReleaseMethod            string             `json:"releaseMethod"`
	Scope                    *Scope             `json:"scope"`
	GuardedReleaseConfig     *GuardedConfig     `json:"guardedReleaseConfig"`
	ProgressiveReleaseConfig *ProgressiveConfig `json:"progressiveReleaseConfig"`
}

// Validate checks everything but whether the scope's environments exist.
func (in *Input) Validate() error {
	if err := environment.ValidName("name", in.Name); err != nil {
		return err
	}
	switch in.ReleaseMethod {
	case "":
		return fault.New(fault.Invalid, "field \"releaseMethod\" is required")
	case MethodGuarded:
		if in.GuardedReleaseConfig == nil {
			return fault.New(fault.Invalid, "field \"guardedReleaseConfig\" is required when releaseMethod is %s", MethodGuarded)
		}
	case MethodProgressive:
		if in.ProgressiveReleaseConfig == nil {
			return fault.New(fault.Invalid, "field \"progressiveReleaseConfig\" is required when releaseMethod is %s", MethodProgressive)
		}
	case MethodImmediate:
	default:
		return fault.New(fault.Invalid, "field \"releaseMethod\" must be %s, %s or %s, not %q", MethodGuarded, MethodImmediate, MethodProgressive, in.ReleaseMethod)
	}
	if c := in.GuardedReleaseConfig; c != nil {
		if err := validGuarded(c); err != nil {
			return err
		}
	}
	if c := in.ProgressiveReleaseConfig; c != nil {
		if err := validStages("progressiveReleaseConfig.stages", c.Stages); err != nil {
			return err
		}
	}
	if s := in.Scope; s != nil {
		if err := validList("scope.environmentKeys", s.EnvironmentKeys); err != nil {
			return err
		}
		if err := validList("scope.flagTagKeys", s.FlagTagKeys); err != nil {
			return err
		}
		if err := validList("scope.viewKeys", s.ViewKeys); err != nil {
			return err
		}
	}
	return nil
}

func validGuarded(c *GuardedConfig) error {
	const f = "guardedReleaseConfig"
	if len(c.MetricKeys)+len(c.MetricGroupKeys) == 0 {
		return fault.New(fault.Invalid, "field %q needs at least one of metricKeys and metricGroupKeys: a guarded release watches metrics", f)
	}
	if err := validList(f+".metricKeys", c.MetricKeys); err != nil {
		return err
	}
	if err := validList(f+".metricGroupKeys", c.MetricGroupKeys); err != nil {
		return err
	}
	if c.MinSampleSize != nil && *c.MinSampleSize <= 0 {
		return fault.New(fault.Invalid, "field %q must be positive, not %d", f+".minSampleSize", *c.MinSampleSize)
	}
	return validStages(f+".stages", c.Stages)
}

// validStages: at least one stage; allocations within 0..MaxAllocation and
// never decreasing (the reference's own example repeats 25000); durations positive.
func validStages(field string, stages []Stage) error {
	if len(stages) == 0 {
		return fault.New(fault.Invalid, "field %q needs at least one stage", field)
	}
	for i, st := range stages {
		name := fmt.Sprintf("%s[%d]", field, i)
		if st.Allocation < 0 || st.Allocation > MaxAllocation {
			return fault.New(fault.Invalid, "field %q must be within 0 and %d (thousandths of a percent), not %d", name+".allocation", MaxAllocation, st.Allocation)
		}
		if i > 0 && st.Allocation < stages[i-1].Allocation {
			return fault.New(fault.Invalid, "field %q is %d, less than the stage before (%d): allocations may only grow", name+".allocation", st.Allocation, stages[i-1].Allocation)
		}
		if st.DurationMillis <= 0 {
			return fault.New(fault.Invalid, "field %q must be a positive number of milliseconds, not %d", name+".durationMillis", st.DurationMillis)
		}
	}
	return nil
}

// validList refuses empty and repeated entries.
func validList(field string, list []string) error {
	seen := make(map[string]bool, len(list))
	for i, v := range list {
		if strings.TrimSpace(v) == "" {
			return fault.New(fault.Invalid, "field \"%s[%d]\" must not be empty", field, i)
		}
		if seen[v] {
			return fault.New(fault.Invalid, "field \"%s[%d]\" repeats %q", field, i, v)
		}
		seen[v] = true
	}
	return nil
}

// Actions are the actions `_access` reports on a release policy.
var Actions = []string{"updateReleasePolicy", "updateReleasePolicyRank", "deleteReleasePolicy"}

// Href is the API path of a release policy.
func Href(projectKey, key string) string { return ListHref(projectKey) + "/" + key }

// ListHref is the API path of a project's release policies.
func ListHref(projectKey string) string {
	return "/api/v2/projects/" + projectKey + "/release-policies"
}

// Resource is the resource specifier of a release policy ("*" for all of a project's).
func Resource(projectKey, key string) string { return "proj/" + projectKey + ":release-policy/" + key }
