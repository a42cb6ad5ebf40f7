package sdkapi_test

// The proof that segments reach LaunchDarkly's SDKs as LaunchDarkly serves
// them: flags whose rules match segments (listed keys by context kind,
// rules with clauses, weighted rules by context kind and bucket attribute,
// a segment matching another, a negated match) evaluate in the real Go
// server SDK exactly as in flagplane's evaluate operation, polling and
// streaming, and a segment change reaches a streaming SDK.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"
	ld "github.com/launchdarkly/go-server-sdk/v7"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// mustSegment creates a segment of the environment through the API and
// gives it fields (included, excluded, includedContexts, excludedContexts,
// rules).
func mustSegment(tb testing.TB, srv *apptest.Server, project, envKey, key string, fields map[string]any) {
	tb.Helper()
	if res := srv.Do(tb, http.MethodPost, "/api/v2/segments/"+project+"/"+envKey, map[string]any{"key": key, "name": "Segment " + key}); res.Status != http.StatusCreated {
		tb.Fatalf("create segment %q: %d %s", key, res.Status, res.Body)
	}
	if len(fields) > 0 {
		mustPatchSegment(tb, srv, project, envKey, key, fields)
	}
}

// mustPatchSegment replaces fields of a segment by JSON patch, through the API.
func mustPatchSegment(tb testing.TB, srv *apptest.Server, project, envKey, key string, fields map[string]any) {
	tb.Helper()
	var ops []map[string]any
	for path, v := range fields {
		ops = append(ops, map[string]any{"op": "replace", "path": "/" + path, "value": v})
	}
	if res := srv.Do(tb, http.MethodPatch, "/api/v2/segments/"+project+"/"+envKey+"/"+key, ops); res.Status != http.StatusOK {
		tb.Fatalf("patch segment %q: %d %s", key, res.Status, res.Body)
	}
}

// clause is a rule clause of a flag or a segment.
func clause(attribute, op string, values ...any) map[string]any {
	return map[string]any{"attribute": attribute, "op": op, "values": values}
}

// segmentRule is a segment rule; weight (in thousandths of a percent,
// 0 for none) takes that share of the contexts that match, bucketed by
// bucketBy of rolloutContextKind.
func segmentRule(id string, weight int, rolloutContextKind, bucketBy string, clauses ...map[string]any) map[string]any {
	r := map[string]any{"_id": id, "clauses": clauses}
	if weight > 0 {
		r["weight"] = weight
		if rolloutContextKind != "" {
			r["rolloutContextKind"] = rolloutContextKind
		}
		if bucketBy != "" {
			r["bucketBy"] = bucketBy
		}
	}
	return r
}

// segmentProject builds the proof project's segments and the flags that
// use them in the test environment, and returns the flags' keys.
func segmentProject(tb testing.TB, srv *apptest.Server) []string {
	tb.Helper()
	srv.MustCreateProject(tb, "proof")
	const p, e = "proof", "test"
	// Listed keys, by kind: users in, one user out, an org in, an org out
	// (its rule would match it), and a rule on email.
	mustSegment(tb, srv, p, e, "beta", map[string]any{
		"included":         []string{"user-1", "user-2", "user-3"},
		"excluded":         []string{"user-6"},
		"includedContexts": []map[string]any{{"contextKind": "org", "values": []string{"org-1"}}},
		"excludedContexts": []map[string]any{{"contextKind": "org", "values": []string{"org-3"}}},
		"rules":            []map[string]any{segmentRule("r-email", 0, "", "", clause("email", "endsWith", "@corp.example"))},
	})
	// Rules only: an org attribute, and an age range in one rule.
	mustSegment(tb, srv, p, e, "enterprise", map[string]any{
		"rules": []map[string]any{
			segmentRule("r-plan", 0, "", "", map[string]any{"contextKind": "org", "attribute": "plan", "op": "in", "values": []string{"enterprise"}}),
			segmentRule("r-age", 0, "", "", clause("age", "greaterThanOrEqual", 50), clause("age", "lessThan", 55)),
		},
	})
	// Weighted rules: half the users of some countries by country, and a
	// third of the orgs, bucketed by org key.
	mustSegment(tb, srv, p, e, "rollout", map[string]any{
		"rules": []map[string]any{
			segmentRule("r-half", 50000, "user", "country", clause("country", "in", "de", "us")),
			segmentRule("r-orgs", 33000, "org", "", map[string]any{"contextKind": "org", "attribute": "key", "op": "startsWith", "values": []string{"org-"}}),
			segmentRule("r-key", 40000, "", "", clause("age", "greaterThan", 30)),
		},
	})
	// A segment of another segment's members older than 25.
	mustSegment(tb, srv, p, e, "nested", map[string]any{
		"rules": []map[string]any{segmentRule("r-nested", 0, "", "", map[string]any{"op": "segmentMatch", "values": []string{"beta"}}, clause("age", "greaterThan", 25))},
	})

	type rule struct {
		negate bool
		segs   []string
	}
	flags := []struct {
		key   string
		rules []rule
	}{
		{"seg-beta", []rule{{false, []string{"beta"}}}},
		{"seg-enterprise-or-rollout", []rule{{false, []string{"enterprise", "rollout"}}}},
		{"seg-not-nested", []rule{{true, []string{"nested"}}}},
		{"seg-rules-in-order", []rule{{false, []string{"nested"}}, {false, []string{"rollout"}}, {false, []string{"beta"}}}},
	}
	var keys []string
	for _, f := range flags {
		mustFlag(tb, srv, p, f.key, map[string]any{"variations": []map[string]any{{"value": "a"}, {"value": "b"}, {"value": "c"}, {"value": "d"}}})
		var rules []map[string]any
		for i, r := range f.rules {
			rules = append(rules, map[string]any{"variation": i,
				"clauses": []map[string]any{{"attribute": "", "op": "segmentMatch", "values": r.segs, "negate": r.negate}}})
		}
		mustPatch(tb, srv, p, f.key, on(e, true),
			map[string]any{"op": "replace", "path": "/environments/" + e + "/rules", "value": rules},
			map[string]any{"op": "replace", "path": "/environments/" + e + "/fallthrough", "value": map[string]any{"variation": 3}})
		keys = append(keys, f.key)
	}
	return keys
}

// segmentContexts are users, orgs and multi-kind contexts that land in
// and out of every segment.
func segmentContexts() []ldcontext.Context {
	out := contexts()
	for i := 0; i < 12; i++ {
		org := ldcontext.NewBuilder(fmt.Sprintf("org-%d", i)).Kind("org").SetString("plan", []string{"free", "enterprise", "team"}[i%3]).Build()
		out = append(out, org)
	}
	for i := 0; i < 8; i++ {
		user := ldcontext.NewBuilder(fmt.Sprintf("user-%d", i)).SetString("country", "de").SetInt("age", 48+i).Build()
		org := ldcontext.NewBuilder(fmt.Sprintf("org-%d", i)).Kind("org").SetString("plan", "free").Build()
		out = append(out, ldcontext.NewMulti(user, org))
	}
	return out
}

func TestLaunchDarklyServerSDKWithSegments(t *testing.T) {
	srv := apptest.New(t)
	keys := segmentProject(t, srv)
	e := mustEnv(t, srv, "proof", "test")
	variations := variationsOf(t, srv, keys)

	eachDataSource(t, srv, e.SDKKey, "evaluates flags matching segments for every context as the evaluate operation does", func(t *testing.T, client *ld.LDClient) {
		// Every flag must both serve a segment rule and fall through,
		// or segments would not be what decides.
		served := map[string]map[int]int{}
		for _, c := range segmentContexts() {
			for k, w := range agree(t, srv, client, c, keys, variations) {
				if served[k] == nil {
					served[k] = map[int]int{}
				}
				served[k][indexOf(variations[k], w.Value)]++
			}
		}
		for _, k := range keys {
			if served[k][3] == 0 || len(served[k]) < 2 {
				t.Errorf("%s served %v: the contexts do not cover both a segment match and the fallthrough", k, served[k])
			}
		}
		t.Logf("variations served by flag: %v", served)
	})

	t.Run("a segment change made through the API reaches the streaming SDK within a second", func(t *testing.T) {
		client, updates := streamingUpdates(t, srv, e.SDKKey)
		c := ldcontext.New("user-new")
		if got, _ := client.StringVariation("seg-beta", c, ""); got != "d" {
			t.Fatalf("before: %q, want the fallthrough d", got)
		}
		mustPatchSegment(t, srv, "proof", "test", "beta", map[string]any{"included": []string{"user-1", "user-new"}})
		deadline := time.After(time.Second)
		for {
			select {
			case ev := <-updates:
				if ev.Key != "seg-beta" {
					continue // other flags use beta too
				}
				if got, _ := client.StringVariation("seg-beta", c, ""); got != "a" {
					t.Fatalf("after: %q, want a", got)
				}
				if w := evaluate(t, srv, c)["seg-beta"]; !jsonEqual(w.Value, json.RawMessage(`"a"`)) {
					t.Fatalf("evaluate after: %s", w.Value)
				}
				return
			case <-deadline:
				t.Fatal("no change of seg-beta within a second")
			}
		}
	})

	t.Run("the payload carries each segment once, in the SDKs' model", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, "/sdk/latest-all", nil, "Authorization", e.SDKKey)
		var doc struct {
			Segments map[string]struct {
				Key      string           `json:"key"`
				Version  int              `json:"version"`
				Salt     string           `json:"salt"`
				Rules    []map[string]any `json:"rules"`
				Included []string         `json:"included"`
			} `json:"segments"`
		}
		res.JSON(t, &doc)
		if len(doc.Segments) != 4 {
			t.Fatalf("segments %s", res.Body)
		}
		if r := doc.Segments["rollout"].Rules; len(r) != 3 || r[0]["weight"] != float64(50000) || r[0]["bucketBy"] != "country" || r[1]["rolloutContextKind"] != "org" {
			t.Fatalf("rollout rules %v", r)
		}
		if b := doc.Segments["beta"]; b.Key != "beta" || b.Salt == "" || b.Version < 2 {
			t.Fatalf("beta %+v", b)
		}
	})

	t.Run("a segment change gives the payload a new ETag", func(t *testing.T) {
		etag := srv.Do(t, http.MethodGet, "/sdk/latest-all", nil, "Authorization", e.SDKKey).Header.Get("ETag")
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, "/sdk/latest-all", nil, "Authorization", e.SDKKey, "If-None-Match", etag), http.StatusNotModified)
		mustPatchSegment(t, srv, "proof", "test", "enterprise", map[string]any{"excluded": []string{"user-50"}})
		res := srv.Do(t, http.MethodGet, "/sdk/latest-all", nil, "Authorization", e.SDKKey, "If-None-Match", etag)
		if res.Status != http.StatusOK || res.Header.Get("ETag") == etag || !strings.Contains(string(res.Body), `"user-50"`) {
			t.Fatalf("after the change: %d, ETag %s (was %s)", res.Status, res.Header.Get("ETag"), etag)
		}
	})
}

// TestBigSegmentMembersInEvaluations: a flag matching a big segment serves
// its rule to the segment's members, in /flags/evaluate and in client-side
// evaluations, as LaunchDarkly's do (server-side SDKs read members from
// their big segment store: see the featurestores tier).
func TestBigSegmentMembersInEvaluations(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "proof")
	apptest.WantStatus(t, srv.Do(t, http.MethodPost, "/api/v2/segments/proof/test", map[string]any{"key": "big", "name": "Big", "unbounded": true}), http.StatusCreated)
	apptest.WantStatus(t, srv.Do(t, http.MethodPost, "/api/v2/segments/proof/test/big/users", map[string]any{
		"included": map[string]any{"add": []string{"member", "both"}},
		"excluded": map[string]any{"add": []string{"excluded", "both"}},
	}), http.StatusNoContent)
	mustFlag(t, srv, "proof", "gate", map[string]any{"clientSideAvailability": map[string]any{"usingEnvironmentId": true, "usingMobileKey": true}})
	mustPatch(t, srv, "proof", "gate", on("test", true),
		map[string]any{"op": "replace", "path": "/environments/test/fallthrough", "value": map[string]any{"variation": 1}},
		map[string]any{"op": "replace", "path": "/environments/test/rules", "value": []map[string]any{
			{"variation": 0, "clauses": []map[string]any{{"attribute": "", "op": "segmentMatch", "values": []string{"big"}}}}}})
	e := mustEnv(t, srv, "proof", "test")
	for _, c := range []struct {
		name, key string
		want      bool
	}{
		{"a member is matched", "member", true},
		{"an excluded key is not", "excluded", false},
		{"a key on both lists is matched, inclusion first", "both", true},
		{"a key on neither is not", "stranger", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := ldcontext.New(c.key)
			w := evaluate(t, srv, ctx)["gate"]
			if got := string(w.Value) == "true"; got != c.want {
				t.Errorf("evaluate serves %s (%s), want %v", w.Value, w.Reason.Kind, c.want)
			}
			body, _ := json.Marshal(ctx)
			res := srv.Do(t, "REPORT", "/sdk/evalx/"+e.ClientSideID+"/context", body)
			var flags map[string]struct {
				Value bool `json:"value"`
			}
			res.JSON(t, &flags)
			if flags["gate"].Value != c.want {
				t.Errorf("client-side evaluation serves %v, want %v: %s", flags["gate"].Value, c.want, res.Body)
			}
		})
	}
}
