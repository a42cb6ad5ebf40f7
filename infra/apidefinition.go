package infra

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/openapi"
)

// The HTTP API is imported from an OpenAPI 3.0 document (the Api
// resource's Body; API Gateway refuses 3.1) instead of being built from
// one Route resource per operation and Integration resources beside them:
// those made the stack grow by one CloudFormation resource per operation,
// towards the 500 a stack may hold. Its operations are those of the API's
// own OpenAPI document (package openapi), but it carries only what API
// Gateway reads: each operation's method and path, the path's parameters,
// and the integration of the operation's function, defined once per
// function and referenced. No schemas, examples or descriptions.

// OpenAPI extensions and names API Gateway reads on import.
const (
	extIntegrations = "x-amazon-apigateway-integrations"
	extCORS         = "x-amazon-apigateway-cors"
	integrationRef  = "#/components/" + extIntegrations + "/"
)

// apiRoutes are the HTTP API's operations: those of the API's OpenAPI
// document, the one the server serves, so API Gateway routes exactly what
// it describes; and the console's page and files, which the document
// leaves out (they are not the API) but the console function serves.
func apiRoutes() ([]Route, error) {
	doc, err := openapi.Parse(openapi.JSON())
	if err != nil {
		return nil, err
	}
	out, err := routesFromDocument(doc)
	if err != nil {
		return nil, err
	}
	for _, op := range catalog.All() {
		if op.Console {
			out = append(out, Route{Key: op.Method + " " + op.Path, Function: op.Group})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// httpMethods are the OpenAPI path item keys that name operations API
// Gateway can route (the document also has "report", which it cannot).
var httpMethods = map[string]bool{
	"get": true, "put": true, "post": true, "delete": true,
	"options": true, "head": true, "patch": true, "trace": true,
}

// routesFromDocument reads the routes of an OpenAPI document: every
// operation it lists, bar the catalog's local-only ones, with the function
// of the operation's catalog group. An operation the catalog does not
// know is an error, since no function could serve it; so is one whose
// path parameters are not its path's, which API Gateway's import would
// refuse only at deployment.
func routesFromDocument(doc *openapi.Document) ([]Route, error) {
	ops := map[string]catalog.Operation{}
	for _, op := range catalog.All() {
		ops[op.Method+" "+op.Path] = op
	}
	var out []Route
	for path, item := range doc.Paths {
		want := pathParameterNames(path)
		for method, o := range item {
			if !httpMethods[method] {
				continue
			}
			key := strings.ToUpper(method) + " " + path
			op, ok := ops[key]
			switch {
			case !ok:
				return nil, fmt.Errorf("OpenAPI operation %q: not in the catalog, so no function serves it", key)
			case op.Console:
				return nil, fmt.Errorf("OpenAPI operation %q: the console's, which the API's document leaves out", key)
			case op.LocalOnly:
				continue
			}
			var got []string
			for _, p := range o.Parameters {
				if p.In == "path" {
					got = append(got, p.Name)
				}
			}
			if !slices.Equal(got, want) {
				return nil, fmt.Errorf("OpenAPI operation %q: path parameters %v, its path has %v", key, got, want)
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

// pathParameterNames are the names of path's {name} segments, in order.
func pathParameterNames(path string) []string {
	var out []string
	for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
		out = append(out, m[1])
	}
	return out
}

// pathParameters declares each {name} segment of path: API Gateway warns
// of (and, with FailOnWarnings, refuses) an undeclared one.
func pathParameters(path string) []parameter {
	var out []parameter
	for _, name := range pathParameterNames(path) {
		out = append(out, parameter{Name: name, In: "path", Required: true, Schema: map[string]string{"type": "string"}})
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
