package endpoints_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// Small helpers shared by the endpoint tests of this package.

const api = "/api/v2"

func projectPath(p string) string     { return api + "/projects/" + p }
func envsPath(p string) string        { return projectPath(p) + "/environments" }
func envPath(p, e string) string      { return envsPath(p) + "/" + e }
func auditEntryPath(id string) string { return api + "/auditlog/" + id }

// wantStatus fails the test unless res has status.
func wantStatus(t testing.TB, res *apptest.Response, status int) {
	t.Helper()
	if res.Status != status {
		t.Fatalf("status %d, want %d: %s", res.Status, status, res.Body)
	}
}

// wantError checks an error answer: status, code, a message holding every
// part of parts, and an id equal to the X-Request-Id header.
func wantError(t testing.TB, res *apptest.Response, status int, code string, parts ...string) map[string]any {
	t.Helper()
	wantStatus(t, res, status)
	body := res.Map(t)
	if body["code"] != code {
		t.Errorf("code %v, want %q: %s", body["code"], code, res.Body)
	}
	msg, _ := body["message"].(string)
	if msg == "" {
		t.Errorf("error body has no message: %s", res.Body)
	}
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("message %q does not mention %q", msg, p)
		}
	}
	if id := res.Header.Get("X-Request-Id"); id == "" || body["id"] != id {
		t.Errorf("error id %v, want the X-Request-Id %q", body["id"], id)
	}
	return body
}

// emptyProject creates a project without environments.
func emptyProject(t testing.TB, srv *apptest.Server, key string) {
	t.Helper()
	res := srv.Do(t, http.MethodPost, api+"/projects", map[string]any{"key": key, "name": "Project " + key, "environments": []any{}})
	wantStatus(t, res, http.StatusCreated)
}

// getEnv reads an environment, which must exist.
func getEnv(t testing.TB, srv *apptest.Server, p, e string) map[string]any {
	t.Helper()
	res := srv.Do(t, http.MethodGet, envPath(p, e), nil)
	wantStatus(t, res, http.StatusOK)
	return res.Map(t)
}

// patchOps is a JSON patch: op, path, value triples.
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
	From  string `json:"from,omitempty"`
}

func replace(path string, v any) patchOp { return patchOp{Op: "replace", Path: path, Value: v} }
func add(path string, v any) patchOp     { return patchOp{Op: "add", Path: path, Value: v} }

// itemKeys returns the key of every item of a collection answer.
func itemKeys(t testing.TB, res *apptest.Response) []string {
	t.Helper()
	var c struct {
		Items []struct {
			Key string `json:"key"`
		} `json:"items"`
	}
	res.JSON(t, &c)
	keys := make([]string, 0, len(c.Items))
	for _, it := range c.Items {
		keys = append(keys, it.Key)
	}
	return keys
}

// linkHrefs returns the href of every link of a collection answer.
func linkHrefs(t testing.TB, res *apptest.Response) map[string]string {
	t.Helper()
	var c struct {
		Links map[string]struct {
			Href string `json:"href"`
			Type string `json:"type"`
		} `json:"_links"`
	}
	res.JSON(t, &c)
	out := map[string]string{}
	for name, l := range c.Links {
		if l.Type != "application/json" {
			t.Errorf("link %s has type %q", name, l.Type)
		}
		out[name] = l.Href
	}
	return out
}

// query parses the query of an href.
func query(t testing.TB, href string) url.Values {
	t.Helper()
	u, err := url.Parse(href)
	if err != nil {
		t.Fatalf("link %q: %v", href, err)
	}
	return u.Query()
}

// sameJSON reports whether two JSON documents are equal as values.
func sameJSON(t testing.TB, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("not JSON: %s", a)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	return reflect.DeepEqual(va, vb)
}

// strs turns a decoded JSON array into strings.
func strs(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
