package api

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/fault"
)

// RateLimits are LaunchDarkly-style request limits per ten-second window:
// Global counts every authenticated request of the account (a deployment
// holds one), Route every request to one operation (one method and path
// pattern). 0 turns a limit off; the zero value limits nothing.
type RateLimits struct {
	Global int
	Route  int
	// Credential counts the requests of one SDK credential (SDK key, mobile
	// key or client-side id) to one SDK or event route. Those routes take
	// no access token, so Global and Route do not count them.
	Credential int
}

// DefaultRateLimits are what `flagplane serve` and the Lambda functions
// apply unless configured otherwise: 200 and 100 requests a second on
// average, far above what people and pipelines send to a control API, and
// low enough to stop a runaway loop within ten seconds. An SDK polls every
// 30 s and flushes events every few seconds, but every browser of a site
// shares its client-side id: 1,000 requests a second per credential and
// route leaves room for that and still stops a runaway loop.
var DefaultRateLimits = RateLimits{Global: 2000, Route: 1000, Credential: 10000}

// MaxRateLimit is the largest limit accepted (a window counts up to 2^32-1).
const MaxRateLimit = 1_000_000_000

// RateWindow is the length of one rate-limit window, as the reference has it.
const RateWindow = 10 * time.Second

// The rate-limit headers, as the reference names them.
const (
	HeaderGlobalRemaining = "X-Ratelimit-Global-Remaining"
	HeaderRouteRemaining  = "X-Ratelimit-Route-Remaining"
	HeaderReset           = "X-Ratelimit-Reset"
	HeaderRetryAfter      = "Retry-After"
)

// Check reports a limit out of range.
func (l RateLimits) Check() error {
	for _, v := range []struct {
		name string
		n    int
	}{{"global", l.Global}, {"route", l.Route}, {"credential", l.Credential}} {
		if v.n < 0 || v.n > MaxRateLimit {
			return fmt.Errorf("the %s rate limit %d must be 0 (off) to %d requests per 10 s", v.name, v.n, MaxRateLimit)
		}
	}
	return nil
}

// limiter holds the counters of one router: the global one and one per
// operation, each a fixed ten-second window. Counting is one atomic
// compare-and-swap per counter, with no lock and no allocation, so it
// costs nothing measurable next to a request; nothing is stored, so in
// AWS every Lambda instance counts for itself (see docs/api.md, Rate limits).
type limiter struct {
	limits      RateLimits
	now         func() time.Time
	global      *window            // nil when off
	credentials *credentialWindows // nil when off
}

func newLimiter(l RateLimits, now func() time.Time) *limiter {
	if l.Global <= 0 && l.Route <= 0 && l.Credential <= 0 {
		return nil
	}
	if now == nil {
		now = time.Now
	}
	lim := &limiter{limits: l, now: now}
	if l.Global > 0 {
		lim.global = &window{limit: uint64(l.Global)}
	}
	if l.Credential > 0 {
		lim.credentials = &credentialWindows{limit: uint64(l.Credential)}
	}
	return lim
}

// limitsTokens says whether requests with an access token are limited.
func (l *limiter) limitsTokens() bool {
	return l != nil && (l.global != nil || l.limits.Route > 0)
}

// route returns the counter of one operation, or nil when routes are not limited.
func (l *limiter) route() *window {
	if l == nil || l.limits.Route <= 0 {
		return nil
	}
	return &window{limit: uint64(l.limits.Route)}
}

// window counts the requests of the current ten-second window. One word
// holds both the window's number (high 32 bits: Unix time / 10 s, good
// until the year 15,000) and its count (low 32 bits), so a new window
// starts with the same compare-and-swap that counts.
type window struct {
	limit uint64
	state atomic.Uint64
}

// take counts one request in window n unless the limit is reached, and
// returns how many remain after it.
func (c *window) take(n uint64) (remaining uint64, ok bool) {
	for {
		old := c.state.Load()
		count := c.count(old, n)
		if count >= c.limit {
			return 0, false
		}
		if c.state.CompareAndSwap(old, n<<32|(count+1)) {
			return c.limit - count - 1, true
		}
	}
}

// remaining is what take would leave, without counting.
func (c *window) remaining(n uint64) uint64 {
	if count := c.count(c.state.Load(), n); count < c.limit {
		return c.limit - count
	}
	return 0
}

func (c *window) count(state, n uint64) uint64 {
	if state>>32 != n {
		return 0 // an earlier window: this one starts empty
	}
	return state & math.MaxUint32
}

// admit counts a request against the operation's counter and the global
// one, sets the rate-limit headers, and refuses it with 429 rate_limited
// and Retry-After when either limit is used up. A request refused by its
// route's limit does not count against the global one.
func (l *limiter) admit(h http.Header, op catalog.Operation, route *window) error {
	return l.count(h, op, l.now().UnixMilli(), route, "", l.global)
}

// count is admit over the given counters; whose qualifies the route's
// limit in the refusal ("" for an access token's).
func (l *limiter) count(h http.Header, op catalog.Operation, nowMs int64, route *window, whose string, global *window) error {
	windowMs := RateWindow.Milliseconds()
	n := uint64(nowMs / windowMs)
	resetMs := (nowMs/windowMs + 1) * windowMs
	vals := make([]string, 4) // one allocation for every header's value slice
	vals[0] = strconv.FormatInt(resetMs, 10)
	h[HeaderReset] = vals[0:1:1]

	var refused string
	if route != nil {
		left, ok := route.take(n)
		vals[1] = strconv.FormatUint(left, 10)
		h[HeaderRouteRemaining] = vals[1:2:2]
		if !ok {
			refused = fmt.Sprintf("the limit of %d requests per 10 seconds%s to %s %s", route.limit, whose, op.Method, op.Path)
		}
	}
	if global != nil {
		var left uint64
		if refused == "" {
			var ok bool
			if left, ok = global.take(n); !ok {
				refused = fmt.Sprintf("the account's limit of %d requests per 10 seconds", global.limit)
			}
		} else {
			left = global.remaining(n)
		}
		vals[2] = strconv.FormatUint(left, 10)
		h[HeaderGlobalRemaining] = vals[2:3:3]
	}
	if refused == "" {
		return nil
	}
	retry := (resetMs - nowMs + 999) / 1000
	vals[3] = strconv.FormatInt(max(retry, 1), 10)
	h[HeaderRetryAfter] = vals[3:4:4]
	return fault.New(fault.RateLimited, "too many requests: %s is used up; retry after %d s (%s)", refused, max(retry, 1), HeaderRetryAfter)
}

// credentialWindows are the counters of the credential limit, one per
// operation and credential. Handlers count a credential only once it has
// authenticated, so there is at most one counter per credential and route
// in use, never one per guessed key; the counters start afresh with each
// window, as a spent window's counts matter no more.
type credentialWindows struct {
	limit  uint64
	mu     sync.Mutex
	n      uint64 // the window the counters count
	counts map[credentialKey]*window
}

type credentialKey struct{ op, credential string }

// window returns the counter of key in window n.
func (c *credentialWindows) window(n uint64, key credentialKey) *window {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil || c.n != n {
		c.n, c.counts = n, map[credentialKey]*window{}
	}
	w := c.counts[key]
	if w == nil {
		w = &window{limit: c.limit}
		c.counts[key] = w
	}
	return w
}

// credentialGate is what a Public operation's handler needs to count its
// credential: the router's limiter and the operation.
type credentialGate struct {
	lim *limiter
	op  catalog.Operation
}

type credentialGateKey struct{}

// LimitCredential counts a request of an SDK or event route against the
// credential limit of its operation, once the handler has authenticated
// the credential it names (credential is any string that identifies that
// credential, such as its kind and environment id). It sets the
// rate-limit headers and, when the limit is used up, returns a 429
// rate_limited error after setting Retry-After. Without a credential
// limit it does nothing.
func LimitCredential(w http.ResponseWriter, r *http.Request, credential string) error {
	g, _ := r.Context().Value(credentialGateKey{}).(*credentialGate)
	if g == nil {
		return nil
	}
	nowMs := g.lim.now().UnixMilli()
	win := g.lim.credentials.window(uint64(nowMs/RateWindow.Milliseconds()), credentialKey{g.op.ID, credential})
	return g.lim.count(w.Header(), g.op, nowMs, win, " of one SDK credential", nil)
}
