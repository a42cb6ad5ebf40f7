package app_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/catalog"
)

// What LaunchDarkly's clients and browsers send, on the whole API.

var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// betaRefusal reports whether res is the beta header's 403.
func betaRefusal(res *apptest.Response) bool {
	return res.Status == http.StatusForbidden && strings.Contains(string(res.Body), "beta operation")
}

func TestVersionHeadersOnEveryOperation(t *testing.T) {
	srv := apptest.New(t)
	for _, op := range catalog.All() {
		if op.Public {
			continue
		}
		path := pathParam.ReplaceAllString(op.Path, "nope")
		if !op.Beta {
			t.Run(op.ID+" accepts LD-API-Version: 20220603", func(t *testing.T) {
				if res := srv.Do(t, op.Method, path, nil, "LD-API-Version", "20220603"); betaRefusal(res) {
					t.Errorf("%s %s: %d %s", op.Method, path, res.Status, res.Body)
				}
			})
			continue
		}
		t.Run(op.ID+" (beta) refuses a dated LD-API-Version alone", func(t *testing.T) {
			if res := srv.Do(t, op.Method, path, nil, "LD-API-Version", "20220603"); !betaRefusal(res) {
				t.Errorf("%s %s: %d %s", op.Method, path, res.Status, res.Body)
			} else if !strings.Contains(string(res.Body), "SVC-API-Version: beta") {
				t.Errorf("the refusal does not name the documented header: %s", res.Body)
			}
		})
		t.Run(op.ID+" (beta) accepts LD-API-Version: beta", func(t *testing.T) {
			if res := srv.Do(t, op.Method, path, nil, "LD-API-Version", "beta"); betaRefusal(res) {
				t.Errorf("%s %s: %d %s", op.Method, path, res.Status, res.Body)
			}
		})
	}
}

func TestMethodOverrideOnTheAPI(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "shop")
	if res := srv.Do(t, "POST", "/api/v2/flags/shop", map[string]any{"key": "f", "name": "F"}); res.Status != http.StatusCreated {
		t.Fatalf("create flag: %d %s", res.Status, res.Body)
	}
	t.Run("a POST tunnelling PATCH patches the flag", func(t *testing.T) {
		res := srv.Do(t, "POST", "/api/v2/flags/shop/f", `[{"op":"replace","path":"/name","value":"Tunnelled"}]`, "X-HTTP-Method-Override", "PATCH")
		var flag struct{ Name string }
		if res.Status != http.StatusOK || json.Unmarshal(res.Body, &flag) != nil || flag.Name != "Tunnelled" {
			t.Fatalf("%d %s", res.Status, res.Body)
		}
		if got := srv.Do(t, "GET", "/api/v2/flags/shop/f", nil); !strings.Contains(string(got.Body), `"name":"Tunnelled"`) {
			t.Errorf("the flag reads %s", got.Body)
		}
	})
	t.Run("a POST with another override value is 400 naming the header", func(t *testing.T) {
		res := srv.Do(t, "POST", "/api/v2/flags/shop/f", nil, "X-HTTP-Method-Override", "GET")
		if res.Status != http.StatusBadRequest || !strings.Contains(string(res.Body), "X-HTTP-Method-Override") {
			t.Errorf("%d %s", res.Status, res.Body)
		}
	})
	t.Run("a POST tunnelling DELETE deletes the flag", func(t *testing.T) {
		if res := srv.Do(t, "POST", "/api/v2/flags/shop/f", nil, "X-HTTP-Method-Override", "DELETE"); res.Status != http.StatusNoContent {
			t.Fatalf("%d %s", res.Status, res.Body)
		}
		if res := srv.Do(t, "GET", "/api/v2/flags/shop/f", nil); res.Status != http.StatusNotFound {
			t.Errorf("the flag still reads %d", res.Status)
		}
	})
}

func TestCORSOnTheAPI(t *testing.T) {
	srv := apptest.New(t, apptest.WithCORS("*"))
	const origin = "http://localhost:3000"
	t.Run("a preflight is answered 204 without a token", func(t *testing.T) {
		res := srv.Do(t, "OPTIONS", "/api/v2/projects/shop/environments/production", nil,
			"Authorization", "", "Origin", origin, "Access-Control-Request-Method", "PATCH",
			"Access-Control-Request-Headers", "authorization,content-type,ld-api-version")
		if res.Status != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != origin ||
			!strings.Contains(res.Header.Get("Access-Control-Allow-Methods"), "PATCH") {
			t.Errorf("%d %v", res.Status, res.Header)
		}
	})
	t.Run("an answer echoes the origin", func(t *testing.T) {
		res := srv.Do(t, "GET", "/api/v2/projects", nil, "Origin", origin)
		if res.Status != http.StatusOK || res.Header.Get("Access-Control-Allow-Origin") != origin ||
			!strings.Contains(res.Header.Get("Access-Control-Expose-Headers"), "X-Ratelimit-Reset") {
			t.Errorf("%d %v", res.Status, res.Header)
		}
	})
}

func TestRateLimitsOnTheAPI(t *testing.T) {
	const limit = 5
	srv := apptest.New(t, apptest.WithRateLimits(api.RateLimits{Global: 100, Route: limit}))
	// The window is real time: should it turn during the burst, the burst runs again.
	var statuses []int
	var last *apptest.Response
	for attempt := 0; attempt < 3; attempt++ {
		statuses, last = nil, nil
		resets := map[string]bool{}
		for i := 0; i <= limit; i++ {
			last = srv.Do(t, "GET", "/api/v2/projects", nil)
			statuses = append(statuses, last.Status)
			resets[last.Header.Get("X-Ratelimit-Reset")] = true
		}
		if len(resets) == 1 {
			break
		}
	}
	t.Run("the route admits its limit, then answers 429 rate_limited with Retry-After", func(t *testing.T) {
		for i, s := range statuses[:limit] {
			if s != http.StatusOK {
				t.Errorf("request %d: %d", i+1, s)
			}
		}
		var body struct{ Code string }
		json.Unmarshal(last.Body, &body)
		if last.Status != http.StatusTooManyRequests || body.Code != "rate_limited" {
			t.Fatalf("request %d: %d %s", limit+1, last.Status, last.Body)
		}
		if s, err := strconv.Atoi(last.Header.Get("Retry-After")); err != nil || s < 1 || s > 10 {
			t.Errorf("Retry-After %q", last.Header.Get("Retry-After"))
		}
		if last.Header.Get("X-Ratelimit-Route-Remaining") != "0" || last.Header.Get("X-Ratelimit-Global-Remaining") == "" || last.Header.Get("X-Ratelimit-Reset") == "" {
			t.Errorf("headers %v", last.Header)
		}
	})
	t.Run("the health check is not limited and carries no rate-limit header", func(t *testing.T) {
		for i := 0; i < 2*limit; i++ {
			res := srv.Do(t, "GET", "/healthz", nil, "Authorization", "")
			if res.Status != http.StatusOK || res.Header.Get("X-Ratelimit-Reset") != "" {
				t.Fatalf("%d %v", res.Status, res.Header)
			}
		}
	})
	t.Run("another route still answers", func(t *testing.T) {
		if res := srv.Do(t, "GET", "/api/v2/tokens", nil); res.Status != http.StatusOK {
			t.Errorf("%d %s", res.Status, res.Body)
		}
	})
}
