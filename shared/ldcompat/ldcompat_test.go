// Package ldcompat_test is the LaunchDarkly compatibility tier: LaunchDarkly's
// own generated Go client (github.com/launchdarkly/api-client-go/v17) drives
// every built operation of flagplane that the client has, against the whole
// API started by apptest, and every answer is checked against the client's
// models: the status, the decode, and the fields the models require. Where
// the spec deliberately differs from LaunchDarkly (deviations_test.go) a
// decode error is named and counted apart; anything else fails, and so does
// a listed deviation that no longer happens.
//
// The test collects every failure and ends with one list, operation by
// operation, so one run shows all that is left:
//
//	go test -v -run LaunchDarklyClient ./shared/ldcompat/
package ldcompat_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	ldapi "github.com/launchdarkly/api-client-go/v17"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/catalog"
)

// clientModule is the client this tier pins in go.mod.
const clientModule = "github.com/launchdarkly/api-client-go/v17 v17.2.0"

// notInClient are built operations LaunchDarkly's client has no call for.
var notInClient = map[string]string{
	"postOAuthToken": "the OAuth 2.0 token endpoint (/trust/oauth/token) is not part of LaunchDarkly's REST API client",
	// OpenFeature's remote evaluation protocol: OFREP providers call it (make test-ofrep, the browser tier, the e2e tier).
	"evaluateOFREPFlag":  "OpenFeature's remote evaluation protocol (/ofrep/v1), not part of LaunchDarkly's REST API",
	"evaluateOFREPFlags": "OpenFeature's remote evaluation protocol (/ofrep/v1), not part of LaunchDarkly's REST API",
	// SDK event ingestion: LaunchDarkly's SDKs post there, not its REST API client (the contexts and applications they feed are called here).
	"postServerEvents":              "SDK event ingestion (/bulk) is the SDKs' own endpoint, not part of the REST API client",
	"postDiagnosticEvent":           "SDK diagnostic events (/diagnostic) are the SDKs' own endpoint, not part of the REST API client",
	"postMobileEvents":              "mobile SDK events (/mobile/events/bulk) are the SDKs' own endpoint, not part of the REST API client",
	"postClientSideEvents":          "client-side SDK events (/events/bulk/{clientSideId}) are the SDKs' own endpoint, not part of the REST API client",
	"postMobileDiagnosticEvent":     "mobile SDK diagnostic events are the SDKs' own endpoint, not part of the REST API client",
	"postClientSideDiagnosticEvent": "client-side SDK diagnostic events are the SDKs' own endpoint, not part of the REST API client",
	// Release policies came to the reference after v17: the client has no ReleasePolicies API.
	"GetReleasePolicies":       "release policies are not in api-client-go v17 (no release-policies path)",
	"PostReleasePolicy":        "release policies are not in api-client-go v17 (no release-policies path)",
	"PostReleasePoliciesOrder": "release policies are not in api-client-go v17 (no release-policies path)",
	"GetReleasePolicy":         "release policies are not in api-client-go v17 (no release-policies path)",
	"PutReleasePolicy":         "release policies are not in api-client-go v17 (no release-policies path)",
	"DeleteReleasePolicy":      "release policies are not in api-client-go v17 (no release-policies path)",
	// Adaptive triggers (spec 4.14): the reference, and so LaunchDarkly's client, has no adaptive-trigger routes.
	"getAdaptiveTriggers":     "adaptive triggers are not in LaunchDarkly's API (spec 4.14 only), so its client has no call",
	"postAdaptiveTrigger":     "adaptive triggers are not in LaunchDarkly's API (spec 4.14 only), so its client has no call",
	"getAdaptiveTrigger":      "adaptive triggers are not in LaunchDarkly's API (spec 4.14 only), so its client has no call",
	"patchAdaptiveTrigger":    "adaptive triggers are not in LaunchDarkly's API (spec 4.14 only), so its client has no call",
	"deleteAdaptiveTrigger":   "adaptive triggers are not in LaunchDarkly's API (spec 4.14 only), so its client has no call",
	"postAdaptiveTriggerFire": "an alert source fires a trigger with the trigger's token, not through the REST API client",
	// What LaunchDarkly's SDKs read, and the load balancer's check: not REST API calls.
	"getHealth":                            "the health check (/healthz) is flagplane's own, for load balancers, not part of the REST API",
	"getSDKLatestAll":                      "SDK flag delivery (/sdk/latest-all) is the server-side SDKs' own endpoint, not part of the REST API client",
	"getSDKLatestFlags":                    "SDK flag delivery (/sdk/latest-flags) is the server-side SDKs' own endpoint, not part of the REST API client",
	"getSDKLatestFlag":                     "SDK flag delivery (/sdk/latest-flags/{flagKey}) is the server-side SDKs' own endpoint, not part of the REST API client",
	"streamSDKAll":                         "the SDK stream (/all) is the server-side SDKs' own endpoint, not part of the REST API client",
	"getSDKClientSideEvaluations":          "client-side SDK evaluations (/sdk/evalx) are the client-side SDKs' own endpoint, not part of the REST API client",
	"reportSDKClientSideEvaluations":       "client-side SDK evaluations (/sdk/evalx) are the client-side SDKs' own endpoint, not part of the REST API client",
	"getSDKMobileEvaluations":              "mobile SDK evaluations (/msdk/evalx) are the mobile SDKs' own endpoint, not part of the REST API client",
	"reportSDKMobileEvaluations":           "mobile SDK evaluations (/msdk/evalx) are the mobile SDKs' own endpoint, not part of the REST API client",
	"streamSDKClientSideEvaluations":       "the client-side SDK streams (/eval) are the client-side SDKs' own endpoint, not part of the REST API client",
	"streamSDKClientSideEvaluationsReport": "the client-side SDK streams (/eval) are the client-side SDKs' own endpoint, not part of the REST API client",
	"streamSDKClientSidePing":              "the client-side SDK ping stream (/ping) is the client-side SDKs' own endpoint, not part of the REST API client",
	"streamSDKMobileEvaluations":           "the mobile SDK streams (/meval) are the mobile SDKs' own endpoint, not part of the REST API client",
	"streamSDKMobileEvaluationsReport":     "the mobile SDK streams (/meval) are the mobile SDKs' own endpoint, not part of the REST API client",
	"streamSDKMobilePing":                  "the mobile SDK ping stream (/mping) is the mobile SDKs' own endpoint, not part of the REST API client",
	// flagplane's web console: its page and files, not the REST API.
	"getConsolePage":       "the web console's page (/) is flagplane's own, not part of LaunchDarkly's REST API",
	"getConsoleFile":       "the web console's files (/console/...) are flagplane's own, not part of LaunchDarkly's REST API",
	"getConsoleScript":     "the web console's files (/console/js/...) are flagplane's own, not part of LaunchDarkly's REST API",
	"getConsolePageScript": "the web console's files (/console/js/pages/...) are flagplane's own, not part of LaunchDarkly's REST API",
	// The client's ApiPatchApprovalRequestRequest (ApprovalsBetaApi) has no body setter: it sends the patch without instructions.
	"patchApprovalRequest": "LaunchDarkly's client v17 sends patchApprovalRequest with no body (no instructions), so no successful call can be made through it",
}

// tier is one run of the client against one server.
type tier struct {
	t   *testing.T
	srv *apptest.Server
	ld  *ldapi.APIClient
	ctx context.Context // carries the admin token as the client's API key

	routes *http.ServeMux     // the catalog's patterns, to see where a request went
	opOf   map[string]string  // pattern → operation id
	built  map[string]bool    // operation ids with a handler
	driven map[string]bool    // operation ids the client called
	seen   map[string]bool    // deviations observed, by op + " " + field
	devs   map[string]devInfo // the deviation table, by op + " " + field

	mu     sync.Mutex
	lastOp string // operation id of the latest request the client sent

	calls []*call
}

type devInfo struct {
	op, field, reason string
}

// call is the outcome of one client call.
type call struct {
	op, what   string
	status     int
	failures   []string
	deviations []problem
	notBuilt   bool
}

func (c *call) fail(format string, args ...any) {
	c.failures = append(c.failures, fmt.Sprintf(format, args...))
}

// dump logs every answer in full: LDCOMPAT_DUMP=1 go test -v -run LaunchDarklyClient ./shared/ldcompat/
var dump = os.Getenv("LDCOMPAT_DUMP") != ""

// clientHeaders are what every call of the tier sends besides the token:
// LaunchDarkly's clients ask for beta operations with LD-API-Version: beta,
// which flagplane takes like its own SVC-API-Version: beta.
var clientHeaders = map[string]string{"LD-API-Version": "beta"}

func newTier(t *testing.T, srv *apptest.Server) *tier {
	tr := &tier{
		t: t, srv: srv,
		routes: http.NewServeMux(),
		opOf:   map[string]string{},
		built:  map[string]bool{},
		driven: map[string]bool{},
		seen:   map[string]bool{},
		devs:   map[string]devInfo{},
	}
	for _, op := range catalog.All() {
		tr.routes.Handle(op.Pattern(), http.NotFoundHandler())
		tr.opOf[op.Pattern()] = op.ID
	}
	for id := range srv.App.Handlers() {
		tr.built[id] = true
	}
	for _, d := range deviations {
		for _, op := range d.Ops {
			tr.devs[op+" "+d.Field] = devInfo{op: op, field: d.Field, reason: d.Reason}
		}
	}
	tr.ld = tr.client(clientHeaders)
	tr.ctx = tr.withToken(srv.Token)
	return tr
}

// client is LaunchDarkly's client pointed at the test server, as a user
// configures it for a self-hosted API: the server URL, and default headers.
func (tr *tier) client(headers map[string]string) *ldapi.APIClient {
	u, err := url.Parse(tr.srv.URL)
	if err != nil {
		tr.t.Fatal(err)
	}
	cfg := ldapi.NewConfiguration()
	cfg.Servers = ldapi.ServerConfigurations{{URL: tr.srv.URL, Description: "flagplane under test"}}
	cfg.Host, cfg.Scheme = u.Host, u.Scheme
	for k, v := range headers {
		cfg.AddDefaultHeader(k, v)
	}
	cfg.HTTPClient = &http.Client{Timeout: 20 * time.Second, Transport: recorder{tr: tr, base: http.DefaultTransport}}
	return ldapi.NewAPIClient(cfg)
}

// withToken is a context that makes the client send token as its API key
// (the Authorization header, no prefix, as LaunchDarkly takes it).
func (tr *tier) withToken(token string) context.Context {
	return context.WithValue(context.Background(), ldapi.ContextAPIKeys, map[string]ldapi.APIKey{"ApiKey": {Key: token}})
}

// recorder notes which catalog operation each request of the client matches.
type recorder struct {
	tr   *tier
	base http.RoundTripper
}

func (r recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	_, pattern := r.tr.routes.Handler(req)
	r.tr.mu.Lock()
	r.tr.lastOp = r.tr.opOf[pattern]
	r.tr.mu.Unlock()
	return r.base.RoundTrip(req)
}

func (tr *tier) takeLastOp() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	op := tr.lastOp
	tr.lastOp = ""
	return op
}

// begin starts the record of one call of operation op.
func (tr *tier) begin(op, what string) *call {
	tr.takeLastOp()
	c := &call{op: op, what: what}
	tr.calls = append(tr.calls, c)
	return c
}

// answered checks where the request went and its status; it reports
// whether the answer is one to decode.
func (tr *tier) answered(c *call, res *http.Response, err error, want int) ([]byte, bool) {
	routed := tr.takeLastOp()
	if res == nil {
		c.fail("no answer: %v", err)
		return nil, false
	}
	c.status = res.StatusCode
	body, _ := io.ReadAll(res.Body) // the client keeps the whole body readable
	if dump {
		tr.t.Logf("%s (%s) %s %s → %d: %s", c.op, c.what, res.Request.Method, res.Request.URL.Path, res.StatusCode, body)
	}
	if !tr.built[c.op] && (res.StatusCode == http.StatusNotImplemented || res.StatusCode == http.StatusNotFound || res.StatusCode == http.StatusMethodNotAllowed) {
		// Not built yet (501), or not even in the catalog (404, 405): noted, not failed.
		c.notBuilt = true
		return nil, false
	}
	switch {
	case routed == "":
		c.fail("the client's %s %s matches no catalog route", res.Request.Method, res.Request.URL.Path)
	case routed != c.op:
		c.fail("the client's %s %s is catalog operation %s, not %s", res.Request.Method, res.Request.URL.Path, routed, c.op)
	default:
		tr.driven[c.op] = true
	}
	if res.StatusCode != want {
		c.fail("status %d, want %d: %s", res.StatusCode, want, snippet(body))
		return nil, false
	}
	return body, true
}

// decoded checks an answer against model type m: every type mismatch is
// an expected deviation of the table or a failure, every missing required
// field a failure; clientErr is what the client itself said.
func (tr *tier) decoded(c *call, m reflect.Type, body []byte, clientErr error) {
	problems, err := checkModel(m, body)
	if err != nil {
		c.fail("%v: %s", err, snippet(body))
		return
	}
	typeErrors := 0
	var missing []string
	for _, p := range problems {
		if p.Kind == "missing" {
			missing = append(missing, p.Field+" ("+p.Detail+")")
			continue
		}
		typeErrors++
		if _, ok := tr.devs[c.op+" "+p.Field]; ok {
			tr.seen[c.op+" "+p.Field] = true
			c.deviations = append(c.deviations, p)
			continue
		}
		c.fail("decode into ldapi.%s: %s", m.Name(), p)
	}
	if len(missing) > 0 {
		c.fail("ldapi.%s requires fields the answer lacks: %s", m.Name(), strings.Join(missing, ", "))
	}
	if clientErr != nil && typeErrors == 0 {
		c.fail("the client says %v", clientErr)
	}
}

// check makes one client call of operation op that answers a model, and
// checks it; it returns the model the client decoded (partly decoded when
// a deviation stopped it), or nil when the call failed.
func check[T any](tr *tier, op, what string, want int, f func() (*T, *http.Response, error)) *T {
	tr.t.Helper()
	c := tr.begin(op, what)
	v, res, err := f()
	body, ok := tr.answered(c, res, err, want)
	if !ok {
		return nil
	}
	tr.decoded(c, reflect.TypeFor[T](), body, err)
	if v == nil {
		v = new(T)
		_ = json.Unmarshal(body, v) // as far as it goes
	}
	return v
}

// checkEmpty makes one client call of operation op that answers no body.
func checkEmpty(tr *tier, op, what string, want int, f func() (*http.Response, error)) bool {
	tr.t.Helper()
	c := tr.begin(op, what)
	res, err := f()
	if _, ok := tr.answered(c, res, err, want); !ok {
		return false
	}
	if err != nil {
		c.fail("the client says %v", err)
	}
	return len(c.failures) == 0
}

// send is a request the client has no call for (a flag's semantic patch:
// the client's PatchWithComment carries only a JSON patch), made with the
// client's own configuration and decoded into its model T the way the
// client decodes.
func send[T any](tr *tier, method, path, contentType string, body any) func() (*T, *http.Response, error) {
	return func() (*T, *http.Response, error) {
		cfg := tr.ld.GetConfig()
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, nil, err
		}
		req, err := http.NewRequestWithContext(context.Background(), method, cfg.Servers[0].URL+path, bytes.NewReader(raw))
		if err != nil {
			return nil, nil, err
		}
		for k, v := range cfg.DefaultHeader {
			req.Header.Set(k, v)
		}
		req.Header.Set("Authorization", tr.srv.Token)
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Accept", "application/json")
		res, err := cfg.HTTPClient.Do(req)
		if err != nil {
			return nil, res, err
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		res.Body = io.NopCloser(bytes.NewReader(b))
		if err != nil {
			return nil, res, err
		}
		if res.StatusCode >= 300 {
			return nil, res, fmt.Errorf("%s", res.Status)
		}
		v := new(T)
		return v, res, json.Unmarshal(b, v)
	}
}

// note records something the tier did around the client (a fallback, a
// skipped step), shown with the summary.
func (tr *tier) note(format string, args ...any) {
	tr.t.Logf("note: "+format, args...)
}

// report ends the run: the expected deviations that did not happen, the
// built operations no call drove, a summary, and the one list of failures,
// by operation (a failure repeated by several calls of one operation is
// listed once, with each call's description).
func (tr *tier) report() {
	type key struct{ op, msg string }
	var order []key
	whats := map[key][]string{}
	line := func(op, what, msg string) {
		k := key{op, msg}
		if _, ok := whats[k]; !ok {
			order = append(order, k)
		}
		whats[k] = append(whats[k], what)
	}
	for _, c := range tr.calls {
		for _, f := range c.failures {
			line(c.op, c.what, f)
		}
	}
	for _, d := range deviations {
		for _, op := range d.Ops {
			if !tr.seen[op+" "+d.Field] {
				line(op, "deviation table", d.Field+" no longer fails to decode (or the call failed): drop it from the row, or restore the spec's type")
			}
		}
	}
	var ids []string
	for id := range tr.built {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if !tr.driven[id] && notInClient[id] == "" {
			line(id, "coverage", "built, but no call of this tier drives it: add one, or name it in notInClient with the reason")
		}
	}
	for id := range notInClient {
		if tr.driven[id] {
			line(id, "coverage", "named in notInClient, yet the client calls it")
		}
	}

	ok, deviating, nDev := 0, 0, 0
	var notBuilt []string
	for _, c := range tr.calls {
		switch {
		case c.notBuilt:
			notBuilt = append(notBuilt, c.op)
		case len(c.failures) > 0:
		case len(c.deviations) > 0:
			deviating++
		default:
			ok++
		}
		nDev += len(c.deviations)
	}
	tr.t.Logf("%s against flagplane: %d calls of %d operations: %d decoded cleanly, %d decoded but for %d expected deviations, %d failed; not built yet: %v",
		clientModule, len(tr.calls), len(tr.driven), ok, deviating, nDev, len(tr.calls)-ok-deviating-len(notBuilt), notBuilt)
	var devLines []string
	for _, d := range deviations {
		var seenIn []string
		for _, op := range d.Ops {
			if tr.seen[op+" "+d.Field] {
				seenIn = append(seenIn, op)
			}
		}
		devLines = append(devLines, fmt.Sprintf("  %-26s %s\n  %-26s (%s)", d.Field, strings.Join(seenIn, ", "), "", d.Reason))
	}
	tr.t.Logf("expected deviations, by field (the spec differs from LaunchDarkly on purpose):\n%s", strings.Join(devLines, "\n"))

	if len(order) == 0 {
		return
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].op < order[j].op })
	var out []string
	for _, k := range order {
		out = append(out, fmt.Sprintf("  %-26s %s: %s", k.op, strings.Join(whats[k], "; "), k.msg))
	}
	tr.t.Errorf("%d failures, by operation:\n%s", len(out), strings.Join(out, "\n"))
}

// snippet is the start of an answer, for a failure message.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
