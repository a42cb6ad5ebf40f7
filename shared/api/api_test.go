package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/token"
)

// fakeAuthn knows a fixed set of tokens.
type fakeAuthn map[string]identity.Principal

func (f fakeAuthn) Authenticate(_ context.Context, tok string) (identity.Principal, error) {
	p, ok := f[tok]
	if !ok {
		return identity.Principal{}, fault.New(fault.Unauthorized, "the access token is not valid")
	}
	return p, nil
}

const panicText = "secret detail 42"

// principal is a caller holding only a built-in role.
func principal(tb testing.TB, role identity.Role, tokenID string) identity.Principal {
	tb.Helper()
	rights, err := token.BuiltInRights(role)
	if err != nil {
		tb.Fatal(err)
	}
	return identity.Principal{Role: role, TokenID: tokenID, Rights: rights}
}

// kit serves a few fake operations through the real router.
func kit(t *testing.T) *httptest.Server {
	t.Helper()
	return kitWith(t, nil)
}

// kitWith is kit with the router's settings changed by configure.
func kitWith(t *testing.T, configure func(*api.Routes)) *httptest.Server {
	t.Helper()
	ops := []catalog.Operation{
		{ID: "listThings", Group: "things", Method: "GET", Path: "/api/v2/things", Scope: catalog.Read, Resource: "webhook/*"},
		{ID: "postThing", Group: "things", Method: "POST", Path: "/api/v2/things", Scope: catalog.Write, Resource: "webhook/*", Action: "createWebhook"},
		{ID: "getBetaThing", Group: "things", Method: "GET", Path: "/api/v2/beta-things", Beta: true, Scope: catalog.Read, Resource: "webhook/*"},
		{ID: "postBetaThing", Group: "things", Method: "POST", Path: "/api/v2/beta-things", Beta: true, Scope: catalog.Write, Resource: "webhook/*", Action: "createWebhook"},
		{ID: "boom", Group: "things", Method: "GET", Path: "/api/v2/boom", Scope: catalog.Read, Resource: "webhook/*"},
		{ID: "fail", Group: "things", Method: "GET", Path: "/api/v2/fail/{kind}", Scope: catalog.Read, Resource: "webhook/{kind}"},
		{ID: "getThing", Group: "things", Method: "GET", Path: "/api/v2/things/{key}", Scope: catalog.Read, Resource: "webhook/{key}"},
		{ID: "patchThing", Group: "things", Method: "PATCH", Path: "/api/v2/things/{key}", Scope: catalog.Write, Resource: "webhook/{key}", Action: "updateName"},
		{ID: "putThing", Group: "things", Method: "PUT", Path: "/api/v2/things/{key}", Scope: catalog.Write, Resource: "webhook/{key}", Action: "updateName"},
		{ID: "deleteThing", Group: "things", Method: "DELETE", Path: "/api/v2/things/{key}", Scope: catalog.Write, Resource: "webhook/{key}", Action: "deleteWebhook"},
		{ID: "ping", Group: "things", Method: "GET", Path: "/ping", Scope: catalog.Read, Public: true},
	}
	// served answers which operation ran, with what method and body.
	served := func(id string) api.Handler {
		return func(w http.ResponseWriter, r *http.Request) error {
			body, _ := io.ReadAll(r.Body)
			api.WriteJSON(w, http.StatusOK, map[string]any{"op": id, "method": r.Method, "key": r.PathValue("key"), "body": string(body)})
			return nil
		}
	}
	handlers := map[string]api.Handler{
		"listThings": func(w http.ResponseWriter, r *http.Request) error {
			p, _ := identity.From(r.Context())
			api.WriteJSON(w, http.StatusOK, map[string]any{"role": p.Role})
			return nil
		},
		"postThing": func(w http.ResponseWriter, r *http.Request) error {
			var in struct {
				Name string `json:"name"`
				Size int    `json:"size"`
			}
			if err := api.Decode(w, r, &in); err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusCreated, map[string]any{"name": len(in.Name)})
			return nil
		},
		"getBetaThing": func(w http.ResponseWriter, r *http.Request) error {
			api.WriteJSON(w, http.StatusOK, map[string]any{"beta": true})
			return nil
		},
		// postBetaThing has no handler: it answers 501.
		"boom": func(w http.ResponseWriter, r *http.Request) error { panic(panicText) },
		"fail": func(w http.ResponseWriter, r *http.Request) error {
			switch r.PathValue("kind") {
			case "conflict":
				return fault.New(fault.Conflict, "thing exists")
			case "lock":
				return fault.Wrap(errors.New("cause"), fault.OptimisticLock, "thing changed")
			case "limited":
				return fault.New(fault.RateLimited, "slow down")
			}
			return errors.New("database password is " + panicText)
		},
		"getThing":    served("getThing"),
		"patchThing":  served("patchThing"),
		"putThing":    served("putThing"),
		"deleteThing": served("deleteThing"),
		"ping":        served("ping"),
	}
	authn := fakeAuthn{
		"admin":  principal(t, identity.RoleAdmin, "t1"),
		"reader": principal(t, identity.RoleReader, "t2"),
		"writer": principal(t, identity.RoleWriter, "t3"),
		"nobody": principal(t, identity.RoleNoAccess, "t4"),
	}
	rt := api.Routes{Handlers: handlers, Authn: authn}
	if configure != nil {
		configure(&rt)
	}
	h, err := api.NewRouter(ops, rt)
	if err != nil {
		t.Fatalf("NewRouter: %v", err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

// errorBody decodes an error answer and checks that it has all three
// fields and that its id is the X-Request-Id header.
func (a answer) errorBody(t *testing.T) api.ErrorBody {
	t.Helper()
	var e api.ErrorBody
	if err := json.Unmarshal(a.body, &e); err != nil {
		t.Fatalf("error body is not JSON: %s", a.body)
	}
	var raw map[string]any
	_ = json.Unmarshal(a.body, &raw)
	for _, f := range []string{"code", "message", "id"} {
		if _, ok := raw[f]; !ok {
			t.Errorf("error body has no %s: %s", f, a.body)
		}
	}
	if id := a.header.Get("X-Request-Id"); id == "" || e.ID != id {
		t.Errorf("error id %q, X-Request-Id %q", e.ID, id)
	}
	if ct := a.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	return e
}

func (a answer) wantError(t *testing.T, status int, code fault.Code) api.ErrorBody {
	t.Helper()
	if a.status != status {
		t.Fatalf("status %d, want %d: %s", a.status, status, a.body)
	}
	e := a.errorBody(t)
	if e.Code != code {
		t.Errorf("code %q, want %q", e.Code, code)
	}
	if e.Message == "" {
		t.Errorf("empty message")
	}
	return e
}

// call sends a request; headers are name, value pairs, added in order.
func call(t *testing.T, srv *httptest.Server, method, path string, body io.Reader, headers ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{status: res.StatusCode, header: res.Header, body: data}
}

func TestAuthentication(t *testing.T) {
	srv := kit(t)
	cases := []struct {
		name   string
		header []string
		status int
	}{
		{"a request without Authorization is 401", nil, http.StatusUnauthorized},
		{"an empty Authorization is 401", []string{"Authorization", ""}, http.StatusUnauthorized},
		{"a bare Bearer is 401", []string{"Authorization", "Bearer "}, http.StatusUnauthorized},
		{"an unknown token is 401", []string{"Authorization", "guess"}, http.StatusUnauthorized},
		{"an unknown Bearer token is 401", []string{"Authorization", "Bearer guess"}, http.StatusUnauthorized},
		{"a raw token is accepted", []string{"Authorization", "admin"}, http.StatusOK},
		{"a Bearer token is accepted", []string{"Authorization", "Bearer admin"}, http.StatusOK},
		{"a bearer token in lower case is accepted", []string{"Authorization", "bearer admin"}, http.StatusOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := call(t, srv, "GET", "/api/v2/things", nil, c.header...)
			if c.status == http.StatusOK {
				if a.status != http.StatusOK {
					t.Fatalf("status %d: %s", a.status, a.body)
				}
				return
			}
			a.wantError(t, c.status, fault.Unauthorized)
		})
	}

	t.Run("the handler sees the caller's principal", func(t *testing.T) {
		a := call(t, srv, "GET", "/api/v2/things", nil, "Authorization", "reader")
		if !strings.Contains(string(a.body), `"role":"reader"`) {
			t.Errorf("body %s", a.body)
		}
	})
}

func TestScope(t *testing.T) {
	srv := kit(t)
	thing := func() io.Reader { return strings.NewReader(`{"name":"a"}`) }

	t.Run("a reader may call a read operation", func(t *testing.T) {
		if a := call(t, srv, "GET", "/api/v2/things", nil, "Authorization", "reader"); a.status != http.StatusOK {
			t.Errorf("status %d", a.status)
		}
	})

	t.Run("a reader may not call a write operation", func(t *testing.T) {
		call(t, srv, "POST", "/api/v2/things", thing(), "Authorization", "reader").wantError(t, http.StatusForbidden, fault.Forbidden)
	})

	t.Run("a writer may call a write operation", func(t *testing.T) {
		if a := call(t, srv, "POST", "/api/v2/things", thing(), "Authorization", "writer"); a.status != http.StatusCreated {
			t.Errorf("status %d: %s", a.status, a.body)
		}
	})

	t.Run("a token without access may not even read", func(t *testing.T) {
		call(t, srv, "GET", "/api/v2/things", nil, "Authorization", "nobody").wantError(t, http.StatusForbidden, fault.Forbidden)
	})
}

func TestBetaHeader(t *testing.T) {
	srv := kit(t)
	cases := []struct {
		name   string
		values []string
		pass   bool
	}{
		{"a beta operation without the header is forbidden", nil, false},
		{"a beta operation with the header beta passes", []string{"beta"}, true},
		{"the value is not case-sensitive", []string{"BETA"}, true},
		{"a beta operation with another version is forbidden", []string{"20240415"}, false},
		{"a value that only starts with beta is forbidden", []string{"betas"}, false},
		{"the header sent twice passes when one is beta", []string{"foo", "beta"}, true},
		{"the header comma-joined passes when one part is beta", []string{"beta, foo"}, true},
		{"the header comma-joined passes with beta last", []string{"foo,beta"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			headers := []string{"Authorization", "admin"}
			for _, v := range c.values {
				headers = append(headers, api.BetaHeader, v)
			}
			a := call(t, srv, "GET", "/api/v2/beta-things", nil, headers...)
			if c.pass {
				if a.status != http.StatusOK {
					t.Errorf("status %d: %s", a.status, a.body)
				}
				return
			}
			e := a.wantError(t, http.StatusForbidden, fault.Forbidden)
			if !strings.Contains(e.Message, api.BetaHeader) {
				t.Errorf("message %q does not name the header", e.Message)
			}
		})
	}

	t.Run("an unbuilt beta operation with the header answers 501 not_implemented", func(t *testing.T) {
		a := call(t, srv, "POST", "/api/v2/beta-things", strings.NewReader("{}"), "Authorization", "admin", api.BetaHeader, "beta, foo")
		a.wantError(t, http.StatusNotImplemented, fault.NotImplemented)
	})

	t.Run("an unbuilt beta operation without the header is forbidden", func(t *testing.T) {
		call(t, srv, "POST", "/api/v2/beta-things", strings.NewReader("{}"), "Authorization", "admin").wantError(t, http.StatusForbidden, fault.Forbidden)
	})

	t.Run("a non-beta operation needs no header", func(t *testing.T) {
		if a := call(t, srv, "GET", "/api/v2/things", nil, "Authorization", "admin"); a.status != http.StatusOK {
			t.Errorf("status %d", a.status)
		}
	})

	t.Run("the credential is checked before the beta header", func(t *testing.T) {
		call(t, srv, "GET", "/api/v2/beta-things", nil).wantError(t, http.StatusUnauthorized, fault.Unauthorized)
	})
}

func TestRequestBodies(t *testing.T) {
	srv := kit(t)
	post := func(t *testing.T, body []byte) answer {
		t.Helper()
		return call(t, srv, "POST", "/api/v2/things", bytes.NewReader(body), "Authorization", "admin", "Content-Type", "application/json")
	}
	// jsonOfSize is {"name":"aaa..."} of exactly n bytes.
	jsonOfSize := func(n int) []byte {
		return []byte(`{"name":"` + strings.Repeat("a", n-len(`{"name":""}`)) + `"}`)
	}

	t.Run("a body of exactly 1 MiB is accepted", func(t *testing.T) {
		if a := post(t, jsonOfSize(api.MaxBody)); a.status != http.StatusCreated {
			t.Errorf("status %d: %s", a.status, a.body)
		}
	})

	t.Run("a body over 1 MiB is 413", func(t *testing.T) {
		post(t, jsonOfSize(api.MaxBody+1)).wantError(t, http.StatusRequestEntityTooLarge, fault.TooLarge)
	})

	t.Run("a body of several MiB is 413", func(t *testing.T) {
		post(t, jsonOfSize(5*api.MaxBody)).wantError(t, http.StatusRequestEntityTooLarge, fault.TooLarge)
	})

	invalid := []struct{ name, body, part string }{
		{"invalid JSON is 400", `{"name":`, "JSON"},
		{"a body that is not an object is 400", `[1]`, ""},
		{"two JSON values are 400", `{"name":"a"} {"name":"b"}`, "more than one"},
		{"an empty body is 400", ``, "required"},
		{"a body of spaces is 400", "  \n ", "required"},
		{"a field of the wrong type is 400 naming the field", `{"size":"big"}`, `"size"`},
	}
	for _, c := range invalid {
		t.Run(c.name, func(t *testing.T) {
			e := post(t, []byte(c.body)).wantError(t, http.StatusBadRequest, fault.Invalid)
			if !strings.Contains(e.Message, c.part) {
				t.Errorf("message %q does not mention %q", e.Message, c.part)
			}
		})
	}

	t.Run("unknown fields are ignored", func(t *testing.T) {
		if a := post(t, []byte(`{"name":"a","other":1}`)); a.status != http.StatusCreated {
			t.Errorf("status %d: %s", a.status, a.body)
		}
	})
}

func TestErrors(t *testing.T) {
	srv := kit(t)

	t.Run("a handler that panics answers 500 without the panic text", func(t *testing.T) {
		a := call(t, srv, "GET", "/api/v2/boom", nil, "Authorization", "admin")
		e := a.wantError(t, http.StatusInternalServerError, fault.Internal)
		if strings.Contains(string(a.body), panicText) || strings.Contains(e.Message, "panic") {
			t.Errorf("body shows the panic: %s", a.body)
		}
	})

	t.Run("the server keeps serving after a panic", func(t *testing.T) {
		if a := call(t, srv, "GET", "/api/v2/things", nil, "Authorization", "admin"); a.status != http.StatusOK {
			t.Errorf("status %d", a.status)
		}
	})

	t.Run("an untyped error answers 500 without its text", func(t *testing.T) {
		a := call(t, srv, "GET", "/api/v2/fail/other", nil, "Authorization", "admin")
		a.wantError(t, http.StatusInternalServerError, fault.Internal)
		if strings.Contains(string(a.body), panicText) {
			t.Errorf("body shows the cause: %s", a.body)
		}
	})

	statuses := []struct {
		kind   string
		status int
		code   fault.Code
	}{
		{"conflict", http.StatusConflict, fault.Conflict},
		{"lock", http.StatusConflict, fault.OptimisticLock},
		{"limited", http.StatusTooManyRequests, fault.RateLimited},
	}
	for _, s := range statuses {
		t.Run("a "+string(s.code)+" error answers its status and code", func(t *testing.T) {
			call(t, srv, "GET", "/api/v2/fail/"+s.kind, nil, "Authorization", "admin").wantError(t, s.status, s.code)
		})
	}

	t.Run("an unknown path answers 404 JSON", func(t *testing.T) {
		call(t, srv, "GET", "/api/v2/nothing-here", nil, "Authorization", "admin").wantError(t, http.StatusNotFound, fault.NotFound)
	})

	t.Run("an unknown path answers 404 even without a token", func(t *testing.T) {
		call(t, srv, "GET", "/elsewhere", nil).wantError(t, http.StatusNotFound, fault.NotFound)
	})

	t.Run("a known path with another method answers 405 JSON with Allow", func(t *testing.T) {
		a := call(t, srv, "DELETE", "/api/v2/things", nil, "Authorization", "admin")
		a.wantError(t, http.StatusMethodNotAllowed, fault.MethodNotAllowed)
		allow := a.header.Get("Allow")
		for _, m := range []string{"GET", "POST"} {
			if !strings.Contains(allow, m) {
				t.Errorf("Allow %q lacks %s", allow, m)
			}
		}
	})

	t.Run("every answer carries its own request id", func(t *testing.T) {
		a := call(t, srv, "GET", "/api/v2/things", nil, "Authorization", "admin")
		b := call(t, srv, "GET", "/api/v2/things", nil, "Authorization", "admin")
		ia, ib := a.header.Get("X-Request-Id"), b.header.Get("X-Request-Id")
		if ia == "" || ia == ib {
			t.Errorf("request ids %q and %q", ia, ib)
		}
	})
}

func TestNewRouter(t *testing.T) {
	op := catalog.Operation{ID: "listThings", Group: "things", Method: "GET", Path: "/api/v2/things", Scope: catalog.Read}
	ok := func(http.ResponseWriter, *http.Request) error { return nil }

	t.Run("a handler for an operation not in the catalog is refused", func(t *testing.T) {
		_, err := api.NewRouter([]catalog.Operation{op}, api.Routes{Handlers: map[string]api.Handler{"listThings": ok, "typo": ok}, Authn: fakeAuthn{}})
		if err == nil || !strings.Contains(err.Error(), "typo") {
			t.Errorf("err %v", err)
		}
	})

	t.Run("two operations with one method and path are refused", func(t *testing.T) {
		twin := op
		twin.ID = "listThingsAgain"
		if _, err := api.NewRouter([]catalog.Operation{op, twin}, api.Routes{Authn: fakeAuthn{}}); err == nil {
			t.Errorf("no error")
		}
	})

	t.Run("the whole catalog routes", func(t *testing.T) {
		if _, err := api.NewRouter(catalog.All(), api.Routes{Authn: fakeAuthn{}}); err != nil {
			t.Errorf("err %v", err)
		}
	})
}

// The tests below use real tokens on the whole API.

// issue stores a new token directly in the table and returns its value.
func issue(t *testing.T, srv *apptest.Server, spec token.Spec) string {
	t.Helper()
	_, value, writes, err := token.Issue(spec, srv.AccountID, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Table.Transact(context.Background(), writes); err != nil {
		t.Fatal(err)
	}
	return value
}

func TestTokensOnTheAPI(t *testing.T) {
	srv := apptest.New(t)
	const projects = "/api/v2/projects"
	newProject := func(key string) map[string]any { return map[string]any{"key": key, "name": key} }

	wantCode := func(t *testing.T, res *apptest.Response, status int, code string) {
		t.Helper()
		if res.Status != status {
			t.Fatalf("status %d, want %d: %s", res.Status, status, res.Body)
		}
		body := res.Map(t)
		if body["code"] != code || body["id"] != res.Header.Get("X-Request-Id") || body["message"] == "" {
			t.Errorf("error body %s", res.Body)
		}
	}

	t.Run("the admin token works raw and as Bearer", func(t *testing.T) {
		if res := srv.Do(t, "GET", projects, nil); res.Status != http.StatusOK {
			t.Errorf("raw: %d", res.Status)
		}
		if res := srv.Do(t, "GET", projects, nil, "Authorization", "Bearer "+srv.Token); res.Status != http.StatusOK {
			t.Errorf("Bearer: %d", res.Status)
		}
	})

	t.Run("no Authorization is 401 unauthorized", func(t *testing.T) {
		wantCode(t, srv.Do(t, "GET", projects, nil, "Authorization", ""), http.StatusUnauthorized, "unauthorized")
	})

	t.Run("an unknown token is 401", func(t *testing.T) {
		wantCode(t, srv.Do(t, "GET", projects, nil, "Authorization", "api-00000000-0000-4000-8000-000000000000"), http.StatusUnauthorized, "unauthorized")
		wantCode(t, srv.Do(t, "GET", projects, nil, "Authorization", "not-a-token"), http.StatusUnauthorized, "unauthorized")
	})

	t.Run("an expired token is 401", func(t *testing.T) {
		old := issue(t, srv, token.Spec{Name: "old", Role: identity.RoleAdmin, ServiceToken: true, Expiry: time.Now().Add(-time.Minute).UnixMilli()})
		wantCode(t, srv.Do(t, "GET", projects, nil, "Authorization", old), http.StatusUnauthorized, "unauthorized")
	})

	t.Run("a token expiring later works", func(t *testing.T) {
		later := issue(t, srv, token.Spec{Name: "later", Role: identity.RoleAdmin, ServiceToken: true, Expiry: time.Now().Add(time.Hour).UnixMilli()})
		if res := srv.Do(t, "GET", projects, nil, "Authorization", later); res.Status != http.StatusOK {
			t.Errorf("status %d: %s", res.Status, res.Body)
		}
	})

	t.Run("a reader token may GET but not POST", func(t *testing.T) {
		reader := issue(t, srv, token.Spec{Name: "reader", Role: identity.RoleReader, ServiceToken: true})
		if res := srv.Do(t, "GET", projects, nil, "Authorization", reader); res.Status != http.StatusOK {
			t.Errorf("GET: %d", res.Status)
		}
		wantCode(t, srv.Do(t, "POST", projects, newProject("by-reader"), "Authorization", reader), http.StatusForbidden, "forbidden")
		if res := srv.Do(t, "GET", projects+"/by-reader", nil); res.Status != http.StatusNotFound {
			t.Errorf("the reader's project was created: %d", res.Status)
		}
	})

	t.Run("a writer token may POST", func(t *testing.T) {
		writer := issue(t, srv, token.Spec{Name: "writer", Role: identity.RoleWriter, ServiceToken: true})
		if res := srv.Do(t, "POST", projects, newProject("by-writer"), "Authorization", writer); res.Status != http.StatusCreated {
			t.Errorf("status %d: %s", res.Status, res.Body)
		}
	})

	const policy = "/api/v2/projects/p/release-policies/r"
	t.Run("a beta operation without the beta header is 403", func(t *testing.T) {
		wantCode(t, srv.Do(t, "GET", policy, nil), http.StatusForbidden, "forbidden")
	})

	t.Run("an unbuilt beta operation with the beta header is 501", func(t *testing.T) {
		unbuilt := unbuiltBetaGET(t, srv)
		for _, h := range [][]string{
			{"SVC-API-Version", "beta"},
			{"SVC-API-Version", "foo", "SVC-API-Version", "beta"},
			{"SVC-API-Version", "beta, foo"},
		} {
			wantCode(t, srv.Do(t, "GET", unbuilt, nil, h...), http.StatusNotImplemented, "not_implemented")
		}
	})

	t.Run("a body over 1 MiB is 413", func(t *testing.T) {
		big := `{"key":"big","name":"` + strings.Repeat("n", api.MaxBody) + `"}`
		wantCode(t, srv.Do(t, "POST", projects, big), http.StatusRequestEntityTooLarge, "request_entity_too_large")
	})

	t.Run("unknown paths and methods answer JSON", func(t *testing.T) {
		wantCode(t, srv.Do(t, "GET", "/api/v2/nothing", nil), http.StatusNotFound, "not_found")
		res := srv.Do(t, "PUT", projects, nil)
		wantCode(t, res, http.StatusMethodNotAllowed, "method_not_allowed")
		if allow := res.Header.Get("Allow"); !strings.Contains(allow, "GET") || !strings.Contains(allow, "POST") {
			t.Errorf("Allow %q", allow)
		}
	})
}

// unbuiltBetaGET is the path of a beta GET operation that still answers
// 501, taken from the catalog so that building one does not break the test.
func unbuiltBetaGET(tb testing.TB, srv *apptest.Server) string {
	tb.Helper()
	built := srv.App.Handlers()
	param := regexp.MustCompile(`\{[^}]*\}`)
	for _, op := range catalog.All() {
		if op.Beta && op.Method == http.MethodGet && !op.Public && built[op.ID] == nil {
			return param.ReplaceAllString(op.Path, "x")
		}
	}
	tb.Skip("every beta GET operation is built")
	return ""
}
