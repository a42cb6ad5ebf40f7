package sdkapi_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"
	ld "github.com/launchdarkly/go-server-sdk/v7"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// The client-side and mobile streams, as LaunchDarkly's client SDKs read
// them: /eval/{clientSideId}/{context} (GET) and /eval/{clientSideId}
// (REPORT) for browsers, /meval/{context} and /meval for mobile SDKs, and
// the ping streams (/ping/{clientSideId}, /mping).

const userU1 = `{"kind":"user","key":"u1","name":"Ann"}`

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// evalData is a client stream event's data: a put's flags by key, or a
// patch's or delete's one flag.
func evalData(tb testing.TB, ev sse) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(ev.data), &m); err != nil {
		tb.Fatalf("%s data is not a JSON object: %v: %s", ev.name, err, ev.data)
	}
	return m
}

// availability replaces a flag's clientSideAvailability.
func availability(browser, mobile bool) map[string]any {
	return map[string]any{"op": "replace", "path": "/clientSideAvailability",
		"value": map[string]any{"usingEnvironmentId": browser, "usingMobileKey": mobile}}
}

func TestClientStreaming(t *testing.T) {
	srv, e := fixture(t)
	res, events := openSSE(t, http.MethodGet, srv.URL+"/eval/"+e.ClientSideID+"/"+b64(userU1), "")
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	// Versions the SDK holds, by flag key: every patch and delete must
	// carry a higher one, or LaunchDarkly's client SDKs drop it.
	held := map[string]float64{}
	mustFlag(t, srv, "p", "later", map[string]any{"clientSideAvailability": map[string]any{"usingEnvironmentId": true}}) // before the put is read: the put may or may not have it
	steps := []struct {
		name string
		act  func(t *testing.T)
		want string
		// key is the flag of a patch or delete; value what a patch serves.
		key   string
		value any
	}{
		{name: "the stream opens with a put of the flags available to client-side SDKs, evaluated for the context",
			act: func(*testing.T) {}, want: "put"},
		{name: "a flag turned off through the API arrives as a patch with its new value",
			act: func(t *testing.T) { mustPatch(t, srv, "p", "browser", on("test", false)) }, want: "patch", key: "browser", value: false},
		{name: "a change to a flag client-side SDKs do not see sends nothing: the next event is the next change's",
			act: func(t *testing.T) {
				mustPatch(t, srv, "p", "server-only", on("test", true))
				mustPatch(t, srv, "p", "browser", on("test", true))
			}, want: "patch", key: "browser", value: true},
		{name: "a flag made available to client-side SDKs arrives as a patch",
			act: func(t *testing.T) { mustPatch(t, srv, "p", "mobile", availability(true, true)) }, want: "patch", key: "mobile", value: "b"},
		{name: "a flag made unavailable to client-side SDKs arrives as a delete",
			act: func(t *testing.T) { mustPatch(t, srv, "p", "browser", availability(false, false)) }, want: "delete", key: "browser"},
		{name: "made available again, it comes back as a patch above the delete's version",
			act: func(t *testing.T) { mustPatch(t, srv, "p", "browser", availability(true, false)) }, want: "patch", key: "browser", value: true},
		{name: "a new segment without a flag using it sends nothing; a rule on it, matching no one yet, patches the flag's version",
			act: func(t *testing.T) {
				mustSegment(t, srv, "p", "test", "vip", nil)
				mustPatch(t, srv, "p", "browser", map[string]any{"op": "add", "path": "/environments/test/rules/-",
					"value": map[string]any{"variation": 1, "clauses": []map[string]any{{"attribute": "", "op": "segmentMatch", "values": []string{"vip"}}}}})
			}, want: "patch", key: "browser", value: true},
		{name: "the context joining the segment patches the flag though its version did not change",
			act: func(t *testing.T) {
				mustPatchSegment(t, srv, "p", "test", "vip", map[string]any{"included": []string{"u1"}})
			}, want: "patch", key: "browser", value: false},
		{name: "and so does the context leaving it",
			act: func(t *testing.T) {
				mustPatchSegment(t, srv, "p", "test", "vip", map[string]any{"included": []string{}})
			},
			want: "patch", key: "browser", value: true},
		{name: "a deleted flag arrives as a delete",
			act: func(t *testing.T) {
				apptest.WantStatus(t, srv.Do(t, http.MethodDelete, "/api/v2/flags/p/later", nil), http.StatusNoContent)
			}, want: "delete", key: "later"},
		{name: "an archived flag arrives as a delete",
			act: func(t *testing.T) {
				mustPatch(t, srv, "p", "mobile", map[string]any{"op": "replace", "path": "/archived", "value": true})
			}, want: "delete", key: "mobile"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			start := time.Now()
			st.act(t)
			ev := next(t, events, true)
			if ev.name == "patch" && st.want == "patch" && evalData(t, ev)["key"] == "later" {
				ev = next(t, events, true) // "later", made before the put was read, may come as a patch of its own
			}
			if ev.name != st.want {
				t.Fatalf("event %q, want %q: %s", ev.name, st.want, ev.data)
			}
			data := evalData(t, ev)
			switch ev.name {
			case "put":
				if _, ok := data["browser"]; !ok || len(data) > 2 || data["server-only"] != nil || data["mobile"] != nil {
					t.Fatalf("put has %v, want browser (and later) only", data)
				}
				for key, f := range data {
					f := f.(map[string]any)
					for _, field := range []string{"value", "variation", "version", "flagVersion", "trackEvents"} {
						if _, ok := f[field]; !ok {
							t.Errorf("%s has no %s: %v", key, field, f)
						}
					}
					if f["reason"] != nil {
						t.Errorf("%s has a reason without withReasons: %v", key, f)
					}
					held[key] = f["version"].(float64)
				}
			case "patch", "delete":
				if data["key"] != st.key {
					t.Fatalf("%s of %v, want %s: %s", ev.name, data["key"], st.key, ev.data)
				}
				v, _ := data["version"].(float64)
				if v <= held[st.key] {
					t.Errorf("%s version %v, not above the %v the SDK holds", ev.name, v, held[st.key])
				}
				held[st.key] = v
				if ev.name == "patch" {
					if data["value"] != st.value {
						t.Errorf("value %v, want %v", data["value"], st.value)
					}
					for _, field := range []string{"flagVersion", "variation", "trackEvents"} {
						if _, ok := data[field]; !ok {
							t.Errorf("patch has no %s: %s", field, ev.data)
						}
					}
				}
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

func TestClientStreamForms(t *testing.T) {
	srv, e := fixture(t)
	tests := []struct {
		name               string
		method, path, body string
		headers            []string
		// poll is the polling route of the same request.
		poll       string
		wantKeys   string
		wantReason string
	}{
		{name: "the REPORT form reads the context from the body",
			method: "REPORT", path: "/eval/" + e.ClientSideID, body: userU1, headers: []string{"Content-Type", "application/json"},
			poll: "/sdk/evalx/" + e.ClientSideID + "/context", wantKeys: "browser"},
		{name: "withReasons=true adds each flag's reason",
			method: http.MethodGet, path: "/eval/" + e.ClientSideID + "/" + b64(userU1) + "?withReasons=true",
			poll: "/sdk/evalx/" + e.ClientSideID + "/contexts/" + b64(userU1) + "?withReasons=true", wantKeys: "browser", wantReason: "FALLTHROUGH"},
		{name: "the mobile key sees the flags available to mobile SDKs",
			method: http.MethodGet, path: "/meval/" + b64(userU1), headers: []string{"Authorization", "api_key " + e.MobileKey},
			poll: "/msdk/evalx/contexts/" + b64(userU1), wantKeys: "mobile"},
		{name: "the mobile REPORT form reads the context from the body",
			method: "REPORT", path: "/meval?withReasons=true", body: userU1, headers: []string{"Authorization", e.MobileKey},
			poll: "/msdk/evalx/context?withReasons=true", wantKeys: "mobile", wantReason: "OFF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, events := openSSE(t, tt.method, srv.URL+tt.path, tt.body, tt.headers...)
			if res.StatusCode != http.StatusOK {
				b, _ := io.ReadAll(res.Body)
				t.Fatalf("status %d: %s", res.StatusCode, b)
			}
			ev := next(t, events, true)
			if ev.name != "put" {
				t.Fatalf("event %q, want put", ev.name)
			}
			data := evalData(t, ev)
			var keys []string
			for k := range data {
				keys = append(keys, k)
			}
			if got := strings.Join(sortStrings(keys), ","); got != tt.wantKeys {
				t.Fatalf("put has %s, want %s: %s", got, tt.wantKeys, ev.data)
			}
			reason, _ := data[tt.wantKeys].(map[string]any)["reason"].(map[string]any)
			if tt.wantReason == "" && reason != nil || tt.wantReason != "" && (reason == nil || reason["kind"] != tt.wantReason) {
				t.Fatalf("reason %v, want %q", reason, tt.wantReason)
			}
			// The put is what polling answers for the same request.
			var body any
			if tt.body != "" {
				body = tt.body
			}
			polled := srv.Do(t, tt.method, tt.poll, body, tt.headers...)
			var want, got any
			polled.JSON(t, &want)
			_ = json.Unmarshal([]byte(ev.data), &got)
			if wj, gj := mustJSON(t, want), mustJSON(t, got); wj != gj {
				t.Fatalf("put %s\nwhile %s %s answers %s", gj, tt.method, tt.poll, wj)
			}
		})
	}
}

func mustJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func TestClientStreamRefusals(t *testing.T) {
	srv, e := fixture(t)
	tests := []struct {
		name               string
		method, path, body string
		headers            []string
		wantStatus         int
		wantCode           string
	}{
		{"a context that is not base64url is a 400 before the stream starts",
			http.MethodGet, "/eval/" + e.ClientSideID + "/not*base64", "", nil, 400, "invalid_request"},
		{"a context without a key is a 400",
			http.MethodGet, "/eval/" + e.ClientSideID + "/" + b64(`{"kind":"user"}`), "", nil, 400, "invalid_request"},
		{"a REPORT body that is not JSON is a 400",
			"REPORT", "/eval/" + e.ClientSideID, "{", nil, 400, "invalid_request"},
		{"a REPORT without a body is a 400",
			"REPORT", "/meval", "", []string{"Authorization", e.MobileKey}, 400, "invalid_request"},
		{"an unknown client-side id is a 404, as LaunchDarkly answers it",
			http.MethodGet, "/eval/000000000000000000000000/" + b64(userU1), "", nil, 404, "not_found"},
		{"a mobile stream without a mobile key is a 401",
			http.MethodGet, "/meval/" + b64(userU1), "", nil, 401, "unauthorized"},
		{"an SDK key is not a mobile key",
			http.MethodGet, "/meval/" + b64(userU1), "", []string{"Authorization", e.SDKKey}, 401, "unauthorized"},
		{"a ping stream with an unknown client-side id is a 404",
			http.MethodGet, "/ping/000000000000000000000000", "", nil, 404, "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, _ := openSSE(t, tt.method, srv.URL+tt.path, tt.body, tt.headers...)
			body, _ := io.ReadAll(res.Body)
			var m map[string]any
			_ = json.Unmarshal(body, &m)
			if res.StatusCode != tt.wantStatus || m["code"] != tt.wantCode {
				t.Fatalf("status %d: %s", res.StatusCode, body)
			}
			if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("the refusal came as a stream")
			}
		})
	}
}

func TestMobileKeyResetEndsMobileStreams(t *testing.T) {
	srv, e := fixture(t)
	_, mobile := openSSE(t, http.MethodGet, srv.URL+"/meval/"+b64(userU1), "", "Authorization", e.MobileKey)
	_, ping := openSSE(t, http.MethodGet, srv.URL+"/mping", "", "Authorization", e.MobileKey)
	_, browser := openSSE(t, http.MethodGet, srv.URL+"/eval/"+e.ClientSideID+"/"+b64(userU1), "")
	for name, events := range map[string]chan sse{"meval": mobile, "mping": ping, "eval": browser} {
		if ev := next(t, events, true); ev.name != "put" && ev.name != "ping" {
			t.Fatalf("%s: first event %q", name, ev.name)
		}
	}
	start := time.Now()
	apptest.WantStatus(t, srv.Do(t, http.MethodPost, "/api/v2/projects/p/environments/test/mobileKey", nil), http.StatusOK)
	t.Run("the mobile streams end at once", func(t *testing.T) {
		for name, events := range map[string]chan sse{"meval": mobile, "mping": ping} {
			if ev := next(t, events, true); ev.name != "closed" {
				t.Fatalf("%s: event %q, want the stream closed", name, ev.name)
			}
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("took %v", d)
		}
	})
	t.Run("the browser's stream, on the client-side id, goes on", func(t *testing.T) {
		mustPatch(t, srv, "p", "browser", on("test", false))
		if ev := next(t, browser, true); ev.name != "patch" {
			t.Fatalf("event %q, want the patch", ev.name)
		}
	})
	t.Run("the old mobile key cannot open a new stream", func(t *testing.T) {
		res, _ := openSSE(t, http.MethodGet, srv.URL+"/meval/"+b64(userU1), "", "Authorization", e.MobileKey)
		if res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("status %d", res.StatusCode)
		}
	})
}

func TestPingStream(t *testing.T) {
	srv, e := fixture(t)
	_, events := openSSE(t, http.MethodGet, srv.URL+"/ping/"+e.ClientSideID, "")
	steps := []struct {
		name string
		act  func(t *testing.T)
	}{
		{"the stream opens with a ping", func(*testing.T) {}},
		{"a flag change sends a ping", func(t *testing.T) { mustPatch(t, srv, "p", "browser", on("test", false)) }},
		{"a new flag sends a ping", func(t *testing.T) { mustFlag(t, srv, "p", "fresh", nil) }},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.act(t)
			if ev := next(t, events, true); ev.name != "ping" || ev.data == "" {
				t.Fatalf("event %q (data %q), want a ping with data (an EventSource drops events without)", ev.name, ev.data)
			}
		})
	}
}

func TestClientStreamSecureMode(t *testing.T) {
	srv, e := fixture(t)
	apptest.WantStatus(t, srv.Do(t, http.MethodPatch, "/api/v2/projects/p/environments/test",
		[]map[string]any{{"op": "replace", "path": "/secureMode", "value": true}}), http.StatusOK)
	// LaunchDarkly's server-side Go SDK computes the hash a page is given.
	client, err := ld.MakeCustomClient(e.SDKKey, ld.Config{Offline: true}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	hash := client.SecureModeHash(ldcontext.NewBuilder("u1").Name("Ann").Build())
	other := client.SecureModeHash(ldcontext.New("u2"))
	tests := []struct {
		name       string
		query      string
		wantStatus int
	}{
		{"without h the stream is refused", "", http.StatusForbidden},
		{"with another context's hash it is refused", "?h=" + other, http.StatusForbidden},
		{"with the context's hash it opens", "?h=" + hash, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, events := openSSE(t, http.MethodGet, srv.URL+"/eval/"+e.ClientSideID+"/"+b64(userU1)+tt.query, "")
			if res.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d", res.StatusCode, tt.wantStatus)
			}
			if tt.wantStatus == http.StatusOK {
				if ev := next(t, events, true); ev.name != "put" {
					t.Fatalf("event %q", ev.name)
				}
			}
			if polled := srv.Do(t, http.MethodGet, "/sdk/evalx/"+e.ClientSideID+"/contexts/"+b64(userU1)+tt.query, nil); polled.Status != tt.wantStatus {
				t.Fatalf("polling: status %d, want %d", polled.Status, tt.wantStatus)
			}
		})
	}
	t.Run("mobile SDKs are not asked for a hash", func(t *testing.T) {
		res, _ := openSSE(t, http.MethodGet, srv.URL+"/meval/"+b64(userU1), "", "Authorization", e.MobileKey)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("status %d", res.StatusCode)
		}
	})
}

func TestClientStreamFromAnotherOrigin(t *testing.T) {
	srv, e := fixture(t)
	origin := "https://shop.example.com"
	t.Run("an EventSource's GET gets the origin allowed", func(t *testing.T) {
		res, events := openSSE(t, http.MethodGet, srv.URL+"/eval/"+e.ClientSideID+"/"+b64(userU1), "", "Origin", origin)
		if res.StatusCode != http.StatusOK || res.Header.Get("Access-Control-Allow-Origin") != origin {
			t.Fatalf("status %d, allow origin %q", res.StatusCode, res.Header.Get("Access-Control-Allow-Origin"))
		}
		if ev := next(t, events, true); ev.name != "put" {
			t.Fatalf("event %q", ev.name)
		}
	})
	t.Run("a REPORT stream's preflight allows REPORT and the SDK's headers", func(t *testing.T) {
		res := srv.Do(t, http.MethodOptions, "/eval/"+e.ClientSideID, nil, "Authorization", "", "Origin", origin,
			"Access-Control-Request-Method", "REPORT", "Access-Control-Request-Headers", "content-type,x-launchdarkly-user-agent,x-launchdarkly-wrapper")
		methods := res.Header.Get("Access-Control-Allow-Methods")
		headers := strings.ToLower(res.Header.Get("Access-Control-Allow-Headers"))
		if res.Status != http.StatusNoContent || !strings.Contains(methods, "REPORT") ||
			!strings.Contains(headers, "content-type") || !strings.Contains(headers, "x-launchdarkly-wrapper") {
			t.Fatalf("preflight %d: methods %q, headers %q", res.Status, methods, headers)
		}
	})
}
