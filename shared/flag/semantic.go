package flag

// The semantic patch engine for flags. One engine serves every caller:
// the flag update (PATCH with domain-model=flagplane.semanticpatch),
// approval requests (validated when made, applied later) and expiring
// targets (a job removing targets). Its API:
//
//   - InstructionActions(envKey, ins): the policy actions of a list, for
//     the authorization check; refuses unknown kinds and
//     environment-scoped instructions without an environment (400).
//   - NeedsOthers(ins): whether the list needs the project's other flags
//     (prerequisites, removing a variation, archiving).
//   - Validate(f, envKey, ins, others): would the list apply to f now?
//     Changes nothing.
//   - Apply(f, envKey, ins, now, others): applies the whole list to f (in
//     envKey for environment-scoped instructions), or nothing; returns
//     the actions performed.
//
// Every error is a *semanticpatch.Error naming the index and kind of the
// instruction: 400 invalid_request for a malformed instruction (unknown
// kind, missing or ill-typed parameter), 422 patch_failed for one that does
// not apply to the flag as it is (unknown variation or rule id, a change
// that would break the flag's rules).

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/semanticpatch"
)

// instruction is how the engine runs one kind.
type instruction struct {
	action string
	// env: the instruction changes the targeting of one environment.
	env bool
	// others: the instruction needs the project's other flags.
	others bool
	run    func(r *runner, p *params) error
}

// instructions are the kinds the engine knows, with LaunchDarkly's names
// and the policy action each performs.
var instructions = map[string]instruction{
	// Targeting state.
	"turnFlagOn":  {action: "updateOn", env: true, run: func(r *runner, _ *params) error { r.env().On = true; return nil }},
	"turnFlagOff": {action: "updateOn", env: true, run: func(r *runner, _ *params) error { r.env().On = false; return nil }},

	// Individual targets.
	"addUserTargets":     {action: "updateTargets", env: true, run: (*runner).addUserTargets},
	"removeUserTargets":  {action: "updateTargets", env: true, run: (*runner).removeUserTargets},
	"addTargets":         {action: "updateTargets", env: true, run: (*runner).addTargets},
	"removeTargets":      {action: "updateTargets", env: true, run: (*runner).removeTargets},
	"clearUserTargets":   {action: "updateTargets", env: true, run: (*runner).clearUserTargets},
	"clearTargets":       {action: "updateTargets", env: true, run: (*runner).clearTargets},
	"replaceUserTargets": {action: "updateTargets", env: true, run: (*runner).replaceUserTargets},
	"replaceTargets":     {action: "updateTargets", env: true, run: (*runner).replaceTargets},

	// Rules and clauses.
	"addRule":                      {action: "updateRules", env: true, run: (*runner).addRule},
	"removeRule":                   {action: "updateRules", env: true, run: (*runner).removeRule},
	"replaceRules":                 {action: "updateRules", env: true, run: (*runner).replaceRules},
	"reorderRules":                 {action: "updateRules", env: true, run: (*runner).reorderRules},
	"updateRuleVariationOrRollout": {action: "updateRules", env: true, run: (*runner).updateRuleVariationOrRollout},
	"updateRuleTrackEvents":        {action: "updateRules", env: true, run: (*runner).updateRuleTrackEvents},
	"updateRuleDescription":        {action: "updateFlagRuleDescription", env: true, run: (*runner).updateRuleDescription},
	"addClauses":                   {action: "updateRules", env: true, run: (*runner).addClauses},
	"removeClauses":                {action: "updateRules", env: true, run: (*runner).removeClauses},
	"updateClause":                 {action: "updateRules", env: true, run: (*runner).updateClause},
	"addValuesToClause":            {action: "updateRules", env: true, run: (*runner).addValuesToClause},
	"removeValuesFromClause":       {action: "updateRules", env: true, run: (*runner).removeValuesFromClause},

	// Default rule, off variation, events.
	"updateFallthroughVariationOrRollout": {action: "updateFallthrough", env: true, run: (*runner).updateFallthrough},
	"updateOffVariation":                  {action: "updateOffVariation", env: true, run: (*runner).updateOffVariation},
	"updateTrackEvents":                   {action: "updateTrackEvents", env: true, run: (*runner).updateTrackEvents},

	// Prerequisites.
	"addPrerequisite":      {action: "updatePrerequisites", env: true, others: true, run: (*runner).addPrerequisite},
	"removePrerequisite":   {action: "updatePrerequisites", env: true, run: (*runner).removePrerequisite},
	"updatePrerequisite":   {action: "updatePrerequisites", env: true, others: true, run: (*runner).updatePrerequisite},
	"replacePrerequisites": {action: "updatePrerequisites", env: true, others: true, run: (*runner).replacePrerequisites},

	// Variations and defaults (every environment).
	"addVariation":           {action: "updateFlagVariations", run: (*runner).addVariation},
	"removeVariation":        {action: "updateFlagVariations", others: true, run: (*runner).removeVariation},
	"updateVariation":        {action: "updateFlagVariations", run: (*runner).updateVariation},
	"updateDefaultVariation": {action: "updateFlagDefaultVariations", run: (*runner).updateDefaultVariation},

	// Flag settings.
	"updateName":                    {action: "updateName", run: (*runner).updateName},
	"updateDescription":             {action: "updateDescription", run: (*runner).updateDescription},
	"addTags":                       {action: "updateTags", run: (*runner).addTags},
	"removeTags":                    {action: "updateTags", run: (*runner).removeTags},
	"makeFlagTemporary":             {action: "updateTemporary", run: func(r *runner, _ *params) error { r.f.Temporary = true; return nil }},
	"makeFlagPermanent":             {action: "updateTemporary", run: func(r *runner, _ *params) error { r.f.Temporary = false; return nil }},
	"turnOnClientSideAvailability":  {action: "updateClientSideFlagAvailability", run: func(r *runner, p *params) error { return r.clientSide(p, true) }},
	"turnOffClientSideAvailability": {action: "updateClientSideFlagAvailability", run: func(r *runner, p *params) error { return r.clientSide(p, false) }},
	"updateMaintainerMember":        {action: "updateMaintainer", run: (*runner).updateMaintainerMember},
	"removeMaintainer":              {action: "updateMaintainer", run: func(r *runner, _ *params) error { r.f.MaintainerID = ""; return nil }},

	// Lifecycle.
	"archiveFlag": {action: "updateGlobalArchived", others: true, run: func(r *runner, _ *params) error { r.f.Archived = true; return nil }},
	"restoreFlag": {action: "updateGlobalArchived", run: func(r *runner, _ *params) error { r.f.Archived = false; return nil }},
}

// Kinds returns the instruction kinds the engine knows, sorted.
func Kinds() []string {
	out := make([]string, 0, len(instructions))
	for k := range instructions {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// InstructionActions returns the policy actions the instructions perform,
// sorted and each once, for the authorization check. An unknown kind, or
// an environment-scoped instruction when envKey is empty, is a 400 naming
// the instruction's index.
func InstructionActions(envKey string, ins []semanticpatch.Instruction) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for i, in := range ins {
		h, ok := instructions[in.Kind]
		if !ok {
			return nil, semanticpatch.Invalid(i, in.Kind, "kind %q is not a flag instruction; supported kinds: %s", in.Kind, strings.Join(Kinds(), ", "))
		}
		if h.env && envKey == "" {
			return nil, semanticpatch.Invalid(i, in.Kind, "field \"environmentKey\" is required: %s changes the flag in one environment", in.Kind)
		}
		if !seen[h.action] {
			seen[h.action] = true
			out = append(out, h.action)
		}
	}
	sort.Strings(out)
	return out, nil
}

// EnvironmentScoped reports whether any instruction changes targeting in
// one environment (and so needs an environment key).
func EnvironmentScoped(ins []semanticpatch.Instruction) bool {
	for _, in := range ins {
		if instructions[in.Kind].env {
			return true
		}
	}
	return false
}

// NeedsOthers reports whether running the instructions needs the
// project's other flags (Others) to be passed to Validate or Apply.
func NeedsOthers(ins []semanticpatch.Instruction) bool {
	for _, in := range ins {
		if instructions[in.Kind].others {
			return true
		}
	}
	return false
}

// Validate reports whether the instructions would apply to f in envKey
// at now, with the error Apply would give; f is not changed.
func Validate(f *Flag, envKey string, ins []semanticpatch.Instruction, now time.Time, others Others) error {
	_, err := Apply(f.Clone(), envKey, ins, now, others)
	return err
}

// Apply runs the instructions in order on f, environment-scoped ones in
// envKey, checking the flag after each. Either every instruction applies
// and f holds the result (the changed environments' version bumped and
// lastModified set to now), or f is left as it was and the error names the
// failing instruction. It returns the policy actions performed, sorted.
// The flag's own _version and item version are the caller's (the store's)
// to bump. others must be given when NeedsOthers(ins).
func Apply(f *Flag, envKey string, ins []semanticpatch.Instruction, now time.Time, others Others) ([]string, error) {
	actions, err := InstructionActions(envKey, ins)
	if err != nil {
		return nil, err
	}
	if NeedsOthers(ins) && others == nil {
		return nil, fmt.Errorf("flag %q: instructions need the project's other flags, and none were given", f.Key)
	}
	work := f.Clone()
	r := &runner{f: work, envKey: envKey, others: others}
	for i, in := range ins {
		r.i, r.kind = i, in.Kind
		h := instructions[in.Kind]
		if work.Archived && in.Kind != "restoreFlag" && in.Kind != "archiveFlag" {
			return nil, r.failed("flag %q is archived; restore it (restoreFlag) before changing it", work.Key)
		}
		var p params
		if err := semanticpatch.Decode(in, i, &p); err != nil {
			return nil, err
		}
		before := work.Clone()
		if err := h.run(r, &p); err != nil {
			return nil, semanticpatch.At(err, i, in.Kind, false)
		}
		if err := work.Check(); err != nil {
			return nil, semanticpatch.At(err, i, in.Kind, true)
		}
		if others != nil && needsOthers(before, work) {
			if err := checkRelations(before, work, others); err != nil {
				return nil, semanticpatch.At(err, i, in.Kind, true)
			}
		}
	}
	stamp(f, work, envKeysOf(f, work), now.UnixMilli())
	itemVersion := f.ItemVersion
	*f = *work
	f.ItemVersion = itemVersion
	return actions, nil
}

// params are the parameters of every instruction kind; each kind reads
// the ones it takes and ignores the others, as unknown fields are.
type params struct {
	VariationID        *string           `json:"variationId"`
	Values             json.RawMessage   `json:"values"`
	ContextKind        string            `json:"contextKind"`
	RuleID             *string           `json:"ruleId"`
	BeforeRuleID       *string           `json:"beforeRuleId"`
	RuleIDs            []string          `json:"ruleIds"`
	Clauses            []ClauseParam     `json:"clauses"`
	ClauseID           *string           `json:"clauseId"`
	ClauseIDs          []string          `json:"clauseIds"`
	Clause             *ClauseParam      `json:"clause"`
	RolloutWeights     map[string]int    `json:"rolloutWeights"`
	RolloutBucketBy    string            `json:"rolloutBucketBy"`
	RolloutContextKind string            `json:"rolloutContextKind"`
	Value              json.RawMessage   `json:"value"`
	Name               *string           `json:"name"`
	Description        *string           `json:"description"`
	OnVariationValue   json.RawMessage   `json:"onVariationValue"`
	OffVariationValue  json.RawMessage   `json:"offVariationValue"`
	Key                *string           `json:"key"`
	TrackEvents        *bool             `json:"trackEvents"`
	Targets            []targetParam     `json:"targets"`
	Prerequisites      []prerequisiteArg `json:"prerequisites"`
	Rules              []ruleParam       `json:"rules"`
}

// ClauseParam is a clause as instructions give it, in flag and segment
// rules alike; Clause builds it.
type ClauseParam struct {
	Attribute   string            `json:"attribute"`
	Op          string            `json:"op"`
	Values      []json.RawMessage `json:"values"`
	ContextKind string            `json:"contextKind"`
	Negate      bool              `json:"negate"`
}

type targetParam struct {
	VariationID *string  `json:"variationId"`
	Values      []string `json:"values"`
	ContextKind string   `json:"contextKind"`
}

type prerequisiteArg struct {
	Key         *string `json:"key"`
	VariationID *string `json:"variationId"`
}

type ruleParam struct {
	VariationID        *string        `json:"variationId"`
	RolloutWeights     map[string]int `json:"rolloutWeights"`
	RolloutBucketBy    string         `json:"rolloutBucketBy"`
	RolloutContextKind string         `json:"rolloutContextKind"`
	Description        string         `json:"description"`
	Clauses            []ClauseParam  `json:"clauses"`
	TrackEvents        bool           `json:"trackEvents"`
}

// runner runs instructions on a working copy of a flag.
type runner struct {
	f      *Flag
	envKey string
	others Others
	i      int
	kind   string
}

func (r *runner) invalid(format string, args ...any) error {
	return semanticpatch.Invalid(r.i, r.kind, format, args...)
}

func (r *runner) failed(format string, args ...any) error {
	return semanticpatch.Failed(r.i, r.kind, format, args...)
}

// env returns the working targeting of the environment, stored in the
// working flag from now on (stamp drops it again if nothing changed).
func (r *runner) env() *EnvConfig {
	c, ok := r.f.Environments[r.envKey]
	if !ok || c == nil {
		c = r.f.Env(r.envKey)
		r.f.Environments[r.envKey] = c
	}
	return c
}

// variation resolves the variationId parameter named param to an index.
func (r *runner) variation(id *string, param string) (int, error) {
	if id == nil || *id == "" {
		return 0, r.invalid("field %q is required", semanticpatch.Field(r.i, param))
	}
	idx, ok := r.f.VariationIndex(*id)
	if !ok {
		return 0, r.failed("variation %q does not exist; the flag's variation ids are %s", *id, strings.Join(r.variationIDs(), ", "))
	}
	return idx, nil
}

func (r *runner) variationIDs() []string {
	ids := make([]string, len(r.f.Variations))
	for i, v := range r.f.Variations {
		ids[i] = v.ID
	}
	return ids
}

// rule resolves the ruleId parameter to an index in the environment.
func (r *runner) rule(id *string) (int, error) {
	if id == nil || *id == "" {
		return 0, r.invalid("field %q is required", semanticpatch.Field(r.i, "ruleId"))
	}
	idx, ok := r.env().ruleIndex(*id)
	if !ok {
		return 0, r.failed("rule %q does not exist in environment %q", *id, r.envKey)
	}
	return idx, nil
}

// strings reads a parameter that must be a non-empty array of non-empty strings.
func (r *runner) strings(raw json.RawMessage, param string) ([]string, error) {
	return semanticpatch.Strings(r.i, r.kind, raw, param)
}

// stringValue reads the value parameter as a string.
func (r *runner) stringValue(p *params) (string, error) {
	return semanticpatch.String(r.i, r.kind, p.Value, "value")
}

func (r *runner) contextKind(kind string) (string, error) {
	if err := ValidContextKind(semanticpatch.Field(r.i, "contextKind"), kind); err != nil {
		return "", semanticpatch.At(err, r.i, r.kind, false)
	}
	return normalKind(kind), nil
}

// clauses builds clauses from their parameters, each with a new id.
func (r *runner) clauses(in []ClauseParam, param string) ([]Clause, error) {
	out, err := NewClauses(in, semanticpatch.Field(r.i, param))
	return out, semanticpatch.At(err, r.i, r.kind, false)
}

// NewClauses builds the clauses the array field describes, each with a
// new id (see ClauseParam.Clause).
func NewClauses(in []ClauseParam, field string) ([]Clause, error) {
	out := make([]Clause, 0, len(in))
	for j, c := range in {
		cl, err := c.Clause(fmt.Sprintf("%s[%d]", field, j), NewID())
		if err != nil {
			return nil, err
		}
		out = append(out, cl)
	}
	return out, nil
}

func (r *runner) clause(c ClauseParam, field, id string) (Clause, error) {
	cl, err := c.Clause(field, id)
	return cl, semanticpatch.At(err, r.i, r.kind, false)
}

// Clause builds the clause c describes, with id and its values compacted;
// one no rule may hold is a 400 naming field.
func (c ClauseParam) Clause(field, id string) (Clause, error) {
	values := make([]json.RawMessage, len(c.Values))
	for k, v := range c.Values {
		values[k] = compact(v)
	}
	if err := CheckClause(field, c.Attribute, c.Op, c.ContextKind, values); err != nil {
		return Clause{}, err
	}
	return Clause{ID: id, Attribute: c.Attribute, Op: c.Op, Values: values, ContextKind: c.ContextKind, Negate: c.Negate}, nil
}

// serve builds what a rule or the fallthrough serves: the variation
// variationId names, or a rollout by rolloutWeights.
func (r *runner) serve(variationID *string, weights map[string]int, bucketBy, contextKind, at string) (VariationOrRoll, error) {
	switch {
	case variationID == nil && weights == nil:
		return VariationOrRoll{}, r.invalid("field %q or %q is required", at+"variationId", at+"rolloutWeights")
	case variationID != nil && weights != nil:
		return VariationOrRoll{}, r.invalid("fields %q and %q exclude each other: serve a variation or a rollout", at+"variationId", at+"rolloutWeights")
	case variationID != nil:
		idx, err := r.variation(variationID, strings.TrimPrefix(at, semanticpatch.Field(r.i, ""))+"variationId")
		if err != nil {
			return VariationOrRoll{}, err
		}
		return VariationOrRoll{Variation: &idx}, nil
	}
	if len(weights) == 0 {
		return VariationOrRoll{}, r.invalid("field %q must map at least one variation id to a weight", at+"rolloutWeights")
	}
	if err := ValidContextKind(at+"rolloutContextKind", contextKind); err != nil {
		return VariationOrRoll{}, semanticpatch.At(err, r.i, r.kind, false)
	}
	total := 0
	for id, w := range weights {
		if w < 0 || w > RolloutTotal {
			return VariationOrRoll{}, r.invalid("field %q: the weight of %q must be between 0 and %d", at+"rolloutWeights", id, RolloutTotal)
		}
		total += w
	}
	if total != RolloutTotal {
		return VariationOrRoll{}, r.invalid("field %q: weights add up to %d, they must add up to %d (100%%)", at+"rolloutWeights", total, RolloutTotal)
	}
	roll := &Rollout{BucketBy: bucketBy, ContextKind: contextKind}
	for id, w := range weights {
		idx, ok := r.f.VariationIndex(id)
		if !ok {
			return VariationOrRoll{}, r.failed("field %q: variation %q does not exist; the flag's variation ids are %s", at+"rolloutWeights", id, strings.Join(r.variationIDs(), ", "))
		}
		roll.Variations = append(roll.Variations, WeightedVariation{Variation: idx, Weight: w})
	}
	sort.Slice(roll.Variations, func(a, b int) bool { return roll.Variations[a].Variation < roll.Variations[b].Variation })
	return VariationOrRoll{Rollout: roll}, nil
}

func compact(raw json.RawMessage) json.RawMessage {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	out, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return out
}

// --- Individual targets.

func (r *runner) addUserTargets(p *params) error { return r.add(p, UserKind) }

func (r *runner) removeUserTargets(p *params) error { return r.remove(p, UserKind) }

func (r *runner) addTargets(p *params) error {
	kind, err := r.contextKind(p.ContextKind)
	if err != nil {
		return err
	}
	return r.add(p, kind)
}

func (r *runner) removeTargets(p *params) error {
	kind, err := r.contextKind(p.ContextKind)
	if err != nil {
		return err
	}
	return r.remove(p, kind)
}

func (r *runner) add(p *params, kind string) error {
	keys, err := r.strings(p.Values, "values")
	if err != nil {
		return err
	}
	idx, err := r.variation(p.VariationID, "variationId")
	if err != nil {
		return err
	}
	if key, other, ok := r.env().addTargets(kind, idx, keys); !ok {
		return r.failed("%s key %q is already targeted by variation %q in environment %q; a context is targeted by at most one variation", kind, key, r.f.Variations[other].ID, r.envKey)
	}
	return nil
}

func (r *runner) remove(p *params, kind string) error {
	keys, err := r.strings(p.Values, "values")
	if err != nil {
		return err
	}
	idx, err := r.variation(p.VariationID, "variationId")
	if err != nil {
		return err
	}
	r.env().removeTargets(kind, idx, keys)
	return nil
}

func (r *runner) clearUserTargets(p *params) error { return r.clear(p, true) }

func (r *runner) clearTargets(p *params) error { return r.clear(p, false) }

func (r *runner) clear(p *params, userOnly bool) error {
	idx, err := r.variation(p.VariationID, "variationId")
	if err != nil {
		return err
	}
	r.env().clearTargets(idx, userOnly)
	return nil
}

func (r *runner) replaceUserTargets(p *params) error { return r.replaceTargetLists(p, true) }

func (r *runner) replaceTargets(p *params) error { return r.replaceTargetLists(p, false) }

func (r *runner) replaceTargetLists(p *params, userOnly bool) error {
	if p.Targets == nil {
		return r.invalid("field %q is required", semanticpatch.Field(r.i, "targets"))
	}
	env := r.env()
	env.Targets = []Target{}
	if !userOnly {
		env.ContextTargets = []Target{}
	}
	for j, t := range p.Targets {
		at := fmt.Sprintf("targets[%d].", j)
		kind := UserKind
		if !userOnly {
			var err error
			if kind, err = r.contextKind(t.ContextKind); err != nil {
				return err
			}
		}
		idx, err := r.variation(t.VariationID, at+"variationId")
		if err != nil {
			return err
		}
		if len(t.Values) == 0 {
			return r.invalid("field %q must hold at least one context key", semanticpatch.Field(r.i, at+"values"))
		}
		if key, other, ok := env.addTargets(kind, idx, t.Values); !ok {
			return r.failed("field %q: %s key %q is also in the target of variation %q", semanticpatch.Field(r.i, at+"values"), kind, key, r.f.Variations[other].ID)
		}
	}
	return nil
}

// --- Rules and clauses.

func (r *runner) newRule(rp ruleParam, at string) (Rule, error) {
	if rp.Clauses == nil {
		return Rule{}, r.invalid("field %q is required", at+"clauses")
	}
	if len(rp.Clauses) == 0 {
		return Rule{}, r.invalid("field %q must hold at least one clause", at+"clauses")
	}
	clauses, err := r.clauses(rp.Clauses, strings.TrimPrefix(at, semanticpatch.Field(r.i, ""))+"clauses")
	if err != nil {
		return Rule{}, err
	}
	serve, err := r.serve(rp.VariationID, rp.RolloutWeights, rp.RolloutBucketBy, rp.RolloutContextKind, at)
	if err != nil {
		return Rule{}, err
	}
	return Rule{ID: NewID(), Description: rp.Description, Clauses: clauses, TrackEvents: rp.TrackEvents, VariationOrRoll: serve}, nil
}

func (r *runner) addRule(p *params) error {
	rp := ruleParam{VariationID: p.VariationID, RolloutWeights: p.RolloutWeights, RolloutBucketBy: p.RolloutBucketBy,
		RolloutContextKind: p.RolloutContextKind, Clauses: p.Clauses, TrackEvents: p.TrackEvents != nil && *p.TrackEvents}
	if p.Description != nil {
		rp.Description = *p.Description
	}
	rule, err := r.newRule(rp, semanticpatch.Field(r.i, ""))
	if err != nil {
		return err
	}
	env := r.env()
	at := len(env.Rules)
	if p.BeforeRuleID != nil {
		if at, err = r.rule(p.BeforeRuleID); err != nil {
			return err
		}
	}
	env.Rules = slices.Insert(env.Rules, at, rule)
	return nil
}

// removeRule removes the rule; as the reference says, a rule that does not
// exist is not an error.
func (r *runner) removeRule(p *params) error {
	if p.RuleID == nil || *p.RuleID == "" {
		return r.invalid("field %q is required", semanticpatch.Field(r.i, "ruleId"))
	}
	env := r.env()
	env.Rules = slices.DeleteFunc(env.Rules, func(rule Rule) bool { return rule.ID == *p.RuleID })
	return nil
}

func (r *runner) replaceRules(p *params) error {
	if p.Rules == nil {
		return r.invalid("field %q is required", semanticpatch.Field(r.i, "rules"))
	}
	rules := make([]Rule, 0, len(p.Rules))
	for j, rp := range p.Rules {
		rule, err := r.newRule(rp, semanticpatch.Field(r.i, fmt.Sprintf("rules[%d].", j)))
		if err != nil {
			return err
		}
		rules = append(rules, rule)
	}
	r.env().Rules = rules
	return nil
}

func (r *runner) reorderRules(p *params) error {
	if p.RuleIDs == nil {
		return r.invalid("field %q is required", semanticpatch.Field(r.i, "ruleIds"))
	}
	env := r.env()
	rules, ok := semanticpatch.Reorder(env.Rules, func(rule Rule) string { return rule.ID }, p.RuleIDs)
	if !ok {
		current := make([]string, len(env.Rules))
		for j, rule := range env.Rules {
			current[j] = rule.ID
		}
		return r.failed("field %q must list every rule id of environment %q once: %s", semanticpatch.Field(r.i, "ruleIds"), r.envKey, strings.Join(current, ", "))
	}
	env.Rules = rules
	return nil
}

func (r *runner) updateRuleVariationOrRollout(p *params) error {
	idx, err := r.rule(p.RuleID)
	if err != nil {
		return err
	}
	serve, err := r.serve(p.VariationID, p.RolloutWeights, p.RolloutBucketBy, p.RolloutContextKind, semanticpatch.Field(r.i, ""))
	if err != nil {
		return err
	}
	r.env().Rules[idx].VariationOrRoll = serve
	return nil
}

func (r *runner) updateRuleTrackEvents(p *params) error {
	idx, err := r.rule(p.RuleID)
	if err != nil {
		return err
	}
	if p.TrackEvents == nil {
		return r.invalid("field %q is required", semanticpatch.Field(r.i, "trackEvents"))
	}
	r.env().Rules[idx].TrackEvents = *p.TrackEvents
	return nil
}

func (r *runner) updateRuleDescription(p *params) error {
	idx, err := r.rule(p.RuleID)
	if err != nil {
		return err
	}
	if p.Description == nil {
		return r.invalid("field %q is required", semanticpatch.Field(r.i, "description"))
	}
	r.env().Rules[idx].Description = *p.Description
	return nil
}

func (r *runner) addClauses(p *params) error {
	idx, err := r.rule(p.RuleID)
	if err != nil {
		return err
	}
	if len(p.Clauses) == 0 {
		return r.invalid("field %q must hold at least one clause", semanticpatch.Field(r.i, "clauses"))
	}
	clauses, err := r.clauses(p.Clauses, "clauses")
	if err != nil {
		return err
	}
	rule := &r.env().Rules[idx]
	rule.Clauses = append(rule.Clauses, clauses...)
	return nil
}

// clauseAt resolves ruleId and clauseId.
func (r *runner) clauseAt(p *params) (*Clause, error) {
	idx, err := r.rule(p.RuleID)
	if err != nil {
		return nil, err
	}
	if p.ClauseID == nil || *p.ClauseID == "" {
		return nil, r.invalid("field %q is required", semanticpatch.Field(r.i, "clauseId"))
	}
	rule := &r.env().Rules[idx]
	c, err := FindClause(rule.ID, rule.Clauses, *p.ClauseID)
	return c, semanticpatch.At(err, r.i, r.kind, true)
}

// FindClause returns the clause id of the rule ruleID's clauses; a 400
// naming both when the rule holds none.
func FindClause(ruleID string, clauses []Clause, id string) (*Clause, error) {
	j := slices.IndexFunc(clauses, func(c Clause) bool { return c.ID == id })
	if j < 0 {
		return nil, fault.New(fault.Invalid, "clause %q does not exist in rule %q", id, ruleID)
	}
	return &clauses[j], nil
}

// removeClauses removes clauses of a rule; as removeRule, clauses (or a
// rule) that do not exist are not an error: what was asked already holds.
func (r *runner) removeClauses(p *params) error {
	if p.RuleID == nil || *p.RuleID == "" {
		return r.invalid("field %q is required", semanticpatch.Field(r.i, "ruleId"))
	}
	if len(p.ClauseIDs) == 0 {
		return r.invalid("field %q must hold at least one clause id", semanticpatch.Field(r.i, "clauseIds"))
	}
	idx, ok := r.env().ruleIndex(*p.RuleID)
	if !ok {
		return nil
	}
	rule := &r.env().Rules[idx]
	clauses, err := RemoveClauses(rule.ID, rule.Clauses, p.ClauseIDs)
	rule.Clauses = clauses
	return semanticpatch.At(err, r.i, r.kind, true)
}

// RemoveClauses returns the rule ruleID's clauses without those of ids
// (ids it does not hold are not an error); a 400 when it would be left
// without clauses. It reuses the array of clauses.
func RemoveClauses(ruleID string, clauses []Clause, ids []string) ([]Clause, error) {
	clauses = slices.DeleteFunc(clauses, func(c Clause) bool { return slices.Contains(ids, c.ID) })
	if len(clauses) == 0 {
		return nil, fault.New(fault.Invalid, "rule %q would be left without clauses; remove the rule instead", ruleID)
	}
	return clauses, nil
}

func (r *runner) updateClause(p *params) error {
	c, err := r.clauseAt(p)
	if err != nil {
		return err
	}
	if p.Clause == nil {
		return r.invalid("field %q is required", semanticpatch.Field(r.i, "clause"))
	}
	updated, err := r.clause(*p.Clause, semanticpatch.Field(r.i, "clause"), c.ID)
	if err != nil {
		return err
	}
	*c = updated
	return nil
}

func (r *runner) clauseValues(p *params) ([]json.RawMessage, error) {
	values, err := ClauseValues(p.Values, semanticpatch.Field(r.i, "values"))
	return values, semanticpatch.At(err, r.i, r.kind, false)
}

// ClauseValues reads the values an instruction adds to or removes from a
// clause: a non-empty array of JSON values other than null, compacted; a
// 400 naming field otherwise.
func ClauseValues(raw json.RawMessage, field string) ([]json.RawMessage, error) {
	var values []json.RawMessage
	if len(raw) == 0 || string(raw) == "null" || json.Unmarshal(raw, &values) != nil || len(values) == 0 {
		return nil, fault.New(fault.Invalid, "field %q is required and must be a non-empty array", field)
	}
	for k, v := range values {
		if t := jsonType(v); t == "" || t == "null" {
			return nil, fault.New(fault.Invalid, "field \"%s[%d]\" must be a JSON value other than null", field, k)
		}
		values[k] = compact(v)
	}
	return values, nil
}

func (r *runner) addValuesToClause(p *params) error {
	c, err := r.clauseAt(p)
	if err != nil {
		return err
	}
	values, err := r.clauseValues(p)
	if err != nil {
		return err
	}
	c.AddValues(values)
	return nil
}

// AddValues adds to the clause the values it does not hold yet.
func (c *Clause) AddValues(values []json.RawMessage) {
	for _, v := range values {
		if !ContainsValue(c.Values, v) {
			c.Values = append(c.Values, v)
		}
	}
}

// removeValuesFromClause removes values from a clause; values, a clause or
// a rule that are not there are not an error: what was asked already holds.
func (r *runner) removeValuesFromClause(p *params) error {
	if p.RuleID == nil || *p.RuleID == "" {
		return r.invalid("field %q is required", semanticpatch.Field(r.i, "ruleId"))
	}
	if p.ClauseID == nil || *p.ClauseID == "" {
		return r.invalid("field %q is required", semanticpatch.Field(r.i, "clauseId"))
	}
	values, err := r.clauseValues(p)
	if err != nil {
		return err
	}
	idx, ok := r.env().ruleIndex(*p.RuleID)
	if !ok {
		return nil
	}
	rule := &r.env().Rules[idx]
	j := slices.IndexFunc(rule.Clauses, func(c Clause) bool { return c.ID == *p.ClauseID })
	if j < 0 {
		return nil
	}
	return semanticpatch.At(rule.Clauses[j].RemoveValues(values), r.i, r.kind, true)
}

// RemoveValues removes values from the clause (values it does not hold
// are not an error); a 400 when it would be left without values.
func (c *Clause) RemoveValues(values []json.RawMessage) error {
	c.Values = slices.DeleteFunc(c.Values, func(v json.RawMessage) bool { return ContainsValue(values, v) })
	if len(c.Values) == 0 {
		return fault.New(fault.Invalid, "clause %q would be left without values; remove the clause instead", c.ID)
	}
	return nil
}

// ContainsValue reports whether list holds v, however either is encoded.
func ContainsValue(list []json.RawMessage, v json.RawMessage) bool {
	want, _ := canonical(v)
	return slices.ContainsFunc(list, func(x json.RawMessage) bool {
		got, _ := canonical(x)
		return got == want
	})
}

// --- Default rule, off variation, events.

func (r *runner) updateFallthrough(p *params) error {
	serve, err := r.serve(p.VariationID, p.RolloutWeights, p.RolloutBucketBy, p.RolloutContextKind, semanticpatch.Field(r.i, ""))
	if err != nil {
		return err
	}
	r.env().Fallthrough = serve
	return nil
}

func (r *runner) updateOffVariation(p *params) error {
	idx, err := r.variation(p.VariationID, "variationId")
	if err != nil {
		return err
	}
	r.env().OffVariation = &idx
	return nil
}

func (r *runner) updateTrackEvents(p *params) error {
	if p.TrackEvents == nil {
		return r.invalid("field %q is required", semanticpatch.Field(r.i, "trackEvents"))
	}
	r.env().TrackEvents = *p.TrackEvents
	return nil
}

// --- Prerequisites.

// prerequisite resolves a prerequisite flag key and one of its variation ids.
func (r *runner) prerequisite(key, variationID *string, at string) (Prerequisite, error) {
	if key == nil || *key == "" {
		return Prerequisite{}, r.invalid("field %q is required", semanticpatch.Field(r.i, at+"key"))
	}
	if variationID == nil || *variationID == "" {
		return Prerequisite{}, r.invalid("field %q is required", semanticpatch.Field(r.i, at+"variationId"))
	}
	o := r.others[*key]
	if o == nil || *key == r.f.Key {
		if *key == r.f.Key {
			return Prerequisite{}, r.failed("a flag cannot be its own prerequisite")
		}
		return Prerequisite{}, r.failed("flag %q does not exist in project %q", *key, r.f.ProjectKey)
	}
	idx, ok := o.VariationIndex(*variationID)
	if !ok {
		return Prerequisite{}, r.failed("flag %q has no variation %q", *key, *variationID)
	}
	return Prerequisite{Key: *key, Variation: idx}, nil
}

func (r *runner) addPrerequisite(p *params) error {
	pre, err := r.prerequisite(p.Key, p.VariationID, "")
	if err != nil {
		return err
	}
	env := r.env()
	if slices.ContainsFunc(env.Prerequisites, func(x Prerequisite) bool { return x.Key == pre.Key }) {
		return r.failed("flag %q is already a prerequisite in environment %q; use updatePrerequisite", pre.Key, r.envKey)
	}
	env.Prerequisites = append(env.Prerequisites, pre)
	return nil
}

// removePrerequisite removes the prerequisite; as the reference says, one
// that does not exist is not an error.
func (r *runner) removePrerequisite(p *params) error {
	if p.Key == nil || *p.Key == "" {
		return r.invalid("field %q is required", semanticpatch.Field(r.i, "key"))
	}
	env := r.env()
	env.Prerequisites = slices.DeleteFunc(env.Prerequisites, func(x Prerequisite) bool { return x.Key == *p.Key })
	return nil
}

func (r *runner) updatePrerequisite(p *params) error {
	pre, err := r.prerequisite(p.Key, p.VariationID, "")
	if err != nil {
		return err
	}
	env := r.env()
	j := slices.IndexFunc(env.Prerequisites, func(x Prerequisite) bool { return x.Key == pre.Key })
	if j < 0 {
		return r.failed("flag %q is not a prerequisite in environment %q; use addPrerequisite", pre.Key, r.envKey)
	}
	env.Prerequisites[j] = pre
	return nil
}

func (r *runner) replacePrerequisites(p *params) error {
	if p.Prerequisites == nil {
		return r.invalid("field %q is required", semanticpatch.Field(r.i, "prerequisites"))
	}
	out := make([]Prerequisite, 0, len(p.Prerequisites))
	for j, a := range p.Prerequisites {
		pre, err := r.prerequisite(a.Key, a.VariationID, fmt.Sprintf("prerequisites[%d].", j))
		if err != nil {
			return err
		}
		out = append(out, pre)
	}
	r.env().Prerequisites = out
	return nil
}

// --- Variations.

func (r *runner) addVariation(p *params) error {
	if t := jsonType(p.Value); t == "" || t == "null" {
		return r.invalid("field %q is required and must not be null", semanticpatch.Field(r.i, "value"))
	}
	v := Variation{ID: NewID(), Value: compact(p.Value)}
	if p.Name != nil {
		v.Name = *p.Name
	}
	if p.Description != nil {
		v.Description = *p.Description
	}
	r.f.Variations = append(r.f.Variations, v)
	return nil
}

func (r *runner) updateVariation(p *params) error {
	idx, err := r.variation(p.VariationID, "variationId")
	if err != nil {
		return err
	}
	v := &r.f.Variations[idx]
	if len(p.Value) > 0 {
		if t := jsonType(p.Value); t == "" || t == "null" {
			return r.invalid("field %q must not be null", semanticpatch.Field(r.i, "value"))
		}
		v.Value = compact(p.Value)
	}
	if p.Name != nil {
		v.Name = *p.Name
	}
	if p.Description != nil {
		v.Description = *p.Description
	}
	return nil
}

// removeVariation removes a variation nothing serves any more, and shifts
// every index after it. A variation that does not exist is not an error:
// what was asked already holds.
func (r *runner) removeVariation(p *params) error {
	if p.VariationID == nil || *p.VariationID == "" {
		return r.invalid("field %q is required", semanticpatch.Field(r.i, "variationId"))
	}
	idx, ok := r.f.VariationIndex(*p.VariationID)
	if !ok {
		return nil
	}
	if uses := r.f.variationUses(idx); len(uses) > 0 {
		return r.failed("variation %q is still in use (%s); change those first", *p.VariationID, strings.Join(uses, "; "))
	}
	r.f.Variations = slices.Delete(r.f.Variations, idx, idx+1)
	r.f.shiftVariations(idx)
	return nil
}

func (r *runner) updateDefaultVariation(p *params) error {
	if len(p.OnVariationValue) == 0 && len(p.OffVariationValue) == 0 {
		return r.invalid("field %q or %q is required", semanticpatch.Field(r.i, "onVariationValue"), semanticpatch.Field(r.i, "offVariationValue"))
	}
	for _, d := range []struct {
		raw   json.RawMessage
		param string
		dst   *int
	}{{p.OnVariationValue, "onVariationValue", &r.f.Defaults.OnVariation}, {p.OffVariationValue, "offVariationValue", &r.f.Defaults.OffVariation}} {
		if len(d.raw) == 0 {
			continue
		}
		idx, ok := r.f.variationByValue(d.raw)
		if !ok {
			return r.failed("field %q: no variation has the value %s", semanticpatch.Field(r.i, d.param), compact(d.raw))
		}
		*d.dst = idx
	}
	return nil
}

// variationUses describes where variation idx is served: the defaults, and
// in each stored environment the targets, rules, fallthrough and off
// variation (a rollout share of weight 0 does not count).
func (f *Flag) variationUses(idx int) []string {
	var uses []string
	if f.Defaults.OnVariation == idx {
		uses = append(uses, "the default on variation")
	}
	if f.Defaults.OffVariation == idx {
		uses = append(uses, "the default off variation")
	}
	serves := func(v VariationOrRoll) bool {
		if v.Variation != nil {
			return *v.Variation == idx
		}
		if v.Rollout != nil {
			for _, w := range v.Rollout.Variations {
				if w.Variation == idx && w.Weight > 0 {
					return true
				}
			}
		}
		return false
	}
	for _, k := range sortedKeys(f.Environments) {
		c := f.Environments[k]
		for _, t := range append(slices.Clone(c.Targets), c.ContextTargets...) {
			if t.Variation == idx && len(t.Values) > 0 {
				uses = append(uses, fmt.Sprintf("individual targets in %q", k))
				break
			}
		}
		for _, rule := range c.Rules {
			if serves(rule.VariationOrRoll) {
				uses = append(uses, fmt.Sprintf("rule %q in %q", rule.ID, k))
			}
		}
		if serves(c.Fallthrough) {
			uses = append(uses, fmt.Sprintf("the default rule in %q", k))
		}
		if c.OffVariation != nil && *c.OffVariation == idx {
			uses = append(uses, fmt.Sprintf("the off variation in %q", k))
		}
	}
	return uses
}

// shiftVariations renumbers every reference after variation idx, which was
// removed, and drops what still named it (empty targets, weight-0 shares).
func (f *Flag) shiftVariations(idx int) {
	shift := func(v *int) {
		if *v > idx {
			*v--
		}
	}
	shiftServe := func(v *VariationOrRoll) {
		if v.Variation != nil {
			n := *v.Variation
			shift(&n)
			v.Variation = &n
		}
		if v.Rollout != nil {
			v.Rollout.Variations = slices.DeleteFunc(v.Rollout.Variations, func(w WeightedVariation) bool { return w.Variation == idx })
			for i := range v.Rollout.Variations {
				shift(&v.Rollout.Variations[i].Variation)
			}
		}
	}
	shift(&f.Defaults.OnVariation)
	shift(&f.Defaults.OffVariation)
	for _, c := range f.Environments {
		for _, list := range []*[]Target{&c.Targets, &c.ContextTargets} {
			*list = slices.DeleteFunc(*list, func(t Target) bool { return t.Variation == idx })
			for i := range *list {
				shift(&(*list)[i].Variation)
			}
		}
		for i := range c.Rules {
			shiftServe(&c.Rules[i].VariationOrRoll)
		}
		shiftServe(&c.Fallthrough)
		if c.OffVariation != nil {
			n := *c.OffVariation
			shift(&n)
			c.OffVariation = &n
		}
	}
}

// --- Flag settings.

func (r *runner) updateName(p *params) error {
	s, err := r.stringValue(p)
	if err != nil {
		return err
	}
	r.f.Name = s
	return nil
}

func (r *runner) updateDescription(p *params) error {
	s, err := r.stringValue(p)
	if err != nil {
		return err
	}
	r.f.Description = s
	return nil
}

func (r *runner) addTags(p *params) error {
	return semanticpatch.AddStrings(r.i, r.kind, p.Values, "values", &r.f.Tags)
}

func (r *runner) removeTags(p *params) error {
	return semanticpatch.RemoveStrings(r.i, r.kind, p.Values, "values", &r.f.Tags)
}

func (r *runner) clientSide(p *params, on bool) error {
	s, err := r.stringValue(p)
	if err != nil {
		return err
	}
	switch s {
	case "usingMobileKey":
		r.f.ClientSideAvailability.UsingMobileKey = on
	case "usingEnvironmentId":
		r.f.ClientSideAvailability.UsingEnvironmentID = on
	default:
		return r.invalid("field %q must be \"usingMobileKey\" or \"usingEnvironmentId\", not %q", semanticpatch.Field(r.i, "value"), s)
	}
	return nil
}

func (r *runner) updateMaintainerMember(p *params) error {
	s, err := r.stringValue(p)
	if err != nil {
		return err
	}
	if s == "" {
		return r.invalid("field %q must be a member id; use removeMaintainer to remove the maintainer", semanticpatch.Field(r.i, "value"))
	}
	r.f.MaintainerID = s
	return nil
}
