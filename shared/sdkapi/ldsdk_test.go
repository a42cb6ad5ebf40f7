package sdkapi_test

// The proof that flagplane serves LaunchDarkly's SDKs: the real server-side
// Go SDK (github.com/launchdarkly/go-server-sdk/v7, a test-only dependency)
// pointed at flagplane evaluates every flag as flagplane's own evaluate
// operation does, and a streaming client sees changes within a second.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"
	"github.com/launchdarkly/go-sdk-common/v3/ldvalue"
	ld "github.com/launchdarkly/go-server-sdk/v7"
	"github.com/launchdarkly/go-server-sdk/v7/interfaces"
	"github.com/launchdarkly/go-server-sdk/v7/ldcomponents"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// sdkClient starts the real SDK against srv with the SDK key, polling or
// streaming, events off; it closes when the test ends.
func sdkClient(tb testing.TB, srv *apptest.Server, sdkKey string, streaming bool) (*ld.LDClient, error) {
	tb.Helper()
	cfg := ld.Config{
		ServiceEndpoints: interfaces.ServiceEndpoints{Streaming: srv.URL, Polling: srv.URL, Events: srv.URL},
		Events:           ldcomponents.NoEvents(),
		Logging:          ldcomponents.NoLogging(),
		DiagnosticOptOut: true,
	}
	if streaming {
		cfg.DataSource = ldcomponents.StreamingDataSource().InitialReconnectDelay(50 * time.Millisecond)
	} else {
		cfg.DataSource = ldcomponents.PollingDataSource()
	}
	c, err := ld.MakeCustomClient(sdkKey, cfg, 5*time.Second)
	if c != nil {
		tb.Cleanup(func() { c.Close() })
	}
	return c, err
}

// project builds, through the API, a project whose test environment has
// flags of every shape: boolean, string, number and JSON values; individual
// and context targets; rules on attributes and context kinds, with fixed
// variations and rollouts; rollouts by key, attribute and seed;
// prerequisites (met and failed, chained); off flags with and without an
// off variation.
func project(tb testing.TB, srv *apptest.Server) []string {
	tb.Helper()
	srv.MustCreateProject(tb, "proof")
	values := [][]any{
		{true, false},
		{"red", "green", "blue"},
		{1, 2.5, 100},
		{map[string]any{"tier": "gold", "limits": []any{1, 2}}, map[string]any{"tier": "silver"}, []any{"x"}, nil},
	}
	var keys []string
	for i := 0; i < 48; i++ {
		vals := values[i%len(values)]
		n := len(vals)
		key := fmt.Sprintf("flag-%02d", i)
		var variations []map[string]any
		for _, v := range vals {
			variations = append(variations, map[string]any{"value": v})
		}
		if vals[len(vals)-1] == nil {
			variations = variations[:len(variations)-1] // JSON null is no variation value
			n--
		}
		mustFlag(tb, srv, "proof", key, map[string]any{"variations": variations})
		env := "/environments/test/"
		ops := []map[string]any{
			{"op": "replace", "path": env + "on", "value": i%7 != 3},
			{"op": "replace", "path": env + "offVariation", "value": i % n},
			{"op": "replace", "path": env + "targets", "value": []map[string]any{
				{"values": []string{"user-1", fmt.Sprintf("user-%d", 2+i%20)}, "variation": (i + 1) % n}}},
			{"op": "replace", "path": env + "rules", "value": []map[string]any{
				{"clauses": []map[string]any{{"attribute": "email", "op": "endsWith", "values": []string{"@corp.example"}}}, "variation": (i + 2) % n},
				{"clauses": []map[string]any{{"attribute": "country", "op": "in", "values": []string{"de", "fr"}, "negate": i%2 == 0}},
					"rollout": map[string]any{"variations": weights(n, i), "bucketBy": "country"}},
				{"clauses": []map[string]any{{"contextKind": "org", "attribute": "plan", "op": "in", "values": []string{"enterprise"}}}, "variation": n - 1},
				{"clauses": []map[string]any{{"attribute": "age", "op": "greaterThan", "values": []int{40}}},
					"rollout": map[string]any{"variations": weights(n, i+1), "seed": 1000 + i}},
			}},
			{"op": "replace", "path": env + "fallthrough", "value": map[string]any{"rollout": map[string]any{"variations": weights(n, i+2)}}},
		}
		if i%5 == 2 {
			ops = append(ops, map[string]any{"op": "replace", "path": env + "contextTargets", "value": []map[string]any{
				{"contextKind": "org", "values": []string{"org-1", "org-3"}, "variation": 0}}})
		}
		if i%6 == 1 {
			ops[3] = map[string]any{"op": "replace", "path": env + "rules", "value": []map[string]any{}}
			ops[4] = map[string]any{"op": "replace", "path": env + "fallthrough", "value": map[string]any{"variation": n - 1}}
		}
		if i > 4 && i%4 == 1 {
			// a prerequisite on an earlier flag, sometimes met, sometimes not
			ops = append(ops, map[string]any{"op": "replace", "path": env + "prerequisites", "value": []map[string]any{
				{"key": keys[i-4], "variation": i % 2}}})
		}
		mustPatch(tb, srv, "proof", key, ops...)
		keys = append(keys, key)
	}
	// an archived flag, which SDKs never see and evaluate lists not
	mustFlag(tb, srv, "proof", "archived", nil)
	mustPatch(tb, srv, "proof", "archived", map[string]any{"op": "replace", "path": "/archived", "value": true})
	return keys
}

// weights splits 100000 among n variations, unevenly, shifted by i.
func weights(n, i int) []map[string]any {
	out := make([]map[string]any, n)
	left := 100000
	for j := 0; j < n; j++ {
		w := left / 2
		if j == n-1 {
			w = left
		}
		left -= w
		out[(j+i)%n] = map[string]any{"variation": (j + i) % n, "weight": w}
	}
	return out
}

// contexts are users and multi-kind contexts that hit every branch.
func contexts() []ldcontext.Context {
	var out []ldcontext.Context
	countries := []string{"de", "fr", "us", "jp"}
	for i := 0; i < 40; i++ {
		b := ldcontext.NewBuilder(fmt.Sprintf("user-%d", i)).
			SetString("country", countries[i%len(countries)]).
			SetInt("age", 20+i)
		if i%3 == 0 {
			b.SetString("email", fmt.Sprintf("u%d@corp.example", i))
		}
		user := b.Build()
		if i%4 == 1 {
			org := ldcontext.NewBuilder(fmt.Sprintf("org-%d", i%5)).Kind("org").SetString("plan", []string{"free", "enterprise"}[i%2]).Build()
			out = append(out, ldcontext.NewMulti(user, org))
			continue
		}
		out = append(out, user)
	}
	return out
}

// evaluated is what flagplane's evaluate operation serves one flag.
type evaluated struct {
	Key    string          `json:"key"`
	Value  json.RawMessage `json:"_value"`
	Reason struct {
		Kind            string `json:"kind"`
		RuleIndex       *int   `json:"ruleIndex"`
		PrerequisiteKey string `json:"prerequisiteKey"`
	} `json:"reason"`
}

func evaluate(tb testing.TB, srv *apptest.Server, c ldcontext.Context) map[string]evaluated {
	tb.Helper()
	body, _ := json.Marshal(c)
	res := srv.Do(tb, http.MethodPost, "/api/v2/projects/proof/environments/test/flags/evaluate", body)
	if res.Status != http.StatusOK {
		tb.Fatalf("evaluate: %d %s", res.Status, res.Body)
	}
	var page struct{ Items []evaluated }
	res.JSON(tb, &page)
	out := map[string]evaluated{}
	for _, it := range page.Items {
		out[it.Key] = it
	}
	return out
}

// variationsOf reads each flag's variation values, to name the index of a value.
func variationsOf(tb testing.TB, srv *apptest.Server, keys []string) map[string][]json.RawMessage {
	tb.Helper()
	out := map[string][]json.RawMessage{}
	for _, k := range keys {
		var f struct {
			Variations []struct {
				Value json.RawMessage `json:"value"`
			} `json:"variations"`
		}
		srv.Do(tb, http.MethodGet, "/api/v2/flags/proof/"+k, nil).JSON(tb, &f)
		for _, v := range f.Variations {
			out[k] = append(out[k], v.Value)
		}
	}
	return out
}

func indexOf(values []json.RawMessage, v json.RawMessage) int {
	for i, x := range values {
		if jsonEqual(x, v) {
			return i
		}
	}
	return -1
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// agree evaluates keys for c with the SDK and with flagplane's evaluate
// operation (in the proof project's test environment), reports every
// difference of value, variation or reason, and returns evaluate's
// answers by flag key.
func agree(tb testing.TB, srv *apptest.Server, client *ld.LDClient, c ldcontext.Context, keys []string, variations map[string][]json.RawMessage) map[string]evaluated {
	tb.Helper()
	want := evaluate(tb, srv, c)
	if len(want) != len(keys) {
		tb.Fatalf("evaluate answered %d flags, want %d", len(want), len(keys))
	}
	for _, k := range keys {
		value, detail, err := client.JSONVariationDetail(k, c, ldvalue.String("default"))
		if err != nil {
			tb.Fatalf("%s for %s: %v", k, c.FullyQualifiedKey(), err)
		}
		w := want[k]
		got, _ := value.MarshalJSON()
		if !jsonEqual(got, w.Value) {
			tb.Errorf("%s for %s: SDK %s, evaluate %s", k, c.FullyQualifiedKey(), got, w.Value)
		}
		wantIndex := indexOf(variations[k], w.Value)
		if gotIndex := detail.VariationIndex.OrElse(-1); gotIndex != wantIndex {
			tb.Errorf("%s for %s: SDK variation %d, evaluate's value is variation %d", k, c.FullyQualifiedKey(), gotIndex, wantIndex)
		}
		if r := detail.Reason; string(r.GetKind()) != w.Reason.Kind || r.GetPrerequisiteKey() != w.Reason.PrerequisiteKey ||
			(w.Reason.RuleIndex != nil && r.GetRuleIndex() != *w.Reason.RuleIndex) {
			tb.Errorf("%s for %s: SDK reason %s, evaluate %+v", k, c.FullyQualifiedKey(), r, w.Reason)
		}
	}
	return want
}

// streamingUpdates starts a streaming SDK and listens to its flag changes
// until the test ends.
func streamingUpdates(tb testing.TB, srv *apptest.Server, sdkKey string) (*ld.LDClient, <-chan interfaces.FlagChangeEvent) {
	tb.Helper()
	client, err := sdkClient(tb, srv, sdkKey, true)
	if err != nil {
		tb.Fatal(err)
	}
	updates := client.GetFlagTracker().AddFlagChangeListener()
	tb.Cleanup(func() { client.GetFlagTracker().RemoveFlagChangeListener(updates) })
	return client, updates
}

// eachDataSource runs test with the SDK polling srv, then streaming from
// it, in subtests named "the polling SDK <what>" and "the streaming SDK
// <what>"; the client is initialized.
func eachDataSource(t *testing.T, srv *apptest.Server, sdkKey, what string, test func(t *testing.T, client *ld.LDClient)) {
	t.Helper()
	for _, mode := range []struct {
		name      string
		streaming bool
	}{{"polling", false}, {"streaming", true}} {
		t.Run("the "+mode.name+" SDK "+what, func(t *testing.T) {
			client, err := sdkClient(t, srv, sdkKey, mode.streaming)
			if err != nil || !client.Initialized() {
				t.Fatalf("SDK did not initialize: %v", err)
			}
			test(t, client)
		})
	}
}

func TestLaunchDarklyServerSDK(t *testing.T) {
	srv := apptest.New(t)
	keys := project(t, srv)
	e := mustEnv(t, srv, "proof", "test")
	variations := variationsOf(t, srv, keys)

	eachDataSource(t, srv, e.SDKKey, "evaluates every flag for every context as the evaluate operation does", func(t *testing.T, client *ld.LDClient) {
		all := client.AllFlagsState(ldcontext.New("anyone"))
		if n := len(all.ToValuesMap()); n != len(keys) {
			t.Fatalf("the SDK holds %d flags, want %d (the archived one left out)", n, len(keys))
		}
		checked, reasons := 0, map[string]int{}
		for _, c := range contexts() {
			for _, w := range agree(t, srv, client, c, keys, variations) {
				reasons[w.Reason.Kind]++
				checked++
			}
		}
		for _, kind := range []string{"OFF", "TARGET_MATCH", "RULE_MATCH", "FALLTHROUGH", "PREREQUISITE_FAILED"} {
			if reasons[kind] == 0 {
				t.Errorf("no evaluation had the reason %s: the project does not cover it", kind)
			}
		}
		t.Logf("%d evaluations agree; reasons %v", checked, reasons)
	})

	t.Run("a flag change made through the API reaches the streaming SDK within a second", func(t *testing.T) {
		client, updates := streamingUpdates(t, srv, e.SDKKey)
		c := ldcontext.New("nobody-targeted")
		before, _ := client.BoolVariation("flag-00", c, false)
		start := time.Now()
		mustPatch(t, srv, "proof", "flag-00",
			map[string]any{"op": "replace", "path": "/environments/test/on", "value": true},
			map[string]any{"op": "replace", "path": "/environments/test/rules", "value": []any{}},
			map[string]any{"op": "replace", "path": "/environments/test/targets", "value": []any{}},
			map[string]any{"op": "replace", "path": "/environments/test/fallthrough", "value": map[string]any{"variation": boolIndex(!before)}})
		select {
		case ev := <-updates:
			if ev.Key != "flag-00" {
				t.Fatalf("change of %q", ev.Key)
			}
		case <-time.After(time.Second):
			t.Fatal("no change within a second")
		}
		if got, _ := client.BoolVariation("flag-00", c, before); got == before {
			t.Fatalf("still %v after the change", got)
		}
		t.Logf("change seen after %v", time.Since(start))
	})

	t.Run("a wrong SDK key gets 401, and the SDK gives up without data", func(t *testing.T) {
		for _, streaming := range []bool{false, true} {
			client, err := sdkClient(t, srv, "sdk-00000000-0000-4000-8000-000000000000", streaming)
			if err == nil || client.Initialized() {
				t.Fatalf("streaming %v: the SDK initialized with a wrong key", streaming)
			}
			if st := client.GetDataSourceStatusProvider().GetStatus(); st.State != interfaces.DataSourceStateOff || st.LastError.StatusCode != http.StatusUnauthorized {
				t.Fatalf("streaming %v: data source status %+v", streaming, st)
			}
		}
	})
}

// boolIndex is the variation index of a boolean flag's value (true first).
func boolIndex(v bool) int {
	if v {
		return 0
	}
	return 1
}
