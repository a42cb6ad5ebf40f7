package apptest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
)

// Doer sends one API request and reads the whole answer, as Server.Do
// does: headers are name, value pairs replacing the defaults (the admin
// token in Authorization).
type Doer func(tb testing.TB, method, path string, body any, headers ...string) *Response

// OFREPCase is one evaluation of the OFREP proof: a flag evaluated by an
// OpenFeature client for an evaluation context, with a typed default, and
// what its answer must be besides the value, which the evaluate
// operation (/flags/evaluate) decides.
type OFREPCase struct {
	// Name reads as a sentence.
	Name string
	Flag string
	// Type is the OpenFeature getter: boolean, string, number or object.
	Type    string
	Default any
	// Context is the OpenFeature evaluation context; LDContext is the same
	// context as LaunchDarkly's SDKs write it, which /flags/evaluate takes
	// (nil for a case that fails before any evaluation).
	Context   map[string]any
	LDContext map[string]any
	// LDReason is the reason kind /flags/evaluate must give: what the
	// fixture built the case to reach. Empty for a failure.
	LDReason string
	// Reason is the OpenFeature reason OFREP must answer; ErrorCode the
	// OpenFeature error code of a failure (then the value is the default).
	Reason    string
	ErrorCode string
	// ServerOnly marks a flag not available to client-side SDKs: the
	// client-side id does not find it (FLAG_NOT_FOUND).
	ServerOnly bool
}

// OFREPOutcome is what an OpenFeature client resolved for a case.
type OFREPOutcome struct {
	Value     any    `json:"value"`
	Variant   string `json:"variant"`
	Reason    string `json:"reason"`
	ErrorCode string `json:"errorCode"`
}

// ofrepFlag is one flag of the OFREP proof: how it is created and the
// JSON patch of its targeting in the environment.
type ofrepFlag struct {
	key        string
	variations []map[string]any
	serverOnly bool
	targeting  func(env string) []map[string]any
}

func named(pairs ...any) []map[string]any {
	var out []map[string]any
	for i := 0; i < len(pairs); i += 2 {
		v := map[string]any{"value": pairs[i]}
		if name, _ := pairs[i+1].(string); name != "" {
			v["name"] = name
		}
		out = append(out, v)
	}
	return out
}

func replaceOp(path string, v any) map[string]any {
	return map[string]any{"op": "replace", "path": path, "value": v}
}

// OFREPSegment is the segment the proof's string flag matches in a rule.
const OFREPSegment = "ofrep-beta"

var ofrepFlags = []ofrepFlag{
	{key: "ofrep-bool", variations: named(true, "on", false, "off"), targeting: func(env string) []map[string]any {
		return []map[string]any{replaceOp(env+"on", true),
			replaceOp(env+"targets", []map[string]any{{"values": []string{"u-target"}, "variation": 0}}),
			replaceOp(env+"fallthrough", map[string]any{"variation": 1})}
	}},
	{key: "ofrep-string", variations: named("red", "", "green", "", "blue", ""), targeting: func(env string) []map[string]any {
		return []map[string]any{replaceOp(env+"on", true),
			replaceOp(env+"rules", []map[string]any{
				{"clauses": []map[string]any{{"attribute": "country", "op": "in", "values": []string{"de"}}}, "variation": 1},
				{"clauses": []map[string]any{{"attribute": "", "op": "segmentMatch", "values": []string{OFREPSegment}}}, "variation": 2},
			}),
			replaceOp(env+"fallthrough", map[string]any{"rollout": map[string]any{"variations": []map[string]any{
				{"variation": 0, "weight": 50000}, {"variation": 1, "weight": 50000}}}})}
	}},
	{key: "ofrep-number", variations: named(1, "", 2.5, "", 100, ""), targeting: func(env string) []map[string]any {
		return []map[string]any{replaceOp(env+"on", true),
			replaceOp(env+"rules", []map[string]any{
				{"clauses": []map[string]any{{"attribute": "age", "op": "greaterThan", "values": []int{40}}}, "variation": 2}}),
			replaceOp(env+"fallthrough", map[string]any{"variation": 1})}
	}},
	{key: "ofrep-object", variations: named(map[string]any{"tier": "gold", "limits": []any{1, 2}}, "gold", map[string]any{"tier": "silver"}, "silver"),
		targeting: func(env string) []map[string]any {
			return []map[string]any{replaceOp(env+"on", true),
				replaceOp(env+"contextTargets", []map[string]any{{"contextKind": "org", "values": []string{"acme"}, "variation": 0}}),
				replaceOp(env+"fallthrough", map[string]any{"variation": 1})}
		}},
	{key: "ofrep-off", variations: named(true, "", false, ""), targeting: func(env string) []map[string]any {
		return []map[string]any{replaceOp(env+"on", false), replaceOp(env+"offVariation", 1)}
	}},
	{key: "ofrep-prereq", variations: named("new", "new", "old", "old"), targeting: func(env string) []map[string]any {
		return []map[string]any{replaceOp(env+"on", true), replaceOp(env+"offVariation", 1),
			replaceOp(env+"prerequisites", []map[string]any{{"key": "ofrep-off", "variation": 0}}),
			replaceOp(env+"fallthrough", map[string]any{"variation": 0})}
	}},
	{key: "ofrep-server-only", serverOnly: true, variations: named("secret", "", "public", ""), targeting: func(env string) []map[string]any {
		return []map[string]any{replaceOp(env+"on", true), replaceOp(env+"fallthrough", map[string]any{"variation": 0})}
	}},
}

// OFREPFlags creates, through do, the proof's flags in project (which must
// exist) and their targeting in env, and the segment OFREPSegment holding
// u-beta.
func OFREPFlags(tb testing.TB, do Doer, project, env string) {
	tb.Helper()
	want := func(res *Response, status int, what string) {
		tb.Helper()
		if res.Status != status {
			tb.Fatalf("%s: %d %s", what, res.Status, res.Body)
		}
	}
	want(do(tb, http.MethodPost, "/api/v2/segments/"+project+"/"+env, map[string]any{"key": OFREPSegment, "name": "OFREP beta"}), http.StatusCreated, "create the segment")
	want(do(tb, http.MethodPatch, "/api/v2/segments/"+project+"/"+env+"/"+OFREPSegment,
		[]map[string]any{replaceOp("/included", []string{"u-beta"})}), http.StatusOK, "fill the segment")
	for _, f := range ofrepFlags {
		want(do(tb, http.MethodPost, "/api/v2/flags/"+project, map[string]any{"key": f.key, "name": "OFREP " + f.key, "variations": f.variations,
			"clientSideAvailability": map[string]any{"usingEnvironmentId": !f.serverOnly, "usingMobileKey": !f.serverOnly}}),
			http.StatusCreated, "create flag "+f.key)
		want(do(tb, http.MethodPatch, "/api/v2/flags/"+project+"/"+f.key, f.targeting("/environments/"+env+"/")), http.StatusOK, "target flag "+f.key)
	}
}

func user(key string, attrs ...any) (of, ld map[string]any) {
	of, ld = map[string]any{"targetingKey": key}, map[string]any{"kind": "user", "key": key}
	for i := 0; i < len(attrs); i += 2 {
		of[attrs[i].(string)], ld[attrs[i].(string)] = attrs[i+1], attrs[i+1]
	}
	return of, ld
}

// OFREPCases are the proof's evaluations: every value type, a target, a
// rule, a segment rule, a rollout, a context target of a multi-kind
// context, an off flag, a failed prerequisite, a flag only server-side
// SDKs see, a missing flag and a context without a targeting key.
func OFREPCases() []OFREPCase {
	target, targetLD := user("u-target")
	other, otherLD := user("u-other", "country", "us", "age", 30)
	de, deLD := user("u-de", "country", "de")
	beta, betaLD := user("u-beta")
	old, oldLD := user("u-old", "age", 50)
	multi := map[string]any{"kind": "multi", "user": map[string]any{"targetingKey": "u-org"}, "org": map[string]any{"targetingKey": "acme", "name": "Acme"}}
	multiLD := map[string]any{"kind": "multi", "user": map[string]any{"key": "u-org"}, "org": map[string]any{"key": "acme", "name": "Acme"}}
	return []OFREPCase{
		{Name: "a targeted user gets the target's boolean", Flag: "ofrep-bool", Type: "boolean", Default: false, Context: target, LDContext: targetLD, LDReason: "TARGET_MATCH", Reason: "TARGETING_MATCH"},
		{Name: "another user gets the boolean's fallthrough", Flag: "ofrep-bool", Type: "boolean", Default: true, Context: other, LDContext: otherLD, LDReason: "FALLTHROUGH", Reason: "DEFAULT"},
		{Name: "a user matching a rule on an attribute gets the rule's string", Flag: "ofrep-string", Type: "string", Default: "none", Context: de, LDContext: deLD, LDReason: "RULE_MATCH", Reason: "TARGETING_MATCH"},
		{Name: "a member of a segment gets the segment rule's string", Flag: "ofrep-string", Type: "string", Default: "none", Context: beta, LDContext: betaLD, LDReason: "RULE_MATCH", Reason: "TARGETING_MATCH"},
		{Name: "a user in the fallthrough's percentage rollout gets a split string", Flag: "ofrep-string", Type: "string", Default: "none", Context: other, LDContext: otherLD, LDReason: "FALLTHROUGH", Reason: "SPLIT"},
		{Name: "an older user matches the number rule", Flag: "ofrep-number", Type: "number", Default: -1, Context: old, LDContext: oldLD, LDReason: "RULE_MATCH", Reason: "TARGETING_MATCH"},
		{Name: "a younger user gets the number's fallthrough", Flag: "ofrep-number", Type: "number", Default: -1, Context: other, LDContext: otherLD, LDReason: "FALLTHROUGH", Reason: "DEFAULT"},
		{Name: "a multi-kind context whose org is targeted gets the gold object", Flag: "ofrep-object", Type: "object", Default: map[string]any{}, Context: multi, LDContext: multiLD, LDReason: "TARGET_MATCH", Reason: "TARGETING_MATCH"},
		{Name: "a user alone gets the silver object", Flag: "ofrep-object", Type: "object", Default: map[string]any{}, Context: other, LDContext: otherLD, LDReason: "FALLTHROUGH", Reason: "DEFAULT"},
		{Name: "an off flag serves its off variation as disabled", Flag: "ofrep-off", Type: "boolean", Default: true, Context: other, LDContext: otherLD, LDReason: "OFF", Reason: "DISABLED"},
		{Name: "a flag whose prerequisite fails serves its off variation", Flag: "ofrep-prereq", Type: "string", Default: "none", Context: other, LDContext: otherLD, LDReason: "PREREQUISITE_FAILED", Reason: "PREREQUISITE_FAILED"},
		{Name: "a flag only server-side SDKs see", Flag: "ofrep-server-only", Type: "string", Default: "none", Context: other, LDContext: otherLD, LDReason: "FALLTHROUGH", Reason: "DEFAULT", ServerOnly: true},
		{Name: "a missing flag is FLAG_NOT_FOUND and gives the default", Flag: "ofrep-missing", Type: "boolean", Default: true, Context: other, Reason: "ERROR", ErrorCode: "FLAG_NOT_FOUND"},
		{Name: "a context without a targeting key is TARGETING_KEY_MISSING", Flag: "ofrep-bool", Type: "boolean", Default: true, Context: map[string]any{"country": "de"}, Reason: "ERROR", ErrorCode: "TARGETING_KEY_MISSING"},
	}
}

// ClientSide is the case as a client-side id sees it: a flag only
// server-side SDKs see is not found.
func (c OFREPCase) ClientSide() OFREPCase {
	if c.ServerOnly {
		c.LDContext, c.LDReason, c.Reason, c.ErrorCode = nil, "", "ERROR", "FLAG_NOT_FOUND"
	}
	return c
}

// CheckOFREP compares what an OpenFeature client resolved for c against
// the evaluate operation of project's env (through do, with the admin
// token): the same value (the default for a failure), the variation's name
// (else its index) as variant, the case's reason and error code. It
// reports every difference with tb.Errorf.
func CheckOFREP(tb testing.TB, do Doer, project, env string, c OFREPCase, got OFREPOutcome) {
	tb.Helper()
	want := OFREPOutcome{Value: c.Default, Reason: c.Reason, ErrorCode: c.ErrorCode}
	if c.ErrorCode == "" {
		res := do(tb, http.MethodPost, "/api/v2/projects/"+project+"/environments/"+env+"/flags/evaluate", c.LDContext)
		if res.Status != http.StatusOK {
			tb.Fatalf("%s: evaluate: %d %s", c.Name, res.Status, res.Body)
		}
		var page struct {
			Items []struct {
				Key    string          `json:"key"`
				Value  json.RawMessage `json:"_value"`
				Reason struct{ Kind string }
			}
		}
		res.JSON(tb, &page)
		found := false
		for _, it := range page.Items {
			if it.Key != c.Flag {
				continue
			}
			found = true
			if it.Reason.Kind != c.LDReason {
				tb.Errorf("%s: evaluate's reason is %s, the fixture meant %s", c.Name, it.Reason.Kind, c.LDReason)
			}
			if err := json.Unmarshal(it.Value, &want.Value); err != nil {
				tb.Fatalf("%s: evaluate's value %s: %v", c.Name, it.Value, err)
			}
			want.Variant = variantOf(tb, do, project, c.Flag, it.Value)
		}
		if !found {
			tb.Fatalf("%s: evaluate has no flag %s", c.Name, c.Flag)
		}
	}
	if !jsonSame(got.Value, want.Value) || got.Variant != want.Variant || got.Reason != want.Reason || got.ErrorCode != want.ErrorCode {
		tb.Errorf("%s: OpenFeature resolved %+v, want %+v", c.Name, got, want)
	}
}

// variantOf is the name of the flag's variation whose value is v, else its index.
func variantOf(tb testing.TB, do Doer, project, flag string, v json.RawMessage) string {
	tb.Helper()
	var f struct {
		Variations []struct {
			Value json.RawMessage `json:"value"`
			Name  string          `json:"name"`
		} `json:"variations"`
	}
	res := do(tb, http.MethodGet, "/api/v2/flags/"+project+"/"+flag, nil)
	if res.Status != http.StatusOK {
		tb.Fatalf("get flag %s: %d %s", flag, res.Status, res.Body)
	}
	res.JSON(tb, &f)
	for i, x := range f.Variations {
		if jsonSame(x.Value, v) {
			if x.Name != "" {
				return x.Name
			}
			return strconv.Itoa(i)
		}
	}
	tb.Fatalf("flag %s has no variation %s", flag, v)
	return ""
}

// jsonSame reports whether two values are the same JSON (numbers compared
// as JSON numbers; a json.RawMessage is read as its value).
func jsonSame(a, b any) bool {
	norm := func(v any) string {
		raw, ok := v.(json.RawMessage)
		if !ok {
			raw, _ = json.Marshal(v)
		}
		var x any
		if err := json.Unmarshal(raw, &x); err != nil {
			return string(raw)
		}
		out, _ := json.Marshal(x)
		return string(out)
	}
	return norm(a) == norm(b)
}

// OFREPOutcomeOf reads OFREP's answer for one flag (a single evaluation's
// body or one entry of a bulk evaluation) as an OpenFeature client
// resolves it: an evaluation's value (the default when it has none),
// variant and reason, or for a failure the default, reason ERROR and the
// error code.
func OFREPOutcomeOf(tb testing.TB, body []byte, def any) OFREPOutcome {
	tb.Helper()
	var a struct {
		Value     json.RawMessage `json:"value"`
		Variant   string          `json:"variant"`
		Reason    string          `json:"reason"`
		ErrorCode string          `json:"errorCode"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		tb.Fatalf("OFREP answer is not JSON: %v: %s", err, body)
	}
	if a.ErrorCode != "" {
		return OFREPOutcome{Value: def, Reason: "ERROR", ErrorCode: a.ErrorCode}
	}
	out := OFREPOutcome{Value: def, Variant: a.Variant, Reason: a.Reason}
	if len(bytes.TrimSpace(a.Value)) > 0 {
		if err := json.Unmarshal(a.Value, &out.Value); err != nil {
			tb.Fatalf("OFREP value %s: %v", a.Value, err)
		}
	}
	return out
}
