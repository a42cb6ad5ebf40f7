package contextapi_test

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/flagplane/flagplane/shared/account"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/app/allgroups"
	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

// Flags are written straight into the table, as the flags service stores
// them (one item per flag in the project's partition), so these tests
// depend only on the stored model.

const evalEnv = "test"

func evalPath(p string, query ...string) string {
	path := apptest.ProjectPath(p) + "/environments/" + evalEnv + "/flags/evaluate"
	if len(query) > 0 {
		path += "?" + strings.Join(query, "&")
	}
	return path
}

// putFlags stores flags in project p.
func putFlags(t testing.TB, table store.Table, p string, flags ...flag.Flag) {
	t.Helper()
	for _, f := range flags {
		f.ProjectKey = p
		data, err := json.Marshal(f)
		if err != nil {
			t.Fatalf("encode flag %s: %v", f.Key, err)
		}
		k := store.FlagKey(p, f.Key)
		if err := table.Put(context.Background(), store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: data}, store.IfNotExists()); err != nil {
			t.Fatalf("store flag %s: %v", f.Key, err)
		}
	}
}

// newFlag is a flag serving values, with env as its targeting in evalEnv.
func newFlag(key string, values []any, env flag.EnvConfig) flag.Flag {
	f := flag.Flag{Key: key, Name: "Flag " + key, Kind: flag.KindMultivariate, Tags: []string{},
		Environments: map[string]*flag.EnvConfig{evalEnv: &env}}
	for i, v := range values {
		data, _ := json.Marshal(v)
		f.Variations = append(f.Variations, flag.Variation{ID: fmt.Sprintf("v%d", i), Value: data})
	}
	return f
}

// on is targeting that is on, falls through to variation fall and is off at variation off.
func on(fall, off int) flag.EnvConfig {
	return flag.EnvConfig{On: true, Salt: "salt", Fallthrough: flag.VariationOrRoll{Variation: new(fall)}, OffVariation: new(off)}
}

// ruleFlag serves "rule" to contexts matching every clause, "fallthrough" to others.
func ruleFlag(key string, clauses ...flag.Clause) flag.Flag {
	env := on(0, 0)
	env.Rules = []flag.Rule{{ID: "rule-" + key, Clauses: clauses, VariationOrRoll: flag.VariationOrRoll{Variation: new(1)}}}
	return newFlag(key, []any{"fallthrough", "rule"}, env)
}

func clause(attr, op string, values ...any) flag.Clause {
	c := flag.Clause{Attribute: attr, Op: op}
	for _, v := range values {
		data, _ := json.Marshal(v)
		c.Values = append(c.Values, data)
	}
	return c
}

func negated(c flag.Clause) flag.Clause { c.Negate = true; return c }

func ofKind(kind string, c flag.Clause) flag.Clause { c.ContextKind = kind; return c }

type evalReason struct {
	Kind            string `json:"kind"`
	RuleIndex       *int   `json:"ruleIndex"`
	RuleID          string `json:"ruleID"`
	PrerequisiteKey string `json:"prerequisiteKey"`
	InExperiment    bool   `json:"inExperiment"`
	ErrorKind       string `json:"errorKind"`
}

// String is the reason in one line: "RULE_MATCH 0 rule-x", "PREREQUISITE_FAILED pre", "ERROR MALFORMED_FLAG".
func (r evalReason) String() string {
	parts := []string{r.Kind}
	if r.RuleIndex != nil {
		parts = append(parts, strconv.Itoa(*r.RuleIndex))
	}
	for _, s := range []string{r.RuleID, r.PrerequisiteKey, r.ErrorKind} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if r.InExperiment {
		parts = append(parts, "inExperiment")
	}
	return strings.Join(parts, " ")
}

type evalLink struct {
	Href string `json:"href"`
	Type string `json:"type"`
}

type evalItem struct {
	Name   string              `json:"name"`
	Key    string              `json:"key"`
	Value  json.RawMessage     `json:"_value"`
	Reason evalReason          `json:"reason"`
	Links  map[string]evalLink `json:"_links"`
}

type evalPage struct {
	Items      []evalItem          `json:"items"`
	TotalCount int64               `json:"totalCount"`
	Links      map[string]evalLink `json:"_links"`
}

func (p evalPage) keys() []string {
	out := []string{}
	for _, it := range p.Items {
		out = append(out, it.Key)
	}
	return out
}

func (p evalPage) item(t testing.TB, key string) evalItem {
	t.Helper()
	for _, it := range p.Items {
		if it.Key == key {
			return it
		}
	}
	t.Fatalf("flag %q is not among the evaluations %v", key, p.keys())
	return evalItem{}
}

// evaluate posts ctx and decodes the 200 answer.
func evaluate(t testing.TB, srv *apptest.Server, p string, ctx any, query ...string) evalPage {
	t.Helper()
	res := srv.Do(t, http.MethodPost, evalPath(p, query...), ctx)
	apptest.WantStatus(t, res, http.StatusOK)
	var page evalPage
	res.JSON(t, &page)
	return page
}

// targetingFlags are the flags of TestEvaluateTargeting.
func targetingFlags() []flag.Flag {
	abc := []any{"a", "b", "c"}
	off := on(0, 1)
	off.On = false
	offNoVariation := off
	offNoVariation.OffVariation = nil
	targeted := on(0, 0)
	targeted.Targets = []flag.Target{{Values: []string{"alice", "carol"}, Variation: 2}}
	orgTargeted := on(0, 0)
	orgTargeted.Targets = []flag.Target{{Values: []string{"alice"}, Variation: 1}}
	orgTargeted.ContextTargets = []flag.Target{{ContextKind: "org", Values: []string{"acme"}, Variation: 2}}
	twoRules := on(0, 0)
	twoRules.Rules = []flag.Rule{
		{ID: "first", Clauses: []flag.Clause{clause("email", "endsWith", "@a.com")}, VariationOrRoll: flag.VariationOrRoll{Variation: new(1)}},
		{ID: "second", Clauses: []flag.Clause{clause("email", "endsWith", "@b.com")}, VariationOrRoll: flag.VariationOrRoll{Variation: new(2)}},
	}
	neverConfigured := newFlag("never-configured", []any{true, false}, flag.EnvConfig{})
	neverConfigured.Environments = nil
	neverConfigured.Defaults = flag.Defaults{OnVariation: 0, OffVariation: 1}

	preOn := on(0, 1)
	preOn.Targets = []flag.Target{{Values: []string{"alice"}, Variation: 1}}
	preOff := on(0, 0)
	preOff.On = false
	needs := func(key string, prereqs ...flag.Prerequisite) flag.Flag {
		env := on(0, 1)
		env.Prerequisites = prereqs
		return newFlag(key, []any{"full", "off-value"}, env)
	}
	archived := newFlag("archived-prerequisite", []any{true, false}, on(0, 0))
	archived.Archived = true
	noFallthrough := on(0, 0)
	noFallthrough.Fallthrough = flag.VariationOrRoll{}

	return []flag.Flag{
		newFlag("off", abc, off),
		newFlag("off-without-off-variation", abc, offNoVariation),
		neverConfigured,
		newFlag("targeted", abc, targeted),
		newFlag("org-targeted", abc, orgTargeted),
		ruleFlag("op-in", clause("email", "in", "a@example.com", "b@example.com")),
		ruleFlag("op-starts-with", clause("email", "startsWith", "admin@")),
		ruleFlag("op-ends-with", clause("email", "endsWith", "@example.com")),
		ruleFlag("op-contains", clause("name", "contains", "ann")),
		ruleFlag("op-matches", clause("email", "matches", `^[a-z]+[0-9]+@`)),
		ruleFlag("op-less-than", clause("age", "lessThan", 18)),
		ruleFlag("op-less-than-or-equal", clause("age", "lessThanOrEqual", 18)),
		ruleFlag("op-greater-than", clause("age", "greaterThan", 65)),
		ruleFlag("op-greater-than-or-equal", clause("age", "greaterThanOrEqual", 65)),
		ruleFlag("op-before", clause("signup", "before", "2024-01-01T00:00:00Z")),
		ruleFlag("op-after", clause("signup", "after", 1704067200000)),
		ruleFlag("op-semver-equal", clause("version", "semVerEqual", "2.0.0")),
		ruleFlag("op-semver-less-than", clause("version", "semVerLessThan", "2.0.0")),
		ruleFlag("op-semver-greater-than", clause("version", "semVerGreaterThan", "2.0.0")),
		ruleFlag("op-negate", negated(clause("email", "endsWith", "@example.com"))),
		ruleFlag("op-and", clause("email", "endsWith", "@example.com"), clause("age", "greaterThan", 30)),
		ruleFlag("op-org-plan", ofKind("org", clause("plan", "in", "enterprise"))),
		ruleFlag("op-nested", ofKind("user", clause("/address/city", "in", "Paris"))),
		ruleFlag("op-literal-slash", clause("/address/city", "in", "Paris")),
		ruleFlag("op-kind", clause("kind", "in", "org")),
		ruleFlag("op-segment", clause("segmentKey", "segmentMatch", "beta-testers")),
		ruleFlag("op-not-segment", negated(clause("segmentKey", "segmentMatch", "beta-testers"))),
		newFlag("two-rules", abc, twoRules),
		newFlag("prerequisite-on", []any{true, false}, preOn),
		newFlag("prerequisite-off", []any{true, false}, preOff),
		archived,
		needs("needs-prerequisite", flag.Prerequisite{Key: "prerequisite-on", Variation: 0}),
		needs("needs-off-prerequisite", flag.Prerequisite{Key: "prerequisite-off", Variation: 0}),
		needs("needs-missing-prerequisite", flag.Prerequisite{Key: "no-such-flag", Variation: 0}),
		needs("needs-archived-prerequisite", flag.Prerequisite{Key: "archived-prerequisite", Variation: 0}),
		needs("needs-chain", flag.Prerequisite{Key: "needs-prerequisite", Variation: 0}),
		newFlag("no-fallthrough", abc, noFallthrough),
		newFlag("bad-variation", []any{"only"}, on(5, 0)),
	}
}

func user(key string, attrs ...any) map[string]any {
	c := map[string]any{"kind": "user", "key": key}
	for i := 0; i+1 < len(attrs); i += 2 {
		c[attrs[i].(string)] = attrs[i+1]
	}
	return c
}

func TestEvaluateTargeting(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "ev")
	putFlags(t, srv.Table, "ev", targetingFlags()...)

	org := map[string]any{"kind": "org", "key": "acme", "plan": "enterprise"}
	multi := func(u map[string]any, o map[string]any) map[string]any {
		uu, oo := map[string]any{}, map[string]any{}
		for k, v := range u {
			if k != "kind" {
				uu[k] = v
			}
		}
		for k, v := range o {
			if k != "kind" {
				oo[k] = v
			}
		}
		return map[string]any{"kind": "multi", "user": uu, "org": oo}
	}
	cases := []struct {
		name    string
		flag    string
		context any
		value   string // JSON
		reason  string // evalReason.String()
	}{
		{"an off flag serves its off variation", "off", user("bob"), `"b"`, "OFF"},
		{"an off flag without an off variation serves null", "off-without-off-variation", user("bob"), `null`, "OFF"},
		{"a flag never configured in the environment is off at its default off variation", "never-configured", user("bob"), `false`, "OFF"},
		{"an individually targeted user gets the target's variation", "targeted", user("carol"), `"c"`, "TARGET_MATCH"},
		{"a user not targeted falls through", "targeted", user("bob"), `"a"`, "FALLTHROUGH"},
		{"user targets still apply beside context targets", "org-targeted", user("alice"), `"b"`, "TARGET_MATCH"},
		{"a context target matches its kind", "org-targeted", org, `"c"`, "TARGET_MATCH"},
		{"a context target matches that kind inside a multi-kind context", "org-targeted", multi(user("bob"), org), `"c"`, "TARGET_MATCH"},
		{"a context target of org does not match a user with the same key", "org-targeted", user("acme"), `"a"`, "FALLTHROUGH"},

		{"in matches any listed value", "op-in", user("u", "email", "b@example.com"), `"rule"`, "RULE_MATCH 0 rule-op-in"},
		{"in does not match an unlisted value", "op-in", user("u", "email", "c@example.com"), `"fallthrough"`, "FALLTHROUGH"},
		{"in matches when an array attribute holds a listed value", "op-in", user("u", "email", []any{"x@y.z", "a@example.com"}), `"rule"`, "RULE_MATCH 0 rule-op-in"},
		{"startsWith matches a prefix", "op-starts-with", user("u", "email", "admin@corp.io"), `"rule"`, "RULE_MATCH 0 rule-op-starts-with"},
		{"startsWith is case-sensitive", "op-starts-with", user("u", "email", "Admin@corp.io"), `"fallthrough"`, "FALLTHROUGH"},
		{"endsWith matches a suffix", "op-ends-with", user("u", "email", "ann@example.com"), `"rule"`, "RULE_MATCH 0 rule-op-ends-with"},
		{"endsWith does not match another suffix", "op-ends-with", user("u", "email", "ann@example.org"), `"fallthrough"`, "FALLTHROUGH"},
		{"contains matches a substring", "op-contains", user("u", "name", "Joanna"), `"rule"`, "RULE_MATCH 0 rule-op-contains"},
		{"contains does not match a missing attribute", "op-contains", user("u"), `"fallthrough"`, "FALLTHROUGH"},
		{"matches applies a regular expression", "op-matches", user("u", "email", "bob42@x.io"), `"rule"`, "RULE_MATCH 0 rule-op-matches"},
		{"matches fails when the expression does not", "op-matches", user("u", "email", "bob@x.io"), `"fallthrough"`, "FALLTHROUGH"},
		{"lessThan matches a smaller number", "op-less-than", user("u", "age", 17), `"rule"`, "RULE_MATCH 0 rule-op-less-than"},
		{"lessThan does not match an equal number", "op-less-than", user("u", "age", 18), `"fallthrough"`, "FALLTHROUGH"},
		{"lessThan does not compare a numeric string", "op-less-than", user("u", "age", "17"), `"fallthrough"`, "FALLTHROUGH"},
		{"lessThanOrEqual matches an equal number", "op-less-than-or-equal", user("u", "age", 18), `"rule"`, "RULE_MATCH 0 rule-op-less-than-or-equal"},
		{"greaterThan matches a larger number", "op-greater-than", user("u", "age", 65.5), `"rule"`, "RULE_MATCH 0 rule-op-greater-than"},
		{"greaterThan does not match an equal number", "op-greater-than", user("u", "age", 65), `"fallthrough"`, "FALLTHROUGH"},
		{"greaterThanOrEqual matches an equal number", "op-greater-than-or-equal", user("u", "age", 65), `"rule"`, "RULE_MATCH 0 rule-op-greater-than-or-equal"},
		{"before matches an earlier date in milliseconds", "op-before", user("u", "signup", 1700000000000), `"rule"`, "RULE_MATCH 0 rule-op-before"},
		{"before does not match a later RFC 3339 date", "op-before", user("u", "signup", "2024-06-01T00:00:00Z"), `"fallthrough"`, "FALLTHROUGH"},
		{"after matches a later RFC 3339 date", "op-after", user("u", "signup", "2024-01-01T00:00:01Z"), `"rule"`, "RULE_MATCH 0 rule-op-after"},
		{"after does not match the same instant", "op-after", user("u", "signup", 1704067200000), `"fallthrough"`, "FALLTHROUGH"},
		{"semVerEqual matches the same version", "op-semver-equal", user("u", "version", "2.0.0"), `"rule"`, "RULE_MATCH 0 rule-op-semver-equal"},
		{"semVerEqual reads a missing patch as zero", "op-semver-equal", user("u", "version", "2.0"), `"rule"`, "RULE_MATCH 0 rule-op-semver-equal"},
		{"semVerEqual does not match a pre-release", "op-semver-equal", user("u", "version", "2.0.0-rc.1"), `"fallthrough"`, "FALLTHROUGH"},
		{"semVerLessThan counts a pre-release as lower", "op-semver-less-than", user("u", "version", "2.0.0-rc.1"), `"rule"`, "RULE_MATCH 0 rule-op-semver-less-than"},
		{"semVerLessThan compares numerically, not as text", "op-semver-less-than", user("u", "version", "10.0.0"), `"fallthrough"`, "FALLTHROUGH"},
		{"semVerGreaterThan matches a higher minor version", "op-semver-greater-than", user("u", "version", "2.10.0"), `"rule"`, "RULE_MATCH 0 rule-op-semver-greater-than"},
		{"semVerGreaterThan ignores a value that is not a version", "op-semver-greater-than", user("u", "version", "three"), `"fallthrough"`, "FALLTHROUGH"},
		{"a negated clause matches what the clause does not", "op-negate", user("u", "email", "u@other.org"), `"rule"`, "RULE_MATCH 0 rule-op-negate"},
		{"a negated clause does not match what the clause does", "op-negate", user("u", "email", "u@example.com"), `"fallthrough"`, "FALLTHROUGH"},
		{"a negated clause does not match a missing attribute", "op-negate", user("u"), `"fallthrough"`, "FALLTHROUGH"},
		{"every clause of a rule must match", "op-and", user("u", "email", "u@example.com", "age", 31), `"rule"`, "RULE_MATCH 0 rule-op-and"},
		{"one failing clause fails the rule", "op-and", user("u", "email", "u@example.com", "age", 30), `"fallthrough"`, "FALLTHROUGH"},
		{"a clause of kind org reads the org of a multi-kind context", "op-org-plan", multi(user("bob", "plan", "free"), org), `"rule"`, "RULE_MATCH 0 rule-op-org-plan"},
		{"a clause of kind org does not read the user's attribute", "op-org-plan", user("bob", "plan", "enterprise"), `"fallthrough"`, "FALLTHROUGH"},
		{"a clause with a context kind reads an attribute reference", "op-nested", user("u", "address", map[string]any{"city": "Paris"}), `"rule"`, "RULE_MATCH 0 rule-op-nested"},
		{"a clause without a context kind reads the attribute name literally", "op-literal-slash", user("u", "/address/city", "Paris"), `"rule"`, "RULE_MATCH 0 rule-op-literal-slash"},
		{"a clause without a context kind is no reference", "op-literal-slash", user("u", "address", map[string]any{"city": "Paris"}), `"fallthrough"`, "FALLTHROUGH"},
		{"the kind attribute matches a kind of a multi-kind context", "op-kind", multi(user("bob"), org), `"rule"`, "RULE_MATCH 0 rule-op-kind"},
		{"segmentMatch never matches, as there are no segments", "op-segment", user("u"), `"fallthrough"`, "FALLTHROUGH"},
		{"a negated segmentMatch always matches", "op-not-segment", user("u"), `"rule"`, "RULE_MATCH 0 rule-op-not-segment"},
		{"the first matching rule wins and is named by index and id", "two-rules", user("u", "email", "u@b.com"), `"c"`, "RULE_MATCH 1 second"},

		{"a met prerequisite lets the flag fall through", "needs-prerequisite", user("bob"), `"full"`, "FALLTHROUGH"},
		{"a failed prerequisite serves the off variation", "needs-prerequisite", user("alice"), `"off-value"`, "PREREQUISITE_FAILED prerequisite-on"},
		{"an off prerequisite fails even when its off variation is the one required", "needs-off-prerequisite", user("bob"), `"off-value"`, "PREREQUISITE_FAILED prerequisite-off"},
		{"a missing prerequisite fails", "needs-missing-prerequisite", user("bob"), `"off-value"`, "PREREQUISITE_FAILED no-such-flag"},
		{"an archived prerequisite fails", "needs-archived-prerequisite", user("bob"), `"off-value"`, "PREREQUISITE_FAILED archived-prerequisite"},
		{"prerequisites are checked through a chain when met", "needs-chain", user("bob"), `"full"`, "FALLTHROUGH"},
		{"prerequisites are checked through a chain when failed", "needs-chain", user("alice"), `"off-value"`, "PREREQUISITE_FAILED needs-prerequisite"},

		{"targeting with neither variation nor rollout is malformed", "no-fallthrough", user("bob"), `null`, "ERROR MALFORMED_FLAG"},
		{"a variation index out of range is malformed", "bad-variation", user("bob"), `null`, "ERROR MALFORMED_FLAG"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			page := evaluate(t, srv, "ev", tc.context)
			it := page.item(t, tc.flag)
			if !apptest.SameJSON(t, it.Value, []byte(tc.value)) {
				t.Errorf("_value %s, want %s", it.Value, tc.value)
			}
			if got := it.Reason.String(); got != tc.reason {
				t.Errorf("reason %q, want %q", got, tc.reason)
			}
		})
	}

	t.Run("each item has the reference's shape and links", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, evalPath("ev"), user("bob"))
		apptest.WantStatus(t, res, http.StatusOK)
		var raw struct {
			Items []map[string]json.RawMessage `json:"items"`
		}
		res.JSON(t, &raw)
		for _, it := range raw.Items {
			for _, field := range []string{"name", "key", "_value", "reason", "_links"} {
				if _, ok := it[field]; !ok {
					t.Fatalf("item lacks %q: %v", field, it)
				}
			}
		}
		it := evaluate(t, srv, "ev", user("bob")).item(t, "op-in")
		if it.Name != "Flag op-in" {
			t.Errorf("name %q", it.Name)
		}
		if l := it.Links["self"]; l.Href != evalPath("ev") || l.Type != "application/json" {
			t.Errorf("self link %+v", l)
		}
		if l := it.Links["flag"]; l.Href != "/api/v2/flags/ev/op-in" {
			t.Errorf("flag link %+v", l)
		}
		if strings.Contains(string(res.Body), "inExperiment") || strings.Contains(string(res.Body), "ruleIndex\":null") {
			t.Errorf("reasons carry fields that do not apply: %s", res.Body)
		}
	})

	t.Run("archived flags are left out", func(t *testing.T) {
		page := evaluate(t, srv, "ev", user("bob"))
		if slices.Contains(page.keys(), "archived-prerequisite") {
			t.Errorf("archived flag evaluated: %v", page.keys())
		}
		if page.TotalCount != int64(len(targetingFlags())-1) {
			t.Errorf("totalCount %d, want %d", page.TotalCount, len(targetingFlags())-1)
		}
	})

	t.Run("other environments keep their own targeting", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, apptest.ProjectPath("ev")+"/environments/production/flags/evaluate", user("carol"))
		apptest.WantStatus(t, res, http.StatusOK)
		var page evalPage
		res.JSON(t, &page)
		if it := page.item(t, "targeted"); it.Reason.Kind != "OFF" || string(it.Value) != `"a"` {
			t.Errorf("targeted in production: %s %s, want the default targeting: off, at the default off variation 0", it.Value, it.Reason)
		}
	})

	t.Run("a reader token may evaluate", func(t *testing.T) {
		_, reader := srv.MustCreateToken(t, map[string]any{"name": "evaluating reader", "role": "reader"})
		res := srv.Do(t, http.MethodPost, evalPath("ev"), user("bob"), "Authorization", reader)
		apptest.WantStatus(t, res, http.StatusOK)
	})
}

// documentedBucket is LaunchDarkly's documented bucketing, written out
// independently of the SDK: SHA-1 of "<flagKey>.<salt>.<value>" (or of
// "<seed>.<value>" when the rollout has a seed), the first 15 hex digits
// as an integer, divided by 0xFFFFFFFFFFFFFFF.
func documentedBucket(prefix, value string) float64 {
	sum := sha1.Sum([]byte(prefix + "." + value))
	n, err := strconv.ParseUint(hex.EncodeToString(sum[:])[:15], 16, 64)
	if err != nil {
		panic(err)
	}
	return float64(n) / float64(0xFFFFFFFFFFFFFFF)
}

// documentedVariation walks the weights (thousandths of a percent) until
// the bucket falls below their running sum; past the end it is the last.
// nearEdge is true when the bucket is within 1e-6 of a boundary, where the
// SDK's single-precision arithmetic might round the other way.
func documentedVariation(bucket float64, weights []int) (variation int, nearEdge bool) {
	sum := 0.0
	for i, w := range weights {
		sum += float64(w) / 100000
		if math.Abs(bucket-sum) < 1e-6 {
			nearEdge = true
		}
		if bucket < sum {
			return i, nearEdge
		}
	}
	return len(weights) - 1, nearEdge
}

func rollout(weights []int, bucketBy, contextKind string, seed *int) *flag.Rollout {
	r := &flag.Rollout{BucketBy: bucketBy, ContextKind: contextKind, Seed: seed}
	for i, w := range weights {
		r.Variations = append(r.Variations, flag.WeightedVariation{Variation: i, Weight: w})
	}
	return r
}

func TestEvaluateRolloutsBucketAsDocumented(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "roll")
	values := []any{"v0", "v1", "v2"}
	threeWay := []int{30000, 45000, 25000}
	half := []int{50000, 50000, 0}

	withFallthrough := func(key, salt string, r *flag.Rollout) flag.Flag {
		env := on(0, 0)
		env.Salt = salt
		env.Fallthrough = flag.VariationOrRoll{Rollout: r}
		return newFlag(key, values, env)
	}
	ruleEnv := on(0, 0)
	ruleEnv.Salt = "rule-salt"
	ruleEnv.Rules = []flag.Rule{{ID: "to-example", Clauses: []flag.Clause{clause("email", "endsWith", "@example.com")},
		VariationOrRoll: flag.VariationOrRoll{Rollout: rollout(threeWay, "", "", nil)}}}
	putFlags(t, srv.Table, "roll",
		withFallthrough("by-key", "a1b2c3", rollout(threeWay, "", "", nil)),
		withFallthrough("by-attribute", "company-salt", rollout(threeWay, "company", "", nil)),
		withFallthrough("by-int-attribute", "int-salt", rollout(threeWay, "accountNumber", "", nil)),
		withFallthrough("by-seed", "ignored-salt", rollout(half, "", "", new(61))),
		withFallthrough("by-org", "org-salt", rollout(threeWay, "", "org", nil)),
		withFallthrough("by-org-attribute", "org-attr-salt", rollout(threeWay, "/billing/region", "org", nil)),
		newFlag("rule-rollout", values, ruleEnv),
	)

	type served struct {
		context any
		prefix  string // hash prefix: "<flagKey>.<salt>" or "<seed>"
		value   string // the bucketed value
		reason  string
	}
	cases := []struct {
		name     string
		flag     string
		weights  []int
		contexts func(i int) served
	}{
		{"a fallthrough rollout buckets by context key", "by-key", threeWay, func(i int) served {
			k := fmt.Sprintf("user-%d", i)
			return served{user(k), "by-key.a1b2c3", k, "FALLTHROUGH"}
		}},
		{"bucketBy buckets by the named attribute, not the key", "by-attribute", threeWay, func(i int) served {
			company := fmt.Sprintf("company-%d", i)
			return served{user(fmt.Sprintf("someone-%d", i*7), "company", company), "by-attribute.company-salt", company, "FALLTHROUGH"}
		}},
		{"an integer attribute is bucketed by its decimal form", "by-int-attribute", threeWay, func(i int) served {
			n := 1000 + i*37
			return served{user("u", "accountNumber", n), "by-int-attribute.int-salt", strconv.Itoa(n), "FALLTHROUGH"}
		}},
		{"a seed replaces the flag key and salt", "by-seed", half, func(i int) served {
			k := fmt.Sprintf("seeded-%d", i)
			return served{user(k), "61", k, "FALLTHROUGH"}
		}},
		{"a rollout of kind org buckets by the org's key", "by-org", threeWay, func(i int) served {
			o := fmt.Sprintf("org-%d", i)
			return served{map[string]any{"kind": "multi", "user": map[string]any{"key": "same-user"}, "org": map[string]any{"key": o}},
				"by-org.org-salt", o, "FALLTHROUGH"}
		}},
		{"a rollout of kind org buckets by an attribute reference", "by-org-attribute", threeWay, func(i int) served {
			region := fmt.Sprintf("region-%d", i)
			return served{map[string]any{"kind": "org", "key": "o", "billing": map[string]any{"region": region}},
				"by-org-attribute.org-attr-salt", region, "FALLTHROUGH"}
		}},
		{"a rule's rollout buckets as a fallthrough does", "rule-rollout", threeWay, func(i int) served {
			k := fmt.Sprintf("ruled-%d", i)
			return served{user(k, "email", k+"@example.com"), "rule-rollout.rule-salt", k, "RULE_MATCH 0 to-example"}
		}},
	}
	const contexts = 24
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[int]bool{}
			for i := range contexts {
				s := tc.contexts(i)
				want, nearEdge := documentedVariation(documentedBucket(s.prefix, s.value), tc.weights)
				if nearEdge {
					continue
				}
				it := evaluate(t, srv, "roll", s.context).item(t, tc.flag)
				wantValue := fmt.Sprintf("%q", values[want])
				if string(it.Value) != wantValue {
					t.Errorf("%q (bucket %.6f of %q): _value %s, want %s", s.value, documentedBucket(s.prefix, s.value), s.prefix, it.Value, wantValue)
				}
				if it.Reason.String() != s.reason {
					t.Errorf("%q: reason %q, want %q", s.value, it.Reason, s.reason)
				}
				seen[want] = true
			}
			if len(seen) < 2 {
				t.Errorf("the contexts fell in %d bucket(s); pick values that spread", len(seen))
			}
		})
	}

	t.Run("contexts with the same bucketBy value get the same variation", func(t *testing.T) {
		var got []string
		for _, k := range []string{"k1", "k2", "k3", "k4"} {
			got = append(got, string(evaluate(t, srv, "roll", user(k, "company", "initech")).item(t, "by-attribute").Value))
		}
		want, _ := documentedVariation(documentedBucket("by-attribute.company-salt", "initech"), threeWay)
		for _, g := range got {
			if g != fmt.Sprintf("%q", values[want]) {
				t.Fatalf("served %v, want %q for all", got, values[want])
			}
		}
	})

	t.Run("a context without the rollout's kind gets the first bucket", func(t *testing.T) {
		it := evaluate(t, srv, "roll", user("lonely")).item(t, "by-org")
		if string(it.Value) != `"v0"` {
			t.Errorf("_value %s, want \"v0\"", it.Value)
		}
	})
}

func TestEvaluateFilterSortAndPaging(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "evf")
	mk := func(key, name string, tags ...string) flag.Flag {
		f := newFlag(key, []any{true, false}, on(0, 1))
		f.Name, f.Tags = name, tags
		return f
	}
	archived := mk("dark-archived", "Dark archived", "ui", "beta")
	archived.Archived = true
	putFlags(t, srv.Table, "evf",
		mk("dark-mode", "Dark Mode", "ui", "beta"),
		mk("dark-mode-v2", "Dark mode v2", "ui"),
		mk("checkout", "New checkout, DARK launch", "beta", "q1"),
		mk("search", "Search", "beta", "q1", "ui"),
		archived,
	)
	all := []string{"checkout", "dark-mode", "dark-mode-v2", "search"}

	enc := func(filter string) string { return "filter=" + url.QueryEscape(filter) }
	cases := []struct {
		name  string
		query []string
		want  []string
	}{
		{"without a filter every live flag is evaluated, by key", nil, all},
		{"query matches keys and names ignoring case", []string{enc("query equals DARK")}, []string{"checkout", "dark-mode", "dark-mode-v2"}},
		{"a quoted query may hold a comma", []string{enc(`query equals "checkout, dark"`)}, []string{"checkout"}},
		{"tags keeps flags having every listed tag (JSON list)", []string{enc(`tags contains ["beta","q1"]`)}, []string{"checkout", "search"}},
		{"tags takes an unquoted list", []string{enc("tags contains [beta,q1]")}, []string{"checkout", "search"}},
		{"tags takes one bare tag", []string{enc("tags contains ui")}, []string{"dark-mode", "dark-mode-v2", "search"}},
		{"comma-separated filters combine", []string{enc(`query equals dark, tags contains ["beta"]`)}, []string{"checkout", "dark-mode"}},
		{"the field:value form of other lists works too", []string{enc("query:dark,tags:ui+beta")}, []string{"dark-mode"}},
		{"a query matching nothing returns no items", []string{enc("query equals nothing-like-this")}, []string{}},
		{"sort by descending key", []string{"sort=-key"}, []string{"search", "dark-mode-v2", "dark-mode", "checkout"}},
		{"sort by name", []string{"sort=name"}, []string{"dark-mode", "dark-mode-v2", "checkout", "search"}},
		{"limit and offset cut a page", []string{"limit=2", "offset=1"}, []string{"dark-mode", "dark-mode-v2"}},
		{"an offset past the end returns no items", []string{"offset=10"}, []string{}},
		{"limit -1 returns every flag", []string{"limit=-1"}, all},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			page := evaluate(t, srv, "evf", user("bob"), tc.query...)
			if got := page.keys(); !slices.Equal(got, tc.want) {
				t.Errorf("keys %v, want %v", got, tc.want)
			}
		})
	}

	t.Run("totalCount counts the filtered flags, not the page", func(t *testing.T) {
		page := evaluate(t, srv, "evf", user("bob"), enc("tags contains ui"), "limit=1")
		if page.TotalCount != 3 || len(page.Items) != 1 {
			t.Errorf("totalCount %d with %d items, want 3 with 1", page.TotalCount, len(page.Items))
		}
	})

	t.Run("a page links to its neighbours, keeping the filter", func(t *testing.T) {
		page := evaluate(t, srv, "evf", user("bob"), "limit=2", "offset=1", enc("query equals a"))
		for name, off := range map[string]string{"self": "1", "next": "3", "prev": "0", "first": "0", "last": "2"} {
			l, ok := page.Links[name]
			if !ok {
				t.Fatalf("no %s link: %v", name, page.Links)
			}
			q := apptest.Query(t, l.Href)
			if q.Get("offset") != off || q.Get("limit") != "2" || q.Get("filter") != "query equals a" {
				t.Errorf("%s link %q, want offset %s, limit 2 and the filter", name, l.Href, off)
			}
			if !strings.HasPrefix(l.Href, evalPath("evf")+"?") {
				t.Errorf("%s link %q is not the evaluate path", name, l.Href)
			}
		}
	})

	t.Run("without a limit only self is linked", func(t *testing.T) {
		page := evaluate(t, srv, "evf", user("bob"))
		if len(page.Links) != 1 || page.Links["self"].Href != evalPath("evf") {
			t.Errorf("links %v", page.Links)
		}
	})

	bad := []struct {
		name  string
		query string
		parts []string
	}{
		{"an unknown filter field is refused", enc("owner equals me"), []string{"owner", "query, tags"}},
		{"query takes only equals", enc("query contains dark"), []string{"equals", "contains"}},
		{"tags takes only contains", enc("tags equals ui"), []string{"contains"}},
		{"an empty tag list is refused", enc("tags contains []"), []string{"at least one tag"}},
		{"an unclosed tag list is refused", enc("tags contains [ui"), []string{"closing"}},
		{"a filter field given twice is refused", enc("query equals a,query equals b"), []string{"twice"}},
		{"a filter entry without an operator is refused", enc("query"), []string{"field operator value"}},
		{"an unknown sort field is refused", "sort=created", []string{"created"}},
		{"limit 0 is refused", "limit=0", []string{"limit"}},
		{"a limit below -1 is refused", "limit=-2", []string{"limit"}},
		{"a negative offset is refused", "offset=-1", []string{"offset"}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			res := srv.Do(t, http.MethodPost, evalPath("evf", tc.query), user("bob"))
			apptest.WantError(t, res, http.StatusBadRequest, "invalid_request", tc.parts...)
		})
	}
}

func TestEvaluateRefusesInvalidContexts(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "evc")
	putFlags(t, srv.Table, "evc", newFlag("f", []any{true, false}, on(0, 1)))

	cases := []struct {
		name  string
		body  string
		parts []string
	}{
		{"an empty body", ``, []string{"required"}},
		{"a body that is not JSON", `{"kind":`, []string{"not valid JSON"}},
		{"an array", `[{"kind":"user","key":"u"}]`, []string{"object"}},
		{"null", `null`, []string{"null"}},
		{"a context without a kind", `{"key":"u1","name":"Old-style user"}`, []string{`"kind" is required`}},
		{"a kind that is not a string", `{"kind":5,"key":"u"}`, []string{`"kind" must be a string`}},
		{"an empty kind", `{"kind":"","key":"u"}`, []string{"context kind cannot be empty"}},
		{"the kind named kind", `{"kind":"kind","key":"u"}`, []string{`"kind" is not a valid context kind`}},
		{"a kind with disallowed characters", `{"kind":"us er","key":"u"}`, []string{"disallowed characters"}},
		{"a context without a key", `{"kind":"user","name":"x"}`, []string{`"key" property not found`}},
		{"an empty key", `{"kind":"user","key":""}`, []string{"context key must not be empty"}},
		{"a null key", `{"kind":"user","key":null}`, []string{"must not be null"}},
		{"a key that is not a string", `{"kind":"user","key":5}`, []string{"invalid context"}},
		{"a multi-kind context without kinds", `{"kind":"multi"}`, []string{"at least one kind"}},
		{"a multi-kind context with a kind lacking its key", `{"kind":"multi","user":{"key":"u"},"org":{"name":"Acme"}}`, []string{`kind "org"`, `"key" property not found`}},
		{"a multi-kind context with a kind that is not an object", `{"kind":"multi","user":"u"}`, []string{`kind "user"`, "must be an object"}},
	}
	for _, tc := range cases {
		t.Run(tc.name+" is refused with 400", func(t *testing.T) {
			res := srv.Do(t, http.MethodPost, evalPath("evc"), []byte(tc.body))
			apptest.WantError(t, res, http.StatusBadRequest, "invalid_request", tc.parts...)
		})
	}

	t.Run("an unknown project is 404", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, apptest.API+"/projects/nope/environments/test/flags/evaluate", user("u"))
		apptest.WantError(t, res, http.StatusNotFound, "not_found", `project "nope"`)
	})
	t.Run("an unknown environment is 404", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, apptest.API+"/projects/evc/environments/nope/flags/evaluate", user("u"))
		apptest.WantError(t, res, http.StatusNotFound, "not_found", `environment "nope"`)
	})
	t.Run("a project without flags evaluates to an empty list", func(t *testing.T) {
		srv.MustCreateProject(t, "evc-empty")
		page := evaluate(t, srv, "evc-empty", user("u"))
		if page.TotalCount != 0 || page.Items == nil || len(page.Items) != 0 {
			t.Errorf("page %+v, want items [] and totalCount 0", page)
		}
	})
}

// writeRecorder is a table that notes every write asked of it.
type writeRecorder struct {
	store.Table
	mu     sync.Mutex
	writes []string
}

func (w *writeRecorder) note(what string, k store.Key) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, what+" "+k.PK+"/"+k.SK)
}

func (w *writeRecorder) Put(ctx context.Context, it store.Item, c store.Cond) error {
	w.note("put", it.Key())
	return w.Table.Put(ctx, it, c)
}

func (w *writeRecorder) Delete(ctx context.Context, k store.Key, c store.Cond) error {
	w.note("delete", k)
	return w.Table.Delete(ctx, k, c)
}

func (w *writeRecorder) Transact(ctx context.Context, ws []store.Write) error {
	for _, x := range ws {
		w.note("transact", x.Item.Key())
	}
	return w.Table.Transact(ctx, ws)
}

func (w *writeRecorder) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.writes
	w.writes = nil
	return out
}

func TestEvaluateWritesNothing(t *testing.T) {
	table, err := bolt.Open(filepath.Join(t.TempDir(), "flagplane.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { table.Close() })
	rec := &writeRecorder{Table: table}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	acct, token, err := account.Bootstrap(context.Background(), rec, audit.Discard{}, logger)
	if err != nil {
		t.Fatal(err)
	}
	h, err := app.New(rec, audit.Discard{}, app.Settings{Approvals: true, AccountID: acct.ID}, logger, allgroups.List()...).Handler("")
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	post := func(path string, body any) int {
		t.Helper()
		data, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, hs.URL+path, bytes.NewReader(data))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", token)
		res, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		_, _ = io.Copy(io.Discard, res.Body)
		return res.StatusCode
	}
	if s := post(apptest.API+"/projects", map[string]any{"key": "evw", "name": "Writes"}); s != http.StatusCreated {
		t.Fatalf("create project: %d", s)
	}
	putFlags(t, table, "evw", targetingFlags()...)
	rec.take() // the setup wrote, and the token's lastUsed is now fresh

	requests := []struct {
		name string
		path string
		body any
		want int
	}{
		{"a user context", evalPath("evw"), user("alice", "email", "a@example.com"), http.StatusOK},
		{"a multi-kind context", evalPath("evw"), map[string]any{"kind": "multi", "user": map[string]any{"key": "bob"}, "org": map[string]any{"key": "acme"}}, http.StatusOK},
		{"a filtered page", evalPath("evw", "filter=query%20equals%20op", "limit=3", "offset=2"), user("carol"), http.StatusOK},
		{"an invalid context", evalPath("evw"), map[string]any{"kind": "user"}, http.StatusBadRequest},
		{"an unknown environment", apptest.API + "/projects/evw/environments/nope/flags/evaluate", user("u"), http.StatusNotFound},
	}
	for _, r := range requests {
		if s := post(r.path, r.body); s != r.want {
			t.Fatalf("%s: status %d, want %d", r.name, s, r.want)
		}
		if w := rec.take(); len(w) > 0 {
			t.Errorf("evaluating %s wrote %v; it must write nothing", r.name, w)
		}
	}
}
