package sdkdata

import (
	"context"

	ldeval "github.com/launchdarkly/go-server-sdk-evaluation/v3"

	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"
	"github.com/launchdarkly/go-sdk-common/v3/ldreason"
	"github.com/launchdarkly/go-sdk-common/v3/ldvalue"

	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/evaluation"
)

// Evaluator evaluates the flags of one snapshot for one context, with
// each flag's evaluation detail: for OpenFeature's remote evaluation
// (OFREP), which answers one flag or all of them with their reasons.
type Evaluator struct {
	sn        *Snapshot
	kind      environment.CredentialKind
	c         ldcontext.Context
	evaluator ldeval.Evaluator
}

// Evaluator is the evaluator of the flags SDKs of the credential kind may
// see (as Evaluate chooses them), for c. Big segments match their members
// (read through ctx).
func (sn *Snapshot) Evaluator(ctx context.Context, kind environment.CredentialKind, c ldcontext.Context) *Evaluator {
	return &Evaluator{sn: sn, kind: kind, c: c,
		evaluator: evaluation.NewEvaluator(ctx, sn.flagModel, sn.evalSegments, sn.members, sn.Ref.ProjectKey, sn.Ref.EnvKey)}
}

// Flag evaluates one flag; false when there is no such live flag or the
// credential may not see it. A flag SDKs cannot receive (its values are
// not JSON) evaluates to a MALFORMED_FLAG error, as /flags/evaluate
// answers it.
func (e *Evaluator) Flag(key string) (*Flag, ldreason.EvaluationDetail, bool) {
	f, ok := e.sn.byKey[key]
	if !ok || !f.visibleTo(e.kind) {
		return nil, ldreason.EvaluationDetail{}, false
	}
	return f, e.detail(f), true
}

// Each calls fn with every flag the credential may see, by key, and its
// evaluation.
func (e *Evaluator) Each(fn func(f *Flag, d ldreason.EvaluationDetail)) {
	for _, f := range e.sn.flags {
		if f.visibleTo(e.kind) {
			fn(f, e.detail(f))
		}
	}
}

func (e *Evaluator) detail(f *Flag) ldreason.EvaluationDetail {
	if f.Model == nil {
		return ldreason.NewEvaluationDetailForError(ldreason.EvalErrorMalformedFlag, ldvalue.Null())
	}
	return e.evaluator.Evaluate(f.Model, e.c, nil).Detail
}

// visibleTo reports whether SDKs of the credential kind may see the flag;
// one without a model by its stored availability.
func (f *Flag) visibleTo(kind environment.CredentialKind) bool {
	if f.Model != nil {
		return visible(f.Model, kind)
	}
	switch kind {
	case environment.ClientSideCredential:
		return f.source.ClientSideAvailability.UsingEnvironmentID
	case environment.MobileCredential:
		return f.source.ClientSideAvailability.UsingMobileKey
	}
	return true
}

// VariationNames are the flag's variations' names by index ("" for an
// unnamed one).
func (f *Flag) VariationNames() []string {
	out := make([]string, len(f.source.Variations))
	for i, v := range f.source.Variations {
		out[i] = v.Name
	}
	return out
}
