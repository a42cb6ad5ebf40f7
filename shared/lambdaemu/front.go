package lambdaemu

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// API Gateway HTTP API limits and defaults the Front follows.
const (
	// MaxRequestBody is API Gateway's 10 MB payload limit.
	MaxRequestBody = 10 * 1024 * 1024
	// DefaultIntegrationTimeout is the HTTP API's (maximum) integration timeout.
	DefaultIntegrationTimeout = 30 * time.Second
)

// Invoker is what a route invokes: a *Function, or a fake in tests.
type Invoker interface {
	Invoke(ctx context.Context, payload []byte) ([]byte, error)
}

// Route sends the requests matching Key to a function.
type Route struct {
	// Key is the route key: a method and a path whose {name} segments match
	// one path segment and whose last segment may be {name+}, e.g.
	// "GET /api/v2/projects/{projectKey}".
	Key string
	// Function names the function in FrontConfig.Functions.
	Function string
}

// FrontConfig describes the HTTP API.
type FrontConfig struct {
	Routes    []Route
	Functions map[string]Invoker
	// AccountID, APIID and Stage go into every event's requestContext
	// (defaults 000000000000, "lambdaemu" and "$default").
	AccountID, APIID, Stage string
	// IntegrationTimeout bounds each invocation (default 30 s); past it the
	// client gets 503, as from API Gateway.
	IntegrationTimeout time.Duration
	// Logf, when set, is told why a request got a gateway error.
	Logf func(format string, args ...any)
}

// Front is an http.Handler playing API Gateway HTTP API with Lambda proxy
// integrations, payload format 2.0.
type Front struct {
	cfg FrontConfig
	mux *http.ServeMux
}

type frontRoute struct {
	key    string
	method string
	params []string
	fn     Invoker
}

var routeParam = regexp.MustCompile(`\{([^{}]+)\}`)

// NewFront checks the routes and returns the front.
func NewFront(cfg FrontConfig) (*Front, error) {
	if cfg.AccountID == "" {
		cfg.AccountID = "000000000000"
	}
	if cfg.APIID == "" {
		cfg.APIID = "lambdaemu"
	}
	if cfg.Stage == "" {
		cfg.Stage = "$default"
	}
	if cfg.IntegrationTimeout <= 0 {
		cfg.IntegrationTimeout = DefaultIntegrationTimeout
	}
	f := &Front{cfg: cfg, mux: http.NewServeMux()}
	for _, rt := range cfg.Routes {
		method, p, ok := strings.Cut(rt.Key, " ")
		if !ok || method == "" || method != strings.ToUpper(method) || !strings.HasPrefix(p, "/") {
			return nil, fmt.Errorf("lambdaemu: route key %q is not \"METHOD /path\"", rt.Key)
		}
		fn, ok := cfg.Functions[rt.Function]
		if !ok || fn == nil {
			return nil, fmt.Errorf("lambdaemu: route %q names the unknown function %q", rt.Key, rt.Function)
		}
		fr := &frontRoute{key: rt.Key, method: method, fn: fn}
		pattern := routeParam.ReplaceAllStringFunc(p, func(m string) string {
			name := m[1 : len(m)-1]
			if greedy, ok := strings.CutSuffix(name, "+"); ok {
				fr.params = append(fr.params, greedy)
				return "{" + greedy + "...}"
			}
			fr.params = append(fr.params, name)
			return m
		})
		// API Gateway's "/" is the root alone; ServeMux's would take every path.
		if pattern == "/" {
			pattern = "/{$}"
		}
		if err := handle(f.mux, method+" "+pattern, fr); err != nil {
			return nil, fmt.Errorf("lambdaemu: route %q: %w", rt.Key, err)
		}
	}
	return f, nil
}

func handle(mux *http.ServeMux, pattern string, fr *frontRoute) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%v", v)
		}
	}()
	mux.Handle(pattern, fr)
	return nil
}

type ctxKey struct{}

type gatewayRequest struct {
	front *Front
	id    string
	at    time.Time
}

// ServeHTTP routes the request as API Gateway does: no redirects, no
// method fallbacks (HEAD does not reach a GET route), and 404 Not Found for
// anything no route matches exactly.
func (f *Front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	gr := &gatewayRequest{front: f, id: gatewayRequestID(), at: time.Now()}
	w.Header().Set("Apigw-Requestid", gr.id)
	if cleanPath(r.URL.Path) != r.URL.Path {
		f.gatewayError(w, http.StatusNotFound, "%s %s: path is not canonical", r.Method, r.URL.Path)
		return
	}
	h, pattern := f.mux.Handler(r)
	fr, ok := h.(*frontRoute)
	if pattern == "" || !ok || fr.method != r.Method {
		f.gatewayError(w, http.StatusNotFound, "%s %s: no route", r.Method, r.URL.Path)
		return
	}
	// ServeHTTP, not h: only the mux sets the path values.
	f.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, gr)))
}

// ServeHTTP forwards one request matched to the route.
func (fr *frontRoute) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	gr := r.Context().Value(ctxKey{}).(*gatewayRequest)
	f := gr.front
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestBody+1))
	if err != nil {
		f.gatewayError(w, http.StatusBadRequest, "%s: read body: %v", fr.key, err)
		return
	}
	if len(body) > MaxRequestBody {
		f.gatewayError(w, http.StatusRequestEntityTooLarge, "%s: body over %d bytes", fr.key, MaxRequestBody)
		return
	}
	params := map[string]string{}
	for _, name := range fr.params {
		params[name] = r.PathValue(name)
	}
	event := f.Event(r, fr.key, params, body, gr.id, gr.at)
	payload, err := json.Marshal(event)
	if err != nil {
		f.gatewayError(w, http.StatusInternalServerError, "%s: encode event: %v", fr.key, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), f.cfg.IntegrationTimeout)
	defer cancel()
	out, err := fr.fn.Invoke(ctx, payload)
	switch {
	case err == nil:
	case errors.Is(err, ErrPayloadTooLarge):
		f.gatewayError(w, http.StatusRequestEntityTooLarge, "%s: %v", fr.key, err)
		return
	case r.Context().Err() != nil:
		return // the client has gone
	case errors.Is(err, context.DeadlineExceeded):
		f.gatewayError(w, http.StatusServiceUnavailable, "%s: integration timeout: %v", fr.key, err)
		return
	default:
		f.gatewayError(w, http.StatusInternalServerError, "%s: %v", fr.key, err)
		return
	}
	res, err := DecodeResponse(out)
	if err != nil {
		f.gatewayError(w, http.StatusInternalServerError, "%s: %v", fr.key, err)
		return
	}
	if err := writeResponse(w, res); err != nil {
		f.gatewayError(w, http.StatusInternalServerError, "%s: %v", fr.key, err)
	}
}

// Event translates an HTTP request into the API Gateway HTTP API event
// (payload format 2.0) for the route routeKey.
func (f *Front) Event(r *http.Request, routeKey string, params map[string]string, body []byte, requestID string, at time.Time) events.APIGatewayV2HTTPRequest {
	headers := map[string]string{}
	var cookies []string
	for name, values := range r.Header {
		lower := strings.ToLower(name)
		if lower == "cookie" {
			for _, v := range values {
				for _, c := range strings.Split(v, ";") {
					if c = strings.TrimSpace(c); c != "" {
						cookies = append(cookies, c)
					}
				}
			}
			continue
		}
		headers[lower] = strings.Join(values, ",")
	}
	sourceIP, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		sourceIP = r.RemoteAddr
	}
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		host, port = r.Host, "80"
		if r.TLS != nil {
			port = "443"
		}
	}
	proto := "http"
	if r.TLS != nil {
		proto = "https"
	}
	headers["host"] = r.Host
	headers["content-length"] = strconv.Itoa(len(body))
	if prior := headers["x-forwarded-for"]; prior != "" {
		headers["x-forwarded-for"] = prior + ", " + sourceIP
	} else {
		headers["x-forwarded-for"] = sourceIP
	}
	headers["x-forwarded-port"] = port
	headers["x-forwarded-proto"] = proto
	headers["x-amzn-trace-id"] = strings.SplitN(traceID(), ";", 2)[0]

	var query map[string]string
	if values, err := url.ParseQuery(r.URL.RawQuery); err == nil && len(values) > 0 {
		query = make(map[string]string, len(values))
		for k, vs := range values {
			query[k] = strings.Join(vs, ",")
		}
	}
	if len(params) == 0 {
		params = nil
	}
	ev := events.APIGatewayV2HTTPRequest{
		Version:               "2.0",
		RouteKey:              routeKey,
		RawPath:               r.URL.EscapedPath(),
		RawQueryString:        r.URL.RawQuery,
		Cookies:               cookies,
		Headers:               headers,
		QueryStringParameters: query,
		PathParameters:        params,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:     routeKey,
			AccountID:    f.cfg.AccountID,
			Stage:        f.cfg.Stage,
			RequestID:    requestID,
			APIID:        f.cfg.APIID,
			DomainName:   host,
			DomainPrefix: strings.SplitN(host, ".", 2)[0],
			Time:         at.UTC().Format("02/Jan/2006:15:04:05 -0700"),
			TimeEpoch:    at.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method:    r.Method,
				Path:      r.URL.EscapedPath(),
				Protocol:  r.Proto,
				SourceIP:  sourceIP,
				UserAgent: r.UserAgent(),
			},
		},
	}
	if len(body) > 0 {
		if utf8.Valid(body) {
			ev.Body = string(body)
		} else {
			ev.Body = base64.StdEncoding.EncodeToString(body)
			ev.IsBase64Encoded = true
		}
	}
	return ev
}

// DecodeResponse reads a function's answer as API Gateway does for payload
// format 2.0: a JSON object with statusCode is a response; any other valid
// JSON is a 200 application/json body; anything else is an error.
func DecodeResponse(out []byte) (events.APIGatewayV2HTTPResponse, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(out, &probe); err != nil || probe["statusCode"] == nil {
		if !json.Valid(out) {
			return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("the function's response is not JSON: %.200q", out)
		}
		return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusOK,
			Headers: map[string]string{"content-type": "application/json"}, Body: string(out)}, nil
	}
	var res events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(out, &res); err != nil {
		return res, fmt.Errorf("the function's response is malformed: %w", err)
	}
	if res.StatusCode < 100 || res.StatusCode > 599 {
		return res, fmt.Errorf("the function's response has the status code %d", res.StatusCode)
	}
	return res, nil
}

// hopHeaders are not passed on from a function's response: the front's
// server computes them for the body it writes.
var hopHeaders = map[string]bool{"Content-Length": true, "Transfer-Encoding": true, "Connection": true}

func writeResponse(w http.ResponseWriter, res events.APIGatewayV2HTTPResponse) error {
	body := []byte(res.Body)
	if res.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(res.Body); err != nil {
			return fmt.Errorf("the function's base64 body does not decode: %w", err)
		}
	}
	h := w.Header()
	names := make([]string, 0, len(res.Headers))
	for name := range res.Headers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !hopHeaders[http.CanonicalHeaderKey(name)] {
			h.Set(name, res.Headers[name])
		}
	}
	for name, values := range res.MultiValueHeaders {
		if hopHeaders[http.CanonicalHeaderKey(name)] {
			continue
		}
		for _, v := range values {
			h.Add(name, v)
		}
	}
	for _, c := range res.Cookies {
		h.Add("Set-Cookie", c)
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(res.StatusCode)
	_, _ = w.Write(body)
	return nil
}

// gatewayError answers as API Gateway itself does: {"message": "..."}.
func (f *Front) gatewayError(w http.ResponseWriter, status int, format string, args ...any) {
	if f.cfg.Logf != nil {
		f.cfg.Logf("front: %d: "+format, append([]any{status}, args...)...)
	}
	h := w.Header()
	for name := range h {
		if name != "Apigw-Requestid" {
			h.Del(name)
		}
	}
	h.Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, GatewayMessage(status))
}

// GatewayMessage returns the body API Gateway sends with its own errors.
func GatewayMessage(status int) string {
	return `{"message":"` + http.StatusText(status) + `"}`
}

// cleanPath is the canonical form of p, as http.ServeMux computes it.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// gatewayRequestID makes an id shaped like API Gateway's (e.g. "JKJaXmPLvHcESHA=").
func gatewayRequestID() string {
	var b [10]byte
	_, _ = rand.Read(b[:])
	return base64.StdEncoding.EncodeToString(b[:])[:15] + "="
}
