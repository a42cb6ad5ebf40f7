package flag

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/sdkcontext"
)

// Limits of flag fields.
const (
	MaxDescriptionLength = 8192
	MaxVariations        = 100
	MaxNameLength        = 256
	MaxContextKeyLength  = 512
	// MaxContextKindLength bounds a context kind targeting names, which
	// may be one SDKs send without a project defining it.
	MaxContextKindLength = 256
	MaxMaintainerLength  = 64
	// MaxItemBytes keeps a flag, targeting of every environment included,
	// within DynamoDB's item limit (400 KB) with room for the item's keys.
	MaxItemBytes = 380 * 1024
)

// ValidContextKind checks a context kind; empty means user.
func ValidContextKind(field, kind string) error {
	if kind == "" {
		return nil
	}
	if !sdkcontext.IsKind(kind) || len(kind) > MaxContextKindLength {
		return fault.New(fault.Invalid, "field %q: context kind %q must be letters, digits, '.', '_' or '-', and not \"kind\" or \"multi\"", field, kind)
	}
	return nil
}

func validOp(op string) bool { return slices.Contains(Operators, op) }

func tooLarge(key string, n int) error {
	return fault.New(fault.Invalid, "flag %q would take %d bytes stored, more than the %d allowed: remove targets or rules", key, n, MaxItemBytes)
}

// jsonType names the JSON type of a raw value: string, number, boolean,
// json (object or array), null, or "" when it is not one JSON value.
func jsonType(raw json.RawMessage) string {
	var v any
	if len(bytes.TrimSpace(raw)) == 0 || json.Unmarshal(raw, &v) != nil {
		return ""
	}
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	default:
		return "json"
	}
}

// canonical is a value's JSON with object keys sorted and numbers in one
// form, so two encodings of one value compare equal.
func canonical(raw json.RawMessage) (string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	out, err := json.Marshal(v)
	return string(out), err
}

// kindOf is the kind a flag with these variation values has: boolean when
// every value is a boolean, multivariate otherwise.
func kindOf(values []json.RawMessage) string {
	for _, v := range values {
		if jsonType(v) != "boolean" {
			return KindMultivariate
		}
	}
	return KindBoolean
}

// Check verifies every rule a flag must satisfy after any change: its
// fields, its variations, its defaults and its targeting in every stored
// environment. The error is a 400 naming the field of the first failure.
// Rules that involve other flags are checked by checkRelations.
func (f *Flag) Check() error {
	if err := environment.ValidKey("key", f.Key); err != nil {
		return err
	}
	if err := environment.ValidName("name", f.Name); err != nil {
		return err
	}
	if len(f.Description) > MaxDescriptionLength {
		return fault.New(fault.Invalid, "field \"description\" must be at most %d characters", MaxDescriptionLength)
	}
	if err := environment.ValidTags("tags", f.Tags); err != nil {
		return err
	}
	if len(f.MaintainerID) > MaxMaintainerLength {
		return fault.New(fault.Invalid, "field \"maintainerId\" must be at most %d characters", MaxMaintainerLength)
	}
	if err := checkCustomProperties(f.CustomProperties); err != nil {
		return err
	}
	if err := f.checkVariations(); err != nil {
		return err
	}
	n := len(f.Variations)
	if err := inRange("defaults.onVariation", f.Defaults.OnVariation, n); err != nil {
		return err
	}
	if err := inRange("defaults.offVariation", f.Defaults.OffVariation, n); err != nil {
		return err
	}
	keys := make([]string, 0, len(f.Environments))
	for k := range f.Environments {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if c := f.Environments[k]; c != nil {
			if err := c.check("environments."+k+".", f.Key, n); err != nil {
				return err
			}
		}
	}
	return nil
}

func inRange(field string, idx, n int) error {
	if idx < 0 || idx >= n {
		return fault.New(fault.Invalid, "field %q: variation index %d does not exist; the flag has variations 0 to %d", field, idx, n-1)
	}
	return nil
}

func (f *Flag) checkVariations() error {
	n := len(f.Variations)
	switch {
	case n < 2:
		return fault.New(fault.Invalid, "field \"variations\" must hold at least two variations, not %d", n)
	case n > MaxVariations:
		return fault.New(fault.Invalid, "field \"variations\" holds %d variations, at most %d allowed", n, MaxVariations)
	}
	if f.Kind != KindBoolean && f.Kind != KindMultivariate {
		return fault.New(fault.Invalid, "field \"kind\" must be boolean or multivariate, not %q", f.Kind)
	}
	ids := map[string]int{}
	values := map[string]int{}
	firstType := ""
	for i, v := range f.Variations {
		field := fmt.Sprintf("variations[%d]", i)
		if v.ID == "" {
			return fault.New(fault.Invalid, "field %q has no _id", field+"._id")
		}
		if j, dup := ids[v.ID]; dup {
			return fault.New(fault.Invalid, "field %q: _id %q is also the _id of variations[%d]", field+"._id", v.ID, j)
		}
		ids[v.ID] = i
		t := jsonType(v.Value)
		switch {
		case t == "":
			return fault.New(fault.Invalid, "field %q is required and must be one JSON value", field+".value")
		case t == "null":
			return fault.New(fault.Invalid, "field %q must not be null", field+".value")
		case f.Kind == KindBoolean && t != "boolean":
			return fault.New(fault.Invalid, "field %q must be true or false: the flag is boolean", field+".value")
		case f.Kind == KindMultivariate && t == "boolean":
			return fault.New(fault.Invalid, "field %q: a multivariate flag serves strings, numbers or JSON objects and arrays, not booleans", field+".value")
		}
		if firstType == "" {
			firstType = t
		} else if t != firstType {
			return fault.New(fault.Invalid, "field %q is a %s, but variations[0] is a %s: every variation of a flag has the same JSON type", field+".value", t, firstType)
		}
		c, _ := canonical(v.Value)
		if j, dup := values[c]; dup {
			return fault.New(fault.Invalid, "field %q: value %s is also the value of variations[%d]; values must be unique", field+".value", c, j)
		}
		values[c] = i
		if len(v.Name) > MaxNameLength {
			return fault.New(fault.Invalid, "field %q must be at most %d characters", field+".name", MaxNameLength)
		}
		if len(v.Description) > MaxDescriptionLength {
			return fault.New(fault.Invalid, "field %q must be at most %d characters", field+".description", MaxDescriptionLength)
		}
	}
	if f.Kind == KindBoolean && n != 2 {
		return fault.New(fault.Invalid, "field \"variations\": a boolean flag has exactly two variations, true and false")
	}
	return nil
}

// check verifies one environment's targeting; prefix starts field names.
func (c *EnvConfig) check(prefix, flagKey string, n int) error {
	targeted := map[string]string{} // kind + "\x00" + key -> field
	for _, list := range []struct {
		name    string
		targets []Target
	}{{"targets", c.Targets}, {"contextTargets", c.ContextTargets}} {
		for i, t := range list.targets {
			field := fmt.Sprintf("%s%s[%d]", prefix, list.name, i)
			if err := inRange(field+".variation", t.Variation, n); err != nil {
				return err
			}
			kind := normalKind(t.ContextKind)
			if err := ValidContextKind(field+".contextKind", t.ContextKind); err != nil {
				return err
			}
			if list.name == "targets" && kind != UserKind {
				return fault.New(fault.Invalid, "field %q: targets holds user targets; targets of kind %q belong in contextTargets", field+".contextKind", kind)
			}
			if list.name == "contextTargets" && t.ContextKind == "" {
				return fault.New(fault.Invalid, "field %q is required in contextTargets", field+".contextKind")
			}
			if list.name == "contextTargets" && kind == UserKind && len(t.Values) > 0 {
				return fault.New(fault.Invalid, "field %q: user keys belong in targets, not contextTargets", field+".values")
			}
			for j, key := range t.Values {
				if key == "" || len(key) > MaxContextKeyLength {
					return fault.New(fault.Invalid, "field \"%s.values[%d]\" must be a context key of 1 to %d characters", field, j, MaxContextKeyLength)
				}
				id := kind + "\x00" + key
				if other, dup := targeted[id]; dup {
					return fault.New(fault.Invalid, "field %q: %s key %q is already targeted by %s; a context is targeted by at most one variation", field+".values", kind, key, other)
				}
				targeted[id] = field
			}
		}
	}
	ruleIDs := map[string]bool{}
	for i, r := range c.Rules {
		field := fmt.Sprintf("%srules[%d]", prefix, i)
		if r.ID == "" {
			return fault.New(fault.Invalid, "field %q has no _id", field+"._id")
		}
		if ruleIDs[r.ID] {
			return fault.New(fault.Invalid, "field %q: rule _id %q appears twice", field+"._id", r.ID)
		}
		ruleIDs[r.ID] = true
		if len(r.Description) > MaxDescriptionLength {
			return fault.New(fault.Invalid, "field %q must be at most %d characters", field+".description", MaxDescriptionLength)
		}
		clauseIDs := map[string]bool{}
		for j, cl := range r.Clauses {
			cf := fmt.Sprintf("%s.clauses[%d]", field, j)
			if cl.ID != "" && clauseIDs[cl.ID] {
				return fault.New(fault.Invalid, "field %q: clause _id %q appears twice in the rule", cf+"._id", cl.ID)
			}
			clauseIDs[cl.ID] = true
			if err := CheckClause(cf, cl.Attribute, cl.Op, cl.ContextKind, cl.Values); err != nil {
				return err
			}
		}
		if err := checkServe(field, r.VariationOrRoll, n); err != nil {
			return err
		}
	}
	if err := checkServe(prefix+"fallthrough", c.Fallthrough, n); err != nil {
		return err
	}
	if c.OffVariation != nil {
		if err := inRange(prefix+"offVariation", *c.OffVariation, n); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for i, p := range c.Prerequisites {
		field := fmt.Sprintf("%sprerequisites[%d]", prefix, i)
		if err := environment.ValidKey(field+".key", p.Key); err != nil {
			return err
		}
		if p.Key == flagKey {
			return fault.New(fault.Invalid, "field %q: a flag cannot be its own prerequisite", field+".key")
		}
		if seen[p.Key] {
			return fault.New(fault.Invalid, "field %q: flag %q is a prerequisite twice", field+".key", p.Key)
		}
		seen[p.Key] = true
		if p.Variation < 0 {
			return fault.New(fault.Invalid, "field %q must not be negative", field+".variation")
		}
	}
	return nil
}

// CheckClause verifies one clause's attribute, operator, kind and values.
func CheckClause(field, attribute, op, contextKind string, values []json.RawMessage) error {
	if !validOp(op) {
		return fault.New(fault.Invalid, "field %q: operator %q is not one of %v", field+".op", op, Operators)
	}
	if attribute == "" && op != "segmentMatch" {
		return fault.New(fault.Invalid, "field %q is required", field+".attribute")
	}
	if err := ValidContextKind(field+".contextKind", contextKind); err != nil {
		return err
	}
	if len(values) == 0 {
		return fault.New(fault.Invalid, "field %q must hold at least one value", field+".values")
	}
	for k, v := range values {
		if t := jsonType(v); t == "" || t == "null" {
			return fault.New(fault.Invalid, "field \"%s.values[%d]\" must be a JSON value other than null", field, k)
		}
		// SDKs skip a segmentMatch value that is not a string: it could
		// never match, so it is refused rather than kept silently.
		if op == "segmentMatch" {
			var key string
			if json.Unmarshal(v, &key) != nil || key == "" {
				return fault.New(fault.Invalid, "field \"%s.values[%d]\" must be a segment key (a string): the operator segmentMatch matches segments by key", field, k)
			}
		}
	}
	return nil
}

// checkServe verifies what a rule or the fallthrough serves: a variation
// in range, or a rollout over variations in range whose weights add up to
// RolloutTotal.
func checkServe(field string, v VariationOrRoll, n int) error {
	switch {
	case v.Variation == nil && v.Rollout == nil:
		return fault.New(fault.Invalid, "field %q must serve a variation or a rollout", field)
	case v.Variation != nil && v.Rollout != nil:
		return fault.New(fault.Invalid, "field %q must serve a variation or a rollout, not both", field)
	case v.Variation != nil:
		return inRange(field+".variation", *v.Variation, n)
	}
	return checkRollout(field+".rollout", v.Rollout, n)
}

func checkRollout(field string, r *Rollout, n int) error {
	if len(r.Variations) == 0 {
		return fault.New(fault.Invalid, "field %q must hold at least one weighted variation", field+".variations")
	}
	if err := ValidContextKind(field+".contextKind", r.ContextKind); err != nil {
		return err
	}
	total := 0
	seen := map[int]bool{}
	for i, w := range r.Variations {
		wf := fmt.Sprintf("%s.variations[%d]", field, i)
		if err := inRange(wf+".variation", w.Variation, n); err != nil {
			return err
		}
		if seen[w.Variation] {
			return fault.New(fault.Invalid, "field %q: variation %d appears twice in the rollout", wf+".variation", w.Variation)
		}
		seen[w.Variation] = true
		if w.Weight < 0 || w.Weight > RolloutTotal {
			return fault.New(fault.Invalid, "field %q must be between 0 and %d", wf+".weight", RolloutTotal)
		}
		total += w.Weight
	}
	if total != RolloutTotal {
		return fault.New(fault.Invalid, "field %q: weights add up to %d, they must add up to %d (100%%)", field+".variations", total, RolloutTotal)
	}
	return nil
}
