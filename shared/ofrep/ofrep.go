// Package ofrep maps OpenFeature's Remote Evaluation Protocol (OFREP) onto
// LaunchDarkly's evaluation: an OpenFeature evaluation context becomes a
// LaunchDarkly context the way LaunchDarkly's own OpenFeature providers
// convert one, and a flag's evaluation detail becomes OFREP's answer (its
// value, an OpenFeature reason, the variant and metadata) or its failure
// (an OpenFeature error code). It holds no HTTP code: shared/sdkapi serves
// the routes.
//
// The protocol is OpenFeature's service/openapi.yaml
// (github.com/open-feature/protocol): POST /ofrep/v1/evaluate/flags/{key}
// and the bulk POST /ofrep/v1/evaluate/flags, both with {"context": {...}}.
package ofrep

import (
	"encoding/json"
	"errors"
	"sort"
	"strconv"

	"github.com/launchdarkly/go-server-sdk-evaluation/v3/ldmodel"

	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"
	"github.com/launchdarkly/go-sdk-common/v3/ldreason"

	"github.com/flagplane/flagplane/shared/evaluation"
	"github.com/flagplane/flagplane/shared/fault"
)

// ErrorCode is an OpenFeature error code, as OFREP answers it.
type ErrorCode string

// The error codes OFREP names.
const (
	FlagNotFound        ErrorCode = "FLAG_NOT_FOUND"
	TargetingKeyMissing ErrorCode = "TARGETING_KEY_MISSING"
	InvalidContext      ErrorCode = "INVALID_CONTEXT"
	ParseError          ErrorCode = "PARSE_ERROR"
	General             ErrorCode = "GENERAL"
)

// OpenFeature's reasons, and LaunchDarkly's own where OpenFeature has none.
const (
	ReasonTargetingMatch = "TARGETING_MATCH"
	ReasonSplit          = "SPLIT"
	ReasonDefault        = "DEFAULT"
	ReasonDisabled       = "DISABLED"
	// ReasonPrerequisiteFailed is LaunchDarkly's reason, as its own
	// OpenFeature providers report it: a prerequisite flag did not serve
	// the variation required, so the flag served its off variation.
	ReasonPrerequisiteFailed = "PREREQUISITE_FAILED"
	ReasonUnknown            = "UNKNOWN"
)

// Request is the body of both evaluation requests.
type Request struct {
	// Context is the OpenFeature evaluation context; see ParseContext.
	Context json.RawMessage `json:"context"`
}

// Evaluation is one flag's successful evaluation.
type Evaluation struct {
	Key string `json:"key"`
	// Value is the JSON value served; absent when the flag serves no
	// variation (an off flag without an off variation), which tells the
	// provider to use the code's default (OFREP's codeDefaultFlag).
	Value json.RawMessage `json:"value,omitempty"`
	// Reason is an OpenFeature reason (see Answer).
	Reason string `json:"reason"`
	// Variant is the variation's name, else its index; absent with Value.
	Variant string `json:"variant,omitempty"`
	// Metadata says more of how LaunchDarkly's evaluation went: strings,
	// numbers and booleans only, as OpenFeature's flag metadata is.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Failure is one flag's failed evaluation, and the body of a single
// evaluation that failed.
type Failure struct {
	Key          string    `json:"key"`
	ErrorCode    ErrorCode `json:"errorCode"`
	ErrorDetails string    `json:"errorDetails,omitempty"`
}

// BulkFailure is the body of a bulk evaluation that failed as a whole.
type BulkFailure struct {
	ErrorCode    ErrorCode `json:"errorCode"`
	ErrorDetails string    `json:"errorDetails,omitempty"`
}

// Bulk is the answer of a bulk evaluation: each flag's Evaluation or
// Failure, by key.
type Bulk struct {
	Flags []any `json:"flags"`
}

// Flag is what Answer needs of the flag besides its evaluation.
type Flag struct {
	Key     string
	Version int
	// Model is the flag as LaunchDarkly's evaluation read it.
	Model *ldmodel.FeatureFlag
	// VariationNames are the variations' names by index ("" when unnamed).
	VariationNames []string
}

// Answer is OFREP's answer for one flag's evaluation detail: an
// Evaluation, or a Failure when LaunchDarkly's evaluation ended in an
// error (a malformed flag is PARSE_ERROR, as LaunchDarkly's OpenFeature
// providers map it; any other error GENERAL). Reasons map to
// OpenFeature's: TARGET_MATCH and RULE_MATCH are TARGETING_MATCH,
// FALLTHROUGH is SPLIT when the fallthrough is a percentage rollout and
// DEFAULT otherwise, OFF is DISABLED, and PREREQUISITE_FAILED stays
// LaunchDarkly's, as OpenFeature has no reason for it.
func Answer(f Flag, d ldreason.EvaluationDetail) (Evaluation, *Failure) {
	r := d.Reason
	if r.GetKind() == ldreason.EvalReasonError {
		code, details := General, "the evaluation failed: "+string(r.GetErrorKind())
		if r.GetErrorKind() == ldreason.EvalErrorMalformedFlag {
			code, details = ParseError, "the flag's configuration could not be evaluated (MALFORMED_FLAG)"
		}
		return Evaluation{}, &Failure{Key: f.Key, ErrorCode: code, ErrorDetails: details}
	}
	e := Evaluation{Key: f.Key, Reason: reason(f.Model, r), Metadata: map[string]any{
		"flagVersion": f.Version,
		"reasonKind":  string(r.GetKind()),
	}}
	if d.VariationIndex.IsDefined() {
		i := d.VariationIndex.IntValue()
		// Through Go values, so an object's members come in key order:
		// ldvalue writes them in map order, which would change the bulk
		// answer's ETag from one request to the next.
		value, err := json.Marshal(d.Value.AsArbitraryValue())
		if err != nil {
			return Evaluation{}, &Failure{Key: f.Key, ErrorCode: ParseError, ErrorDetails: "the flag's value is not JSON"}
		}
		e.Value, e.Variant = value, variant(f.VariationNames, i)
		e.Metadata["variationIndex"] = i
	}
	switch r.GetKind() {
	case ldreason.EvalReasonRuleMatch:
		e.Metadata["ruleIndex"] = r.GetRuleIndex()
		if id := r.GetRuleID(); id != "" {
			e.Metadata["ruleId"] = id
		}
	case ldreason.EvalReasonPrerequisiteFailed:
		e.Metadata["prerequisiteKey"] = r.GetPrerequisiteKey()
	}
	if r.IsInExperiment() {
		e.Metadata["inExperiment"] = true
	}
	return e, nil
}

// reason is the OpenFeature reason of LaunchDarkly's.
func reason(m *ldmodel.FeatureFlag, r ldreason.EvaluationReason) string {
	switch r.GetKind() {
	case ldreason.EvalReasonTargetMatch, ldreason.EvalReasonRuleMatch:
		return ReasonTargetingMatch
	case ldreason.EvalReasonFallthrough:
		if m != nil && !m.Fallthrough.Variation.IsDefined() && len(m.Fallthrough.Rollout.Variations) > 0 {
			return ReasonSplit
		}
		return ReasonDefault
	case ldreason.EvalReasonOff:
		return ReasonDisabled
	case ldreason.EvalReasonPrerequisiteFailed:
		return ReasonPrerequisiteFailed
	}
	return ReasonUnknown
}

// variant is the variation's name, or its index when it has none.
func variant(names []string, i int) string {
	if i >= 0 && i < len(names) && names[i] != "" {
		return names[i]
	}
	return strconv.Itoa(i)
}

// NotFound is the failure of a flag the credential cannot see or that
// does not exist.
func NotFound(key string) *Failure {
	return &Failure{Key: key, ErrorCode: FlagNotFound, ErrorDetails: "no flag " + quote(key) + " is available to this credential"}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// errTargetingKeyMissing marks the context errors that lack a key.
var errTargetingKeyMissing = errors.New("targeting key missing")

// CodeOf is the error code of a ParseContext error.
func CodeOf(err error) ErrorCode {
	if errors.Is(err, errTargetingKeyMissing) {
		return TargetingKeyMissing
	}
	return InvalidContext
}

// Attributes of an OpenFeature context that the conversion reads.
const (
	attrTargetingKey = "targetingKey"
	attrKey          = "key"
	attrKind         = "kind"
	attrPrivate      = "privateAttributes"
	attrName         = "name"
	attrAnonymous    = "anonymous"
)

// builtIn checks the type of LaunchDarkly's built-in attributes: name a
// string, anonymous a boolean.
func builtIn(name string, v json.RawMessage, what string) error {
	var ok bool
	if name == attrName {
		var s *string
		ok = json.Unmarshal(v, &s) == nil
	} else {
		var b *bool
		ok = json.Unmarshal(v, &b) == nil
	}
	if ok {
		return nil
	}
	want := "a string"
	if name == attrAnonymous {
		want = "a boolean"
	}
	return fault.New(fault.Invalid, "the %q of %s must be %s, not %.100s", name, what, want, v)
}

// ParseContext converts an OpenFeature evaluation context to a
// LaunchDarkly context, as LaunchDarkly's OpenFeature providers do:
//
//   - targetingKey is the context's key (a "key" attribute is taken when
//     there is no targetingKey, and dropped when there is one);
//   - "kind" is the context kind, "user" when absent;
//   - a context of kind "multi" holds one object per kind, each with its
//     own targetingKey (or key) and attributes;
//   - "privateAttributes" (an array of attribute names or references) are
//     the context's private attributes; "name" and "anonymous" are
//     LaunchDarkly's built-in attributes and must be a string and a
//     boolean; every other attribute is a custom attribute, objects and
//     arrays included.
//
// The errors are fault.Invalid; CodeOf tells TARGETING_KEY_MISSING (no
// context, or a context or kind without a key) from INVALID_CONTEXT.
func ParseContext(raw json.RawMessage) (ldcontext.Context, error) {
	var top map[string]json.RawMessage
	if len(raw) == 0 || string(raw) == "null" {
		return ldcontext.Context{}, fault.Wrap(errTargetingKeyMissing, fault.Invalid,
			`the request has no context: send {"context":{"targetingKey":"..."}}`)
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return ldcontext.Context{}, fault.New(fault.Invalid, "the context must be an object, not %.100s", raw)
	}
	out := map[string]json.RawMessage{}
	kind := "user"
	if k, ok := top[attrKind]; ok {
		if err := json.Unmarshal(k, &kind); err != nil {
			return ldcontext.Context{}, fault.New(fault.Invalid, `the context's "kind" must be a string, not %.100s`, k)
		}
	}
	out[attrKind], _ = json.Marshal(kind)
	if kind == string(ldcontext.MultiKind) {
		kinds := make([]string, 0, len(top))
		for name := range top {
			if name != attrKind {
				kinds = append(kinds, name)
			}
		}
		sort.Strings(kinds)
		if len(kinds) == 0 {
			return ldcontext.Context{}, fault.New(fault.Invalid, `the multi-kind context holds no kind: send {"kind":"multi","user":{"targetingKey":"..."},...}`)
		}
		for _, name := range kinds {
			var attrs map[string]json.RawMessage
			if err := json.Unmarshal(top[name], &attrs); err != nil || attrs == nil {
				return ldcontext.Context{}, fault.New(fault.Invalid,
					"the multi-kind context's %q must be an object of that kind's attributes (with its targetingKey), not %.100s", name, top[name])
			}
			single, err := common(attrs, "kind "+quote(name)+" of the multi-kind context")
			if err != nil {
				return ldcontext.Context{}, err
			}
			out[name], _ = json.Marshal(single)
		}
	} else {
		single, err := common(top, "the context")
		if err != nil {
			return ldcontext.Context{}, err
		}
		for name, v := range single {
			out[name] = v
		}
	}
	body, err := json.Marshal(out)
	if err != nil {
		return ldcontext.Context{}, fault.Wrap(err, fault.Invalid, "the context could not be read")
	}
	return evaluation.ParseContext(body)
}

// common converts the attributes of one kind: the key from targetingKey
// (else key), privateAttributes into _meta, the rest as they are.
func common(attrs map[string]json.RawMessage, what string) (map[string]json.RawMessage, error) {
	raw, ok := attrs[attrTargetingKey]
	if !ok || string(raw) == "null" {
		raw, ok = attrs[attrKey]
	}
	var key string
	if ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &key); err != nil {
			return nil, fault.New(fault.Invalid, "the targetingKey of %s must be a string, not %.100s", what, raw)
		}
	}
	if key == "" {
		return nil, fault.Wrap(errTargetingKeyMissing, fault.Invalid, "%s has no targetingKey: LaunchDarkly evaluates a context by its key", what)
	}
	out := make(map[string]json.RawMessage, len(attrs)+1)
	for name, v := range attrs {
		switch name {
		case attrTargetingKey, attrKey, attrKind, attrPrivate:
			continue
		case attrName, attrAnonymous:
			if err := builtIn(name, v, what); err != nil {
				return nil, err
			}
		}
		out[name] = v
	}
	if v, ok := attrs[attrPrivate]; ok {
		out["_meta"], _ = json.Marshal(map[string]json.RawMessage{"privateAttributes": v})
	}
	out[attrKey], _ = json.Marshal(key)
	return out, nil
}
