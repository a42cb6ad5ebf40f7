// Package apptest runs the whole flagplane API in a test: an embedded store
// in a temporary directory, the account with its admin token, and every
// route served on a local HTTP server. Tests talk to it over HTTP, as a
// client would.
//
//	srv := apptest.New(t)
//	srv.MustCreateProject(t, "p")
//	res := srv.Do(t, "GET", "/api/v2/projects/p/environments", nil)
package apptest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/account"
	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/app/allgroups"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
	"github.com/flagplane/flagplane/shared/token"
	"github.com/flagplane/flagplane/shared/webhook"
)

// Server is a running flagplane API.
type Server struct {
	// URL is the base address, e.g. http://127.0.0.1:40123.
	URL string
	// Token is the admin access token made when the account was set up.
	Token string
	// AccountID is the id of the account.
	AccountID string
	// Table is the store behind the API, for arranging what the API cannot.
	Table store.Table

	client   *http.Client
	settings app.Settings
	// Queue is the delivery queue of WithWebhookDelivery, else nil.
	Queue *webhook.MemoryQueue
	// App is the wired application behind the server.
	App *app.App
}

type config struct {
	approvals bool
	webhooks  bool
	table     store.Table
	limits    api.RateLimits
	cors      []string
	clock     func() time.Time
}

// WithRateLimits applies rate limits; by default a test server has none,
// so tests may send as many requests as they like.
func WithRateLimits(l api.RateLimits) Option { return func(c *config) { c.limits = l } }

// WithCORS allows the given browser origins ("*" for all); by default a
// test server has no CORS.
func WithCORS(origins ...string) Option { return func(c *config) { c.cors = origins } }

// WithTable serves the given table (a DynamoDB test table, say) instead of
// a fresh embedded store; its owner cleans it up.
func WithTable(t store.Table) Option { return func(c *config) { c.table = t } }

// WithWebhookDelivery delivers webhooks through the in-process queue, with
// retries 10 ms apart and loopback receivers allowed; see Server.Queue.
func WithWebhookDelivery() Option { return func(c *config) { c.webhooks = true } }

// WithClock sets the clock every service of the server reads.
func WithClock(now func() time.Time) Option { return func(c *config) { c.clock = now } }

// Option changes how New sets the server up.
type Option func(*config)

// WithoutApprovals turns the approvals feature off.
func WithoutApprovals() Option { return func(c *config) { c.approvals = false } }

// New starts a server on a fresh store and stops it when the test ends.
func New(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	cfg := config{approvals: true}
	for _, o := range opts {
		o(&cfg)
	}
	table, closeTable := cfg.table, func() error { return nil }
	if table == nil {
		bt, err := bolt.Open(filepath.Join(tb.TempDir(), "flagplane.db"))
		if err != nil {
			tb.Fatalf("open store: %v", err)
		}
		table, closeTable = bt, bt.Close
	}
	logger := slog.New(slog.NewTextHandler(testWriter{tb}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	acct, adminToken, err := account.Bootstrap(context.Background(), table, audit.Discard{}, logger)
	if err != nil {
		closeTable()
		tb.Fatalf("bootstrap account: %v", err)
	}
	settings := app.Settings{Approvals: cfg.approvals, AccountID: acct.ID, AllowPrivateWebhooks: cfg.webhooks,
		RateLimits: cfg.limits, CORSOrigins: cfg.cors, Clock: cfg.clock}
	// A test server serves every group.
	a := app.New(table, audit.Discard{}, settings, logger, allgroups.List()...)
	var queue *webhook.MemoryQueue
	if cfg.webhooks {
		a, queue = app.NewWithMemoryQueue(table, settings, logger, app.LocalWebhookAttempts, func(int) time.Duration { return 10 * time.Millisecond }, allgroups.List()...)
	}
	h, err := a.Handler("")
	if err != nil {
		closeTable()
		tb.Fatalf("build handler: %v", err)
	}
	hs := httptest.NewServer(h) // listens on 127.0.0.1
	tb.Cleanup(func() {
		hs.Close() // waits for requests in flight, so nothing logs after the test
		if queue != nil {
			queue.Close() // waits for deliveries running, which use the store
		}
		if err := closeTable(); err != nil {
			tb.Errorf("close store: %v", err)
		}
	})
	return &Server{URL: hs.URL, Token: adminToken, AccountID: acct.ID, Table: table, client: hs.Client(), settings: settings, Queue: queue, App: a}
}

// Reopen serves the same store from a second process-like server, with
// caches of its own: what another Lambda instance would see.
func (s *Server) Reopen(tb testing.TB) *Server {
	tb.Helper()
	logger := slog.New(slog.NewTextHandler(testWriter{tb}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	h, err := app.New(s.Table, audit.Discard{}, s.settings, logger, allgroups.List()...).Handler("")
	if err != nil {
		tb.Fatalf("build handler: %v", err)
	}
	hs := httptest.NewServer(h)
	tb.Cleanup(hs.Close)
	c := *s
	c.URL, c.client = hs.URL, hs.Client()
	return &c
}

// testWriter sends the server's warnings and errors to the test log.
type testWriter struct{ tb testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.tb.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// Response is an answer of the server, read in full.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends a request and reads the whole answer. body is nil (no body), a
// string or []byte (sent as is) or any other value (sent as JSON).
// headers are name, value pairs; they replace the server's defaults
// (Authorization: the admin token), a repeated name is sent repeatedly, and
// an empty value removes the header.
func (s *Server) Do(tb testing.TB, method, path string, body any, headers ...string) *Response {
	tb.Helper()
	if len(headers)%2 != 0 {
		tb.Fatalf("Do %s %s: headers must be name, value pairs, got %q", method, path, headers)
	}
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			tb.Fatalf("Do %s %s: encode body: %v", method, path, err)
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, s.URL+path, r)
	if err != nil {
		tb.Fatalf("Do %s %s: %v", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", s.Token)
	replaced := map[string]bool{}
	for i := 0; i < len(headers); i += 2 {
		name, value := http.CanonicalHeaderKey(headers[i]), headers[i+1]
		if !replaced[name] {
			req.Header.Del(name)
			replaced[name] = true
		}
		if value != "" {
			req.Header.Add(name, value)
		}
	}
	res, err := s.client.Do(req)
	if err != nil {
		tb.Fatalf("Do %s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatalf("Do %s %s: read body: %v", method, path, err)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		// The document declares JSON answers; a file served in their
		// place (a big segment export's CSV) is checked by its test.
		CheckAnswer(tb, req, res.StatusCode, data)
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: data}
}

// JSON decodes the body into v, failing the test when it is not JSON.
func (r *Response) JSON(tb testing.TB, v any) {
	tb.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		tb.Fatalf("response %d is not the JSON expected (%v): %s", r.Status, err, r.Body)
	}
}

// Map decodes the body as a JSON object.
func (r *Response) Map(tb testing.TB) map[string]any {
	tb.Helper()
	var m map[string]any
	r.JSON(tb, &m)
	return m
}

// String is the body as text, for failure messages.
func (r *Response) String() string { return string(r.Body) }

// MustCreateProject creates a project named and keyed key, with the
// default environments ("test" and "production"), and returns it.
func (s *Server) MustCreateProject(tb testing.TB, key string) map[string]any {
	tb.Helper()
	res := s.Do(tb, http.MethodPost, "/api/v2/projects", map[string]any{"key": key, "name": "Project " + key})
	if res.Status != http.StatusCreated {
		tb.Fatalf("create project %q: status %d: %s", key, res.Status, res.Body)
	}
	return res.Map(tb)
}

// MustCreateEnvironment creates an environment of project with a name and
// colour of its own; extra adds or overrides body fields. It returns the
// environment.
func (s *Server) MustCreateEnvironment(tb testing.TB, project, key string, extra map[string]any) map[string]any {
	tb.Helper()
	body := map[string]any{"key": key, "name": "Environment " + key, "color": "417505"}
	for k, v := range extra {
		body[k] = v
	}
	res := s.Do(tb, http.MethodPost, "/api/v2/projects/"+project+"/environments", body)
	if res.Status != http.StatusCreated {
		tb.Fatalf("create environment %q in project %q: status %d: %s", key, project, res.Status, res.Body)
	}
	return res.Map(tb)
}

// MustCreateToken creates an access token through the API with the admin
// token (POST /api/v2/tokens with body) and returns its id and full value.
func (s *Server) MustCreateToken(tb testing.TB, body map[string]any) (id, value string) {
	tb.Helper()
	res := s.Do(tb, http.MethodPost, "/api/v2/tokens", body)
	if res.Status != http.StatusCreated {
		tb.Fatalf("create token %v: status %d: %s", body, res.Status, res.Body)
	}
	var t struct {
		ID    string `json:"_id"`
		Token string `json:"token"`
	}
	res.JSON(tb, &t)
	return t.ID, t.Token
}

// MustIssueToken stores a token made from spec straight in the table, for
// what the API refuses to make: a token of another member, one that has
// already expired. It returns the token's id and full value.
func (s *Server) MustIssueToken(tb testing.TB, spec token.Spec) (id, value string) {
	tb.Helper()
	t, value, writes, err := token.Issue(spec, s.AccountID, time.Now())
	if err != nil {
		tb.Fatalf("issue token %q: %v", spec.Name, err)
	}
	if err := s.Table.Transact(context.Background(), writes); err != nil {
		tb.Fatalf("store token %q: %v", spec.Name, err)
	}
	return t.ID, value
}
