package segmentapi_test

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// ldSemanticType is the Content-Type LaunchDarkly's reference documents
// for a semantic patch.
const ldSemanticType = "application/json; domain-model=launchdarkly.semanticpatch"

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// semantic sends instructions to segment key of p's production as a
// semantic patch of contentType.
func semantic(tb testing.TB, srv *apptest.Server, contentType, p, key string, ins ...map[string]any) *apptest.Response {
	tb.Helper()
	body := map[string]any{"environmentKey": "production", "comment": "by test", "instructions": ins}
	return srv.Do(tb, http.MethodPatch, segPath(p, "production", key), body, "Content-Type", contentType)
}

func TestSegmentSemanticPatchOverHTTP(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	createSeg(t, srv, "p", "production", map[string]any{"key": "beta", "name": "Beta", "tags": []string{"vip"}})

	var ruleID, clauseID string
	t.Run("the reference's instructions, sent with its Content-Type, answer the segment changed", func(t *testing.T) {
		d := decodeSeg(t, semantic(t, srv, ldSemanticType, "p", "beta",
			map[string]any{"kind": "addIncludedTargets", "contextKind": "org", "values": []string{"org-key-123abc", "org-key-456def"}},
			map[string]any{"kind": "addExcludedUsers", "values": []string{"user-key-123abc"}},
			map[string]any{"kind": "addRule", "description": "Targeting rule for LaunchDarkly employees",
				"clauses": []map[string]any{{"attribute": "email", "op": "contains", "negate": false, "values": []string{"@launchdarkly.com"}}}},
			map[string]any{"kind": "updateName", "value": "Updated segment name"},
			map[string]any{"kind": "addTags", "values": []string{"tag1", "tag2"}},
		), http.StatusOK)
		if d.Name != "Updated segment name" || d.Version != 2 || !slices.Equal(d.Tags, []string{"vip", "tag1", "tag2"}) ||
			!slices.Equal(d.Excluded, []string{"user-key-123abc"}) || len(d.IncludedContexts) != 1 || len(d.Rules) != 1 {
			t.Fatalf("segment %+v", d)
		}
		if got := d.IncludedContexts[0].(map[string]any); got["contextKind"] != "org" || len(got["values"].([]any)) != 2 {
			t.Errorf("includedContexts %v", d.IncludedContexts)
		}
		ruleID, _ = d.Rules[0]["_id"].(string)
		clauses, _ := d.Rules[0]["clauses"].([]any)
		if len(clauses) == 1 {
			clauseID, _ = clauses[0].(map[string]any)["_id"].(string)
		}
		if !uuidRE.MatchString(ruleID) || !uuidRE.MatchString(clauseID) || d.Rules[0]["description"] != "Targeting rule for LaunchDarkly employees" {
			t.Errorf("rule %v, want UUID ids and the description", d.Rules[0])
		}
	})
	t.Run("flagplane's Content-Type works too, and rule instructions find the rule and clause by the ids answered", func(t *testing.T) {
		d := decodeSeg(t, semantic(t, srv, apptest.SemanticType, "p", "beta",
			map[string]any{"kind": "updateClause", "ruleId": ruleID, "clauseId": clauseID,
				"clause": map[string]any{"contextKind": "user", "attribute": "country", "op": "in", "negate": false, "values": []string{"Mexico", "Canada"}}},
			map[string]any{"kind": "updateRuleRolloutAndContextKind", "ruleId": ruleID, "weight": "20000", "contextKind": "device"},
		), http.StatusOK)
		rule := d.Rules[0]
		clause := rule["clauses"].([]any)[0].(map[string]any)
		if rule["weight"] != float64(20000) || rule["rolloutContextKind"] != "device" || clause["_id"] != clauseID || clause["attribute"] != "country" {
			t.Errorf("rule %v", rule)
		}
	})
	t.Run("a failing instruction is a 400 naming it, and nothing is written", func(t *testing.T) {
		before := decodeSeg(t, srv.Do(t, http.MethodGet, segPath("p", "production", "beta"), nil), http.StatusOK)
		res := semantic(t, srv, ldSemanticType, "p", "beta",
			map[string]any{"kind": "updateName", "value": "never"},
			map[string]any{"kind": "addIncludedUsers", "values": []string{"user-key-123abc"}})
		apptest.WantStatus(t, res, http.StatusBadRequest)
		if m := res.Map(t); m["code"] != "invalid_request" || !strings.Contains(m["message"].(string), `instructions[1] (addIncludedUsers): user key "user-key-123abc" is excluded`) {
			t.Errorf("answer %s", res.Body)
		}
		after := decodeSeg(t, srv.Do(t, http.MethodGet, segPath("p", "production", "beta"), nil), http.StatusOK)
		if after.Version != before.Version || after.Name != before.Name {
			t.Errorf("segment changed: version %d -> %d, name %q -> %q", before.Version, after.Version, before.Name, after.Name)
		}
	})
	refusals := []struct {
		name   string
		key    string
		ins    map[string]any
		status int
		part   string
	}{
		{"an unknown kind is a 400 listing the segment kinds", "beta", map[string]any{"kind": "turnFlagOn"}, http.StatusBadRequest, `kind "turnFlagOn" is not a segment instruction; supported kinds: addBigSegmentExcludedTargets`},
		{"a rule id the segment does not hold is a 400 naming it", "beta", map[string]any{"kind": "updateRuleDescription", "ruleId": "nope", "description": "x"}, http.StatusBadRequest, `rule "nope" does not exist in segment "beta"`},
		{"a missing segment is a 404 naming it", "ghost", map[string]any{"kind": "updateName", "value": "x"}, http.StatusNotFound, `segment "ghost" not found`},
	}
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			res := semantic(t, srv, ldSemanticType, "p", c.key, c.ins)
			apptest.WantStatus(t, res, c.status)
			if msg, _ := res.Map(t)["message"].(string); !strings.Contains(msg, c.part) {
				t.Errorf("answer %s, want it to say %s", res.Body, c.part)
			}
		})
	}
}

func TestSegmentSemanticPatchNeedsTheInstructionsActions(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	createSeg(t, srv, "p", "production", map[string]any{"key": "beta", "name": "Beta"})
	apptest.CreateRole(t, srv, "includer", "no_access",
		apptest.Statement("allow", []string{"proj/*:env/*:segment/*"}, []string{"updateIncluded"}))
	_, includer := srv.MustCreateToken(t, map[string]any{"name": "includer", "customRoleIds": []string{"includer"}})
	send := func(ins ...map[string]any) *apptest.Response {
		body := map[string]any{"instructions": ins}
		return srv.Do(t, http.MethodPatch, segPath("p", "production", "beta"), body, "Content-Type", ldSemanticType, "Authorization", includer)
	}
	cases := []struct {
		name   string
		ins    []map[string]any
		status int
	}{
		{"a role allowed updateIncluded adds included keys", []map[string]any{{"kind": "addIncludedUsers", "values": []string{"u1"}}}, http.StatusOK},
		{"it may not exclude keys (updateExcluded)", []map[string]any{{"kind": "addExcludedUsers", "values": []string{"u2"}}}, http.StatusForbidden},
		{"nor add a rule (updateRules), even beside an allowed instruction", []map[string]any{{"kind": "addIncludedUsers", "values": []string{"u3"}},
			{"kind": "addRule", "clauses": []map[string]any{{"attribute": "a", "op": "in", "values": []string{"b"}}}}}, http.StatusForbidden},
		{"nor rename the segment (updateName)", []map[string]any{{"kind": "updateName", "value": "x"}}, http.StatusForbidden},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { apptest.WantStatus(t, send(c.ins...), c.status) })
	}
	d := decodeSeg(t, srv.Do(t, http.MethodGet, segPath("p", "production", "beta"), nil), http.StatusOK)
	if !slices.Equal(d.Included, []string{"u1"}) || len(d.Excluded) != 0 || len(d.Rules) != 0 || d.Name != "Beta" {
		t.Errorf("segment %+v, want only u1 included", d)
	}
}
