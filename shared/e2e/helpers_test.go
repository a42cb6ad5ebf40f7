package e2e_test

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/lambdaemu"
)

const api = "/api/v2"

func projectPath(p string) string     { return api + "/projects/" + p }
func envsPath(p string) string        { return projectPath(p) + "/environments" }
func envPath(p, e string) string      { return envsPath(p) + "/" + e }
func auditEntryPath(id string) string { return api + "/auditlog/" + id }

// uniqueKey returns prefix with a random suffix, so tests share the run's
// table without meeting (also under -count=N).
func uniqueKey(prefix string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

// patchOp is one RFC 6902 operation.
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

func replace(path string, v any) patchOp { return patchOp{Op: "replace", Path: path, Value: v} }
func add(path string, v any) patchOp     { return patchOp{Op: "add", Path: path, Value: v} }

// wantStatus fails the test unless res has status.
func wantStatus(tb testing.TB, res *apptest.Response, status int) {
	tb.Helper()
	if res.Status != status {
		tb.Fatalf("status %d, want %d: %s", res.Status, status, res.Body)
	}
}

// wantError checks an error answer of a function: status, code, a message
// holding every part, and the error id equal to the X-Request-Id header.
func wantError(tb testing.TB, res *apptest.Response, status int, code string, parts ...string) {
	tb.Helper()
	if res.Status != status {
		tb.Errorf("status %d, want %d: %s", res.Status, status, res.Body)
		return
	}
	var body struct{ Code, Message, ID string }
	res.JSON(tb, &body)
	if body.Code != code {
		tb.Errorf("code %q, want %q: %s", body.Code, code, res.Body)
	}
	for _, p := range parts {
		if !strings.Contains(body.Message, p) {
			tb.Errorf("message %q does not mention %q", body.Message, p)
		}
	}
	if id := res.Header.Get("X-Request-Id"); id == "" || body.ID != id {
		tb.Errorf("error id %q, want the X-Request-Id %q", body.ID, id)
	}
}

// wantGatewayNotFound checks API Gateway's own 404: no function answered.
func wantGatewayNotFound(tb testing.TB, res *apptest.Response) {
	tb.Helper()
	if res.Status != http.StatusNotFound || string(res.Body) != lambdaemu.GatewayMessage(http.StatusNotFound) {
		tb.Errorf("answer %d %s, want API Gateway's 404 %s", res.Status, res.Body, lambdaemu.GatewayMessage(http.StatusNotFound))
	}
	if res.Header.Get("X-Request-Id") != "" {
		tb.Errorf("a function answered (X-Request-Id %s)", res.Header.Get("X-Request-Id"))
	}
	if res.Header.Get("Apigw-Requestid") == "" {
		tb.Errorf("no apigw-requestid header")
	}
}

// newProject creates a project without environments and returns its key.
func (s *stack) newProject(tb testing.TB, prefix string) string {
	tb.Helper()
	key := uniqueKey(prefix)
	wantStatus(tb, s.do(tb, http.MethodPost, api+"/projects", map[string]any{"key": key, "name": "Project " + key, "environments": []any{}}), http.StatusCreated)
	return key
}

// newEnvironment creates an environment; extra adds or overrides fields.
func (s *stack) newEnvironment(tb testing.TB, project, key string, extra map[string]any) map[string]any {
	tb.Helper()
	body := map[string]any{"key": key, "name": "Environment " + key, "color": "417505"}
	for k, v := range extra {
		body[k] = v
	}
	res := s.do(tb, http.MethodPost, envsPath(project), body)
	wantStatus(tb, res, http.StatusCreated)
	return res.Map(tb)
}

// getEnv reads an environment, which must exist.
func (s *stack) getEnv(tb testing.TB, p, e string) map[string]any {
	tb.Helper()
	res := s.do(tb, http.MethodGet, envPath(p, e), nil)
	wantStatus(tb, res, http.StatusOK)
	return res.Map(tb)
}

// collection is a list answer.
type collection struct {
	Items []struct {
		Key       string `json:"key"`
		CreatedOn int64  `json:"createdOn"`
	} `json:"items"`
	TotalCount int `json:"totalCount"`
	Links      map[string]struct {
		Href string `json:"href"`
	} `json:"_links"`
}

func (c collection) keys() []string {
	out := make([]string, 0, len(c.Items))
	for _, it := range c.Items {
		out = append(out, it.Key)
	}
	return out
}

// list reads a collection, which must answer 200.
func (s *stack) list(tb testing.TB, path string) collection {
	tb.Helper()
	res := s.do(tb, http.MethodGet, path, nil)
	wantStatus(tb, res, http.StatusOK)
	var c collection
	res.JSON(tb, &c)
	return c
}

// query parses the query of an href.
func query(tb testing.TB, href string) url.Values {
	tb.Helper()
	u, err := url.Parse(href)
	if err != nil {
		tb.Fatalf("link %q: %v", href, err)
	}
	return u.Query()
}

// strs turns a decoded JSON array into sorted strings.
func sortedStrs(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}
