package sdkdata

import (
	"context"
	"encoding/json"

	"github.com/launchdarkly/go-server-sdk-evaluation/v3/ldmodel"

	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"
	"github.com/launchdarkly/go-sdk-common/v3/ldreason"
	"github.com/launchdarkly/go-sdk-common/v3/ldvalue"

	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/evaluation"
)

// ClientFlag is one flag's evaluation as client-side and mobile SDKs
// receive it (the "evalx" form): the value, its variation index, the
// flag's version and whether to send full events for it.
type ClientFlag struct {
	Value       ldvalue.Value `json:"value"`
	Variation   *int          `json:"variation,omitempty"`
	Version     int           `json:"version"`
	FlagVersion int           `json:"flagVersion"`
	TrackEvents bool          `json:"trackEvents"`
	// TrackReason asks for the reason in the flag's events (experiments,
	// and rules or the fallthrough that track events).
	TrackReason bool `json:"trackReason,omitempty"`
	// Reason is set only when the SDK asks for reasons (withReasons=true).
	Reason *ldreason.EvaluationReason `json:"reason,omitempty"`
}

// Evaluate evaluates, for c, every flag of the snapshot that SDKs of the
// credential kind may see: client-side ids see the flags available to
// client-side SDKs (usingEnvironmentId), mobile keys those available to
// mobile SDKs (usingMobileKey), SDK keys all. Prerequisites are evaluated
// against every live flag, as the server-side SDKs do; big segments match
// their members (read through ctx), as LaunchDarkly's evaluations do.
func (sn *Snapshot) Evaluate(ctx context.Context, kind environment.CredentialKind, c ldcontext.Context, withReasons bool) map[string]ClientFlag {
	evaluator := evaluation.NewEvaluator(ctx, sn.flagModel, sn.evalSegments, sn.members, sn.Ref.ProjectKey, sn.Ref.EnvKey)
	out := make(map[string]ClientFlag, len(sn.flags))
	for _, f := range sn.flags {
		m := f.Model
		if m == nil || !visible(m, kind) {
			continue
		}
		res := evaluator.Evaluate(m, c, nil)
		d := res.Detail
		cf := ClientFlag{Value: d.Value, Version: f.Version, FlagVersion: f.Version}
		if d.VariationIndex.IsDefined() {
			i := d.VariationIndex.IntValue()
			cf.Variation = &i
		}
		cf.TrackReason = res.IsExperiment || reasonTracked(m, d.Reason)
		cf.TrackEvents = m.TrackEvents || cf.TrackReason
		if withReasons {
			r := d.Reason
			cf.Reason = &r
		}
		out[f.Key] = cf
	}
	return out
}

// EvaluateJSON is Evaluate written as the SDKs read it.
func (sn *Snapshot) EvaluateJSON(ctx context.Context, kind environment.CredentialKind, c ldcontext.Context, withReasons bool) ([]byte, error) {
	return json.Marshal(sn.Evaluate(ctx, kind, c, withReasons))
}

// visible reports whether SDKs of the credential kind may see the flag.
func visible(m *ldmodel.FeatureFlag, kind environment.CredentialKind) bool {
	switch kind {
	case environment.ClientSideCredential:
		return m.ClientSideAvailability.UsingEnvironmentID
	case environment.MobileCredential:
		return m.ClientSideAvailability.UsingMobileKey
	}
	return true
}

// reasonTracked reports whether the rule or fallthrough that served the
// value asks for full events.
func reasonTracked(m *ldmodel.FeatureFlag, r ldreason.EvaluationReason) bool {
	switch r.GetKind() {
	case ldreason.EvalReasonRuleMatch:
		i := r.GetRuleIndex()
		return i >= 0 && i < len(m.Rules) && m.Rules[i].TrackEvents
	case ldreason.EvalReasonFallthrough:
		return m.TrackEventsFallthrough
	}
	return false
}

// flagModel gives the evaluator the snapshot's flags, for prerequisites.
func (sn *Snapshot) flagModel(key string) *ldmodel.FeatureFlag {
	if f, ok := sn.byKey[key]; ok {
		return f.Model
	}
	return nil
}
