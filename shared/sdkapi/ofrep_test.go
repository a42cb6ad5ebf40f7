package sdkapi_test

// OpenFeature's Remote Evaluation Protocol through HTTP: every status and
// error code, the bulk evaluation's ETag and 304, client-side
// availability, and reasons, variants and values as the evaluate
// operation decides them.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"

	flagapi "github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app/apptest"
)

const (
	ofrepFlagPath  = "/ofrep/v1/evaluate/flags/"
	ofrepFlagsPath = "/ofrep/v1/evaluate/flags"
)

// ofrepPost sends an OFREP request with cred in Authorization (none when
// empty) and body as JSON ({"context": ...}); headers add to them.
func ofrepPost(tb testing.TB, srv *apptest.Server, path, cred string, body any, headers ...string) *apptest.Response {
	tb.Helper()
	return srv.Do(tb, http.MethodPost, path, body, append([]string{"Authorization", cred}, headers...)...)
}

func withContext(c map[string]any) map[string]any {
	if c == nil {
		return map[string]any{}
	}
	return map[string]any{"context": c}
}

// bulkEntries reads a bulk evaluation's flags by key.
func bulkEntries(tb testing.TB, res *apptest.Response) map[string]json.RawMessage {
	tb.Helper()
	if res.Status != http.StatusOK {
		tb.Fatalf("bulk evaluation: %d %s", res.Status, res.Body)
	}
	var doc struct{ Flags []json.RawMessage }
	res.JSON(tb, &doc)
	out := map[string]json.RawMessage{}
	for _, f := range doc.Flags {
		var k struct{ Key string }
		if err := json.Unmarshal(f, &k); err != nil || k.Key == "" {
			tb.Fatalf("bulk entry without a key: %s", f)
		}
		if _, dup := out[k.Key]; dup {
			tb.Fatalf("flag %s twice in the bulk answer", k.Key)
		}
		out[k.Key] = f
	}
	return out
}

// statusOf is the status OFREP answers a single evaluation of the case.
func statusOf(c apptest.OFREPCase) int {
	switch c.ErrorCode {
	case "":
		return http.StatusOK
	case "FLAG_NOT_FOUND":
		return http.StatusNotFound
	}
	return http.StatusBadRequest
}

func TestOFREPEvaluatesAsTheEvaluateOperation(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "of")
	apptest.OFREPFlags(t, srv.Do, "of", "test")
	e := mustEnv(t, srv, "of", "test")
	for _, cred := range []struct {
		name, value string
		clientSide  bool
	}{
		{"the SDK key", e.SDKKey, false},
		{"the client-side id", e.ClientSideID, true},
	} {
		for _, c := range apptest.OFREPCases() {
			if cred.clientSide {
				c = c.ClientSide()
			}
			t.Run("with "+cred.name+", "+c.Name, func(t *testing.T) {
				single := ofrepPost(t, srv, ofrepFlagPath+c.Flag, cred.value, withContext(c.Context))
				if single.Status != statusOf(c) {
					t.Fatalf("single evaluation: status %d, want %d: %s", single.Status, statusOf(c), single.Body)
				}
				if got := single.Header.Get("Content-Type"); got != "application/json" {
					t.Errorf("Content-Type %q", got)
				}
				apptest.CheckOFREP(t, srv.Do, "of", "test", c, apptest.OFREPOutcomeOf(t, single.Body, c.Default))

				bulk := ofrepPost(t, srv, ofrepFlagsPath, cred.value, withContext(c.Context))
				if c.ErrorCode == "TARGETING_KEY_MISSING" {
					if bulk.Status != http.StatusBadRequest || bulk.Map(t)["errorCode"] != c.ErrorCode {
						t.Fatalf("bulk evaluation: %d %s", bulk.Status, bulk.Body)
					}
					return
				}
				entry, ok := bulkEntries(t, bulk)[c.Flag]
				got := apptest.OFREPOutcome{Value: c.Default, Reason: "ERROR", ErrorCode: "FLAG_NOT_FOUND"} // as the web provider reads an absent flag
				if ok {
					got = apptest.OFREPOutcomeOf(t, entry, c.Default)
				}
				apptest.CheckOFREP(t, srv.Do, "of", "test", c, got)
			})
		}
	}
}

// ofContext writes an SDK context as an OpenFeature evaluation context,
// as LaunchDarkly's OpenFeature providers read one: key as targetingKey,
// each kind of a multi-kind context as an object.
func ofContext(tb testing.TB, c ldcontext.Context) map[string]any {
	tb.Helper()
	single := func(c ldcontext.Context) map[string]any {
		raw, _ := json.Marshal(c)
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			tb.Fatal(err)
		}
		m["targetingKey"] = m["key"]
		delete(m, "key")
		return m
	}
	if !c.Multiple() {
		return single(c)
	}
	out := map[string]any{"kind": "multi"}
	for _, k := range c.GetAllIndividualContexts(nil) {
		m := single(k)
		delete(m, "kind")
		out[string(k.Kind())] = m
	}
	return out
}

// ofrepReason is the OpenFeature reason of the evaluate operation's
// reason kind, given whether the flag's fallthrough is a rollout.
func ofrepReason(kind string, fallthroughRollout bool) string {
	switch kind {
	case "TARGET_MATCH", "RULE_MATCH":
		return "TARGETING_MATCH"
	case "FALLTHROUGH":
		if fallthroughRollout {
			return "SPLIT"
		}
		return "DEFAULT"
	case "OFF":
		return "DISABLED"
	}
	return kind
}

func TestOFREPAgreesWithEvaluateOnEveryFlagAndContext(t *testing.T) {
	srv := apptest.New(t)
	keys := project(t, srv)
	e := mustEnv(t, srv, "proof", "test")
	variations := variationsOf(t, srv, keys)
	rollout := map[string]bool{}
	for _, k := range keys {
		var f struct {
			Environments map[string]struct {
				Fallthrough struct {
					Rollout *json.RawMessage `json:"rollout"`
				} `json:"fallthrough"`
			} `json:"environments"`
		}
		srv.Do(t, http.MethodGet, "/api/v2/flags/proof/"+k, nil).JSON(t, &f)
		rollout[k] = f.Environments["test"].Fallthrough.Rollout != nil
	}
	type answer struct {
		Key      string
		Value    json.RawMessage
		Variant  string
		Reason   string
		Metadata map[string]any
	}
	check := func(t *testing.T, c ldcontext.Context, want evaluated, raw json.RawMessage) {
		t.Helper()
		var got answer
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		who := c.FullyQualifiedKey() + " " + want.Key
		if !jsonEqual(got.Value, want.Value) {
			t.Errorf("%s: OFREP %s, evaluate %s", who, got.Value, want.Value)
		}
		if i := indexOf(variations[want.Key], want.Value); got.Variant != strconv.Itoa(i) {
			t.Errorf("%s: variant %q, the value is variation %d", who, got.Variant, i)
		}
		if r := ofrepReason(want.Reason.Kind, rollout[want.Key]); got.Reason != r {
			t.Errorf("%s: reason %s, want %s (evaluate: %s)", who, got.Reason, r, want.Reason.Kind)
		}
		if got.Metadata["reasonKind"] != want.Reason.Kind || got.Metadata["prerequisiteKey"] != nilIfEmpty(want.Reason.PrerequisiteKey) {
			t.Errorf("%s: metadata %v, evaluate's reason %+v", who, got.Metadata, want.Reason)
		}
		if want.Reason.RuleIndex != nil && got.Metadata["ruleIndex"] != float64(*want.Reason.RuleIndex) {
			t.Errorf("%s: metadata %v, evaluate's rule %d", who, got.Metadata, *want.Reason.RuleIndex)
		}
	}
	reasons := map[string]int{}
	for i, c := range contexts() {
		want := evaluate(t, srv, c)
		body := withContext(ofContext(t, c))
		entries := bulkEntries(t, ofrepPost(t, srv, ofrepFlagsPath, e.SDKKey, body))
		if len(entries) != len(keys) {
			t.Fatalf("the bulk evaluation answered %d flags, want %d (the archived one left out)", len(entries), len(keys))
		}
		for _, k := range keys {
			check(t, c, want[k], entries[k])
			var a answer
			_ = json.Unmarshal(entries[k], &a)
			reasons[a.Reason]++
			if i%8 == 0 { // and one flag at a time, for some of the contexts
				res := ofrepPost(t, srv, ofrepFlagPath+k, e.SDKKey, body)
				if res.Status != http.StatusOK {
					t.Fatalf("%s: %d %s", k, res.Status, res.Body)
				}
				check(t, c, want[k], res.Body)
			}
		}
	}
	for _, r := range []string{"TARGETING_MATCH", "SPLIT", "DEFAULT", "DISABLED", "PREREQUISITE_FAILED"} {
		if reasons[r] == 0 {
			t.Errorf("no evaluation had the reason %s: the project does not cover it", r)
		}
	}
	t.Logf("reasons %v", reasons)
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func TestOFREPReasonsVariantsAndMetadata(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "of")
	apptest.OFREPFlags(t, srv.Do, "of", "test")
	mustFlag(t, srv, "of", "no-off-variation", nil)
	mustPatch(t, srv, "of", "no-off-variation", map[string]any{"op": "remove", "path": "/environments/test/offVariation"})
	e := mustEnv(t, srv, "of", "test")
	var rules struct {
		Environments map[string]struct {
			Rules []struct {
				ID string `json:"_id"`
			} `json:"rules"`
		} `json:"environments"`
	}
	srv.Do(t, http.MethodGet, "/api/v2/flags/of/ofrep-string", nil).JSON(t, &rules)
	tests := []struct {
		name, flag string
		context    map[string]any
		want       string // the answer, as JSON, flagVersion left out
	}{
		{"a target names its variation and says TARGET_MATCH", "ofrep-bool", map[string]any{"targetingKey": "u-target"},
			`{"key":"ofrep-bool","value":true,"reason":"TARGETING_MATCH","variant":"on","metadata":{"reasonKind":"TARGET_MATCH","variationIndex":0}}`},
		{"a rule gives its index and id, and an unnamed variation its index", "ofrep-string", map[string]any{"targetingKey": "u-de", "country": "de"},
			`{"key":"ofrep-string","value":"green","reason":"TARGETING_MATCH","variant":"1","metadata":{"reasonKind":"RULE_MATCH","ruleIndex":0,"ruleId":"` +
				rules.Environments["test"].Rules[0].ID + `","variationIndex":1}}`},
		{"a failed prerequisite is named", "ofrep-prereq", map[string]any{"targetingKey": "u1"},
			`{"key":"ofrep-prereq","value":"old","reason":"PREREQUISITE_FAILED","variant":"old","metadata":{"reasonKind":"PREREQUISITE_FAILED","prerequisiteKey":"ofrep-off","variationIndex":1}}`},
		{"an off flag without an off variation answers no value, so the provider uses the code's default", "no-off-variation", map[string]any{"targetingKey": "u1"},
			`{"key":"no-off-variation","reason":"DISABLED","metadata":{"reasonKind":"OFF"}}`},
		{"a multi-kind context's org is targeted by its targetingKey", "ofrep-object",
			map[string]any{"kind": "multi", "user": map[string]any{"targetingKey": "u1"}, "org": map[string]any{"key": "acme"}},
			`{"key":"ofrep-object","value":{"tier":"gold","limits":[1,2]},"reason":"TARGETING_MATCH","variant":"gold","metadata":{"reasonKind":"TARGET_MATCH","variationIndex":0}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ofrepPost(t, srv, ofrepFlagPath+tt.flag, e.SDKKey, withContext(tt.context))
			apptest.WantStatus(t, res, http.StatusOK)
			got := res.Map(t)
			md, _ := got["metadata"].(map[string]any)
			if v, ok := md["flagVersion"].(float64); !ok || v < 1 {
				t.Errorf("flagVersion %v", md["flagVersion"])
			}
			delete(md, "flagVersion")
			var want map[string]any
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(json.RawMessage(mustJSON(t, got)), json.RawMessage(mustJSON(t, want))) {
				t.Errorf("answer %s\nwant   %s", mustJSON(t, got), tt.want)
			}
		})
	}
}

func TestOFREPErrors(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "of")
	apptest.OFREPFlags(t, srv.Do, "of", "test")
	e := mustEnv(t, srv, "of", "test")
	ok := `{"context":{"targetingKey":"u1"}}`
	tests := []struct {
		name       string
		cred, body string
		headers    []string
		status     int
		errorCode  string // OFREP's, or flagplane's error code for 401 and 403
	}{
		{"no credential is 401", "", ok, nil, http.StatusUnauthorized, "unauthorized"},
		{"an unknown SDK key is 401", "sdk-00000000-0000-4000-8000-000000000000", ok, nil, http.StatusUnauthorized, "unauthorized"},
		{"an unknown mobile key is 401", "mob-00000000-0000-4000-8000-000000000000", ok, nil, http.StatusUnauthorized, "unauthorized"},
		{"an unknown client-side id is 401", "000000000000000000000000", ok, nil, http.StatusUnauthorized, "unauthorized"},
		{"the SDK key after Bearer is taken", "Bearer " + e.SDKKey, ok, nil, http.StatusOK, ""},
		{"the SDK key in OFREP's X-API-Key header is taken", "", ok, []string{"X-API-Key", e.SDKKey}, http.StatusOK, ""},
		{"a body that is not JSON is PARSE_ERROR", e.SDKKey, `{"context":`, nil, http.StatusBadRequest, "PARSE_ERROR"},
		{"an empty body is PARSE_ERROR", e.SDKKey, " ", nil, http.StatusBadRequest, "PARSE_ERROR"},
		{"a body that is not an object is PARSE_ERROR", e.SDKKey, `[1]`, nil, http.StatusBadRequest, "PARSE_ERROR"},
		{"no context is TARGETING_KEY_MISSING", e.SDKKey, `{}`, nil, http.StatusBadRequest, "TARGETING_KEY_MISSING"},
		{"a context without targetingKey is TARGETING_KEY_MISSING", e.SDKKey, `{"context":{"email":"a@b.c"}}`, nil, http.StatusBadRequest, "TARGETING_KEY_MISSING"},
		{"an empty targetingKey is TARGETING_KEY_MISSING", e.SDKKey, `{"context":{"targetingKey":""}}`, nil, http.StatusBadRequest, "TARGETING_KEY_MISSING"},
		{"a kind of a multi-kind context without a key is TARGETING_KEY_MISSING", e.SDKKey,
			`{"context":{"kind":"multi","user":{"targetingKey":"u1"},"org":{"name":"Acme"}}}`, nil, http.StatusBadRequest, "TARGETING_KEY_MISSING"},
		{"a context that is not an object is INVALID_CONTEXT", e.SDKKey, `{"context":"u1"}`, nil, http.StatusBadRequest, "INVALID_CONTEXT"},
		{"a targetingKey that is not a string is INVALID_CONTEXT", e.SDKKey, `{"context":{"targetingKey":7}}`, nil, http.StatusBadRequest, "INVALID_CONTEXT"},
		{"a kind LaunchDarkly refuses is INVALID_CONTEXT", e.SDKKey, `{"context":{"targetingKey":"u1","kind":"us er"}}`, nil, http.StatusBadRequest, "INVALID_CONTEXT"},
		{"a name that is not a string is INVALID_CONTEXT", e.SDKKey, `{"context":{"targetingKey":"u1","name":5}}`, nil, http.StatusBadRequest, "INVALID_CONTEXT"},
		{"a multi-kind context's kind that is not an object is INVALID_CONTEXT", e.SDKKey,
			`{"context":{"kind":"multi","user":"u1"}}`, nil, http.StatusBadRequest, "INVALID_CONTEXT"},
	}
	for _, tt := range tests {
		for _, route := range []struct{ name, path string }{{"one flag", ofrepFlagPath + "ofrep-bool"}, {"every flag", ofrepFlagsPath}} {
			t.Run(tt.name+" when evaluating "+route.name, func(t *testing.T) {
				res := ofrepPost(t, srv, route.path, tt.cred, tt.body, tt.headers...)
				if res.Status != tt.status {
					t.Fatalf("status %d, want %d: %s", res.Status, tt.status, res.Body)
				}
				switch {
				case tt.status == http.StatusOK:
				case tt.status != http.StatusBadRequest:
					apptest.WantError(t, res, tt.status, tt.errorCode)
				default:
					body := res.Map(t)
					if body["errorCode"] != tt.errorCode || body["errorDetails"] == "" {
						t.Errorf("answer %s, want errorCode %s with details", res.Body, tt.errorCode)
					}
					if _, hasKey := body["key"]; hasKey != (route.path != ofrepFlagsPath) {
						t.Errorf("answer %s: a single evaluation's failure names its key, a bulk one's does not", res.Body)
					}
				}
			})
		}
	}
	t.Run("a missing flag is 404 FLAG_NOT_FOUND naming the key", func(t *testing.T) {
		res := ofrepPost(t, srv, ofrepFlagPath+"nope", e.SDKKey, ok)
		apptest.WantStatus(t, res, http.StatusNotFound)
		if body := res.Map(t); body["key"] != "nope" || body["errorCode"] != "FLAG_NOT_FOUND" || !strings.Contains(body["errorDetails"].(string), "nope") {
			t.Errorf("answer %s", res.Body)
		}
	})
	t.Run("a body larger than the API takes is 413", func(t *testing.T) {
		big := `{"context":{"targetingKey":"u1","x":"` + strings.Repeat("a", flagapi.MaxBody) + `"}}`
		apptest.WantStatus(t, ofrepPost(t, srv, ofrepFlagsPath, e.SDKKey, big), http.StatusRequestEntityTooLarge)
	})
	t.Run("with secure mode on, a client-side id needs the context's hash in h, and an SDK key does not", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, "/api/v2/projects/of/environments/test",
			[]map[string]any{{"op": "replace", "path": "/secureMode", "value": true}}), http.StatusOK)
		defer srv.Do(t, http.MethodPatch, "/api/v2/projects/of/environments/test",
			[]map[string]any{{"op": "replace", "path": "/secureMode", "value": false}})
		mac := hmac.New(sha256.New, []byte(e.SDKKey))
		mac.Write([]byte("u1"))
		hash := hex.EncodeToString(mac.Sum(nil))
		for _, c := range []struct {
			name, cred, query string
			status            int
		}{
			{"client-side id without h", e.ClientSideID, "", http.StatusForbidden},
			{"client-side id with another context's h", e.ClientSideID, "?h=" + strings.Repeat("0", 64), http.StatusForbidden},
			{"client-side id with the context's h", e.ClientSideID, "?h=" + hash, http.StatusOK},
			{"SDK key without h", e.SDKKey, "", http.StatusOK},
		} {
			if res := ofrepPost(t, srv, ofrepFlagsPath+c.query, c.cred, ok); res.Status != c.status {
				t.Errorf("%s: %d, want %d: %s", c.name, res.Status, c.status, res.Body)
			}
		}
	})
}

func TestOFREPRateLimitAndCORS(t *testing.T) {
	const limit = 3
	srv := apptest.New(t, apptest.WithRateLimits(flagapi.RateLimits{Credential: limit}), apptest.WithCORS("https://app.example"))
	srv.MustCreateProject(t, "of")
	e := mustEnv(t, srv, "of", "test")
	ok := `{"context":{"targetingKey":"u1"}}`
	for _, path := range []string{ofrepFlagPath + "nope", ofrepFlagsPath} {
		t.Run(path+" admits a credential "+strconv.Itoa(limit)+" times in ten seconds, then answers 429 with Retry-After", func(t *testing.T) {
			for attempt := 0; ; attempt++ {
				var answers []*apptest.Response
				for range limit + 1 {
					answers = append(answers, ofrepPost(t, srv, path, e.ClientSideID, ok))
				}
				if answers[0].Header.Get(flagapi.HeaderReset) != answers[limit].Header.Get(flagapi.HeaderReset) && attempt < 2 {
					continue // the window turned during the burst
				}
				for i, res := range answers[:limit] {
					if res.Status == http.StatusTooManyRequests {
						t.Fatalf("request %d refused", i+1)
					}
				}
				last := answers[limit]
				apptest.WantStatus(t, last, http.StatusTooManyRequests)
				if s, err := strconv.Atoi(last.Header.Get(flagapi.HeaderRetryAfter)); err != nil || s < 1 || s > 10 {
					t.Errorf("Retry-After %q", last.Header.Get(flagapi.HeaderRetryAfter))
				}
				if res := ofrepPost(t, srv, path, e.SDKKey, ok); res.Status == http.StatusTooManyRequests {
					t.Errorf("another credential of the environment was refused too")
				}
				return
			}
		})
	}
	t.Run("a browser on another origin may send the web provider's headers and read the ETag", func(t *testing.T) {
		for _, path := range []string{ofrepFlagPath + "nope", ofrepFlagsPath} {
			res := srv.Do(t, http.MethodOptions, path, nil, "Authorization", "", "Origin", "https://app.example",
				"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization,content-type,if-none-match,x-api-key")
			apptest.WantStatus(t, res, http.StatusNoContent)
			allowed := strings.ToLower(res.Header.Get("Access-Control-Allow-Headers"))
			for _, h := range []string{"authorization", "content-type", "if-none-match", "x-api-key"} {
				if !strings.Contains(allowed, h) {
					t.Errorf("%s: Access-Control-Allow-Headers %q lacks %s", path, allowed, h)
				}
			}
			if !strings.Contains(res.Header.Get("Access-Control-Allow-Methods"), "POST") {
				t.Errorf("%s: Access-Control-Allow-Methods %q", path, res.Header.Get("Access-Control-Allow-Methods"))
			}
		}
		res := srv.Do(t, http.MethodPost, ofrepFlagsPath, ok, "Authorization", e.SDKKey, "Origin", "https://app.example")
		if res.Header.Get("Access-Control-Allow-Origin") != "https://app.example" || !strings.Contains(res.Header.Get("Access-Control-Expose-Headers"), "ETag") {
			t.Errorf("answer headers %v", res.Header)
		}
	})
}

func TestOFREPBulkETag(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "of")
	apptest.OFREPFlags(t, srv.Do, "of", "test")
	e := mustEnv(t, srv, "of", "test")
	// a multi-kind context: the org gets an object of two members, which must be written the same way every time
	target := `{"context":{"kind":"multi","user":{"targetingKey":"u-target"},"org":{"targetingKey":"acme"}}}`
	first := ofrepPost(t, srv, ofrepFlagsPath, e.SDKKey, target)
	apptest.WantStatus(t, first, http.StatusOK)
	etag := first.Header.Get("ETag")
	if !strings.HasPrefix(etag, `"`) || !strings.HasSuffix(etag, `"`) || len(etag) < 10 {
		t.Fatalf("ETag %q", etag)
	}
	t.Run("the same request with If-None-Match naming the ETag is 304 without a body", func(t *testing.T) {
		res := ofrepPost(t, srv, ofrepFlagsPath, e.SDKKey, target, "If-None-Match", etag)
		if res.Status != http.StatusNotModified || len(res.Body) != 0 || res.Header.Get("ETag") != etag {
			t.Fatalf("%d %v %s", res.Status, res.Header, res.Body)
		}
	})
	t.Run("a weak or listed ETag matches too", func(t *testing.T) {
		res := ofrepPost(t, srv, ofrepFlagsPath, e.SDKKey, target, "If-None-Match", `"other", W/`+etag)
		apptest.WantStatus(t, res, http.StatusNotModified)
	})
	t.Run("another context whose values differ gets another ETag", func(t *testing.T) {
		res := ofrepPost(t, srv, ofrepFlagsPath, e.SDKKey, `{"context":{"targetingKey":"u-other"}}`, "If-None-Match", etag)
		if res.Status != http.StatusOK || res.Header.Get("ETag") == etag {
			t.Fatalf("%d, ETag %q", res.Status, res.Header.Get("ETag"))
		}
	})
	t.Run("the client-side id, which sees fewer flags, gets another ETag", func(t *testing.T) {
		res := ofrepPost(t, srv, ofrepFlagsPath, e.ClientSideID, target, "If-None-Match", etag)
		if res.Status != http.StatusOK || res.Header.Get("ETag") == etag {
			t.Fatalf("%d, ETag %q", res.Status, res.Header.Get("ETag"))
		}
	})
	t.Run("after a flag changes the same request is 200 with the new value and a new ETag", func(t *testing.T) {
		mustPatch(t, srv, "of", "ofrep-bool", map[string]any{"op": "replace", "path": "/environments/test/targets", "value": []any{}})
		res := ofrepPost(t, srv, ofrepFlagsPath, e.SDKKey, target, "If-None-Match", etag)
		if res.Status != http.StatusOK || res.Header.Get("ETag") == etag {
			t.Fatalf("%d, ETag %q", res.Status, res.Header.Get("ETag"))
		}
		if got := apptest.OFREPOutcomeOf(t, bulkEntries(t, res)["ofrep-bool"], nil); got.Value != false || got.Reason != "DEFAULT" {
			t.Errorf("ofrep-bool after the change: %+v", got)
		}
	})
}

func TestOFREPClientSideAvailability(t *testing.T) {
	srv, e := fixture(t)
	ok := `{"context":{"targetingKey":"u1"}}`
	tests := []struct {
		name, cred string
		want       []string
	}{
		{"an SDK key sees every live flag", e.SDKKey, []string{"browser", "mobile", "server-only"}},
		{"a client-side id sees the flags available to client-side SDKs", e.ClientSideID, []string{"browser"}},
		{"a mobile key sees the flags available to mobile SDKs", e.MobileKey, []string{"mobile"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for k := range bulkEntries(t, ofrepPost(t, srv, ofrepFlagsPath, tt.cred, ok)) {
				got = append(got, k)
			}
			if fmt.Sprint(sortStrings(got)) != fmt.Sprint(tt.want) {
				t.Errorf("bulk evaluation holds %v, want %v", got, tt.want)
			}
			for _, k := range []string{"browser", "mobile", "server-only", "gone"} {
				want := http.StatusNotFound
				for _, w := range tt.want {
					if w == k {
						want = http.StatusOK
					}
				}
				if res := ofrepPost(t, srv, ofrepFlagPath+k, tt.cred, ok); res.Status != want {
					t.Errorf("%s: %d, want %d: %s", k, res.Status, want, res.Body)
				}
			}
		})
	}
}
