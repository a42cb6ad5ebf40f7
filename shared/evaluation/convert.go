package evaluation

import (
	"encoding/json"
	"fmt"

	"github.com/launchdarkly/go-sdk-common/v3/ldattr"
	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"
	"github.com/launchdarkly/go-sdk-common/v3/ldvalue"
	"github.com/launchdarkly/go-server-sdk-evaluation/v3/ldmodel"

	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/segment"
)

// Model turns a flag and its targeting in envKey into the SDKs' flag
// model, ready to evaluate (preprocessed). An error means a value of the
// flag is not JSON: the flag is malformed, as an SDK would say.
//
// User targets (targets) are checked before contextTargets, each in list
// order; the SDK model expresses that by listing every target in
// ContextTargets with its kind.
func Model(f *flag.Flag, envKey string) (*ldmodel.FeatureFlag, error) {
	env := f.Env(envKey)
	m := &ldmodel.FeatureFlag{
		Key:                    f.Key,
		On:                     env.On,
		Salt:                   env.Salt,
		Version:                env.Version,
		OffVariation:           optInt(env.OffVariation),
		TrackEvents:            env.TrackEvents,
		TrackEventsFallthrough: env.TrackEventsFallthrough,
		ClientSideAvailability: ldmodel.ClientSideAvailability{
			UsingMobileKey: f.ClientSideAvailability.UsingMobileKey, UsingEnvironmentID: f.ClientSideAvailability.UsingEnvironmentID, Explicit: true,
		},
	}
	for i, v := range f.Variations {
		val, err := value(v.Value)
		if err != nil {
			return nil, fmt.Errorf("variation %d: %w", i, err)
		}
		m.Variations = append(m.Variations, val)
	}
	for _, p := range env.Prerequisites {
		m.Prerequisites = append(m.Prerequisites, ldmodel.Prerequisite{Key: p.Key, Variation: p.Variation})
	}
	for _, t := range env.Targets {
		m.Targets = append(m.Targets, target(t))
	}
	if len(env.ContextTargets) > 0 {
		// Once ContextTargets is set the SDK reads only it, so the user
		// targets come first in it, with their values.
		for _, t := range env.Targets {
			m.ContextTargets = append(m.ContextTargets, target(t))
		}
		for _, t := range env.ContextTargets {
			m.ContextTargets = append(m.ContextTargets, target(t))
		}
	}
	for i, r := range env.Rules {
		rule := ldmodel.FlagRule{ID: r.ID, TrackEvents: r.TrackEvents, VariationOrRollout: variationOrRollout(r.VariationOrRoll)}
		clauses, err := clauses(r.Clauses)
		if err != nil {
			return nil, fmt.Errorf("rule %d: %w", i, err)
		}
		rule.Clauses = clauses
		m.Rules = append(m.Rules, rule)
	}
	m.Fallthrough = variationOrRollout(env.Fallthrough)
	ldmodel.PreprocessFlag(m)
	return m, nil
}

// clauses converts a rule's clauses.
func clauses(cs []flag.Clause) ([]ldmodel.Clause, error) {
	var out []ldmodel.Clause
	for j, c := range cs {
		clause := ldmodel.Clause{
			ContextKind: ldcontext.Kind(c.ContextKind),
			Attribute:   attrRef(c.Attribute, c.ContextKind),
			Op:          ldmodel.Operator(c.Op),
			Negate:      c.Negate,
		}
		for k, raw := range c.Values {
			val, err := value(raw)
			if err != nil {
				return nil, fmt.Errorf("clause %d value %d: %w", j, k, err)
			}
			clause.Values = append(clause.Values, val)
		}
		out = append(out, clause)
	}
	return out, nil
}

// SegmentModel turns a segment into the SDKs' segment model, ready to
// evaluate (preprocessed). User keys (included, excluded) are the user
// kind's; other kinds' keys are in the contexts lists, as SDKs read them.
// A big segment carries no keys: SDKs ask their big segment store.
func SegmentModel(s *segment.Segment) (*ldmodel.Segment, error) {
	m := &ldmodel.Segment{
		Key:      s.Key,
		Included: append([]string(nil), s.Included...),
		Excluded: append([]string(nil), s.Excluded...),
		Salt:     s.Salt,
		Version:  s.Version,
		Deleted:  s.Deleted,
	}
	for _, t := range s.IncludedContexts {
		m.IncludedContexts = append(m.IncludedContexts, ldmodel.SegmentTarget{ContextKind: ldcontext.Kind(t.ContextKind), Values: append([]string(nil), t.Values...)})
	}
	for _, t := range s.ExcludedContexts {
		m.ExcludedContexts = append(m.ExcludedContexts, ldmodel.SegmentTarget{ContextKind: ldcontext.Kind(t.ContextKind), Values: append([]string(nil), t.Values...)})
	}
	if s.Unbounded {
		m.Unbounded = true
		m.UnboundedContextKind = ldcontext.Kind(s.UnboundedContextKind)
		m.Generation = ldvalue.NewOptionalInt(s.Generation)
	}
	for i, r := range s.Rules {
		cs, err := clauses(r.Clauses)
		if err != nil {
			return nil, fmt.Errorf("rule %d: %w", i, err)
		}
		m.Rules = append(m.Rules, ldmodel.SegmentRule{
			ID: r.ID, Clauses: cs, Weight: optInt(r.Weight),
			BucketBy: attrRef(r.BucketBy, r.RolloutContextKind), RolloutContextKind: ldcontext.Kind(r.RolloutContextKind),
		})
	}
	ldmodel.PreprocessSegment(m)
	return m, nil
}

// target keeps a target's kind; an empty kind is the user kind.
func target(t flag.Target) ldmodel.Target {
	kind := ldcontext.Kind(t.ContextKind)
	if kind == "" {
		kind = ldcontext.DefaultKind
	}
	return ldmodel.Target{ContextKind: kind, Values: append([]string(nil), t.Values...), Variation: t.Variation}
}

// variationOrRollout converts a fixed variation or a rollout; neither set
// is left empty, which the SDK evaluates as a malformed flag.
func variationOrRollout(v flag.VariationOrRoll) ldmodel.VariationOrRollout {
	out := ldmodel.VariationOrRollout{Variation: optInt(v.Variation)}
	if r := v.Rollout; r != nil {
		out.Rollout = ldmodel.Rollout{
			Kind:        ldmodel.RolloutKindRollout,
			ContextKind: ldcontext.Kind(r.ContextKind),
			BucketBy:    attrRef(r.BucketBy, r.ContextKind),
			Seed:        optInt(r.Seed),
		}
		for _, w := range r.Variations {
			out.Rollout.Variations = append(out.Rollout.Variations, ldmodel.WeightedVariation{Variation: w.Variation, Weight: w.Weight, Untracked: w.Untracked})
		}
	}
	return out
}

// attrRef reads an attribute as the SDKs read flag data: without a context
// kind it is a plain attribute name (a leading "/" is part of the name);
// with one it is an attribute reference ("/address/city").
func attrRef(attr, contextKind string) ldattr.Ref {
	switch {
	case attr == "":
		return ldattr.Ref{}
	case contextKind == "":
		return ldattr.NewLiteralRef(attr)
	default:
		return ldattr.NewRef(attr)
	}
}

func optInt(p *int) ldvalue.OptionalInt {
	if p == nil {
		return ldvalue.OptionalInt{}
	}
	return ldvalue.NewOptionalInt(*p)
}

// value parses one JSON value; an absent value is JSON null.
func value(raw json.RawMessage) (ldvalue.Value, error) {
	if len(raw) == 0 {
		return ldvalue.Null(), nil
	}
	var v ldvalue.Value
	if err := json.Unmarshal(raw, &v); err != nil {
		return ldvalue.Null(), fmt.Errorf("not a JSON value: %w", err)
	}
	return v, nil
}
