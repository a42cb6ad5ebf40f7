package segment

// The semantic patch engine for segments: LaunchDarkly's patchSegment
// instructions (targets by context kind and the user forms, rules and
// clauses, rollouts, name, description, tags). Every error is a 400
// *semanticpatch.Error naming the index and kind of the instruction, as
// patchSegment answers no 422: a malformed instruction and one that does
// not apply to the segment (an unknown rule id, a key both included and
// excluded) alike.

import (
	"context"
	"encoding/json"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/resource"
	"github.com/flagplane/flagplane/shared/semanticpatch"
)

// instruction is how the engine runs one kind.
type instruction struct {
	action string
	// targets: the instruction changes listed keys, which a big segment
	// keeps apart (its own operations change them).
	targets bool
	run     func(r *runner, p *params) error
}

// instructions are the kinds the engine knows, with LaunchDarkly's names
// and the policy action each performs.
var instructions = map[string]instruction{
	// Individual targets, by context kind and in the user forms.
	"addIncludedTargets":    {action: "updateIncluded", targets: true, run: func(r *runner, p *params) error { return r.addTargets(p, true, false) }},
	"removeIncludedTargets": {action: "updateIncluded", targets: true, run: func(r *runner, p *params) error { return r.removeTargets(p, true, false) }},
	"addExcludedTargets":    {action: "updateExcluded", targets: true, run: func(r *runner, p *params) error { return r.addTargets(p, false, false) }},
	"removeExcludedTargets": {action: "updateExcluded", targets: true, run: func(r *runner, p *params) error { return r.removeTargets(p, false, false) }},
	"addIncludedUsers":      {action: "updateIncluded", targets: true, run: func(r *runner, p *params) error { return r.addTargets(p, true, true) }},
	"removeIncludedUsers":   {action: "updateIncluded", targets: true, run: func(r *runner, p *params) error { return r.removeTargets(p, true, true) }},
	"addExcludedUsers":      {action: "updateExcluded", targets: true, run: func(r *runner, p *params) error { return r.addTargets(p, false, true) }},
	"removeExcludedUsers":   {action: "updateExcluded", targets: true, run: func(r *runner, p *params) error { return r.removeTargets(p, false, true) }},

	// Rules and clauses.
	"addRule":                         {action: "updateRules", run: (*runner).addRule},
	"removeRule":                      {action: "updateRules", run: (*runner).removeRule},
	"reorderRules":                    {action: "updateRules", run: (*runner).reorderRules},
	"updateRuleDescription":           {action: "updateRules", run: (*runner).updateRuleDescription},
	"updateRuleRolloutAndContextKind": {action: "updateRules", run: (*runner).updateRuleRollout},
	"addClauses":                      {action: "updateRules", run: (*runner).addClauses},
	"removeClauses":                   {action: "updateRules", run: (*runner).removeClauses},
	"updateClause":                    {action: "updateRules", run: (*runner).updateClause},
	"addValuesToClause":               {action: "updateRules", run: (*runner).addValuesToClause},
	"removeValuesFromClause":          {action: "updateRules", run: (*runner).removeValuesFromClause},

	// Details.
	"updateName":        {action: "updateName", run: func(r *runner, p *params) error { return r.setValue(p, &r.s.Name) }},
	"updateDescription": {action: "updateDescription", run: func(r *runner, p *params) error { return r.setValue(p, &r.s.Description) }},
	"addTags":           {action: "updateTags", run: (*runner).addTags},
	"removeTags":        {action: "updateTags", run: (*runner).removeTags},
}

// memberInstructions are LaunchDarkly's instructions for the members of a
// big segment, which the segment item does not hold: a patch of them is
// one membership update (UpdateTargets) and holds nothing else, so that it
// stays all or nothing.
var memberInstructions = map[string]struct {
	action        string
	included, add bool
}{
	"addBigSegmentIncludedTargets":    {"updateIncluded", true, true},
	"removeBigSegmentIncludedTargets": {"updateIncluded", true, false},
	"addBigSegmentExcludedTargets":    {"updateExcluded", false, true},
	"removeBigSegmentExcludedTargets": {"updateExcluded", false, false},
	// An import is processed by the jobs worker as soon as its file is
	// uploaded (createBigSegmentImport); the instruction checks that the
	// import is the segment's and changes nothing more.
	"processBigSegmentImport": {action: "updateIncluded"},
}

// MaxTargetOperations is the most keys one patch may add or remove, as
// LaunchDarkly's batch limit on target operations.
const MaxTargetOperations = 1500

// Kinds returns the instruction kinds the engine knows, sorted.
func Kinds() []string {
	out := make([]string, 0, len(instructions)+len(memberInstructions))
	for k := range instructions {
		out = append(out, k)
	}
	for k := range memberInstructions {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// InstructionActions returns the actions the segment instructions perform,
// each once, or a 400 naming the first instruction that is not one.
func InstructionActions(ins []semanticpatch.Instruction) ([]string, error) {
	var out []string
	for i, in := range ins {
		action := instructions[in.Kind].action
		if m, ok := memberInstructions[in.Kind]; ok {
			action = m.action
		}
		if action == "" {
			return nil, semanticpatch.Invalid(i, in.Kind, "kind %q is not a segment instruction; supported kinds: %s", in.Kind, strings.Join(Kinds(), ", "))
		}
		if !slices.Contains(out, action) {
			out = append(out, action)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Apply runs the instructions in order on s, checking the segment after
// each. Either every instruction applies and s holds the result, or s is
// left as it was and the error (a 400) names the failing instruction. The
// versions and dates are the store's to set. Big segment member
// instructions change no segment item: only SemanticPatch runs them.
func Apply(s *Segment, ins []semanticpatch.Instruction) error {
	if _, err := InstructionActions(ins); err != nil {
		return err
	}
	work := s.Clone()
	r := &runner{s: work}
	for i, in := range ins {
		r.i, r.kind = i, in.Kind
		h, ok := instructions[in.Kind]
		if !ok {
			return r.invalid("%s changes a big segment's members, not the segment: send it in a semantic patch of its own (PATCH %s)", in.Kind, work.Href())
		}
		if h.targets && work.Unbounded {
			return r.invalid("segment %q is a big segment: change its members with the big segment instructions (addBigSegmentIncludedTargets and the like), updateBigSegmentTargets (POST %s/users) or updateBigSegmentContextTargets (POST %s/contexts)",
				work.Key, work.Href(), work.Href())
		}
		var p params
		if err := semanticpatch.Decode(in, i, &p); err != nil {
			return err
		}
		if err := h.run(r, &p); err != nil {
			return semanticpatch.At(err, i, in.Kind, false)
		}
		work.normalize()
		if err := work.Check(); err != nil {
			return semanticpatch.At(err, i, in.Kind, false)
		}
	}
	itemVersion := s.ItemVersion
	*s = *work
	s.ItemVersion = itemVersion
	return nil
}

// semanticRetries is how many times a semantic patch that lost a race is
// run again on the version that won: instructions say what to change, not
// from which version.
const semanticRetries = 4

// SemanticPatch applies a semantic patch to a segment: every instruction
// or none, through the segment's audited update. The environment is the
// path's; an environmentKey in the body, which LaunchDarkly requires,
// must name the same one.
func (s *Service) SemanticPatch(ctx context.Context, projectKey, envKey, key string, sp semanticpatch.Patch) (*Segment, error) {
	if _, err := InstructionActions(sp.Instructions); err != nil {
		return nil, err
	}
	if sp.EnvironmentKey != "" && sp.EnvironmentKey != envKey {
		return nil, fault.New(fault.Invalid, "field %q is %q, but the path names environment %q", "environmentKey", sp.EnvironmentKey, envKey)
	}
	members, err := memberPatch(sp.Instructions)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		var seg *Segment
		if members {
			seg, err = s.patchMembers(ctx, projectKey, envKey, key, sp.Instructions)
		} else {
			// The audit entry's actions are those of the fields that
			// changed (the instructions' actions, less those that changed
			// nothing), and a patch that changes nothing writes nothing.
			seg, err = s.Change(ctx, projectKey, envKey, key, func(next *Segment) error {
				return Apply(next, sp.Instructions)
			}, resource.Change{Comment: sp.Comment})
		}
		if err == nil || !fault.Is(err, fault.OptimisticLock) || attempt == semanticRetries {
			return seg, err
		}
		time.Sleep(time.Duration(rand.IntN(5*(attempt+1))) * time.Millisecond)
	}
}

// memberPatch reports whether the instructions are big segment member
// instructions, refusing a patch that mixes them with others.
func memberPatch(ins []semanticpatch.Instruction) (bool, error) {
	if len(ins) == 0 {
		return false, nil
	}
	_, members := memberInstructions[ins[0].Kind]
	for i, in := range ins {
		if _, ok := memberInstructions[in.Kind]; ok != members {
			return false, semanticpatch.Invalid(i, in.Kind, "big segment member instructions (%s) and other instructions cannot share a patch: send them in patches of their own",
				strings.Join(slices.Sorted(maps.Keys(memberInstructions)), ", "))
		}
	}
	return members, nil
}

// patchMembers runs big segment member instructions, in order, as one
// membership update of segment key, which must be a big segment: of a key
// added and removed the last instruction counts.
func (s *Service) patchMembers(ctx context.Context, projectKey, envKey, key string, ins []semanticpatch.Instruction) (*Segment, error) {
	seg, err := s.Get(ctx, projectKey, envKey, key)
	if err != nil {
		return nil, err
	}
	// Per list, each key's last state (on or off), in the order first seen.
	type list struct {
		keys []string
		on   map[string]bool
	}
	lists := map[bool]*list{true: {on: map[string]bool{}}, false: {on: map[string]bool{}}}
	for i, in := range ins {
		if !seg.Unbounded {
			return nil, semanticpatch.Invalid(i, in.Kind, "segment %q is not a big segment: change its targets with addIncludedTargets, removeIncludedTargets, addExcludedTargets or removeExcludedTargets", key)
		}
		m := memberInstructions[in.Kind]
		var p struct {
			Values   json.RawMessage `json:"values"`
			ImportID *string         `json:"importId"`
		}
		if err := semanticpatch.Decode(in, i, &p); err != nil {
			return nil, err
		}
		if in.Kind == "processBigSegmentImport" {
			if p.ImportID == nil || *p.ImportID == "" {
				return nil, semanticpatch.Invalid(i, in.Kind, "field %q is required", semanticpatch.Field(i, "importId"))
			}
			if _, err := s.Job(ctx, projectKey, envKey, key, JobImport, *p.ImportID); err != nil {
				return nil, semanticpatch.At(err, i, in.Kind, false)
			}
			continue
		}
		keys, err := semanticpatch.Strings(i, in.Kind, p.Values, "values")
		if err != nil {
			return nil, err
		}
		l, other := lists[m.included], lists[!m.included]
		for _, k := range keys {
			if m.add && other.on[k] {
				return nil, semanticpatch.Invalid(i, in.Kind, "key %q is added to both the included and the excluded members of segment %q", k, key)
			}
			if _, seen := l.on[k]; !seen {
				l.keys = append(l.keys, k)
			}
			l.on[k] = m.add
		}
	}
	changes := func(l *list) *KeyChanges {
		c := &KeyChanges{Add: []string{}, Remove: []string{}}
		for _, k := range l.keys {
			if l.on[k] {
				c.Add = append(c.Add, k)
			} else {
				c.Remove = append(c.Remove, k)
			}
		}
		return c
	}
	t := TargetChanges{Included: changes(lists[true]), Excluded: changes(lists[false])}
	if len(t.Actions()) == 0 {
		return seg, nil
	}
	if err := s.UpdateTargets(ctx, projectKey, envKey, key, "", t); err != nil {
		return nil, err
	}
	return s.Get(ctx, projectKey, envKey, key)
}

// params are the parameters of every instruction kind; each kind reads
// the ones it takes and ignores the others, as unknown fields are.
type params struct {
	Values       json.RawMessage    `json:"values"`
	Value        json.RawMessage    `json:"value"`
	ContextKind  *string            `json:"contextKind"`
	RuleID       *string            `json:"ruleId"`
	BeforeRuleID *string            `json:"beforeRuleId"`
	RuleIDs      []string           `json:"ruleIds"`
	Clauses      []flag.ClauseParam `json:"clauses"`
	ClauseID     *string            `json:"clauseId"`
	ClauseIDs    []string           `json:"clauseIds"`
	Clause       *flag.ClauseParam  `json:"clause"`
	Description  *string            `json:"description"`
	// A rule's rollout: LaunchDarkly's documentation names the weight
	// "weight" and the bucketing attribute as the rule's field
	// ("bucketBy"); the "rollout" names are those of flag rules, taken too
	// so that either form works.
	Weight             json.RawMessage `json:"weight"`
	RolloutWeight      json.RawMessage `json:"rolloutWeight"`
	BucketBy           *string         `json:"bucketBy"`
	RolloutBucketBy    *string         `json:"rolloutBucketBy"`
	RolloutContextKind *string         `json:"rolloutContextKind"`
}

// runner runs instructions on a working copy of a segment.
type runner struct {
	s    *Segment
	i    int
	kind string
	// moved counts the keys target instructions added or removed so far.
	moved int
}

func (r *runner) invalid(format string, args ...any) error {
	return semanticpatch.Invalid(r.i, r.kind, format, args...)
}

func (r *runner) required(param string) error {
	return r.invalid("field %q is required", semanticpatch.Field(r.i, param))
}

// --- Individual targets.

// targetKeys reads the keys and the context kind of a target instruction
// (user for the user forms), counting them against the batch limit.
func (r *runner) targetKeys(p *params, users bool) (string, []string, error) {
	kind := UserKind
	if !users {
		if p.ContextKind == nil || *p.ContextKind == "" {
			return "", nil, r.required("contextKind")
		}
		if err := flag.ValidContextKind(semanticpatch.Field(r.i, "contextKind"), *p.ContextKind); err != nil {
			return "", nil, err
		}
		kind = *p.ContextKind
	}
	keys, err := semanticpatch.Strings(r.i, r.kind, p.Values, "values")
	if err != nil {
		return "", nil, err
	}
	r.moved += len(keys)
	if r.moved > MaxTargetOperations {
		return "", nil, r.invalid("the patch adds or removes %d keys so far, more than the %d one patch may: split it", r.moved, MaxTargetOperations)
	}
	return kind, keys, nil
}

// lists returns the segment's included or excluded lists: the user keys
// and the other kinds' targets.
func (r *runner) lists(included bool) (*[]string, *[]Target) {
	if included {
		return &r.s.Included, &r.s.IncludedContexts
	}
	return &r.s.Excluded, &r.s.ExcludedContexts
}

// held returns the keys of kind the included or excluded lists hold, as
// a set: a segment lists up to MaxTargets keys.
func (r *runner) held(included bool, kind string) map[string]bool {
	users, contexts := r.lists(included)
	out := map[string]bool{}
	if kind == UserKind {
		for _, k := range *users {
			out[k] = true
		}
	}
	for _, t := range *contexts {
		if t.ContextKind == kind {
			for _, k := range t.Values {
				out[k] = true
			}
		}
	}
	return out
}

// addTargets adds keys to the included or excluded lists; keys already
// there stay once. User keys go to the user list (included or excluded),
// which the SDKs match for the user kind, other kinds to their target.
func (r *runner) addTargets(p *params, included, users bool) error {
	kind, keys, err := r.targetKeys(p, users)
	if err != nil {
		return err
	}
	opposite := r.held(!included, kind)
	for _, key := range keys {
		if opposite[key] {
			where := "excluded from"
			if !included {
				where = "included in"
			}
			return r.invalid("%s key %q is %s segment %q: remove it from there first, a key cannot be both included and excluded", kind, key, where, r.s.Key)
		}
	}
	userList, contexts := r.lists(included)
	list := userList
	if kind != UserKind {
		j := slices.IndexFunc(*contexts, func(t Target) bool { return t.ContextKind == kind })
		if j < 0 {
			*contexts = append(*contexts, Target{ContextKind: kind, Values: []string{}})
			j = len(*contexts) - 1
		}
		list = &(*contexts)[j].Values
	}
	have := r.held(included, kind)
	for _, key := range keys {
		if !have[key] {
			have[key] = true
			*list = append(*list, key)
		}
	}
	return nil
}

// removeTargets removes keys from the included or excluded lists; as in
// LaunchDarkly, a key that is not there is not an error. A target left
// without keys goes.
func (r *runner) removeTargets(p *params, included, users bool) error {
	kind, keys, err := r.targetKeys(p, users)
	if err != nil {
		return err
	}
	remove := map[string]bool{}
	for _, k := range keys {
		remove[k] = true
	}
	gone := func(k string) bool { return remove[k] }
	userList, contexts := r.lists(included)
	if kind == UserKind {
		*userList = slices.DeleteFunc(*userList, gone)
	}
	for j := range *contexts {
		if (*contexts)[j].ContextKind == kind {
			(*contexts)[j].Values = slices.DeleteFunc((*contexts)[j].Values, gone)
		}
	}
	*contexts = slices.DeleteFunc(*contexts, func(t Target) bool { return len(t.Values) == 0 })
	return nil
}

// --- Rules and clauses.

// ruleIndex is the index of rule id, -1 when the segment has none.
func (r *runner) ruleIndex(id string) int {
	return slices.IndexFunc(r.s.Rules, func(rule Rule) bool { return rule.ID == id })
}

// rule resolves the ruleId parameter to an index.
func (r *runner) rule(id *string) (int, error) {
	if id == nil || *id == "" {
		return 0, r.required("ruleId")
	}
	j := r.ruleIndex(*id)
	if j < 0 {
		return 0, r.invalid("rule %q does not exist in segment %q", *id, r.s.Key)
	}
	return j, nil
}

// clauses builds clauses from their parameters, each with a new id.
func (r *runner) clauses(in []flag.ClauseParam) ([]flag.Clause, error) {
	if len(in) == 0 {
		return nil, r.invalid("field %q must hold at least one clause", semanticpatch.Field(r.i, "clauses"))
	}
	return flag.NewClauses(in, semanticpatch.Field(r.i, "clauses"))
}

// weight reads a rollout weight given as param: a number, or a string of
// digits as the reference's own example sends it; nil when absent.
func (r *runner) weight(raw json.RawMessage, param string) (*int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	field := semanticpatch.Field(r.i, param)
	var text string
	if json.Unmarshal(raw, &text) != nil {
		text = string(raw)
	}
	w, err := strconv.Atoi(text)
	if err != nil || w < 0 || w > flag.RolloutTotal {
		return nil, r.invalid("field %q must be a whole number from 0 to %d (thousandths of a percent)", field, flag.RolloutTotal)
	}
	return &w, nil
}

// either reads a parameter LaunchDarkly names two ways: one of them, or
// both when they agree.
func either[T comparable](r *runner, a, b *T, nameA, nameB string) (*T, error) {
	if a != nil && b != nil && *a != *b {
		return nil, r.invalid("fields %q and %q name the same setting and differ: give one", semanticpatch.Field(r.i, nameA), semanticpatch.Field(r.i, nameB))
	}
	if a != nil {
		return a, nil
	}
	return b, nil
}

// rollout reads a rule's weight and bucketing attribute, each nil when
// absent.
func (r *runner) rollout(p *params) (*int, *string, error) {
	w, err := r.weight(p.Weight, "weight")
	if err != nil {
		return nil, nil, err
	}
	rw, err := r.weight(p.RolloutWeight, "rolloutWeight")
	if err != nil {
		return nil, nil, err
	}
	if w, err = either(r, w, rw, "weight", "rolloutWeight"); err != nil {
		return nil, nil, err
	}
	bucketBy, err := either(r, p.BucketBy, p.RolloutBucketBy, "bucketBy", "rolloutBucketBy")
	return w, bucketBy, err
}

// addRule adds a rule matching contexts that pass all its clauses (with a
// weight, that share of them), before beforeRuleId or last.
func (r *runner) addRule(p *params) error {
	if p.Clauses == nil {
		return r.required("clauses")
	}
	clauses, err := r.clauses(p.Clauses)
	if err != nil {
		return err
	}
	weight, bucketBy, err := r.rollout(p)
	if err != nil {
		return err
	}
	rule := Rule{ID: flag.NewID(), Clauses: clauses, Weight: weight}
	if p.Description != nil {
		rule.Description = *p.Description
	}
	if bucketBy != nil {
		rule.BucketBy = *bucketBy
	}
	if p.RolloutContextKind != nil {
		rule.RolloutContextKind = *p.RolloutContextKind
	}
	if weight == nil && (rule.BucketBy != "" || rule.RolloutContextKind != "") {
		return r.invalid("field %q is required with a bucketing attribute or a rollout context kind", semanticpatch.Field(r.i, "weight"))
	}
	at := len(r.s.Rules)
	if p.BeforeRuleID != nil {
		if at, err = r.rule(p.BeforeRuleID); err != nil {
			return err
		}
	}
	r.s.Rules = slices.Insert(r.s.Rules, at, rule)
	return nil
}

// removeRule removes the rule; as the reference says, a rule that does not
// exist is not an error.
func (r *runner) removeRule(p *params) error {
	if p.RuleID == nil || *p.RuleID == "" {
		return r.required("ruleId")
	}
	r.s.Rules = slices.DeleteFunc(r.s.Rules, func(rule Rule) bool { return rule.ID == *p.RuleID })
	return nil
}

func (r *runner) reorderRules(p *params) error {
	if p.RuleIDs == nil {
		return r.required("ruleIds")
	}
	rules, ok := semanticpatch.Reorder(r.s.Rules, func(rule Rule) string { return rule.ID }, p.RuleIDs)
	if !ok {
		current := make([]string, len(r.s.Rules))
		for j, rule := range r.s.Rules {
			current[j] = rule.ID
		}
		return r.invalid("field %q must list every rule id of segment %q once: %s", semanticpatch.Field(r.i, "ruleIds"), r.s.Key, strings.Join(current, ", "))
	}
	r.s.Rules = rules
	return nil
}

func (r *runner) updateRuleDescription(p *params) error {
	j, err := r.rule(p.RuleID)
	if err != nil {
		return err
	}
	if p.Description == nil {
		return r.required("description")
	}
	r.s.Rules[j].Description = *p.Description
	return nil
}

// updateRuleRollout sets the share of the rule's matches the segment
// includes and the context kind they are bucketed by (unchanged when
// contextKind is not given), and the bucketing attribute when given.
func (r *runner) updateRuleRollout(p *params) error {
	j, err := r.rule(p.RuleID)
	if err != nil {
		return err
	}
	weight, bucketBy, err := r.rollout(p)
	if err != nil {
		return err
	}
	if weight == nil {
		return r.required("weight")
	}
	kind, err := either(r, p.ContextKind, p.RolloutContextKind, "contextKind", "rolloutContextKind")
	if err != nil {
		return err
	}
	rule := &r.s.Rules[j]
	rule.Weight = weight
	if kind != nil {
		rule.RolloutContextKind = *kind
	}
	if bucketBy != nil {
		rule.BucketBy = *bucketBy
	}
	return nil
}

func (r *runner) addClauses(p *params) error {
	j, err := r.rule(p.RuleID)
	if err != nil {
		return err
	}
	if p.Clauses == nil {
		return r.required("clauses")
	}
	clauses, err := r.clauses(p.Clauses)
	if err != nil {
		return err
	}
	r.s.Rules[j].Clauses = append(r.s.Rules[j].Clauses, clauses...)
	return nil
}

// clauseAt resolves ruleId and clauseId.
func (r *runner) clauseAt(p *params) (*flag.Clause, error) {
	j, err := r.rule(p.RuleID)
	if err != nil {
		return nil, err
	}
	if p.ClauseID == nil || *p.ClauseID == "" {
		return nil, r.required("clauseId")
	}
	rule := &r.s.Rules[j]
	return flag.FindClause(rule.ID, rule.Clauses, *p.ClauseID)
}

// removeClauses removes clauses of a rule; as removeRule, clauses (or a
// rule) that do not exist are not an error: what was asked already holds.
func (r *runner) removeClauses(p *params) error {
	if p.RuleID == nil || *p.RuleID == "" {
		return r.required("ruleId")
	}
	if len(p.ClauseIDs) == 0 {
		return r.invalid("field %q must hold at least one clause id", semanticpatch.Field(r.i, "clauseIds"))
	}
	j := r.ruleIndex(*p.RuleID)
	if j < 0 {
		return nil
	}
	rule := &r.s.Rules[j]
	clauses, err := flag.RemoveClauses(rule.ID, rule.Clauses, p.ClauseIDs)
	rule.Clauses = clauses
	return err
}

func (r *runner) updateClause(p *params) error {
	c, err := r.clauseAt(p)
	if err != nil {
		return err
	}
	if p.Clause == nil {
		return r.required("clause")
	}
	updated, err := p.Clause.Clause(semanticpatch.Field(r.i, "clause"), c.ID)
	if err != nil {
		return err
	}
	*c = updated
	return nil
}

func (r *runner) addValuesToClause(p *params) error {
	c, err := r.clauseAt(p)
	if err != nil {
		return err
	}
	values, err := flag.ClauseValues(p.Values, semanticpatch.Field(r.i, "values"))
	if err != nil {
		return err
	}
	c.AddValues(values)
	return nil
}

// removeValuesFromClause removes values from a clause; values, a clause or
// a rule that are not there are not an error: what was asked already holds.
func (r *runner) removeValuesFromClause(p *params) error {
	if p.RuleID == nil || *p.RuleID == "" {
		return r.required("ruleId")
	}
	if p.ClauseID == nil || *p.ClauseID == "" {
		return r.required("clauseId")
	}
	values, err := flag.ClauseValues(p.Values, semanticpatch.Field(r.i, "values"))
	if err != nil {
		return err
	}
	j := r.ruleIndex(*p.RuleID)
	if j < 0 {
		return nil
	}
	c, err := flag.FindClause(r.s.Rules[j].ID, r.s.Rules[j].Clauses, *p.ClauseID)
	if err != nil {
		return nil
	}
	return c.RemoveValues(values)
}

// --- Details.

// setValue sets *field to the value parameter, a string.
func (r *runner) setValue(p *params, field *string) error {
	v, err := semanticpatch.String(r.i, r.kind, p.Value, "value")
	if err != nil {
		return err
	}
	*field = v
	return nil
}

func (r *runner) addTags(p *params) error {
	return semanticpatch.AddStrings(r.i, r.kind, p.Values, "values", &r.s.Tags)
}

func (r *runner) removeTags(p *params) error {
	return semanticpatch.RemoveStrings(r.i, r.kind, p.Values, "values", &r.s.Tags)
}
