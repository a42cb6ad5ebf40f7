package ofrep_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/launchdarkly/go-server-sdk-evaluation/v3/ldmodel"

	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"
	"github.com/launchdarkly/go-sdk-common/v3/ldreason"
	"github.com/launchdarkly/go-sdk-common/v3/ldvalue"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/ofrep"
)

func TestParseContext(t *testing.T) {
	tests := []struct {
		name, of, ld string
	}{
		{"a targetingKey alone is a user's key", `{"targetingKey":"u1"}`, `{"kind":"user","key":"u1"}`},
		{"kind names the context kind", `{"targetingKey":"acme","kind":"org","plan":"gold"}`, `{"kind":"org","key":"acme","plan":"gold"}`},
		{"key is taken when there is no targetingKey", `{"key":"u1"}`, `{"kind":"user","key":"u1"}`},
		{"targetingKey wins over key, which is dropped", `{"targetingKey":"u1","key":"u2"}`, `{"kind":"user","key":"u1"}`},
		{"name and anonymous are the built-in attributes", `{"targetingKey":"u1","name":"Ann","anonymous":true}`, `{"kind":"user","key":"u1","name":"Ann","anonymous":true}`},
		{"objects, arrays and numbers stay custom attributes", `{"targetingKey":"u1","address":{"city":"Paris"},"groups":["a","b"],"age":42.5}`,
			`{"kind":"user","key":"u1","address":{"city":"Paris"},"groups":["a","b"],"age":42.5}`},
		{"privateAttributes become the context's private attributes", `{"targetingKey":"u1","email":"a@b.c","privateAttributes":["email"]}`,
			`{"kind":"user","key":"u1","email":"a@b.c","_meta":{"privateAttributes":["email"]}}`},
		{"a multi-kind context holds one object per kind with its own targetingKey", `{"kind":"multi","user":{"targetingKey":"u1","name":"Ann"},"org":{"key":"acme","privateAttributes":["plan"],"plan":"gold"}}`,
			`{"kind":"multi","user":{"key":"u1","name":"Ann"},"org":{"key":"acme","plan":"gold","_meta":{"privateAttributes":["plan"]}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ofrep.ParseContext(json.RawMessage(tt.of))
			if err != nil {
				t.Fatal(err)
			}
			var want ldcontext.Context
			if err := want.UnmarshalJSON([]byte(tt.ld)); err != nil {
				t.Fatal(err)
			}
			if !got.Equal(want) {
				g, _ := got.MarshalJSON()
				t.Errorf("context %s, want %s", g, tt.ld)
			}
		})
	}
}

func TestParseContextRefusals(t *testing.T) {
	tests := []struct {
		name, of string
		code     ofrep.ErrorCode
		says     string
	}{
		{"no context lacks a targeting key", ``, ofrep.TargetingKeyMissing, "no context"},
		{"a null context lacks a targeting key", `null`, ofrep.TargetingKeyMissing, "no context"},
		{"an empty context lacks a targeting key", `{}`, ofrep.TargetingKeyMissing, "targetingKey"},
		{"a null targetingKey and no key lack a targeting key", `{"targetingKey":null}`, ofrep.TargetingKeyMissing, "targetingKey"},
		{"a kind of a multi-kind context without key lacks a targeting key", `{"kind":"multi","user":{"targetingKey":"u1"},"org":{}}`, ofrep.TargetingKeyMissing, `kind "org"`},
		{"a context that is not an object is invalid", `"u1"`, ofrep.InvalidContext, "object"},
		{"a kind that is not a string is invalid", `{"targetingKey":"u1","kind":3}`, ofrep.InvalidContext, `"kind"`},
		{"a targetingKey that is not a string is invalid", `{"targetingKey":true}`, ofrep.InvalidContext, "targetingKey"},
		{"a kind LaunchDarkly refuses is invalid", `{"targetingKey":"u1","kind":"a b"}`, ofrep.InvalidContext, "kind"},
		{"a name that is not a string is invalid", `{"targetingKey":"u1","name":1}`, ofrep.InvalidContext, `"name" of the context must be a string`},
		{"anonymous that is not a boolean is invalid", `{"kind":"multi","user":{"targetingKey":"u1","anonymous":"yes"}}`, ofrep.InvalidContext, `"anonymous" of kind "user"`},
		{"a multi-kind context without kinds is invalid", `{"kind":"multi"}`, ofrep.InvalidContext, "no kind"},
		{"a multi-kind context's attribute that is not an object is invalid", `{"kind":"multi","targetingKey":"u1"}`, ofrep.InvalidContext, `"targetingKey"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ofrep.ParseContext(json.RawMessage(tt.of))
			if err == nil {
				t.Fatal("no error")
			}
			if !fault.Is(err, fault.Invalid) || ofrep.CodeOf(err) != tt.code || !strings.Contains(fault.MessageOf(err), tt.says) {
				t.Errorf("error %v (%s), want %s saying %q", err, ofrep.CodeOf(err), tt.code, tt.says)
			}
		})
	}
}

func TestAnswer(t *testing.T) {
	rollout := &ldmodel.FeatureFlag{Key: "f", Fallthrough: ldmodel.VariationOrRollout{Rollout: ldmodel.Rollout{
		Variations: []ldmodel.WeightedVariation{{Variation: 0, Weight: 50000}, {Variation: 1, Weight: 50000}}}}}
	fixed := &ldmodel.FeatureFlag{Key: "f", Fallthrough: ldmodel.VariationOrRollout{Variation: ldvalue.NewOptionalInt(1)}}
	detail := func(v ldvalue.Value, i int, r ldreason.EvaluationReason) ldreason.EvaluationDetail {
		return ldreason.NewEvaluationDetail(v, i, r)
	}
	tests := []struct {
		name string
		m    *ldmodel.FeatureFlag
		d    ldreason.EvaluationDetail
		want string
	}{
		{"a target match is TARGETING_MATCH with the variation's name", fixed, detail(ldvalue.Bool(true), 0, ldreason.NewEvalReasonTargetMatch()),
			`{"key":"f","value":true,"reason":"TARGETING_MATCH","variant":"on","metadata":{"flagVersion":7,"reasonKind":"TARGET_MATCH","variationIndex":0}}`},
		{"a rule match is TARGETING_MATCH with the rule", fixed, detail(ldvalue.Bool(false), 1, ldreason.NewEvalReasonRuleMatch(2, "r2")),
			`{"key":"f","value":false,"reason":"TARGETING_MATCH","variant":"1","metadata":{"flagVersion":7,"reasonKind":"RULE_MATCH","ruleIndex":2,"ruleId":"r2","variationIndex":1}}`},
		{"a fixed fallthrough is DEFAULT", fixed, detail(ldvalue.Bool(false), 1, ldreason.NewEvalReasonFallthrough()),
			`{"key":"f","value":false,"reason":"DEFAULT","variant":"1","metadata":{"flagVersion":7,"reasonKind":"FALLTHROUGH","variationIndex":1}}`},
		{"a rollout fallthrough is SPLIT", rollout, detail(ldvalue.Bool(true), 0, ldreason.NewEvalReasonFallthrough()),
			`{"key":"f","value":true,"reason":"SPLIT","variant":"on","metadata":{"flagVersion":7,"reasonKind":"FALLTHROUGH","variationIndex":0}}`},
		{"an experiment says so", rollout, detail(ldvalue.Bool(true), 0, ldreason.NewEvalReasonFallthroughExperiment(true)),
			`{"key":"f","value":true,"reason":"SPLIT","variant":"on","metadata":{"flagVersion":7,"reasonKind":"FALLTHROUGH","variationIndex":0,"inExperiment":true}}`},
		{"off is DISABLED", fixed, detail(ldvalue.Bool(false), 1, ldreason.NewEvalReasonOff()),
			`{"key":"f","value":false,"reason":"DISABLED","variant":"1","metadata":{"flagVersion":7,"reasonKind":"OFF","variationIndex":1}}`},
		{"off without an off variation has no value, so the caller's default is used", fixed,
			ldreason.EvaluationDetail{Value: ldvalue.Null(), Reason: ldreason.NewEvalReasonOff()},
			`{"key":"f","reason":"DISABLED","metadata":{"flagVersion":7,"reasonKind":"OFF"}}`},
		{"a failed prerequisite names it", fixed, detail(ldvalue.Bool(false), 1, ldreason.NewEvalReasonPrerequisiteFailed("p")),
			`{"key":"f","value":false,"reason":"PREREQUISITE_FAILED","variant":"1","metadata":{"flagVersion":7,"reasonKind":"PREREQUISITE_FAILED","prerequisiteKey":"p","variationIndex":1}}`},
		{"a malformed flag is PARSE_ERROR", fixed, ldreason.NewEvaluationDetailForError(ldreason.EvalErrorMalformedFlag, ldvalue.Null()),
			`{"key":"f","errorCode":"PARSE_ERROR","errorDetails":"the flag's configuration could not be evaluated (MALFORMED_FLAG)"}`},
		{"another evaluation error is GENERAL", fixed, ldreason.NewEvaluationDetailForError(ldreason.EvalErrorException, ldvalue.Null()),
			`{"key":"f","errorCode":"GENERAL","errorDetails":"the evaluation failed: EXCEPTION"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, fail := ofrep.Answer(ofrep.Flag{Key: "f", Version: 7, Model: tt.m, VariationNames: []string{"on", ""}}, tt.d)
			var got []byte
			if fail != nil {
				got, _ = json.Marshal(fail)
			} else {
				got, _ = json.Marshal(e)
			}
			if !sameJSON(t, got, []byte(tt.want)) {
				t.Errorf("answer %s\nwant   %s", got, tt.want)
			}
		})
	}
}

func TestAnswerWritesObjectsTheSameWayEveryTime(t *testing.T) {
	obj := ldvalue.ObjectBuild()
	for _, k := range []string{"k", "d", "x", "a", "q", "m", "b", "z"} {
		obj.Set(k, ldvalue.String(k))
	}
	d := ldreason.NewEvaluationDetail(obj.Build(), 0, ldreason.NewEvalReasonFallthrough())
	first, _ := ofrep.Answer(ofrep.Flag{Key: "f"}, d)
	for range 50 {
		if e, _ := ofrep.Answer(ofrep.Flag{Key: "f"}, d); string(e.Value) != string(first.Value) {
			t.Fatalf("value written as %s, then as %s", first.Value, e.Value)
		}
	}
	if want := `{"a":"a","b":"b","d":"d","k":"k","m":"m","q":"q","x":"x","z":"z"}`; string(first.Value) != want {
		t.Errorf("value %s, want its members in key order", first.Value)
	}
}

func sameJSON(tb testing.TB, a, b []byte) bool {
	tb.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		tb.Fatal(err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
