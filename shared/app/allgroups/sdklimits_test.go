package allgroups_test

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"testing"
	"time"

	flagapi "github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app/apptest"
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
	request func(e apptest.SDKEnv) sdkRequest
}{
	{"a server SDK polling /sdk/latest-all", http.StatusOK, func(e apptest.SDKEnv) sdkRequest {
		return sdkRequest{http.MethodGet, "/sdk/latest-all", "", []string{"Authorization", e.SDKKey}}
	}},
	{"a server SDK posting events to /bulk", http.StatusAccepted, func(e apptest.SDKEnv) sdkRequest {
		return sdkRequest{http.MethodPost, "/bulk", apptest.GoSDKPayload(time.Now(), "u1"), []string{"Authorization", e.SDKKey}}
	}},
	{"a server SDK posting a diagnostic event", http.StatusAccepted, func(e apptest.SDKEnv) sdkRequest {
		return sdkRequest{http.MethodPost, "/diagnostic", `{"kind":"diagnostic-init","sdk":{"name":"go-server-sdk","version":"7.14.6"}}`, []string{"Authorization", e.SDKKey}}
	}},
	{"a mobile SDK posting events", http.StatusAccepted, func(e apptest.SDKEnv) sdkRequest {
		return sdkRequest{http.MethodPost, "/mobile/events/bulk", apptest.GoSDKPayload(time.Now(), "u1"), []string{"Authorization", "api_key " + e.MobileKey}}
	}},
	{"a mobile SDK asking for its evaluations", http.StatusOK, func(e apptest.SDKEnv) sdkRequest {
		return sdkRequest{http.MethodGet, "/msdk/evalx/contexts/" + contextBase64, "", []string{"Authorization", "api_key " + e.MobileKey}}
	}},
	{"a browser SDK posting events with its client-side id", http.StatusAccepted, func(e apptest.SDKEnv) sdkRequest {
		return sdkRequest{http.MethodPost, "/events/bulk/" + e.ClientID, apptest.GoSDKPayload(time.Now(), "u1"), []string{"Authorization", ""}}
	}},
	{"a browser SDK asking for its evaluations", http.StatusOK, func(e apptest.SDKEnv) sdkRequest {
		return sdkRequest{http.MethodGet, "/sdk/evalx/" + e.ClientID + "/contexts/" + contextBase64, "", []string{"Authorization", ""}}
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
			e, other := apptest.NewSDKEnv(t, srv, "lim"), apptest.NewSDKEnv(t, srv, "other")
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
		e := apptest.NewSDKEnv(t, srv, "lim")
		if answers := burst(t, srv, sdkRequests[1].request(e), limit); answers[limit].Status != http.StatusTooManyRequests {
			t.Fatalf("the burst of events was not limited: %d", answers[limit].Status)
		}
		if res := sdkRequests[0].request(e).do(t, srv); res.Status != http.StatusOK {
			t.Errorf("the same SDK key polling: %d %s", res.Status, res.Body)
		}
	})
	t.Run("a credential that does not authenticate answers 401 and uses up nothing", func(t *testing.T) {
		srv := apptest.New(t, apptest.WithRateLimits(flagapi.RateLimits{Credential: limit}))
		e := apptest.NewSDKEnv(t, srv, "lim")
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
		e := apptest.NewSDKEnv(t, srv, "lim")
		for attempt := 0; ; attempt++ {
			first, second := openStream(t, srv, e.SDKKey), openStream(t, srv, e.SDKKey)
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
		e := apptest.NewSDKEnv(t, srv, "lim")
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
