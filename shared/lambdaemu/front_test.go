package lambdaemu_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/flagplane/flagplane/shared/lambdaemu"
)

// recorder is an Invoker that keeps the events it gets and answers with a
// canned payload (or blocks until the context ends when block is set).
type recorder struct {
	mu     sync.Mutex
	events []events.APIGatewayV2HTTPRequest
	answer []byte
	block  bool
}

func (r *recorder) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.events = append(r.events, ev)
	answer, block := r.answer, r.block
	r.mu.Unlock()
	if block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if answer == nil {
		answer = []byte(`{"statusCode":200}`)
	}
	return answer, nil
}

func (r *recorder) last(tb testing.TB) events.APIGatewayV2HTTPRequest {
	tb.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.events) == 0 {
		tb.Fatal("the function was not invoked")
	}
	return r.events[len(r.events)-1]
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// newFront serves routes to the functions on a loopback server, closed when
// the test ends.
func newFront(tb testing.TB, fns map[string]lambdaemu.Invoker, routes ...lambdaemu.Route) (*httptest.Server, *lambdaemu.Front) {
	tb.Helper()
	front, err := lambdaemu.NewFront(lambdaemu.FrontConfig{Routes: routes, Functions: fns, IntegrationTimeout: 2 * time.Second, Logf: tb.Logf})
	if err != nil {
		tb.Fatalf("new front: %v", err)
	}
	srv := httptest.NewServer(front)
	tb.Cleanup(srv.Close)
	return srv, front
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func send(tb testing.TB, srv *httptest.Server, method, path string, body []byte, headers ...string) answer {
	tb.Helper()
	req, err := http.NewRequest(method, srv.URL+path, bytes.NewReader(body))
	if err != nil {
		tb.Fatalf("request %s %s: %v", method, path, err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return answer{res.StatusCode, res.Header, b}
}

// wantGatewayError checks an answer API Gateway itself would give.
func wantGatewayError(tb testing.TB, a answer, status int) {
	tb.Helper()
	if a.status != status || string(a.body) != lambdaemu.GatewayMessage(status) {
		tb.Errorf("answer %d %s, want %d %s", a.status, a.body, status, lambdaemu.GatewayMessage(status))
	}
	if a.header.Get("Apigw-Requestid") == "" {
		tb.Errorf("no apigw-requestid header")
	}
	if ct := a.header.Get("Content-Type"); ct != "application/json" {
		tb.Errorf("content type %q", ct)
	}
}

func TestFrontEvent(t *testing.T) {
	rec := &recorder{}
	srv, _ := newFront(t, map[string]lambdaemu.Invoker{"items": rec},
		lambdaemu.Route{Key: "POST /items/{id}/notes/{note}", Function: "items"},
		lambdaemu.Route{Key: "GET /files/{path+}", Function: "items"})

	binary := []byte{0xff, 0xfe, 0x00, 0x01}
	send(t, srv, http.MethodPost, "/items/a%20b/notes/7?b=2&a=1&a=3&tags=eu%2Blive", binary,
		"X-One", "1", "X-Many", "a", "X-Many", "b", "Cookie", "c1=v1; c2=v2", "User-Agent", "front-test")
	ev := rec.last(t)

	cases := []struct {
		name      string
		got, want any
	}{
		{"the version is 2.0", ev.Version, "2.0"},
		{"the route key is the matched route", ev.RouteKey, "POST /items/{id}/notes/{note}"},
		{"the request context has the route key too", ev.RequestContext.RouteKey, "POST /items/{id}/notes/{note}"},
		{"the raw path is the path as sent", ev.RawPath, "/items/a%20b/notes/7"},
		{"the raw query string is the query as sent", ev.RawQueryString, "b=2&a=1&a=3&tags=eu%2Blive"},
		{"query parameters are decoded and repeated ones comma-joined", ev.QueryStringParameters, map[string]string{"a": "1,3", "b": "2", "tags": "eu+live"}},
		{"path parameters are decoded", ev.PathParameters, map[string]string{"id": "a b", "note": "7"}},
		{"a header is lower-cased", ev.Headers["x-one"], "1"},
		{"a repeated header is comma-joined", ev.Headers["x-many"], "a,b"},
		{"cookies are split out of the headers", ev.Cookies, []string{"c1=v1", "c2=v2"}},
		{"the cookie header is not passed on", ev.Headers["cookie"], ""},
		{"the user agent is in the request context", ev.RequestContext.HTTP.UserAgent, "front-test"},
		{"the method is in the request context", ev.RequestContext.HTTP.Method, "POST"},
		{"the protocol is in the request context", ev.RequestContext.HTTP.Protocol, "HTTP/1.1"},
		{"the source ip is the client's", ev.RequestContext.HTTP.SourceIP, "127.0.0.1"},
		{"x-forwarded-for names the client", ev.Headers["x-forwarded-for"], "127.0.0.1"},
		{"the stage is $default", ev.RequestContext.Stage, "$default"},
		{"a body that is not UTF-8 is base64-encoded", []any{ev.IsBase64Encoded, ev.Body}, []any{true, base64.StdEncoding.EncodeToString(binary)}},
		{"the content length is the body's", ev.Headers["content-length"], "4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Errorf("got %#v, want %#v", c.got, c.want)
			}
		})
	}

	t.Run("the request id and time are set", func(t *testing.T) {
		rc := ev.RequestContext
		if rc.RequestID == "" || rc.TimeEpoch == 0 || rc.Time == "" || rc.AccountID == "" || rc.APIID == "" {
			t.Errorf("request context %+v", rc)
		}
		if d := time.Since(time.UnixMilli(rc.TimeEpoch)); d < 0 || d > time.Minute {
			t.Errorf("timeEpoch %d is not now", rc.TimeEpoch)
		}
	})

	t.Run("a UTF-8 body is sent as text", func(t *testing.T) {
		send(t, srv, http.MethodPost, "/items/1/notes/2", []byte(`{"name":"é"}`))
		if ev := rec.last(t); ev.IsBase64Encoded || ev.Body != `{"name":"é"}` {
			t.Errorf("body %q base64 %v", ev.Body, ev.IsBase64Encoded)
		}
	})

	t.Run("a request without a body or query has none in the event", func(t *testing.T) {
		send(t, srv, http.MethodGet, "/files/a/b/c", nil)
		ev := rec.last(t)
		if ev.Body != "" || ev.IsBase64Encoded || ev.RawQueryString != "" || ev.QueryStringParameters != nil {
			t.Errorf("event %+v", ev)
		}
	})

	t.Run("a greedy parameter takes the rest of the path", func(t *testing.T) {
		send(t, srv, http.MethodGet, "/files/a/b/c", nil)
		if got := rec.last(t).PathParameters; !reflect.DeepEqual(got, map[string]string{"path": "a/b/c"}) {
			t.Errorf("path parameters %v", got)
		}
	})
}

func TestFrontRouting(t *testing.T) {
	rec := &recorder{}
	srv, front := newFront(t, map[string]lambdaemu.Invoker{"items": rec},
		lambdaemu.Route{Key: "GET /items", Function: "items"},
		lambdaemu.Route{Key: "GET /items/{id}", Function: "items"},
		lambdaemu.Route{Key: "DELETE /items/{id}", Function: "items"})

	notFound := []struct{ name, method, path string }{
		{"an unknown path answers 404 Not Found as API Gateway does", http.MethodGet, "/nothing/here"},
		{"a known path with another method answers 404 Not Found, not 405", http.MethodPost, "/items"},
		{"HEAD does not reach a GET route", http.MethodHead, "/items"},
		{"a trailing slash is another path", http.MethodGet, "/items/"},
		{"a path with an extra segment is not matched", http.MethodGet, "/items/1/more"},
	}
	for _, c := range notFound {
		t.Run(c.name, func(t *testing.T) {
			before := rec.count()
			a := send(t, srv, c.method, c.path, nil)
			if c.method == http.MethodHead {
				a.body = []byte(lambdaemu.GatewayMessage(http.StatusNotFound)) // HEAD answers have no body
			}
			wantGatewayError(t, a, http.StatusNotFound)
			if rec.count() != before {
				t.Errorf("a function was invoked")
			}
		})
	}

	t.Run("a path that is not canonical is not redirected but not found", func(t *testing.T) {
		for _, p := range []string{"/items//1", "/items/../items/1", "/./items"} {
			w := httptest.NewRecorder()
			front.ServeHTTP(w, httptest.NewRequest(http.MethodGet, p, nil))
			wantGatewayError(t, answer{w.Code, w.Header(), w.Body.Bytes()}, http.StatusNotFound)
		}
	})

	t.Run("each method of a path reaches its own route", func(t *testing.T) {
		send(t, srv, http.MethodDelete, "/items/9", nil)
		if k := rec.last(t).RouteKey; k != "DELETE /items/{id}" {
			t.Errorf("route key %q", k)
		}
		send(t, srv, http.MethodGet, "/items/9", nil)
		if k := rec.last(t).RouteKey; k != "GET /items/{id}" {
			t.Errorf("route key %q", k)
		}
	})

	t.Run("a body over 10 MB answers 413 without invoking anything", func(t *testing.T) {
		before := rec.count()
		wantGatewayError(t, send(t, srv, http.MethodGet, "/items", make([]byte, lambdaemu.MaxRequestBody+1)), http.StatusRequestEntityTooLarge)
		if rec.count() != before {
			t.Errorf("a function was invoked")
		}
	})

	t.Run("a route of / takes the root alone, as API Gateway's does", func(t *testing.T) {
		root := &recorder{}
		srv, _ := newFront(t, map[string]lambdaemu.Invoker{"page": root}, lambdaemu.Route{Key: "GET /", Function: "page"})
		send(t, srv, http.MethodGet, "/", nil)
		if k := root.last(t).RouteKey; k != "GET /" {
			t.Errorf("route key %q", k)
		}
		wantGatewayError(t, send(t, srv, http.MethodGet, "/elsewhere", nil), http.StatusNotFound)
		if root.count() != 1 {
			t.Errorf("%d invocations, want the root's one", root.count())
		}
	})
}

func TestFrontAnswers(t *testing.T) {
	cases := []struct {
		name    string
		payload string
		status  int
		header  map[string][]string
		body    string
	}{
		{"status, headers, multi-value headers and cookies are passed on",
			`{"statusCode":201,"headers":{"X-A":"1","Content-Type":"text/plain"},"multiValueHeaders":{"X-B":["2","3"]},"cookies":["s=1","t=2"],"body":"made"}`,
			201, map[string][]string{"X-A": {"1"}, "X-B": {"2", "3"}, "Set-Cookie": {"s=1", "t=2"}, "Content-Type": {"text/plain"}}, "made"},
		{"a base64 body is decoded", `{"statusCode":200,"body":"AAEC/w==","isBase64Encoded":true}`, 200, nil, "\x00\x01\x02\xff"},
		{"an answer without a status code is a 200 JSON body", `{"hello":"world"}`, 200,
			map[string][]string{"Content-Type": {"application/json"}}, `{"hello":"world"}`},
		{"a JSON string answer is a 200 JSON body", `"hi"`, 200, nil, `"hi"`},
		{"a content length from the function is replaced by the real one", `{"statusCode":200,"headers":{"Content-Length":"99"},"body":"ok"}`, 200,
			map[string][]string{"Content-Length": {"2"}}, "ok"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, _ := newFront(t, map[string]lambdaemu.Invoker{"f": &recorder{answer: []byte(c.payload)}}, lambdaemu.Route{Key: "GET /x", Function: "f"})
			a := send(t, srv, http.MethodGet, "/x", nil)
			if a.status != c.status || string(a.body) != c.body {
				t.Errorf("answer %d %q, want %d %q", a.status, a.body, c.status, c.body)
			}
			for name, want := range c.header {
				if got := a.header.Values(name); !slices.Equal(got, want) {
					t.Errorf("header %s = %q, want %q", name, got, want)
				}
			}
		})
	}

	bad := []struct{ name, payload string }{
		{"an answer that is not JSON answers 500", `not json`},
		{"a status code out of range answers 500", `{"statusCode":1000}`},
		{"a base64 body that does not decode answers 500", `{"statusCode":200,"body":"%%%","isBase64Encoded":true}`},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			srv, _ := newFront(t, map[string]lambdaemu.Invoker{"f": &recorder{answer: []byte(c.payload)}}, lambdaemu.Route{Key: "GET /x", Function: "f"})
			wantGatewayError(t, send(t, srv, http.MethodGet, "/x", nil), http.StatusInternalServerError)
		})
	}

	t.Run("an integration timeout answers 503", func(t *testing.T) {
		front, err := lambdaemu.NewFront(lambdaemu.FrontConfig{
			Routes: []lambdaemu.Route{{Key: "GET /x", Function: "f"}}, Functions: map[string]lambdaemu.Invoker{"f": &recorder{block: true}},
			IntegrationTimeout: 50 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		front.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/x", nil))
		wantGatewayError(t, answer{w.Code, w.Header(), w.Body.Bytes()}, http.StatusServiceUnavailable)
	})
}

func TestFrontConfig(t *testing.T) {
	fns := map[string]lambdaemu.Invoker{"f": &recorder{}}
	cases := []struct {
		name   string
		routes []lambdaemu.Route
		want   string
	}{
		{"a route to an unknown function is refused", []lambdaemu.Route{{Key: "GET /x", Function: "g"}}, "unknown function"},
		{"a route key without a method is refused", []lambdaemu.Route{{Key: "/x", Function: "f"}}, "METHOD /path"},
		{"a route key with a lower-case method is refused", []lambdaemu.Route{{Key: "get /x", Function: "f"}}, "METHOD /path"},
		{"the same route twice is refused", []lambdaemu.Route{{Key: "GET /x/{a}", Function: "f"}, {Key: "GET /x/{b}", Function: "f"}}, "GET /x/{b}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := lambdaemu.NewFront(lambdaemu.FrontConfig{Routes: c.routes, Functions: fns})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one mentioning %q", err, c.want)
			}
		})
	}
}

// TestFrontWithARealRuntime puts the front before a bootstrap built like the
// real functions (aws-lambda-go and the API Gateway v2 adapter), so the
// event and the answer make the whole round trip.
func TestFrontWithARealRuntime(t *testing.T) {
	fn := newFunction(t, "httpecho", func(c *lambdaemu.Config) { c.Name = "echo"; c.MaxInstances = 2 })
	srv, _ := newFront(t, map[string]lambdaemu.Invoker{"echo": fn},
		lambdaemu.Route{Key: "POST /echo/{id}", Function: "echo"},
		lambdaemu.Route{Key: "GET /binary", Function: "echo"},
		lambdaemu.Route{Key: "GET /cookies", Function: "echo"},
		lambdaemu.Route{Key: "GET /status/{code}", Function: "echo"},
		lambdaemu.Route{Key: "GET /panic", Function: "echo"})

	t.Run("the handler sees the request as the client sent it", func(t *testing.T) {
		body := []byte{0, 1, 2, 0xff}
		a := send(t, srv, http.MethodPost, "/echo/42?q=a%2Bb&q=c", body, "X-Many", "a", "X-Many", "b", "Cookie", "k=v; l=w", "Content-Type", "application/octet-stream")
		if a.status != http.StatusOK {
			t.Fatalf("status %d: %s", a.status, a.body)
		}
		var got struct {
			Method, Path, RawQuery, RouteKey, Stage, SourceIP string
			Query                                             map[string][]string
			Header                                            http.Header
			Cookies                                           []string
			Body                                              []byte
		}
		if err := json.Unmarshal(a.body, &got); err != nil {
			t.Fatalf("echo: %v: %s", err, a.body)
		}
		if got.Method != "POST" || got.Path != "/echo/42" || got.RawQuery != "q=a%2Bb&q=c" || !slices.Equal(got.Query["q"], []string{"a+b", "c"}) {
			t.Errorf("request line: %+v", got)
		}
		if !bytes.Equal(got.Body, body) {
			t.Errorf("body %v, want %v", got.Body, body)
		}
		if !slices.Equal(got.Header.Values("X-Many"), []string{"a", "b"}) || got.Header.Get("Content-Type") != "application/octet-stream" {
			t.Errorf("headers %v", got.Header)
		}
		if !slices.Equal(got.Cookies, []string{"k=v", "l=w"}) {
			t.Errorf("cookies %v", got.Cookies)
		}
		if got.RouteKey != "POST /echo/{id}" || got.Stage != "$default" || got.SourceIP != "127.0.0.1" {
			t.Errorf("request context %+v", got)
		}
	})

	t.Run("a binary answer comes back byte for byte", func(t *testing.T) {
		a := send(t, srv, http.MethodGet, "/binary", nil)
		want := make([]byte, 256)
		for i := range want {
			want[i] = byte(i)
		}
		if a.status != http.StatusOK || !bytes.Equal(a.body, want) || a.header.Get("Content-Type") != "application/octet-stream" {
			t.Errorf("answer %d %q %v", a.status, a.header.Get("Content-Type"), a.body)
		}
	})

	t.Run("cookies and a header with two values come back", func(t *testing.T) {
		a := send(t, srv, http.MethodGet, "/cookies", nil)
		if a.status != http.StatusCreated || !slices.Equal(a.header.Values("Set-Cookie"), []string{"a=1", "b=2"}) || a.header.Get("X-Multi") != "one,two" {
			t.Errorf("answer %d %v", a.status, a.header)
		}
	})

	t.Run("the function's status comes back", func(t *testing.T) {
		for _, code := range []int{204, 404, 418, 503} {
			if a := send(t, srv, http.MethodGet, "/status/"+strconv.Itoa(code), nil); a.status != code {
				t.Errorf("status %d, want %d", a.status, code)
			}
		}
	})

	t.Run("a panic in the handler answers 500 and the next request is served", func(t *testing.T) {
		wantGatewayError(t, send(t, srv, http.MethodGet, "/panic", nil), http.StatusInternalServerError)
		if a := send(t, srv, http.MethodGet, "/status/204", nil); a.status != http.StatusNoContent {
			t.Errorf("after the panic: status %d", a.status)
		}
	})
}
