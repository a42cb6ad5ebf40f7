package segment_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/audit/audittest"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/fault/faulttest"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/semanticpatch"
	"github.com/flagplane/flagplane/shared/store/storetest"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// rig is the segment service over a fresh embedded store holding project
// "p" (environments test and production).
type rig struct {
	table *storetest.Barrier
	log   *audit.Log
	svc   *segment.Service
}

func newRig(tb testing.TB) *rig {
	tb.Helper()
	now := func() time.Time { return t0 }
	a := audittest.New(tb, now)
	projects := project.NewService(a.Table, a.Log, now)
	envs := environment.NewService(a.Table, a.Log, projects, false, now)
	if _, _, err := projects.Create(context.Background(), project.Input{Key: ptr("p"), Name: ptr("P")}); err != nil {
		tb.Fatal(err)
	}
	return &rig{table: a.Table, log: a.Log, svc: segment.NewService(a.Table, a.Log, envs, now)}
}

func ptr[T any](v T) *T { return &v }

// baseline is the segment "beta" of production every case starts from:
// user and org keys included and excluded, and two rules with known ids.
const baseline = `[
 {"op": "replace", "path": "/included", "value": ["u1"]},
 {"op": "replace", "path": "/excluded", "value": ["u2"]},
 {"op": "replace", "path": "/includedContexts", "value": [{"contextKind": "org", "values": ["o1"]}]},
 {"op": "replace", "path": "/excludedContexts", "value": [{"contextKind": "org", "values": ["o2"]}]},
 {"op": "replace", "path": "/rules", "value": [
  {"_id": "r0", "clauses": [{"_id": "c0", "attribute": "email", "op": "endsWith", "values": [".edu"]}]},
  {"_id": "r1", "description": "pro plans", "clauses": [
   {"_id": "c1a", "attribute": "plan", "op": "in", "values": ["pro", "max"]},
   {"_id": "c1b", "attribute": "beta", "op": "in", "values": [true]}]}
 ]}
]`

// segment creates "beta" in production at the baseline.
func (r *rig) segment(tb testing.TB, in segment.Input) *segment.Segment {
	tb.Helper()
	ctx := context.Background()
	if _, err := r.svc.Create(ctx, "p", "production", in); err != nil {
		tb.Fatal(err)
	}
	if in.Unbounded {
		return r.get(tb, in.Key)
	}
	p, err := patch.Parse([]byte(baseline))
	if err != nil {
		tb.Fatal(err)
	}
	s, err := r.svc.Patch(ctx, "p", "production", in.Key, p)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func (r *rig) get(tb testing.TB, key string) *segment.Segment {
	tb.Helper()
	s, err := r.svc.Get(context.Background(), "p", "production", key)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// patch sends instructions (a JSON array) to segment key of production.
func (r *rig) patch(key, comment, instructions string) (*segment.Segment, error) {
	body := fmt.Sprintf(`{"comment": %q, "environmentKey": "production", "instructions": %s}`, comment, instructions)
	sp, err := semanticpatch.Parse([]byte(body))
	if err != nil {
		return nil, err
	}
	return r.svc.SemanticPatch(context.Background(), "p", "production", key, sp)
}

// entries are the audit entries of segments, newest first.
func (r *rig) entries(tb testing.TB) []audit.Entry {
	tb.Helper()
	res, err := r.log.List(context.Background(), audit.ListQuery{Limit: 100})
	if err != nil {
		tb.Fatal(err)
	}
	var out []audit.Entry
	for _, e := range res.Entries {
		if e.Kind == "segment" {
			out = append(out, e)
		}
	}
	return out
}

func beta() segment.Input { return segment.Input{Key: "beta", Name: "Beta", Tags: []string{"a"}} }

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func asJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// same fails unless got encodes as the JSON want does.
func same(tb testing.TB, what string, got any, want string) {
	tb.Helper()
	var w, g any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		tb.Fatalf("want %s: %v", want, err)
	}
	if err := json.Unmarshal([]byte(asJSON(tb, got)), &g); err != nil {
		tb.Fatal(err)
	}
	// Both through maps, so that fields compare whatever their order.
	if g, ws := asJSON(tb, g), asJSON(tb, w); g != ws {
		tb.Errorf("%s = %s, want %s", what, g, ws)
	}
}

func ruleIDs(s *segment.Segment) []string {
	var out []string
	for _, r := range s.Rules {
		out = append(out, r.ID)
	}
	return out
}

func clauseIDs(r segment.Rule) []string {
	var out []string
	for _, c := range r.Clauses {
		out = append(out, c.ID)
	}
	return out
}

func TestEachInstructionChangesTheSegmentAsTheReferenceSays(t *testing.T) {
	cases := []struct {
		name         string
		instructions string
		check        func(tb testing.TB, s *segment.Segment)
	}{
		{"addIncludedTargets adds org keys once each, beside those already there",
			`[{"kind": "addIncludedTargets", "contextKind": "org", "values": ["o3", "o3", "o1"]}]`,
			func(tb testing.TB, s *segment.Segment) {
				same(tb, "includedContexts", s.IncludedContexts, `[{"contextKind": "org", "values": ["o1", "o3"]}]`)
			}},
		{"addIncludedTargets of the user kind adds to the user keys the SDKs match",
			`[{"kind": "addIncludedTargets", "contextKind": "user", "values": ["u3"]}]`,
			func(tb testing.TB, s *segment.Segment) {
				same(tb, "included", s.Included, `["u1", "u3"]`)
				same(tb, "includedContexts", s.IncludedContexts, `[{"contextKind": "org", "values": ["o1"]}]`)
			}},
		{"addIncludedTargets of a new kind starts a target of that kind",
			`[{"kind": "addIncludedTargets", "contextKind": "device", "values": ["d1"]}]`,
			func(tb testing.TB, s *segment.Segment) {
				same(tb, "includedContexts", s.IncludedContexts, `[{"contextKind": "org", "values": ["o1"]}, {"contextKind": "device", "values": ["d1"]}]`)
			}},
		{"removeIncludedTargets removes the keys and the target they leave empty, ignoring keys not there",
			`[{"kind": "removeIncludedTargets", "contextKind": "org", "values": ["o1", "nobody"]}]`,
			func(tb testing.TB, s *segment.Segment) { same(tb, "includedContexts", s.IncludedContexts, `[]`) }},
		{"addExcludedTargets adds to the excluded keys of the kind",
			`[{"kind": "addExcludedTargets", "contextKind": "org", "values": ["o4"]}]`,
			func(tb testing.TB, s *segment.Segment) {
				same(tb, "excludedContexts", s.ExcludedContexts, `[{"contextKind": "org", "values": ["o2", "o4"]}]`)
			}},
		{"removeExcludedTargets removes excluded keys of the kind",
			`[{"kind": "removeExcludedTargets", "contextKind": "org", "values": ["o2"]}]`,
			func(tb testing.TB, s *segment.Segment) { same(tb, "excludedContexts", s.ExcludedContexts, `[]`) }},
		{"addIncludedUsers adds user keys",
			`[{"kind": "addIncludedUsers", "values": ["u3", "u1"]}]`,
			func(tb testing.TB, s *segment.Segment) { same(tb, "included", s.Included, `["u1", "u3"]`) }},
		{"removeIncludedUsers removes user keys",
			`[{"kind": "removeIncludedUsers", "values": ["u1"]}]`,
			func(tb testing.TB, s *segment.Segment) { same(tb, "included", s.Included, `[]`) }},
		{"addExcludedUsers adds excluded user keys",
			`[{"kind": "addExcludedUsers", "values": ["u4"]}]`,
			func(tb testing.TB, s *segment.Segment) { same(tb, "excluded", s.Excluded, `["u2", "u4"]`) }},
		{"removeExcludedUsers removes excluded user keys, ignoring keys not there",
			`[{"kind": "removeExcludedUsers", "values": ["u2", "nobody"]}]`,
			func(tb testing.TB, s *segment.Segment) { same(tb, "excluded", s.Excluded, `[]`) }},
		{"addRule adds a rule last, with a description and new UUIDs for it and its clauses",
			`[{"kind": "addRule", "description": "staff", "clauses": [{"attribute": "email", "op": "endsWith", "negate": true, "values": ["@example.com"]}]}]`,
			func(tb testing.TB, s *segment.Segment) {
				if len(s.Rules) != 3 {
					tb.Fatalf("rules %v, want three", ruleIDs(s))
				}
				r := s.Rules[2]
				if !uuidPattern.MatchString(r.ID) || !uuidPattern.MatchString(r.Clauses[0].ID) {
					tb.Errorf("rule _id %q, clause _id %q, want UUIDs", r.ID, r.Clauses[0].ID)
				}
				r.ID, r.Clauses[0].ID = "", ""
				same(tb, "new rule", r, `{"_id": "", "description": "staff", "clauses": [{"_id": "", "attribute": "email", "op": "endsWith", "negate": true, "values": ["@example.com"]}]}`)
			}},
		{"addRule with beforeRuleId and a rollout adds a rule including that share of its matches, before that rule",
			`[{"kind": "addRule", "beforeRuleId": "r1", "weight": 25000, "rolloutContextKind": "org", "bucketBy": "company",
			  "clauses": [{"contextKind": "org", "attribute": "tier", "op": "in", "values": [1, 2]}]}]`,
			func(tb testing.TB, s *segment.Segment) {
				if len(s.Rules) != 3 || s.Rules[0].ID != "r0" || s.Rules[2].ID != "r1" {
					tb.Fatalf("rules %v, want the new rule between r0 and r1", ruleIDs(s))
				}
				r := s.Rules[1]
				r.ID, r.Clauses[0].ID = "", ""
				same(tb, "new rule", r, `{"_id": "", "weight": 25000, "rolloutContextKind": "org", "bucketBy": "company",
				  "clauses": [{"_id": "", "contextKind": "org", "attribute": "tier", "op": "in", "negate": false, "values": [1, 2]}]}`)
			}},
		{"addRule takes the flag rules' names of the rollout too",
			`[{"kind": "addRule", "rolloutWeight": 10000, "rolloutBucketBy": "team", "clauses": [{"attribute": "plan", "op": "in", "values": ["free"]}]}]`,
			func(tb testing.TB, s *segment.Segment) {
				r := s.Rules[2]
				if r.Weight == nil || *r.Weight != 10000 || r.BucketBy != "team" {
					tb.Errorf("new rule weight %v, bucketBy %q; want 10000 by team", r.Weight, r.BucketBy)
				}
			}},
		{"removeRule removes the rule",
			`[{"kind": "removeRule", "ruleId": "r0"}]`,
			func(tb testing.TB, s *segment.Segment) { same(tb, "rule ids", ruleIDs(s), `["r1"]`) }},
		{"reorderRules puts the rules in the order given",
			`[{"kind": "reorderRules", "ruleIds": ["r1", "r0"]}]`,
			func(tb testing.TB, s *segment.Segment) { same(tb, "rule ids", ruleIDs(s), `["r1", "r0"]`) }},
		{"updateRuleDescription sets the rule's description",
			`[{"kind": "updateRuleDescription", "ruleId": "r1", "description": "paying plans"}]`,
			func(tb testing.TB, s *segment.Segment) {
				if s.Rules[1].Description != "paying plans" || s.Rules[0].Description != "" {
					tb.Errorf("descriptions %q and %q, want only r1's set", s.Rules[0].Description, s.Rules[1].Description)
				}
			}},
		{"updateRuleRolloutAndContextKind sets the weight, given as the reference's example gives it (a string), and the context kind",
			`[{"kind": "updateRuleRolloutAndContextKind", "ruleId": "r1", "weight": "20000", "contextKind": "device"}]`,
			func(tb testing.TB, s *segment.Segment) {
				r := s.Rules[1]
				if r.Weight == nil || *r.Weight != 20000 || r.RolloutContextKind != "device" {
					tb.Errorf("rule r1 weight %v, rolloutContextKind %q; want 20000 of device", r.Weight, r.RolloutContextKind)
				}
			}},
		{"addClauses appends clauses with new ids",
			`[{"kind": "addClauses", "ruleId": "r0", "clauses": [{"attribute": "country", "op": "in", "values": ["NZ"]}]}]`,
			func(tb testing.TB, s *segment.Segment) {
				ids := clauseIDs(s.Rules[0])
				if len(ids) != 2 || ids[0] != "c0" || !uuidPattern.MatchString(ids[1]) {
					tb.Errorf("clause ids %v, want c0 and a new UUID", ids)
				}
				same(tb, "new clause values", s.Rules[0].Clauses[1].Values, `["NZ"]`)
			}},
		{"removeClauses removes the clauses named, ignoring ids the rule does not hold",
			`[{"kind": "removeClauses", "ruleId": "r1", "clauseIds": ["c1b", "c9"]}]`,
			func(tb testing.TB, s *segment.Segment) { same(tb, "clause ids", clauseIDs(s.Rules[1]), `["c1a"]`) }},
		{"updateClause replaces the clause and keeps its id",
			`[{"kind": "updateClause", "ruleId": "r0", "clauseId": "c0", "clause": {"contextKind": "org", "attribute": "country", "op": "in", "negate": true, "values": ["Mexico", "Canada"]}}]`,
			func(tb testing.TB, s *segment.Segment) {
				same(tb, "clause", s.Rules[0].Clauses[0], `{"_id": "c0", "contextKind": "org", "attribute": "country", "op": "in", "negate": true, "values": ["Mexico", "Canada"]}`)
			}},
		{"addValuesToClause adds the values not there yet",
			`[{"kind": "addValuesToClause", "ruleId": "r1", "clauseId": "c1a", "values": ["team", "pro"]}]`,
			func(tb testing.TB, s *segment.Segment) {
				same(tb, "values", s.Rules[1].Clauses[0].Values, `["pro", "max", "team"]`)
			}},
		{"removeValuesFromClause removes the values, ignoring values not there",
			`[{"kind": "removeValuesFromClause", "ruleId": "r1", "clauseId": "c1a", "values": ["max", "none"]}]`,
			func(tb testing.TB, s *segment.Segment) { same(tb, "values", s.Rules[1].Clauses[0].Values, `["pro"]`) }},
		{"updateName renames the segment",
			`[{"kind": "updateName", "value": "Beta testers"}]`,
			func(tb testing.TB, s *segment.Segment) {
				if s.Name != "Beta testers" {
					tb.Errorf("name %q", s.Name)
				}
			}},
		{"updateDescription sets the description",
			`[{"kind": "updateDescription", "value": "People who try things first"}]`,
			func(tb testing.TB, s *segment.Segment) {
				if s.Description != "People who try things first" {
					tb.Errorf("description %q", s.Description)
				}
			}},
		{"addTags adds the tags not there yet",
			`[{"kind": "addTags", "values": ["b", "a"]}]`,
			func(tb testing.TB, s *segment.Segment) { same(tb, "tags", s.Tags, `["a", "b"]`) }},
		{"removeTags removes the tags, ignoring tags not there",
			`[{"kind": "removeTags", "values": ["a", "z"]}]`,
			func(tb testing.TB, s *segment.Segment) { same(tb, "tags", s.Tags, `[]`) }},
		{"instructions apply in order, each seeing the ones before",
			`[{"kind": "removeExcludedUsers", "values": ["u2"]}, {"kind": "addIncludedUsers", "values": ["u2"]}, {"kind": "removeRule", "ruleId": "r0"}, {"kind": "reorderRules", "ruleIds": ["r1"]}]`,
			func(tb testing.TB, s *segment.Segment) {
				same(tb, "included", s.Included, `["u1", "u2"]`)
				same(tb, "excluded", s.Excluded, `[]`)
				same(tb, "rule ids", ruleIDs(s), `["r1"]`)
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			before := r.segment(t, beta())
			got, err := r.patch("beta", "", c.instructions)
			if err != nil {
				t.Fatal(err)
			}
			if got.Version != before.Version+1 {
				t.Errorf("version %d, want %d", got.Version, before.Version+1)
			}
			stored := r.get(t, "beta")
			if asJSON(t, stored) != asJSON(t, got) {
				t.Errorf("stored %s\nanswered %s", asJSON(t, stored), asJSON(t, got))
			}
			c.check(t, stored)
		})
	}
}

func TestRefusedPatchesNameTheInstructionAndWriteNothing(t *testing.T) {
	many := make([]string, segment.MaxTargetOperations+1)
	for i := range many {
		many[i] = fmt.Sprintf("k%d", i)
	}
	manyKeys := asJSON(t, many)
	cases := []struct {
		name         string
		instructions string
		want         string
	}{
		{"an unknown kind", `[{"kind": "updateName", "value": "x"}, {"kind": "turnFlagOn"}]`,
			`instructions[1] (turnFlagOn): kind "turnFlagOn" is not a segment instruction`},
		{"a rule instruction without ruleId", `[{"kind": "updateRuleDescription", "description": "x"}]`,
			`"instructions[0].ruleId" is required`},
		{"removeRule without ruleId", `[{"kind": "removeRule"}]`, `"instructions[0].ruleId" is required`},
		{"a rule id the segment does not hold", `[{"kind": "addClauses", "ruleId": "r9", "clauses": [{"attribute": "a", "op": "in", "values": ["b"]}]}]`,
			`rule "r9" does not exist in segment "beta"`},
		{"a clause id the rule does not hold", `[{"kind": "updateClause", "ruleId": "r0", "clauseId": "c9", "clause": {"attribute": "a", "op": "in", "values": ["b"]}}]`,
			`clause "c9" does not exist in rule "r0"`},
		{"a rule id that is not a string", `[{"kind": "removeRule", "ruleId": 5}]`, `instructions[0].ruleId`},
		{"keys that are not strings", `[{"kind": "addIncludedUsers", "values": ["u5", 6]}]`,
			`"instructions[0].values" must be an array of strings`},
		{"no keys", `[{"kind": "addExcludedUsers", "values": []}]`, `"instructions[0].values" must hold at least one value`},
		{"an empty key", `[{"kind": "removeIncludedUsers", "values": [""]}]`, `"instructions[0].values[0]" must not be empty`},
		{"a target instruction without its context kind", `[{"kind": "addIncludedTargets", "values": ["o5"]}]`,
			`"instructions[0].contextKind" is required`},
		{"a context kind that is not one", `[{"kind": "addIncludedTargets", "contextKind": "Org!", "values": ["o5"]}]`,
			`instructions[0].contextKind`},
		{"a user key both included and excluded", `[{"kind": "addIncludedUsers", "values": ["u2"]}]`,
			`user key "u2" is excluded from segment "beta"`},
		{"an org key both excluded and included", `[{"kind": "addExcludedTargets", "contextKind": "org", "values": ["o1"]}]`,
			`org key "o1" is included in segment "beta"`},
		{"more keys than one patch may move", `[{"kind": "addIncludedUsers", "values": ` + manyKeys + `}]`,
			`more than the 1500 one patch may`},
		{"reorderRules missing a rule", `[{"kind": "reorderRules", "ruleIds": ["r1"]}]`, `must list every rule id of segment "beta" once: r0, r1`},
		{"a weight above 100%", `[{"kind": "updateRuleRolloutAndContextKind", "ruleId": "r0", "weight": 100001}]`,
			`"instructions[0].weight" must be a whole number from 0 to 100000`},
		{"a weight that is not a number", `[{"kind": "updateRuleRolloutAndContextKind", "ruleId": "r0", "weight": "half"}]`,
			`"instructions[0].weight" must be a whole number`},
		{"a rollout update without a weight", `[{"kind": "updateRuleRolloutAndContextKind", "ruleId": "r0", "contextKind": "org"}]`,
			`"instructions[0].weight" is required`},
		{"two names of the weight that differ", `[{"kind": "addRule", "weight": 1, "rolloutWeight": 2, "clauses": [{"attribute": "a", "op": "in", "values": ["b"]}]}]`,
			`"instructions[0].weight" and "instructions[0].rolloutWeight" name the same setting`},
		{"a bucketing attribute without a weight", `[{"kind": "addRule", "bucketBy": "team", "clauses": [{"attribute": "a", "op": "in", "values": ["b"]}]}]`,
			`"instructions[0].weight" is required`},
		{"a rule without clauses", `[{"kind": "addRule", "description": "all"}]`, `"instructions[0].clauses" is required`},
		{"a clause with an unknown operator", `[{"kind": "addRule", "clauses": [{"attribute": "a", "op": "like", "values": ["b"]}]}]`,
			`instructions[0].clauses[0].op`},
		{"a rule matching its own segment", `[{"kind": "addRule", "clauses": [{"op": "segmentMatch", "values": ["beta"]}]}]`,
			`a segment cannot match itself`},
		{"removing every clause of a rule", `[{"kind": "removeClauses", "ruleId": "r0", "clauseIds": ["c0"]}]`,
			`rule "r0" would be left without clauses`},
		{"removing every value of a clause", `[{"kind": "removeValuesFromClause", "ruleId": "r0", "clauseId": "c0", "values": [".edu"]}]`,
			`clause "c0" would be left without values`},
		{"a null clause value", `[{"kind": "addValuesToClause", "ruleId": "r0", "clauseId": "c0", "values": [null]}]`,
			`"instructions[0].values[0]" must be a JSON value other than null`},
		{"an empty name", `[{"kind": "updateName", "value": ""}]`, `instructions[0] (updateName): field "name"`},
		{"a name that is not a string", `[{"kind": "updateName", "value": 7}]`, `"instructions[0].value" must be a string`},
		{"tags that are not strings", `[{"kind": "addTags", "values": "a"}]`, `"instructions[0].values" must be an array of strings`},
		{"a later instruction failing, after earlier ones applied to the copy", `[{"kind": "updateName", "value": "Renamed"}, {"kind": "addIncludedUsers", "values": ["u9"]}, {"kind": "addIncludedUsers", "values": ["u2"]}]`,
			`instructions[2] (addIncludedUsers): user key "u2" is excluded`},
	}
	for _, c := range cases {
		t.Run("refuses "+c.name, func(t *testing.T) {
			r := newRig(t)
			before := r.segment(t, beta())
			entries := len(r.entries(t))
			_, err := r.patch("beta", "", c.instructions)
			faulttest.Want(t, err, fault.Invalid, c.want)
			if after := r.get(t, "beta"); asJSON(t, after) != asJSON(t, before) {
				t.Errorf("segment changed to %s", asJSON(t, after))
			}
			if n := len(r.entries(t)); n != entries {
				t.Errorf("%d audit entries, want %d", n, entries)
			}
		})
	}
}

func TestSemanticPatchRecordsOneAuditEntry(t *testing.T) {
	t.Run("a patch records its comment and the actions of what it changed", func(t *testing.T) {
		r := newRig(t)
		r.segment(t, beta())
		if _, err := r.patch("beta", "launch prep", `[{"kind": "updateName", "value": "Beta 2"}, {"kind": "addIncludedUsers", "values": ["u7"]}, {"kind": "removeExcludedUsers", "values": ["nobody"]}]`); err != nil {
			t.Fatal(err)
		}
		e := r.entries(t)[0]
		var actions []string
		for _, a := range e.Accesses {
			actions = append(actions, a.Action)
		}
		if e.Comment != "launch prep" || !slices.Equal(actions, []string{"updateIncluded", "updateName"}) {
			t.Errorf("entry comment %q, actions %v; want the patch's comment and updateIncluded, updateName", e.Comment, actions)
		}
		if !strings.Contains(e.Accesses[0].Resource, "proj/p:env/production:segment/beta") {
			t.Errorf("entry resource %q", e.Accesses[0].Resource)
		}
	})
	t.Run("a patch that changes nothing (removing what is not there, adding what is) writes nothing", func(t *testing.T) {
		r := newRig(t)
		before := r.segment(t, beta())
		entries := len(r.entries(t))
		got, err := r.patch("beta", "", `[{"kind": "removeIncludedUsers", "values": ["nobody"]}, {"kind": "removeRule", "ruleId": "r9"}, {"kind": "addTags", "values": ["a"]},
			 {"kind": "removeClauses", "ruleId": "r9", "clauseIds": ["c0"]}, {"kind": "removeValuesFromClause", "ruleId": "r0", "clauseId": "c9", "values": [".edu"]},
			 {"kind": "removeValuesFromClause", "ruleId": "r1", "clauseId": "c1a", "values": ["free"]}]`)
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != before.Version || len(r.entries(t)) != entries {
			t.Errorf("version %d (was %d), %d entries (were %d); want nothing written", got.Version, before.Version, len(r.entries(t)), entries)
		}
	})
}

func TestSemanticPatchRefusals(t *testing.T) {
	t.Run("target instructions on a big segment point to its own operations, while its details still change", func(t *testing.T) {
		r := newRig(t)
		r.segment(t, segment.Input{Key: "big", Name: "Big", Unbounded: true})
		for _, kind := range []string{"addIncludedUsers", "removeExcludedUsers"} {
			_, err := r.patch("big", "", `[{"kind": "`+kind+`", "values": ["u1"]}]`)
			faulttest.Want(t, err, fault.Invalid, "is a big segment: change its members with the big segment instructions (addBigSegmentIncludedTargets and the like), updateBigSegmentTargets (POST /api/v2/segments/p/production/big/users)")
		}
		_, err := r.patch("big", "", `[{"kind": "addIncludedTargets", "contextKind": "org", "values": ["o1"]}]`)
		faulttest.Want(t, err, fault.Invalid, "updateBigSegmentContextTargets (POST /api/v2/segments/p/production/big/contexts)")
		got, err := r.patch("big", "", `[{"kind": "updateName", "value": "Bigger"}, {"kind": "addTags", "values": ["t"]}, {"kind": "addRule", "clauses": [{"attribute": "a", "op": "in", "values": ["b"]}]}]`)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "Bigger" || len(got.Rules) != 1 || !slices.Equal(got.Tags, []string{"t"}) {
			t.Errorf("big segment %s, want renamed, tagged, one rule", asJSON(t, got))
		}
	})
	t.Run("a missing segment is a 404 naming it", func(t *testing.T) {
		r := newRig(t)
		_, err := r.patch("ghost", "", `[{"kind": "updateName", "value": "x"}]`)
		faulttest.Want(t, err, fault.NotFound, `segment "ghost" not found in environment "production"`)
	})
	t.Run("an environmentKey naming another environment than the path is refused", func(t *testing.T) {
		r := newRig(t)
		r.segment(t, beta())
		sp, err := semanticpatch.Parse([]byte(`{"environmentKey": "test", "instructions": [{"kind": "updateName", "value": "x"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.svc.SemanticPatch(context.Background(), "p", "production", "beta", sp)
		faulttest.Want(t, err, fault.Invalid, `field "environmentKey" is "test", but the path names environment "production"`)
	})
	t.Run("a patch needing approval is refused by the approval check, and nothing is written", func(t *testing.T) {
		r := newRig(t)
		before := r.segment(t, beta())
		r.svc.SetApprovalCheck(func(_ context.Context, _, envKey string, s *segment.Segment) error {
			return fault.New(fault.Forbidden, "changes to segment %q in %q need approval", s.Key, envKey)
		})
		_, err := r.patch("beta", "", `[{"kind": "updateName", "value": "x"}]`)
		faulttest.Want(t, err, fault.Forbidden, `changes to segment "beta" in "production" need approval`)
		got, err := r.svc.SemanticPatch(segment.WithoutApprovalCheck(context.Background()), "p", "production", "beta",
			semanticpatch.Patch{Instructions: []semanticpatch.Instruction{semanticpatch.New("updateName", map[string]any{"value": "approved"})}})
		if err != nil || got.Name != "approved" || got.Version != before.Version+1 {
			t.Errorf("approved change: %v, %v; want it applied", got, err)
		}
	})
}

func TestInstructionActions(t *testing.T) {
	cases := []struct {
		name  string
		kinds []string
		want  []string
	}{
		{"target instructions need updateIncluded or updateExcluded", []string{"addIncludedTargets", "removeExcludedUsers", "addIncludedUsers"}, []string{"updateExcluded", "updateIncluded"}},
		{"rule and clause instructions need updateRules", []string{"addRule", "updateClause", "updateRuleRolloutAndContextKind"}, []string{"updateRules"}},
		{"details need their own actions", []string{"updateName", "updateDescription", "removeTags"}, []string{"updateDescription", "updateName", "updateTags"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ins []semanticpatch.Instruction
			for _, k := range c.kinds {
				ins = append(ins, semanticpatch.New(k, nil))
			}
			got, err := segment.InstructionActions(ins)
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("actions %v, %v; want %v", got, err, c.want)
			}
			for _, a := range got {
				if !slices.Contains(segment.Actions, a) {
					t.Errorf("action %q is not one segment.Actions lists", a)
				}
			}
		})
	}
	t.Run("every kind the engine knows has an action segments list", func(t *testing.T) {
		for _, k := range segment.Kinds() {
			got, err := segment.InstructionActions([]semanticpatch.Instruction{semanticpatch.New(k, nil)})
			if err != nil || len(got) != 1 || !slices.Contains(segment.Actions, got[0]) {
				t.Errorf("%s: actions %v, %v", k, got, err)
			}
		}
	})
}

func TestConcurrentSemanticPatchesBothLand(t *testing.T) {
	r := newRig(t)
	before := r.segment(t, beta())
	errs := r.table.Race(2, func(i int) error {
		_, err := r.patch("beta", "", fmt.Sprintf(`[{"kind": "addIncludedTargets", "contextKind": "org", "values": ["racer%d"]}]`, i))
		return err
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	after := r.get(t, "beta")
	same(t, "includedContexts values", len(after.IncludedContexts[0].Values), `3`)
	for _, k := range []string{"racer0", "racer1"} {
		if !slices.Contains(after.IncludedContexts[0].Values, k) {
			t.Errorf("included org keys %v, want %s among them", after.IncludedContexts[0].Values, k)
		}
	}
	if after.Version != before.Version+2 {
		t.Errorf("version %d, want %d: one per patch", after.Version, before.Version+2)
	}
}

// member reads whether key is an included and an excluded member of the
// big segment "big".
func (r *rig) member(tb testing.TB, key string) string {
	tb.Helper()
	seg := r.get(tb, "big")
	in, ex, err := r.svc.Membership(context.Background(), "p", "production", "big", seg.Generation, key)
	if err != nil {
		tb.Fatal(err)
	}
	return fmt.Sprintf("included=%t excluded=%t", in, ex)
}

func TestBigSegmentMemberInstructions(t *testing.T) {
	big := segment.Input{Key: "big", Name: "Big", Unbounded: true}
	t.Run("add and remove instructions change the members, the last instruction on a key counting", func(t *testing.T) {
		r := newRig(t)
		before := r.segment(t, big)
		got, err := r.patch("big", "", `[
			{"kind": "addBigSegmentIncludedTargets", "values": ["a", "b", "gone"]},
			{"kind": "addBigSegmentExcludedTargets", "values": ["c"]},
			{"kind": "removeBigSegmentIncludedTargets", "values": ["gone"]}]`)
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != before.Version+1 {
			t.Errorf("version %d, want %d: one membership update", got.Version, before.Version+1)
		}
		for key, want := range map[string]string{"a": "included=true excluded=false", "b": "included=true excluded=false",
			"c": "included=false excluded=true", "gone": "included=false excluded=false"} {
			if m := r.member(t, key); m != want {
				t.Errorf("%s: %s, want %s", key, m, want)
			}
		}
		if _, err := r.patch("big", "", `[{"kind": "removeBigSegmentIncludedTargets", "values": ["a"]}, {"kind": "removeBigSegmentExcludedTargets", "values": ["c"]}]`); err != nil {
			t.Fatal(err)
		}
		for key, want := range map[string]string{"a": "included=false excluded=false", "b": "included=true excluded=false", "c": "included=false excluded=false"} {
			if m := r.member(t, key); m != want {
				t.Errorf("after removal, %s: %s, want %s", key, m, want)
			}
		}
		var last []string
		for _, a := range r.entries(t)[0].Accesses {
			last = append(last, a.Action)
		}
		if slices.Sort(last); !slices.Equal(last, []string{"updateExcluded", "updateIncluded"}) {
			t.Errorf("the last entry's actions %v, want updateExcluded and updateIncluded", last)
		}
	})
	cases := []struct {
		name         string
		segment      segment.Input
		instructions string
		code         fault.Code
		want         string
	}{
		{"member instructions mixed with others", big,
			`[{"kind": "updateName", "value": "x"}, {"kind": "addBigSegmentIncludedTargets", "values": ["a"]}]`, fault.Invalid,
			`instructions[1] (addBigSegmentIncludedTargets): big segment member instructions`},
		{"member instructions on a segment that is not big", beta(),
			`[{"kind": "addBigSegmentIncludedTargets", "values": ["a"]}]`, fault.Invalid,
			`segment "beta" is not a big segment: change its targets with addIncludedTargets`},
		{"a key added to both lists", big,
			`[{"kind": "addBigSegmentIncludedTargets", "values": ["a"]}, {"kind": "addBigSegmentExcludedTargets", "values": ["a"]}]`, fault.Invalid,
			`instructions[1] (addBigSegmentExcludedTargets): key "a" is added to both the included and the excluded members`},
		{"member keys that are not strings", big, `[{"kind": "addBigSegmentIncludedTargets", "values": [1]}]`, fault.Invalid,
			`"instructions[0].values" must be an array of strings`},
		{"processBigSegmentImport without importId", big, `[{"kind": "processBigSegmentImport"}]`, fault.Invalid,
			`"instructions[0].importId" is required`},
		{"processBigSegmentImport of an import the segment does not have", big,
			`[{"kind": "addBigSegmentIncludedTargets", "values": ["a"]}, {"kind": "processBigSegmentImport", "importId": "nope"}]`, fault.NotFound,
			`instructions[1] (processBigSegmentImport): import "nope" of segment "big"`},
	}
	for _, c := range cases {
		t.Run("refuses "+c.name+", changing nothing", func(t *testing.T) {
			r := newRig(t)
			before := r.segment(t, c.segment)
			_, err := r.patch(c.segment.Key, "", c.instructions)
			faulttest.Want(t, err, c.code, c.want)
			if after := r.get(t, c.segment.Key); after.Version != before.Version {
				t.Errorf("version %d, want %d", after.Version, before.Version)
			}
			if c.segment.Unbounded {
				if m := r.member(t, "a"); m != "included=false excluded=false" {
					t.Errorf("a: %s, want no member", m)
				}
			}
		})
	}
	t.Run("processBigSegmentImport of the segment's import is accepted, the worker processing it", func(t *testing.T) {
		r := newRig(t)
		before := r.segment(t, big)
		ctx := context.Background()
		up, err := r.svc.BeginImport(ctx, "p", "production", "big")
		if err != nil {
			t.Fatal(err)
		}
		if err := up.ReadCSV(ctx, "keys.csv", strings.NewReader("key\nk1\nk2\n")); err != nil {
			t.Fatal(err)
		}
		job, err := up.Finish(ctx, segment.ModeMerge)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.patch("big", "", `[{"kind": "processBigSegmentImport", "importId": "`+job.ID+`"}]`)
		if err != nil || got.Version != before.Version {
			t.Errorf("segment %v, %v; want it unchanged", got, err)
		}
	})
}

// Apply is what approval requests check instructions with, on a copy, and
// apply them by.
func TestApplyChangesTheSegmentGivenOrNothing(t *testing.T) {
	cases := []struct {
		name string
		ins  []semanticpatch.Instruction
		want string // the error's part, "" when the instructions apply
	}{
		{"instructions that apply change the segment given", []semanticpatch.Instruction{
			semanticpatch.New("updateName", map[string]any{"value": "Applied"}),
			semanticpatch.New("addIncludedUsers", map[string]any{"values": []string{"u9"}})}, ""},
		{"a failing instruction leaves it as it was", []semanticpatch.Instruction{
			semanticpatch.New("updateName", map[string]any{"value": "Applied"}),
			semanticpatch.New("removeRule", nil)}, `"instructions[1].ruleId" is required`},
		{"a big segment member instruction is refused: it changes no segment item", []semanticpatch.Instruction{
			semanticpatch.New("addBigSegmentIncludedTargets", map[string]any{"values": []string{"u9"}})},
			"instructions[0] (addBigSegmentIncludedTargets): addBigSegmentIncludedTargets changes a big segment's members, not the segment"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			seg := r.segment(t, beta())
			before := asJSON(t, seg)
			err := segment.Apply(seg, c.ins)
			if c.want != "" {
				faulttest.Want(t, err, fault.Invalid, c.want)
				if asJSON(t, seg) != before {
					t.Errorf("segment changed to %s", asJSON(t, seg))
				}
				return
			}
			if err != nil || seg.Name != "Applied" || !slices.Equal(seg.Included, []string{"u1", "u9"}) {
				t.Errorf("segment %s, %v", asJSON(t, seg), err)
			}
			if stored := r.get(t, "beta"); asJSON(t, stored) != before {
				t.Errorf("Apply wrote: stored %s", asJSON(t, stored))
			}
		})
	}
}
