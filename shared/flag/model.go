// Package flag holds feature flags: their variations, per-environment
// targeting (targets, rules, fallthrough, prerequisites) and the rules
// every change must keep.
package flag

import "encoding/json"

// Flag is one feature flag of a project, with its targeting in every
// environment. It is stored as one item; Environments holds only the
// environments whose targeting was ever changed (others use Defaults).
type Flag struct {
	Key                    string                 `json:"key"`
	Name                   string                 `json:"name"`
	Description            string                 `json:"description"`
	Kind                   string                 `json:"kind"` // boolean or multivariate
	Version                int                    `json:"_version"`
	CreationDate           int64                  `json:"creationDate"`
	Variations             []Variation            `json:"variations"`
	Defaults               Defaults               `json:"defaults"`
	Tags                   []string               `json:"tags"`
	Temporary              bool                   `json:"temporary"`
	Archived               bool                   `json:"archived"`
	MaintainerID           string                 `json:"maintainerId,omitempty"`
	ClientSideAvailability ClientSideAvailability `json:"clientSideAvailability"`
	CustomProperties       CustomProperties       `json:"customProperties"`
	Environments           map[string]*EnvConfig  `json:"environments"`
	ProjectKey             string                 `json:"projectKey"`
	// ItemVersion is the store version, for optimistic locking.
	ItemVersion int64 `json:"-"`
}

// Kinds of flag.
const (
	KindBoolean      = "boolean"
	KindMultivariate = "multivariate"
)

// Variation is one value a flag can serve; Value is any JSON value.
type Variation struct {
	ID          string          `json:"_id"`
	Value       json.RawMessage `json:"value"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
}

// Defaults are the on and off variations (indexes) a new environment starts with.
type Defaults struct {
	OnVariation  int `json:"onVariation"`
	OffVariation int `json:"offVariation"`
}

// ClientSideAvailability says which client-side SDKs may see the flag.
type ClientSideAvailability struct {
	UsingMobileKey     bool `json:"usingMobileKey"`
	UsingEnvironmentID bool `json:"usingEnvironmentId"`
}

// EnvConfig is a flag's targeting in one environment.
type EnvConfig struct {
	On             bool            `json:"on"`
	Archived       bool            `json:"archived"`
	Salt           string          `json:"salt"`
	Version        int             `json:"version"`
	LastModified   int64           `json:"lastModified"`
	Targets        []Target        `json:"targets"`
	ContextTargets []Target        `json:"contextTargets"`
	Rules          []Rule          `json:"rules"`
	Fallthrough    VariationOrRoll `json:"fallthrough"`
	OffVariation   *int            `json:"offVariation"`
	Prerequisites  []Prerequisite  `json:"prerequisites"`
	TrackEvents    bool            `json:"trackEvents"`
	// TrackEventsFallthrough asks SDKs for full events of contexts served
	// by the default rule (fallthrough); TrackEvents covers every rule.
	TrackEventsFallthrough bool `json:"trackEventsFallthrough"`
}

// Target serves one variation to listed context keys of one kind
// (contextKind "user" when empty).
type Target struct {
	Values      []string `json:"values"`
	Variation   int      `json:"variation"`
	ContextKind string   `json:"contextKind,omitempty"`
}

// Rule serves a variation or rollout to contexts matching all its clauses.
type Rule struct {
	ID          string   `json:"_id"`
	Description string   `json:"description,omitempty"`
	Clauses     []Clause `json:"clauses"`
	TrackEvents bool     `json:"trackEvents"`
	VariationOrRoll
}

// Clause tests one attribute of one context kind.
type Clause struct {
	ID          string            `json:"_id"`
	Attribute   string            `json:"attribute"`
	Op          string            `json:"op"`
	Values      []json.RawMessage `json:"values"`
	ContextKind string            `json:"contextKind,omitempty"`
	Negate      bool              `json:"negate"`
}

// VariationOrRoll is either a fixed variation or a weighted rollout.
type VariationOrRoll struct {
	Variation *int     `json:"variation,omitempty"`
	Rollout   *Rollout `json:"rollout,omitempty"`
}

// Rollout splits contexts among variations by weight (in thousandths of a
// percent: the weights add up to 100000), bucketing by an attribute.
type Rollout struct {
	Variations  []WeightedVariation `json:"variations"`
	BucketBy    string              `json:"bucketBy,omitempty"`
	ContextKind string              `json:"contextKind,omitempty"`
	Seed        *int                `json:"seed,omitempty"`
}

// WeightedVariation is one share of a rollout.
type WeightedVariation struct {
	Variation int  `json:"variation"`
	Weight    int  `json:"weight"`
	Untracked bool `json:"_untracked,omitempty"`
}

// Prerequisite requires another flag of the project to serve a variation first.
type Prerequisite struct {
	Key       string `json:"key"`
	Variation int    `json:"variation"`
}

// RolloutTotal is the sum of a rollout's weights.
const RolloutTotal = 100000

// Operators a clause may use, as the SDKs evaluate them.
var Operators = []string{
	"in", "endsWith", "startsWith", "matches", "contains",
	"lessThan", "lessThanOrEqual", "greaterThan", "greaterThanOrEqual",
	"before", "after", "segmentMatch",
	"semVerEqual", "semVerLessThan", "semVerGreaterThan",
}

// Env returns the flag's targeting in envKey, or the default targeting a
// new environment starts with (off, serving the default variations).
func (f *Flag) Env(envKey string) *EnvConfig {
	if c, ok := f.Environments[envKey]; ok && c != nil {
		return c
	}
	on, off := f.Defaults.OnVariation, f.Defaults.OffVariation
	return &EnvConfig{
		Salt: f.Key, Targets: []Target{}, ContextTargets: []Target{}, Rules: []Rule{},
		Fallthrough: VariationOrRoll{Variation: &on}, OffVariation: &off, Prerequisites: []Prerequisite{},
	}
}
