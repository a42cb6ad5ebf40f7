package endpoints_test

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	flagapi "github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/endpoints"
	"github.com/flagplane/flagplane/shared/ingest"
)

// sdkRequest is one request an SDK makes with its environment's credential.
type sdkRequest struct {
	method, path string
	body         string
	headers      []string // name, value pairs; Authorization is the credential
}

func (q sdkRequest) do(tb testing.TB, srv *apptest.Server) *apptest.Response {
	tb.Helper()
	var body any
	if q.body != "" {
		body = q.body
	}
	return srv.Do(tb, q.method, q.path, body, q.headers...)
}

var contextBase64 = base64.RawURLEncoding.EncodeToString([]byte(`{"kind":"user","key":"u1"}`))

// sdkRequests are the SDK and event routes, each as its SDK calls it.
var sdkRequests = []struct {
	name    string
	success int
	request func(e sdkEnv) sdkRequest
}{
	{"a server SDK polling /sdk/latest-all", http.StatusOK, func(e sdkEnv) sdkRequest {
		return sdkRequest{http.MethodGet, "/sdk/latest-all", "", []string{"Authorization", e.sdkKey}}
	}},
	{"a server SDK posting events to /bulk", http.StatusAccepted, func(e sdkEnv) sdkRequest {
		return sdkRequest{http.MethodPost, "/bulk", goSDKPayload(time.Now(), "u1"), []string{"Authorization", e.sdkKey}}
	}},
	{"a server SDK posting a diagnostic event", http.StatusAccepted, func(e sdkEnv) sdkRequest {
		return sdkRequest{http.MethodPost, "/diagnostic", `{"kind":"diagnostic-init","sdk":{"name":"go-server-sdk","version":"7.14.6"}}`, []string{"Authorization", e.sdkKey}}
	}},
	{"a mobile SDK posting events", http.StatusAccepted, func(e sdkEnv) sdkRequest {
		return sdkRequest{http.MethodPost, "/mobile/events/bulk", goSDKPayload(time.Now(), "u1"), []string{"Authorization", "api_key " + e.mobileKey}}
	}},
	{"a mobile SDK asking for its evaluations", http.StatusOK, func(e sdkEnv) sdkRequest {
		return sdkRequest{http.MethodGet, "/msdk/evalx/contexts/" + contextBase64, "", []string{"Authorization", "api_key " + e.mobileKey}}
	}},
	{"a browser SDK posting events with its client-side id", http.StatusAccepted, func(e sdkEnv) sdkRequest {
		return sdkRequest{http.MethodPost, "/events/bulk/" + e.clientID, goSDKPayload(time.Now(), "u1"), []string{"Authorization", ""}}
	}},
	{"a browser SDK asking for its evaluations", http.StatusOK, func(e sdkEnv) sdkRequest {
		return sdkRequest{http.MethodGet, "/sdk/evalx/" + e.clientID + "/contexts/" + contextBase64, "", []string{"Authorization", ""}}
	}},
}

// burst sends q limit+1 times within one rate-limit window and returns
// the answers; should the window turn during the burst, it runs again.
func burst(tb testing.TB, srv *apptest.Server, q sdkRequest, limit int) []*apptest.Response {
	tb.Helper()
	for attempt := 0; ; attempt++ {
		var answers []*apptest.Response
		resets := map[string]bool{}
		for range limit + 1 {
			res := q.do(tb, srv)
			answers = append(answers, res)
			resets[res.Header.Get(flagapi.HeaderReset)] = true
		}
		if len(resets) == 1 || attempt == 2 {
			return answers
		}
		time.Sleep(time.Until(time.Now().Truncate(flagapi.RateWindow).Add(flagapi.RateWindow))) // a fresh window
	}
}

func TestCredentialRateLimit(t *testing.T) {
	const limit = 3
	for _, c := range sdkRequests {
		t.Run(c.name+" is admitted "+strconv.Itoa(limit)+" times in ten seconds, then answered 429 with Retry-After", func(t *testing.T) {
			srv := apptest.New(t, apptest.WithRateLimits(flagapi.RateLimits{Credential: limit}))
			e, other := newSDKEnv(t, srv, "lim"), newSDKEnv(t, srv, "other")
			answers := burst(t, srv, c.request(e), limit)
			for i, res := range answers[:limit] {
				if res.Status != c.success {
					t.Fatalf("request %d: %d %s", i+1, res.Status, res.Body)
				}
				if got, want := res.Header.Get(flagapi.HeaderRouteRemaining), strconv.Itoa(limit-1-i); got != want {
					t.Errorf("request %d: %s %q, want %q", i+1, flagapi.HeaderRouteRemaining, got, want)
				}
				if res.Header.Get(flagapi.HeaderReset) == "" || res.Header.Get(flagapi.HeaderGlobalRemaining) != "" {
					t.Errorf("request %d: headers %v", i+1, res.Header)
				}
			}
			last := answers[limit]
			apptest.WantError(t, last, http.StatusTooManyRequests, "rate_limited", "SDK credential", "Retry-After")
			if s, err := strconv.Atoi(last.Header.Get(flagapi.HeaderRetryAfter)); err != nil || s < 1 || s > 10 {
				t.Errorf("Retry-After %q", last.Header.Get(flagapi.HeaderRetryAfter))
			}
			if last.Header.Get(flagapi.HeaderRouteRemaining) != "0" || last.Header.Get(flagapi.HeaderReset) == "" {
				t.Errorf("headers of the 429: %v", last.Header)
			}
			if res := c.request(other).do(t, srv); res.Status != c.success {
				t.Errorf("another environment's credential on the same route: %d %s", res.Status, res.Body)
			}
		})
	}

	t.Run("a credential used up on one route still serves another", func(t *testing.T) {
		srv := apptest.New(t, apptest.WithRateLimits(flagapi.RateLimits{Credential: limit}))
		e := newSDKEnv(t, srv, "lim")
		if answers := burst(t, srv, sdkRequests[1].request(e), limit); answers[limit].Status != http.StatusTooManyRequests {
			t.Fatalf("the burst of events was not limited: %d", answers[limit].Status)
		}
		if res := sdkRequests[0].request(e).do(t, srv); res.Status != http.StatusOK {
			t.Errorf("the same SDK key polling: %d %s", res.Status, res.Body)
		}
	})
	t.Run("a credential that does not authenticate answers 401 and uses up nothing", func(t *testing.T) {
		srv := apptest.New(t, apptest.WithRateLimits(flagapi.RateLimits{Credential: limit}))
		e := newSDKEnv(t, srv, "lim")
		for range limit + 1 {
			res := srv.Do(t, http.MethodGet, "/sdk/latest-all", nil, "Authorization", "sdk-not-a-key")
			apptest.WantStatus(t, res, http.StatusUnauthorized)
			if res.Header.Get(flagapi.HeaderReset) != "" {
				t.Errorf("a refused credential was counted: %v", res.Header)
			}
		}
		if res := sdkRequests[0].request(e).do(t, srv); res.Status != http.StatusOK || res.Header.Get(flagapi.HeaderRouteRemaining) != strconv.Itoa(limit-1) {
			t.Errorf("the real key after the refused ones: %d, %s %q", res.Status, flagapi.HeaderRouteRemaining, res.Header.Get(flagapi.HeaderRouteRemaining))
		}
	})
	t.Run("opening an SDK stream counts against the SDK key", func(t *testing.T) {
		srv := apptest.New(t, apptest.WithRateLimits(flagapi.RateLimits{Credential: 1}))
		e := newSDKEnv(t, srv, "lim")
		for attempt := 0; ; attempt++ {
			first, second := openStream(t, srv, e.sdkKey), openStream(t, srv, e.sdkKey)
			if first.Header.Get(flagapi.HeaderReset) != second.Header.Get(flagapi.HeaderReset) && attempt < 2 {
				continue // the window turned between the two
			}
			if first.StatusCode != http.StatusOK || second.StatusCode != http.StatusTooManyRequests || second.Header.Get(flagapi.HeaderRetryAfter) == "" {
				t.Errorf("first stream %d, second %d %v", first.StatusCode, second.StatusCode, second.Header)
			}
			return
		}
	})
	t.Run("with the credential limit at 0, SDK routes are not limited and carry no rate-limit header", func(t *testing.T) {
		srv := apptest.New(t, apptest.WithRateLimits(flagapi.RateLimits{Global: limit, Route: limit}))
		e := newSDKEnv(t, srv, "lim")
		for i := range 2 * limit {
			for _, c := range sdkRequests {
				if res := c.request(e).do(t, srv); res.Status != c.success || res.Header.Get(flagapi.HeaderReset) != "" {
					t.Fatalf("%s, request %d: %d %v", c.name, i+1, res.Status, res.Header)
				}
			}
		}
	})
	t.Run("the credential limit alone leaves API requests unlimited and without rate-limit headers", func(t *testing.T) {
		srv := apptest.New(t, apptest.WithRateLimits(flagapi.RateLimits{Credential: 1}))
		for i := range 3 {
			if res := srv.Do(t, http.MethodGet, "/api/v2/projects", nil); res.Status != http.StatusOK || res.Header.Get(flagapi.HeaderReset) != "" {
				t.Fatalf("request %d: %d %v", i+1, res.Status, res.Header)
			}
		}
	})
}

// openStream opens /all with key and returns the answer's status and
// headers, closing the stream.
func openStream(tb testing.TB, srv *apptest.Server, key string) *http.Response {
	tb.Helper()
	req, err := http.NewRequestWithContext(tb.Context(), http.MethodGet, srv.URL+"/all", nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("open the stream: %v", err)
	}
	res.Body.Close()
	return res
}

func TestEventMediaTypes(t *testing.T) {
	srv := apptest.New(t)
	e := newSDKEnv(t, srv, "media")
	payload := func(key string) string { return goSDKPayload(time.Now(), key) }
	diagnostic := `{"kind":"diagnostic-init","sdk":{"name":"go-server-sdk","version":"7.14.6"}}`
	routes := []struct {
		path, auth string
		body       func(key string) string
	}{
		{"/bulk", e.sdkKey, payload},
		{"/mobile/events/bulk", "api_key " + e.mobileKey, payload},
		{"/events/bulk/" + e.clientID, "", payload},
		{"/diagnostic", e.sdkKey, func(string) string { return diagnostic }},
		{"/mobile/events/diagnostic", "api_key " + e.mobileKey, func(string) string { return diagnostic }},
		{"/events/diagnostic/" + e.clientID, "", func(string) string { return diagnostic }},
	}
	for _, c := range []struct {
		name        string
		contentType string
		status      int
	}{
		{"a text/plain body is refused with 415", "text/plain", http.StatusUnsupportedMediaType},
		{"a text/plain body with a charset is refused with 415", "text/plain; charset=UTF-8", http.StatusUnsupportedMediaType},
		{"a form body is refused with 415", "application/x-www-form-urlencoded", http.StatusUnsupportedMediaType},
		{"a Content-Type that does not parse is refused with 415", "json", http.StatusUnsupportedMediaType},
		{"application/json is accepted", "application/json", http.StatusAccepted},
		{"application/json with a charset is accepted", "application/json; charset=utf-8", http.StatusAccepted},
		{"a body without Content-Type is read as JSON", "", http.StatusAccepted},
	} {
		for i, r := range routes {
			t.Run(c.name+" on "+strings.Replace(r.path, e.clientID, "{clientSideId}", 1), func(t *testing.T) {
				key := fmt.Sprintf("media-%d-%d", i, len(c.name))
				res := srv.Do(t, http.MethodPost, r.path, r.body(key), "Authorization", r.auth, "Content-Type", c.contentType)
				if c.status == http.StatusAccepted {
					apptest.WantStatus(t, res, c.status)
				} else {
					apptest.WantError(t, res, c.status, "unsupported_media_type", "application/json")
				}
				if !strings.Contains(r.path, "bulk") {
					return
				}
				var stored struct{ TotalCount int }
				srv.Do(t, http.MethodGet, envPath(e.project, e.env)+"/contexts/user/"+key, nil).JSON(t, &stored)
				if accepted := c.status == http.StatusAccepted; accepted != (stored.TotalCount > 0) {
					t.Errorf("answered %d, and %d contexts of the payload stored", res.Status, stored.TotalCount)
				}
			})
		}
	}
}

// stalledUpload starts a payload of size bytes and sends only its first
// bytes, so it holds its room among the payloads in flight; it returns a
// function that sends the rest and returns the status.
func stalledUpload(tb testing.TB, srv *apptest.Server, clientID string, size int) func() int {
	tb.Helper()
	addr := strings.TrimPrefix(srv.URL, "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	// An empty array padded with spaces to size.
	body := "[" + strings.Repeat(" ", size-2) + "]"
	fmt.Fprintf(conn, "POST /events/bulk/%s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		clientID, addr, len(body), body[:10])
	return func() int {
		if _, err := conn.Write([]byte(body[10:])); err != nil {
			tb.Fatalf("send the rest of the payload: %v", err)
		}
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			tb.Fatalf("read the answer: %v", err)
		}
		res.Body.Close()
		return res.StatusCode
	}
}

func TestPayloadBytesInFlight(t *testing.T) {
	endpoints.SetPayloadWait(t, 500*time.Millisecond)
	srv := apptest.New(t)
	e := newSDKEnv(t, srv, "flight")
	small := func() *apptest.Response {
		return srv.Do(t, http.MethodPost, "/events/bulk/"+e.clientID, goSDKPayload(time.Now(), "u1"), "Authorization", "")
	}
	large := func() *apptest.Response {
		// An empty array padded past SmallPayload.
		return srv.Do(t, http.MethodPost, "/events/bulk/"+e.clientID, "["+strings.Repeat(" ", endpoints.SmallPayload)+"]", "Authorization", "")
	}
	// fill holds room with stalled payloads of size bytes until total is taken.
	fill := func(total, size int) []func() int {
		var finish []func() int
		for left := total; left > 0; left -= min(left, size) {
			finish = append(finish, stalledUpload(t, srv, e.clientID, min(left, size)))
		}
		time.Sleep(100 * time.Millisecond) // let the server take them in
		return finish
	}
	wantBusy := func(t *testing.T, res *apptest.Response, began time.Time) {
		t.Helper()
		apptest.WantError(t, res, http.StatusServiceUnavailable, "service_unavailable", "again")
		if res.Header.Get(flagapi.HeaderRetryAfter) == "" {
			t.Errorf("no Retry-After: %v", res.Header)
		}
		if took := time.Since(began); took < 400*time.Millisecond {
			t.Errorf("answered after %s, without waiting for room", took)
		}
	}

	finishLarge := fill(endpoints.LargePayloadsInFlight, ingest.MaxBody)
	t.Run("a large payload finding no room waits, then is answered 503 with Retry-After", func(t *testing.T) {
		began := time.Now()
		wantBusy(t, large(), began)
	})
	t.Run("a small payload is not held up by large ones", func(t *testing.T) {
		if res := small(); res.Status != http.StatusAccepted {
			t.Errorf("%d %s", res.Status, res.Body)
		}
	})
	finishSmall := fill(endpoints.SmallPayloadsInFlight, endpoints.SmallPayload)
	t.Run("a small payload finding no room among small ones waits, then is answered 503", func(t *testing.T) {
		began := time.Now()
		wantBusy(t, small(), began)
	})
	t.Run("payloads waiting for room are taken once those in flight end", func(t *testing.T) {
		endpoints.SetPayloadWait(t, 20*time.Second)
		waitingSmall, waitingLarge := make(chan *apptest.Response), make(chan *apptest.Response)
		go func() { waitingSmall <- small() }()
		go func() { waitingLarge <- large() }()
		time.Sleep(100 * time.Millisecond)
		for _, finish := range []func() int{finishSmall[0], finishLarge[0]} {
			if status := finish(); status != http.StatusAccepted {
				t.Fatalf("a stalled payload, once sent whole: %d", status)
			}
		}
		for _, waiting := range []chan *apptest.Response{waitingSmall, waitingLarge} {
			if res := <-waiting; res.Status != http.StatusAccepted {
				t.Errorf("a waiting payload: %d %s", res.Status, res.Body)
			}
		}
	})
}
