package infra

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/flagplane/flagplane/shared/catalog"
)

// The HTTP API is imported from an OpenAPI 3.0 document (the Api
// resource's Body) instead of being built from one Route resource per
// operation and Integration resources beside them: those made the stack
// grow by one CloudFormation resource per operation, towards the 500 a
// stack may hold. The document carries only what API Gateway reads: each
// operation's method and path, the path's parameters, and the integration
// of the operation's function, defined once per function and referenced.

// OpenAPI extensions and names API Gateway reads on import.
const (
	extIntegration  = "x-amazon-apigateway-integration"
	extIntegrations = "x-amazon-apigateway-integrations"
	extCORS         = "x-amazon-apigateway-cors"
	integrationRef  = "#/components/" + extIntegrations + "/"
)

// apiRoutes is where the HTTP API's operations come from. It is the one
// place to switch to the generated OpenAPI document once that lands:
// return routesFromDocument(openapi.JSON).
func apiRoutes() ([]Route, error) { return Routes(), nil }

// httpMethods are the OpenAPI path item keys that name operations.
var httpMethods = map[string]bool{
	"get": true, "put": true, "post": true, "delete": true,
	"options": true, "head": true, "patch": true, "trace": true,
}

// routesFromDocument reads the routes of an OpenAPI document: every
// operation it lists, bar the catalog's local-only ones, with the function
// of the operation's catalog group. An operation the catalog does not
// know is an error, since no function could serve it.
func routesFromDocument(doc []byte) ([]Route, error) {
	var d struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("read the OpenAPI document: %w", err)
	}
	ops := map[string]catalog.Operation{}
	for _, op := range catalog.All() {
		ops[op.Pattern()] = op
	}
	var out []Route
	for path, item := range d.Paths {
		for method := range item {
			if !httpMethods[method] {
				continue // parameters, summary, x- extensions
			}
			key := strings.ToUpper(method) + " " + path
			op, ok := ops[key]
			switch {
			case !ok:
				return nil, fmt.Errorf("OpenAPI operation %q: not in the catalog, so no function serves it", key)
			case op.LocalOnly:
				continue
			}
			out = append(out, Route{Key: key, Function: op.Group})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// apiInfo is the document's info object; API Gateway names the API
// after its title and describes it with its description.
type apiInfo struct {
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
	Version     string `json:"version"`
}

// apiCORS is API Gateway's CORS extension: it answers preflights itself
// and adds the headers to every answer.
type apiCORS struct {
	AllowOrigins  []string `json:"allowOrigins"`
	AllowMethods  []string `json:"allowMethods"`
	AllowHeaders  []string `json:"allowHeaders"`
	ExposeHeaders []string `json:"exposeHeaders"`
	MaxAge        int      `json:"maxAge"`
}

// integration is one function's Lambda proxy integration.
type integration struct {
	Type                 string `json:"type"`
	HTTPMethod           string `json:"httpMethod"`
	URI                  string `json:"uri"`
	PayloadFormatVersion string `json:"payloadFormatVersion"`
}

type parameter struct {
	Name     string            `json:"name"`
	In       string            `json:"in"`
	Required bool              `json:"required"`
	Schema   map[string]string `json:"schema"`
}

// operation names its integration and, to be valid OpenAPI, an answer.
type operation struct {
	Integration map[string]string         `json:"x-amazon-apigateway-integration"`
	Responses   map[string]map[string]any `json:"responses"`
}

var pathParam = regexp.MustCompile(`\{([^{}]+)\}`)

// pathParameters declares each {name} segment of path: API Gateway warns
// of (and, with FailOnWarnings, refuses) an undeclared one.
func pathParameters(path string) []parameter {
	var out []parameter
	for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
		out = append(out, parameter{Name: m[1], In: "path", Required: true, Schema: map[string]string{"type": "string"}})
	}
	return out
}

// apiDefinition is the OpenAPI document the HTTP API is imported from:
// one operation per route, each referring to its function's integration,
// whose URI functionURI gives (an intrinsic function in the stack). No
// $default route: a path nothing serves is API Gateway's own 404, as
// before. cors is nil for none.
func apiDefinition(info apiInfo, routes []Route, functionURI func(function string) string, cors *apiCORS) (map[string]any, error) {
	paths := map[string]map[string]any{}
	integrations := map[string]integration{}
	for _, r := range routes {
		method, path, ok := strings.Cut(r.Key, " ")
		if !ok || r.Function == "" {
			return nil, fmt.Errorf("route %q of function %q: not a method, a path and a function", r.Key, r.Function)
		}
		item := paths[path]
		if item == nil {
			item = map[string]any{}
			if ps := pathParameters(path); len(ps) > 0 {
				item["parameters"] = ps
			}
			paths[path] = item
		}
		m := strings.ToLower(method)
		if !httpMethods[m] {
			return nil, fmt.Errorf("route %q: API Gateway routes no %s", r.Key, method)
		}
		if _, dup := item[m]; dup {
			return nil, fmt.Errorf("route %q twice", r.Key)
		}
		item[m] = operation{
			Integration: map[string]string{"$ref": integrationRef + r.Function},
			Responses:   map[string]map[string]any{"default": {"description": "the function's answer"}},
		}
		if _, ok := integrations[r.Function]; !ok {
			integrations[r.Function] = integration{Type: "aws_proxy", HTTPMethod: "POST", URI: functionURI(r.Function), PayloadFormatVersion: "2.0"}
		}
	}
	doc := map[string]any{
		"openapi":    "3.0.1",
		"info":       info,
		"paths":      paths,
		"components": map[string]any{extIntegrations: integrations},
	}
	if cors != nil {
		doc[extCORS] = cors
	}
	// Plain maps and slices from here: the CDK's bindings pass them to
	// CloudFormation as JSON, resolving the URIs' tokens on the way.
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encode the API definition: %w", err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("decode the API definition: %w", err)
	}
	return out, nil
}
