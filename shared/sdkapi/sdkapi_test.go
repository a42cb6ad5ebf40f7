package sdkapi_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/app/allgroups"
	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/audit"
)

// env is what SDKs know of an environment: its three credentials.
type env struct {
	SDKKey, MobileKey, ClientSideID string
}

// mustEnv reads an environment's credentials through the API.
func mustEnv(tb testing.TB, srv *apptest.Server, project, key string) env {
	tb.Helper()
	res := srv.Do(tb, http.MethodGet, "/api/v2/projects/"+project+"/environments/"+key, nil)
	if res.Status != http.StatusOK {
		tb.Fatalf("get environment %s/%s: %d %s", project, key, res.Status, res.Body)
	}
	var e struct {
		APIKey    string `json:"apiKey"`
		MobileKey string `json:"mobileKey"`
		ID        string `json:"_id"`
	}
	res.JSON(tb, &e)
	return env{SDKKey: e.APIKey, MobileKey: e.MobileKey, ClientSideID: e.ID}
}

// mustFlag creates a flag through the API; body adds to key and name.
func mustFlag(tb testing.TB, srv *apptest.Server, project, key string, body map[string]any) {
	tb.Helper()
	b := map[string]any{"key": key, "name": "Flag " + key}
	for k, v := range body {
		b[k] = v
	}
	if res := srv.Do(tb, http.MethodPost, "/api/v2/flags/"+project, b); res.Status != http.StatusCreated {
		tb.Fatalf("create flag %q: %d %s", key, res.Status, res.Body)
	}
}

// mustPatch applies a JSON patch to a flag through the API.
func mustPatch(tb testing.TB, srv *apptest.Server, project, key string, ops ...map[string]any) {
	tb.Helper()
	if res := srv.Do(tb, http.MethodPatch, "/api/v2/flags/"+project+"/"+key, ops); res.Status != http.StatusOK {
		tb.Fatalf("patch flag %q: %d %s", key, res.Status, res.Body)
	}
}

func on(envKey string, v bool) map[string]any {
	return map[string]any{"op": "replace", "path": "/environments/" + envKey + "/on", "value": v}
}

// fixture: project p with flags for every audience, one archived.
func fixture(tb testing.TB) (*apptest.Server, env) {
	tb.Helper()
	srv := apptest.New(tb, apptest.WithCORS("*"))
	srv.MustCreateProject(tb, "p")
	mustFlag(tb, srv, "p", "server-only", map[string]any{"clientSideAvailability": map[string]any{"usingEnvironmentId": false, "usingMobileKey": false}})
	mustFlag(tb, srv, "p", "browser", map[string]any{"clientSideAvailability": map[string]any{"usingEnvironmentId": true, "usingMobileKey": false}})
	mustFlag(tb, srv, "p", "mobile", map[string]any{"clientSideAvailability": map[string]any{"usingEnvironmentId": false, "usingMobileKey": true},
		"variations": []map[string]any{{"value": "a"}, {"value": "b"}}})
	mustFlag(tb, srv, "p", "gone", nil)
	mustPatch(tb, srv, "p", "browser", on("test", true))
	mustPatch(tb, srv, "p", "gone", map[string]any{"op": "replace", "path": "/archived", "value": true})
	return srv, mustEnv(tb, srv, "p", "test")
}

func flagKeys(tb testing.TB, body []byte, field string) []string {
	tb.Helper()
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil {
		tb.Fatalf("answer is not JSON: %v: %s", err, body)
	}
	if field != "" {
		inner := map[string]json.RawMessage{}
		if err := json.Unmarshal(doc[field], &inner); err != nil {
			tb.Fatalf("%s is not an object: %s", field, body)
		}
		doc = inner
	}
	var keys []string
	for k := range doc {
		keys = append(keys, k)
	}
	return sortStrings(keys)
}

func sortStrings(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

func TestServerSidePolling(t *testing.T) {
	srv, e := fixture(t)
	tests := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"latest-all answers every live flag in the SDK data model and no segments", func(t *testing.T) {
			res := srv.Do(t, http.MethodGet, "/sdk/latest-all", nil, "Authorization", e.SDKKey)
			if res.Status != http.StatusOK {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			if got := strings.Join(flagKeys(t, res.Body, "flags"), ","); got != "browser,mobile,server-only" {
				t.Fatalf("flags %s", got)
			}
			var doc struct {
				Flags    map[string]map[string]any `json:"flags"`
				Segments map[string]any            `json:"segments"`
			}
			res.JSON(t, &doc)
			if doc.Segments == nil || len(doc.Segments) != 0 {
				t.Fatalf("segments %v", doc.Segments)
			}
			b := doc.Flags["browser"]
			if b["key"] != "browser" || b["on"] != true || b["salt"] == nil || b["version"] == nil || b["fallthrough"] == nil {
				t.Fatalf("browser flag %v", b)
			}
			if cs, _ := b["clientSideAvailability"].(map[string]any); cs["usingEnvironmentId"] != true || cs["usingMobileKey"] != false {
				t.Fatalf("clientSideAvailability %v", b["clientSideAvailability"])
			}
		}},
		{"an unchanged poll with the ETag gets 304 and no body", func(t *testing.T) {
			first := srv.Do(t, http.MethodGet, "/sdk/latest-all", nil, "Authorization", e.SDKKey)
			etag := first.Header.Get("ETag")
			if etag == "" {
				t.Fatal("no ETag")
			}
			res := srv.Do(t, http.MethodGet, "/sdk/latest-all", nil, "Authorization", e.SDKKey, "If-None-Match", etag)
			if res.Status != http.StatusNotModified || len(res.Body) != 0 {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
		}},
		{"a flag change changes the ETag", func(t *testing.T) {
			etag := srv.Do(t, http.MethodGet, "/sdk/latest-all", nil, "Authorization", e.SDKKey).Header.Get("ETag")
			mustPatch(t, srv, "p", "server-only", on("test", true))
			res := srv.Do(t, http.MethodGet, "/sdk/latest-all", nil, "Authorization", e.SDKKey, "If-None-Match", etag)
			if res.Status != http.StatusOK || res.Header.Get("ETag") == etag {
				t.Fatalf("status %d, ETag %q (was %q)", res.Status, res.Header.Get("ETag"), etag)
			}
		}},
		{"latest-flags answers the flags alone", func(t *testing.T) {
			res := srv.Do(t, http.MethodGet, "/sdk/latest-flags", nil, "Authorization", e.SDKKey)
			if got := strings.Join(flagKeys(t, res.Body, ""), ","); res.Status != http.StatusOK || got != "browser,mobile,server-only" {
				t.Fatalf("status %d, flags %s", res.Status, got)
			}
		}},
		{"latest-flags/{key} answers one flag, and 404 for an archived one", func(t *testing.T) {
			res := srv.Do(t, http.MethodGet, "/sdk/latest-flags/mobile", nil, "Authorization", e.SDKKey)
			if m := res.Map(t); res.Status != http.StatusOK || m["key"] != "mobile" {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			if res := srv.Do(t, http.MethodGet, "/sdk/latest-flags/gone", nil, "Authorization", e.SDKKey); res.Status != http.StatusNotFound {
				t.Fatalf("archived flag: status %d", res.Status)
			}
		}},
		{"the other environment serves its own targeting", func(t *testing.T) {
			prod := mustEnv(t, srv, "p", "production")
			var doc struct {
				Flags map[string]struct{ On bool } `json:"flags"`
			}
			srv.Do(t, http.MethodGet, "/sdk/latest-all", nil, "Authorization", prod.SDKKey).JSON(t, &doc)
			if doc.Flags["browser"].On {
				t.Fatal("browser is on in production, though only turned on in test")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.check)
	}
}

func TestSDKCredentials(t *testing.T) {
	srv, e := fixture(t)
	b64 := base64.RawURLEncoding.EncodeToString([]byte(`{"kind":"user","key":"u1"}`))
	// every SDK endpoint with the credential it takes; byID when that is
	// the client-side id in the path, stream when it answers a stream
	type endpoint struct {
		method, path, auth, body string
		byID, stream             bool
	}
	ctx := `{"kind":"user","key":"u1"}`
	endpoints := func(e env) []endpoint {
		return []endpoint{
			{method: http.MethodGet, path: "/sdk/latest-all", auth: e.SDKKey},
			{method: http.MethodGet, path: "/sdk/latest-flags", auth: e.SDKKey},
			{method: http.MethodGet, path: "/sdk/latest-flags/browser", auth: e.SDKKey},
			{method: http.MethodGet, path: "/all", auth: e.SDKKey, stream: true},
			{method: http.MethodGet, path: "/sdk/evalx/" + e.ClientSideID + "/contexts/" + b64, byID: true},
			{method: "REPORT", path: "/sdk/evalx/" + e.ClientSideID + "/context", body: ctx, byID: true},
			{method: http.MethodGet, path: "/msdk/evalx/contexts/" + b64, auth: "api_key " + e.MobileKey},
			{method: "REPORT", path: "/msdk/evalx/context", auth: "api_key " + e.MobileKey, body: ctx},
			{method: http.MethodGet, path: "/eval/" + e.ClientSideID + "/" + b64, byID: true, stream: true},
			{method: "REPORT", path: "/eval/" + e.ClientSideID, body: ctx, byID: true, stream: true},
			{method: http.MethodGet, path: "/ping/" + e.ClientSideID, byID: true, stream: true},
			{method: http.MethodGet, path: "/meval/" + b64, auth: "api_key " + e.MobileKey, stream: true},
			{method: "REPORT", path: "/meval", auth: "api_key " + e.MobileKey, body: ctx, stream: true},
			{method: http.MethodGet, path: "/mping", auth: "api_key " + e.MobileKey, stream: true},
		}
	}
	wrong := env{SDKKey: "sdk-00000000-0000-4000-8000-000000000000", MobileKey: "mob-00000000-0000-4000-8000-000000000000", ClientSideID: "000000000000000000000000"}
	t.Run("a wrong key gets 401 and an unknown client-side id 404 on every SDK endpoint, as LaunchDarkly answers", func(t *testing.T) {
		for _, c := range endpoints(wrong) {
			var body any
			if c.body != "" {
				body = c.body
			}
			want, code := http.StatusUnauthorized, "unauthorized"
			if c.byID {
				want, code = http.StatusNotFound, "not_found"
			}
			res := srv.Do(t, c.method, c.path, body, "Authorization", c.auth)
			if res.Status != want || res.Map(t)["code"] != code {
				t.Errorf("%s %s: status %d, want %d: %s", c.method, c.path, res.Status, want, res.Body)
			}
		}
	})
	t.Run("an access token is no SDK key", func(t *testing.T) {
		if res := srv.Do(t, http.MethodGet, "/sdk/latest-all", nil); res.Status != http.StatusUnauthorized {
			t.Fatalf("status %d", res.Status)
		}
	})
	t.Run("after the SDK and mobile keys are reset, the old ones get 401 at once, here and in a fresh process", func(t *testing.T) {
		other := srv.Reopen(t)
		// warm both processes' caches with the old keys
		for _, s := range []*apptest.Server{srv, other} {
			if res := s.Do(t, http.MethodGet, "/sdk/latest-all", nil, "Authorization", e.SDKKey); res.Status != http.StatusOK {
				t.Fatalf("before the reset: %d", res.Status)
			}
		}
		for _, p := range []string{"apiKey", "mobileKey"} {
			if res := srv.Do(t, http.MethodPost, "/api/v2/projects/p/environments/test/"+p, nil); res.Status != http.StatusOK {
				t.Fatalf("reset %s: %d %s", p, res.Status, res.Body)
			}
		}
		old := env{SDKKey: e.SDKKey, MobileKey: e.MobileKey, ClientSideID: "000000000000000000000000"}
		for _, c := range endpoints(old) {
			if c.byID {
				continue // the client-side id is not reset
			}
			var body any
			if c.body != "" {
				body = c.body
			}
			if res := srv.Do(t, c.method, c.path, body, "Authorization", c.auth); res.Status != http.StatusUnauthorized {
				t.Errorf("%s %s with the old key: status %d", c.method, c.path, res.Status)
			}
		}
		fresh := srv.Reopen(t)
		if res := fresh.Do(t, http.MethodGet, "/sdk/latest-all", nil, "Authorization", e.SDKKey); res.Status != http.StatusUnauthorized {
			t.Fatalf("old key in a fresh process: %d", res.Status)
		}
		now := mustEnv(t, srv, "p", "test")
		for _, c := range endpoints(now) {
			var body any
			if c.body != "" {
				body = c.body
			}
			if c.stream {
				continue // a stream does not end; TestStreaming and TestClientStreaming cover them
			}
			if res := srv.Do(t, c.method, c.path, body, "Authorization", c.auth); res.Status != http.StatusOK {
				t.Errorf("%s %s with the new key: status %d: %s", c.method, c.path, res.Status, res.Body)
			}
		}
	})
}

func TestClientSideEvaluation(t *testing.T) {
	srv, e := fixture(t)
	ctx := `{"kind":"user","key":"u1","name":"Ann"}`
	b64 := base64.RawURLEncoding.EncodeToString([]byte(ctx))
	tests := []struct {
		name                 string
		method, path, auth   string
		body                 string
		wantStatus           int
		wantKeys             string
		wantCode, wantReason string
	}{
		{name: "the client-side id sees only flags available to client-side SDKs", method: "GET",
			path: "/sdk/evalx/" + e.ClientSideID + "/contexts/" + b64, wantStatus: 200, wantKeys: "browser"},
		{name: "the REPORT form reads the context from the body", method: "REPORT",
			path: "/sdk/evalx/" + e.ClientSideID + "/context", body: ctx, wantStatus: 200, wantKeys: "browser"},
		{name: "the mobile key sees only flags available to mobile SDKs", method: "GET",
			path: "/msdk/evalx/contexts/" + b64, auth: "api_key " + e.MobileKey, wantStatus: 200, wantKeys: "mobile"},
		{name: "the mobile REPORT form takes the raw mobile key too", method: "REPORT",
			path: "/msdk/evalx/context", auth: e.MobileKey, body: ctx, wantStatus: 200, wantKeys: "mobile"},
		{name: "padded base64url is read too", method: "GET",
			path: "/sdk/evalx/" + e.ClientSideID + "/contexts/" + base64.URLEncoding.EncodeToString([]byte(`{"kind":"user","key":"u12"}`)), wantStatus: 200, wantKeys: "browser"},
		{name: "reasons come with withReasons=true", method: "GET",
			path: "/sdk/evalx/" + e.ClientSideID + "/contexts/" + b64 + "?withReasons=true", wantStatus: 200, wantKeys: "browser", wantReason: "FALLTHROUGH"},
		{name: "a context that is not base64url is a 400", method: "GET",
			path: "/sdk/evalx/" + e.ClientSideID + "/contexts/not*base64", wantStatus: 400, wantCode: "invalid_request"},
		{name: "a context without a key is a 400", method: "GET",
			path: "/sdk/evalx/" + e.ClientSideID + "/contexts/" + base64.RawURLEncoding.EncodeToString([]byte(`{"kind":"user"}`)), wantStatus: 400, wantCode: "invalid_request"},
		{name: "a REPORT body that is not JSON is a 400", method: "REPORT",
			path: "/sdk/evalx/" + e.ClientSideID + "/context", body: "{", wantStatus: 400, wantCode: "invalid_request"},
		{name: "an SDK key is not a mobile key", method: "GET",
			path: "/msdk/evalx/contexts/" + b64, auth: e.SDKKey, wantStatus: 401, wantCode: "unauthorized"},
		{name: "an SDK key is not a client-side id: no environment is found, as LaunchDarkly answers", method: "GET",
			path: "/sdk/evalx/" + e.SDKKey + "/contexts/" + b64, wantStatus: 404, wantCode: "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body any
			if tt.body != "" {
				body = tt.body
			}
			res := srv.Do(t, tt.method, tt.path, body, "Authorization", tt.auth)
			if res.Status != tt.wantStatus {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			if tt.wantCode != "" {
				if m := res.Map(t); m["code"] != tt.wantCode {
					t.Fatalf("code %v: %s", m["code"], res.Body)
				}
				return
			}
			if got := strings.Join(flagKeys(t, res.Body, ""), ","); got != tt.wantKeys {
				t.Fatalf("flags %s: %s", got, res.Body)
			}
			var flags map[string]map[string]any
			res.JSON(t, &flags)
			for key, f := range flags {
				for _, field := range []string{"value", "variation", "version", "flagVersion", "trackEvents"} {
					if _, ok := f[field]; !ok {
						t.Errorf("%s has no %s: %v", key, field, f)
					}
				}
				reason, _ := f["reason"].(map[string]any)
				if tt.wantReason == "" && reason != nil || tt.wantReason != "" && (reason == nil || reason["kind"] != tt.wantReason) {
					t.Errorf("%s: reason %v, want %q", key, f["reason"], tt.wantReason)
				}
			}
		})
	}
	t.Run("the values are the evaluate operation's", func(t *testing.T) {
		var got map[string]struct {
			Value     any
			Variation int
		}
		srv.Do(t, http.MethodGet, "/msdk/evalx/contexts/"+b64, nil, "Authorization", e.MobileKey).JSON(t, &got)
		if got["mobile"].Value != "b" || got["mobile"].Variation != 1 {
			t.Fatalf("mobile flag (off, off variation 1) served %+v", got["mobile"])
		}
	})
	t.Run("a browser on another origin may call, preflight included", func(t *testing.T) {
		res := srv.Do(t, http.MethodOptions, "/sdk/evalx/"+e.ClientSideID+"/contexts/"+b64, nil,
			"Authorization", "", "Origin", "https://shop.example.com", "Access-Control-Request-Method", "GET",
			"Access-Control-Request-Headers", "x-launchdarkly-user-agent")
		allowed := strings.ToLower(res.Header.Get("Access-Control-Allow-Headers"))
		if res.Status != http.StatusNoContent || !strings.Contains(allowed, "x-launchdarkly-user-agent") {
			t.Fatalf("preflight: %d, allowed headers %q", res.Status, allowed)
		}
		res = srv.Do(t, http.MethodGet, "/sdk/evalx/"+e.ClientSideID+"/contexts/"+b64, nil, "Authorization", "", "Origin", "https://shop.example.com")
		if res.Status != http.StatusOK || res.Header.Get("Access-Control-Allow-Origin") != "https://shop.example.com" {
			t.Fatalf("status %d, allow origin %q", res.Status, res.Header.Get("Access-Control-Allow-Origin"))
		}
	})
}

// sseReader reads server-sent events from a stream.
type sseReader struct {
	r      *bufio.Reader
	events chan sse
}

type sse struct{ name, data string }

// openStream connects to /all with the SDK key; the connection closes when the test ends.
func openStream(tb testing.TB, baseURL, sdkKey string) (*http.Response, chan sse) {
	tb.Helper()
	return openSSE(tb, http.MethodGet, baseURL+"/all", "", "Authorization", sdkKey)
}

// openSSE sends a request (with body, when not empty, and headers as name,
// value pairs) and reads its answer's server-sent events; the connection
// closes when the test ends. A failed answer's body is left to read.
func openSSE(tb testing.TB, method, url, body string, headers ...string) (*http.Response, chan sse) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		cancel()
		tb.Fatalf("stream request: %v", err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		tb.Fatalf("open stream: %v", err)
	}
	tb.Cleanup(func() { cancel(); res.Body.Close() })
	events := make(chan sse, 64)
	if res.StatusCode != http.StatusOK {
		close(events)
		return res, events
	}
	go func() {
		defer close(events)
		br := bufio.NewReader(res.Body)
		var ev sse
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case line == "":
				if ev.name != "" {
					events <- ev
				}
				ev = sse{}
			case strings.HasPrefix(line, ":"):
				events <- sse{name: "comment"}
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return res, events
}

func next(tb testing.TB, events chan sse, skipComments bool) sse {
	tb.Helper()
	timeout := time.After(2 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return sse{name: "closed"}
			}
			if skipComments && ev.name == "comment" {
				continue
			}
			return ev
		case <-timeout:
			tb.Fatal("no event within 2 s")
			return sse{}
		}
	}
}

func TestStreaming(t *testing.T) {
	srv, e := fixture(t)
	res, events := openStream(t, srv.URL, e.SDKKey)
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	steps := []struct {
		name   string
		act    func(t *testing.T)
		want   string
		inData []string
	}{
		{"the stream opens with a put of every live flag", func(*testing.T) {}, "put",
			[]string{`"path":"/"`, `"browser":{`, `"mobile":{`, `"segments":{}`}},
		{"a flag change made through the API arrives as a patch", func(t *testing.T) { mustPatch(t, srv, "p", "mobile", on("test", true)) }, "patch",
			[]string{`"path":"/flags/mobile"`, `"on":true`}},
		{"a new flag arrives as a patch", func(t *testing.T) { mustFlag(t, srv, "p", "fresh", nil) }, "patch",
			[]string{`"path":"/flags/fresh"`, `"version":1`}},
		{"a deleted flag arrives as a delete with a higher version", func(t *testing.T) {
			if res := srv.Do(t, http.MethodDelete, "/api/v2/flags/p/fresh", nil); res.Status != http.StatusNoContent {
				t.Fatalf("delete: %d %s", res.Status, res.Body)
			}
		}, "delete", []string{`"path":"/flags/fresh"`, `"version":2`}},
		{"a flag made again with a version the SDK has seen comes as a new put", func(t *testing.T) { mustFlag(t, srv, "p", "fresh", nil) }, "put",
			[]string{`"fresh":{`}},
		{"an archived flag arrives as a delete", func(t *testing.T) {
			mustPatch(t, srv, "p", "browser", map[string]any{"op": "replace", "path": "/archived", "value": true})
		}, "delete", []string{`"path":"/flags/browser"`}},
		{"a change in another environment's targeting still patches (the flag's version grew)", func(t *testing.T) { mustPatch(t, srv, "p", "mobile", on("production", true)) }, "patch",
			[]string{`"path":"/flags/mobile"`}},
		{"resetting the SDK key ends the stream", func(t *testing.T) {
			if res := srv.Do(t, http.MethodPost, "/api/v2/projects/p/environments/test/apiKey", nil); res.Status != http.StatusOK {
				t.Fatalf("reset: %d", res.Status)
			}
		}, "closed", nil},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			start := time.Now()
			st.act(t)
			ev := next(t, events, true)
			if ev.name != st.want {
				t.Fatalf("event %q, want %q: %s", ev.name, st.want, ev.data)
			}
			for _, s := range st.inData {
				if !strings.Contains(ev.data, s) {
					t.Errorf("data lacks %s: %s", s, ev.data)
				}
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
	t.Run("the old key cannot open a new stream", func(t *testing.T) {
		res, _ := openStream(t, srv.URL, e.SDKKey)
		if res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("status %d", res.StatusCode)
		}
	})
}

func TestStreamHeartbeatAndLimits(t *testing.T) {
	srv, e := fixture(t)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	serve := func(tb testing.TB, s app.Settings) string {
		tb.Helper()
		a := app.New(srv.Table, audit.Discard{}, s, logger, allgroups.List()...)
		h, err := a.Handler("sdk")
		if err != nil {
			tb.Fatal(err)
		}
		hs := httptest.NewServer(h)
		tb.Cleanup(hs.Close)
		tb.Cleanup(a.SDK.Streams().Close) // runs first: ends streams so Close does not wait
		return hs.URL
	}
	t.Run("an idle stream gets a comment line every heartbeat", func(t *testing.T) {
		_, events := openStream(t, serve(t, app.Settings{SDKHeartbeat: 30 * time.Millisecond}), e.SDKKey)
		if ev := next(t, events, false); ev.name != "put" {
			t.Fatalf("first event %q", ev.name)
		}
		for i := 0; i < 2; i++ {
			if ev := next(t, events, false); ev.name != "comment" {
				t.Fatalf("event %q, want a heartbeat comment", ev.name)
			}
		}
	})
	t.Run("client-side and mobile streams get heartbeats too", func(t *testing.T) {
		url := serve(t, app.Settings{SDKHeartbeat: 30 * time.Millisecond})
		ctx := base64.RawURLEncoding.EncodeToString([]byte(`{"kind":"user","key":"u1"}`))
		for path, auth := range map[string]string{"/eval/" + e.ClientSideID + "/" + ctx: "", "/meval/" + ctx: e.MobileKey, "/mping": e.MobileKey} {
			_, events := openSSE(t, http.MethodGet, url+path, "", "Authorization", auth)
			if ev := next(t, events, false); ev.name != "put" && ev.name != "ping" {
				t.Fatalf("%s: first event %q", path, ev.name)
			}
			if ev := next(t, events, false); ev.name != "comment" {
				t.Fatalf("%s: event %q, want a heartbeat comment", path, ev.name)
			}
		}
	})
	t.Run("without streaming (the Lambda functions) the client streams tell the SDK to poll", func(t *testing.T) {
		res, _ := openSSE(t, http.MethodGet, serve(t, app.Settings{NoSDKStreaming: true})+"/eval/"+e.ClientSideID+"/e30", "")
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "/sdk/evalx") {
			t.Fatalf("status %d: %s", res.StatusCode, body)
		}
	})
	t.Run("a stream outlives the server's read and write timeouts", func(t *testing.T) {
		a := app.New(srv.Table, audit.Discard{}, app.Settings{SDKHeartbeat: 50 * time.Millisecond}, logger, allgroups.List()...)
		h, err := a.Handler("")
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		hs := &http.Server{Handler: h, ReadTimeout: 100 * time.Millisecond, WriteTimeout: 100 * time.Millisecond}
		go hs.Serve(ln)
		t.Cleanup(func() { hs.Close() })
		t.Cleanup(a.SDK.Streams().Close)
		_, events := openStream(t, "http://"+ln.Addr().String(), e.SDKKey)
		if ev := next(t, events, false); ev.name != "put" {
			t.Fatalf("first event %q", ev.name)
		}
		deadline := time.Now().Add(400 * time.Millisecond)
		for time.Now().Before(deadline) {
			if ev := next(t, events, false); ev.name != "comment" {
				t.Fatalf("event %q before the timeouts passed, want heartbeats", ev.name)
			}
		}
	})
	t.Run("without streaming (the Lambda functions) /all tells the SDK to poll", func(t *testing.T) {
		res, _ := openStream(t, serve(t, app.Settings{NoSDKStreaming: true}), e.SDKKey)
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "poll") {
			t.Fatalf("status %d: %s", res.StatusCode, body)
		}
	})
	t.Run("the sdk group's function routes the SDK endpoints", func(t *testing.T) {
		url := serve(t, app.Settings{})
		req, _ := http.NewRequest(http.MethodGet, url+"/sdk/latest-all", nil)
		req.Header.Set("Authorization", e.SDKKey)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("status %d", res.StatusCode)
		}
	})
}
