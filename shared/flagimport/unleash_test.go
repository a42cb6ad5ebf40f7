package flagimport

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/flag"
)

func strategy(id, name string, params map[string]any, constraints ...unleashConstraint) unleashStrategy {
	return unleashStrategy{ID: id, Name: name, Parameters: params, Constraints: constraints}
}

func encode(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func TestUnleashTargetingMapsStrategiesToRules(t *testing.T) {
	on, off := 0, 1
	cases := []struct {
		name            string
		env             unleashEnv
		wantRules       string
		wantFallthrough flag.VariationOrRoll
	}{
		{"an enabled environment without strategies serves true to everyone",
			unleashEnv{Name: "production", Enabled: true}, `[]`, flag.VariationOrRoll{Variation: &on}},
		{"disabled strategies do not count, so an environment with only those serves true",
			unleashEnv{Name: "production", Enabled: true, Strategies: []unleashStrategy{{ID: "s1", Name: "default", Disabled: true}}}, `[]`, flag.VariationOrRoll{Variation: &on}},
		{"a strategy enabling everyone makes the others moot, even one that could not be imported",
			unleashEnv{Name: "production", Enabled: true, Strategies: []unleashStrategy{
				strategy("s1", "default", nil, unleashConstraint{ContextName: "userId", Operator: "IN", Values: []string{"alice"}}),
				strategy("s2", "default", nil),
				{ID: "s3", Name: "default", Segments: []json.RawMessage{json.RawMessage("1")}},
			}},
			`[]`, flag.VariationOrRoll{Variation: &on}},
		{"rules serving true come before rollouts, since Unleash enables when any strategy does, and the largest rollout of everyone is the default rule",
			unleashEnv{Name: "production", Enabled: true, Strategies: []unleashStrategy{
				{ID: "r", Name: "flexibleRollout", SortOrder: 0, Parameters: map[string]any{"rollout": "10"},
					Constraints: []unleashConstraint{{ContextName: "country", Operator: "IN", Values: []string{"NO"}}}},
				{ID: "t", Name: "default", SortOrder: 1, Constraints: []unleashConstraint{{ContextName: "userId", Operator: "IN", Values: []string{"alice"}}}},
				{ID: "a", Name: "flexibleRollout", SortOrder: 2, Parameters: map[string]any{"rollout": "30"}},
				{ID: "b", Name: "flexibleRollout", SortOrder: 3, Parameters: map[string]any{"rollout": "50"}},
			}},
			`[{"_id":"t","description":"default","clauses":[{"_id":"t-c0","attribute":"key","op":"in","values":["alice"],"negate":false}],"trackEvents":false,"variation":0},` +
				`{"_id":"r","description":"flexibleRollout","clauses":[{"_id":"r-c0","attribute":"country","op":"in","values":["NO"],"negate":false}],"trackEvents":false,` +
				`"rollout":{"variations":[{"variation":0,"weight":10000},{"variation":1,"weight":90000}]}}]`,
			flag.VariationOrRoll{Rollout: &flag.Rollout{Variations: []flag.WeightedVariation{{Variation: 0, Weight: 50000}, {Variation: 1, Weight: 50000}}}}},
		{"strategies keep their sort order, and contexts none enables get false",
			unleashEnv{Name: "production", Enabled: true, Strategies: []unleashStrategy{
				{ID: "b", Name: "default", SortOrder: 2, Constraints: []unleashConstraint{{ContextName: "plan", Operator: "NOT_IN", Values: []string{"free"}}}},
				{ID: "a", Name: "default", SortOrder: 1, Constraints: []unleashConstraint{{ContextName: "age", Operator: "NUM_GTE", Value: "18", Inverted: true}}},
			}},
			`[{"_id":"a","description":"default","clauses":[{"_id":"a-c0","attribute":"age","op":"greaterThanOrEqual","values":[18],"negate":true}],"trackEvents":false,"variation":0},` +
				`{"_id":"b","description":"default","clauses":[{"_id":"b-c0","attribute":"plan","op":"in","values":["free"],"negate":true}],"trackEvents":false,"variation":0}]`,
			flag.VariationOrRoll{Variation: &off}},
		{"a gradual rollout becomes a percentage rollout by its stickiness",
			unleashEnv{Name: "production", Enabled: true, Strategies: []unleashStrategy{
				strategy("r", "flexibleRollout", map[string]any{"rollout": "25", "stickiness": "sessionId"},
					unleashConstraint{ContextName: "email", Operator: "STR_ENDS_WITH", Values: []string{"@example.com"}}),
			}},
			`[{"_id":"r","description":"flexibleRollout","clauses":[{"_id":"r-c0","attribute":"email","op":"endsWith","values":["@example.com"],"negate":false}],"trackEvents":false,` +
				`"rollout":{"variations":[{"variation":0,"weight":25000},{"variation":1,"weight":75000}],"bucketBy":"sessionId"}}]`,
			flag.VariationOrRoll{Variation: &off}},
		{"a rollout of 0% enables nobody and adds no rule",
			unleashEnv{Name: "production", Enabled: true, Strategies: []unleashStrategy{strategy("r", "flexibleRollout", map[string]any{"rollout": "0"})}},
			`[]`, flag.VariationOrRoll{Variation: &off}},
		{"a rollout of 100% without constraints is the default rule, a number parameter as well as a string",
			unleashEnv{Name: "production", Enabled: true, Strategies: []unleashStrategy{strategy("r", "flexibleRollout", map[string]any{"rollout": float64(100)})}},
			`[]`, flag.VariationOrRoll{Variation: &on}},
		{"the older user-id, address and host strategies become list clauses",
			unleashEnv{Name: "production", Enabled: true, Strategies: []unleashStrategy{
				strategy("u", "userWithId", map[string]any{"userIds": "a, b"}),
				strategy("i", "remoteAddress", map[string]any{"IPs": "10.0.0.1"}),
				strategy("h", "applicationHostname", map[string]any{"hostNames": "web-1"}),
			}},
			`[{"_id":"u","description":"userWithId","clauses":[{"_id":"u-key","attribute":"key","op":"in","values":["a","b"],"negate":false}],"trackEvents":false,"variation":0},` +
				`{"_id":"i","description":"remoteAddress","clauses":[{"_id":"i-remoteAddress","attribute":"remoteAddress","op":"in","values":["10.0.0.1"],"negate":false}],"trackEvents":false,"variation":0},` +
				`{"_id":"h","description":"applicationHostname","clauses":[{"_id":"h-hostname","attribute":"hostname","op":"in","values":["web-1"],"negate":false}],"trackEvents":false,"variation":0}]`,
			flag.VariationOrRoll{Variation: &off}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, problem := unleashTargeting(tc.env, nil)
			if problem != "" {
				t.Fatalf("problem %q", problem)
			}
			if got := encode(t, c.Rules); got != tc.wantRules {
				t.Errorf("rules\n got %s\nwant %s", got, tc.wantRules)
			}
			if got, want := encode(t, c.Fallthrough), encode(t, tc.wantFallthrough); got != want {
				t.Errorf("fallthrough %s, want %s", got, want)
			}
			if c.On != tc.env.Enabled || c.OffVariation == nil || *c.OffVariation != off {
				t.Errorf("on %v off variation %v", c.On, c.OffVariation)
			}
		})
	}
}

func TestUnleashFeaturesFlagplaneCannotExpressAreProblems(t *testing.T) {
	cases := []struct {
		name     string
		strategy unleashStrategy
		want     string
	}{
		{"a segment Unleash does not list", unleashStrategy{ID: "s", Name: "default", Segments: []json.RawMessage{json.RawMessage("9")}}, "segment 9 is not among"},
		{"a segment with a constraint flagplane cannot express", unleashStrategy{ID: "s", Name: "default", Segments: []json.RawMessage{json.RawMessage("2")}}, `segment "Night owls" (2): constraint 0: constraints on the current time`},
		{"strategy variants", unleashStrategy{ID: "s", Name: "default", Variants: []json.RawMessage{json.RawMessage(`{}`)}}, "variants"},
		{"a custom strategy", strategy("s", "myCustom", nil), "custom strategies"},
		{"a case-insensitive string constraint", strategy("s", "default", nil, unleashConstraint{ContextName: "email", Operator: "STR_CONTAINS", Values: []string{"x"}, CaseInsensitive: true}), "case-insensitive"},
		{"a constraint on the current time", strategy("s", "default", nil, unleashConstraint{ContextName: "currentTime", Operator: "DATE_AFTER", Value: "2026-01-01T00:00:00Z"}), "current time"},
		{"an unknown operator", strategy("s", "default", nil, unleashConstraint{ContextName: "x", Operator: "REGEX", Values: []string{"x"}}), "REGEX"},
		{"a numeric constraint on a value that is no number", strategy("s", "default", nil, unleashConstraint{ContextName: "age", Operator: "NUM_GT", Value: "old"}), "not a number"},
		{"an address range", strategy("s", "remoteAddress", map[string]any{"IPs": "10.0.0.0/8"}), "CIDR"},
		{"a rollout that is no percentage", strategy("s", "flexibleRollout", map[string]any{"rollout": "150"}), "percentage"},
	}
	for _, tc := range cases {
		t.Run(tc.name+" leave the flag out, saying why", func(t *testing.T) {
			segs := unleashSegments{2: convertUnleashSegment(unleashSegment{ID: 2, Name: "Night owls",
				Constraints: []unleashConstraint{{ContextName: "currentTime", Operator: "DATE_AFTER", Value: "2026-01-01T00:00:00Z"}}})}
			sf := fromUnleash(unleashFeature{Name: "f", Environments: []unleashEnv{{Name: "production", Enabled: true, Strategies: []unleashStrategy{tc.strategy}}}}, segs)
			if !strings.Contains(sf.Problem, tc.want) || !strings.Contains(sf.Problem, "production") {
				t.Errorf("problem %q, want it to name %q and the environment", sf.Problem, tc.want)
			}
		})
	}
	t.Run("feature variants leave the flag out too", func(t *testing.T) {
		if sf := fromUnleash(unleashFeature{Name: "f", Variants: []json.RawMessage{json.RawMessage(`{}`)}}, nil); !strings.Contains(sf.Problem, "variants") {
			t.Errorf("problem %q", sf.Problem)
		}
	})
}

func TestUnleashFeatureSettings(t *testing.T) {
	f := unleashFeature{Name: "checkout", Description: "d", Type: "kill-switch"}
	f.Tags = append(f.Tags, struct {
		Type  string `json:"type"`
		Value string `json:"value"`
	}{"simple", "web"}, struct {
		Type  string `json:"type"`
		Value string `json:"value"`
	}{"team", "payments"}, struct {
		Type  string `json:"type"`
		Value string `json:"value"`
	}{"simple", "has space"})
	sf := fromUnleash(f, nil)
	t.Run("a feature is a boolean flag serving true when on and false when off", func(t *testing.T) {
		if len(sf.Variations) != 2 || string(sf.Variations[0].Value) != "true" || string(sf.Variations[1].Value) != "false" ||
			sf.Defaults.OnVariation != 0 || sf.Defaults.OffVariation != 1 {
			t.Errorf("variations %+v defaults %+v", sf.Variations, sf.Defaults)
		}
	})
	t.Run("kill switches, operational and permission features are permanent; release and experiment ones temporary", func(t *testing.T) {
		if *sf.Temporary {
			t.Error("a kill switch is temporary")
		}
		if !*fromUnleash(unleashFeature{Name: "x", Type: "release"}, nil).Temporary {
			t.Error("a release feature is permanent")
		}
	})
	t.Run("simple tags keep their value, others are type:value, and ones flagplane cannot hold are left out", func(t *testing.T) {
		if got := strings.Join(sf.Tags, ","); got != "web,team:payments" {
			t.Errorf("tags %q", got)
		}
	})
}

func TestUnleashSegmentsComeAlongWithTheFlagsMatchingThem(t *testing.T) {
	segs := unleashSegments{}
	for _, sg := range []unleashSegment{
		{ID: 3, Name: "Nordics", Description: "Nordic countries", Constraints: []unleashConstraint{
			{ContextName: "country", Operator: "IN", Values: []string{"NO", "SE"}},
			{ContextName: "age", Operator: "NUM_GTE", Value: "18"},
		}},
		{ID: 4, Name: "Staff", Constraints: []unleashConstraint{{ContextName: "email", Operator: "STR_ENDS_WITH", Values: []string{"@example.com"}}}},
		{ID: 5, Name: "Everyone"},
		{ID: 6, Name: "Unused", Constraints: []unleashConstraint{{ContextName: "plan", Operator: "IN", Values: []string{"pro"}}}},
	} {
		segs[sg.ID] = convertUnleashSegment(sg)
	}
	withSegments := func(id string, ids ...string) unleashStrategy {
		st := strategy(id, "default", nil, unleashConstraint{ContextName: "plan", Operator: "NOT_IN", Values: []string{"free"}})
		for _, s := range ids {
			st.Segments = append(st.Segments, json.RawMessage(s))
		}
		return st
	}
	f := unleashFeature{Name: "checkout", Environments: []unleashEnv{
		{Name: "production", Enabled: true, Strategies: []unleashStrategy{withSegments("p", "3", "4", "5")}},
		{Name: "development", Enabled: true, Strategies: []unleashStrategy{withSegments("d", "3")}},
	}}
	sf := fromUnleash(f, segs)
	if sf.Problem != "" {
		t.Fatalf("problem %q", sf.Problem)
	}
	t.Run("a strategy's segments are segmentMatch clauses after its constraints, one per segment since a context must be in all, and none for a segment holding everyone", func(t *testing.T) {
		want := `[{"_id":"p","description":"default","clauses":[{"_id":"p-c0","attribute":"plan","op":"in","values":["free"],"negate":true},` +
			`{"_id":"p-s3","attribute":"","op":"segmentMatch","values":["unleash-segment-3"],"negate":false},` +
			`{"_id":"p-s4","attribute":"","op":"segmentMatch","values":["unleash-segment-4"],"negate":false}],"trackEvents":false,"variation":0}]`
		if got := encode(t, sf.Envs["production"].Rules); got != want {
			t.Errorf("rules\n got %s\nwant %s", got, want)
		}
	})
	t.Run("each segment a flag matches comes once per environment, keyed by its Unleash id, its constraints one rule", func(t *testing.T) {
		got := unleashSourceSegments([]SourceFlag{sf, sf}, segs)
		var ids []string
		for _, ss := range got {
			ids = append(ids, segmentID(ss.Env, ss.Key))
		}
		if want := "development/unleash-segment-3,production/unleash-segment-3,production/unleash-segment-4"; strings.Join(ids, ",") != want {
			t.Fatalf("segments %v, want %s", ids, want)
		}
		nordics := got[0]
		if nordics.Name != "Nordics" || nordics.Description != "Nordic countries" || len(nordics.Rules) != 1 {
			t.Fatalf("segment %+v", nordics)
		}
		want := `[{"_id":"unleash-segment-3-constraints","clauses":[{"_id":"unleash-segment-3-c0","attribute":"country","op":"in","values":["NO","SE"],"negate":false},` +
			`{"_id":"unleash-segment-3-c1","attribute":"age","op":"greaterThanOrEqual","values":[18],"negate":false}]}]`
		if got := encode(t, nordics.Rules); got != want {
			t.Errorf("rules\n got %s\nwant %s", got, want)
		}
	})
}
