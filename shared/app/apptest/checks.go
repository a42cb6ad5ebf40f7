package apptest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/example"
)

// Checks and small helpers the groups' HTTP tests share.

// WantStatus fails the test unless res has status.
func WantStatus(t testing.TB, res *Response, status int) {
	t.Helper()
	if res.Status != status {
		t.Fatalf("status %d, want %d: %s", res.Status, status, res.Body)
	}
}

// WantError checks an error answer: status, code, a message holding every
// part of parts, and an id equal to the X-Request-Id header.
func WantError(t testing.TB, res *Response, status int, code string, parts ...string) map[string]any {
	t.Helper()
	WantStatus(t, res, status)
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

// EmptyProject creates a project without environments.
func EmptyProject(t testing.TB, srv *Server, key string) {
	t.Helper()
	res := srv.Do(t, http.MethodPost, "/api/v2/projects", map[string]any{"key": key, "name": "Project " + key, "environments": []any{}})
	WantStatus(t, res, http.StatusCreated)
}

// GetEnv reads an environment, which must exist.
func GetEnv(t testing.TB, srv *Server, p, e string) map[string]any {
	t.Helper()
	res := srv.Do(t, http.MethodGet, "/api/v2/projects/"+p+"/environments/"+e, nil)
	WantStatus(t, res, http.StatusOK)
	return res.Map(t)
}

// PatchOp is one operation of a JSON patch; Replace and Add make them.
type PatchOp = example.Op

var (
	Replace = example.Replace
	Add     = example.Add
)

// ItemKeys returns the key of every item of a collection answer.
func ItemKeys(t testing.TB, res *Response) []string {
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

// LinkHrefs returns the href of every link of a collection answer.
func LinkHrefs(t testing.TB, res *Response) map[string]string {
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

// Query parses the Query of an href.
func Query(t testing.TB, href string) url.Values {
	t.Helper()
	u, err := url.Parse(href)
	if err != nil {
		t.Fatalf("link %q: %v", href, err)
	}
	return u.Query()
}

// SameJSON reports whether two JSON documents are equal as values.
func SameJSON(t testing.TB, a, b []byte) bool {
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

// Strs turns a decoded JSON array into strings.
func Strs(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
