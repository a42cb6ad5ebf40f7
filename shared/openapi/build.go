package openapi

import (
	"net/http"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/catalog"
)

// Version is the OpenAPI version of the document.
const Version = "3.0.3"

// securityScheme is the name of the access-token scheme.
const securityScheme = "ApiKey"

var pathParam = regexp.MustCompile(`\{([^}]+)\}`)

// errorResponses are the shared answers of failed requests, by status,
// with their component names. Every one has the body of api.ErrorBody.
var errorResponses = []struct {
	status     int
	name, desc string
}{
	{http.StatusBadRequest, "BadRequest", "The request is invalid: a parameter, header or body field is wrong."},
	{http.StatusUnauthorized, "Unauthorized", "No credential, or one that is not valid."},
	{http.StatusForbidden, "Forbidden", "The credential may not do this, or a beta operation lacks its header."},
	{http.StatusNotFound, "NotFound", "The resource, or one it lives in, does not exist."},
	{http.StatusMethodNotAllowed, "MethodNotAllowed", "The change must go through an approval request: the flag's environment requires one."},
	{http.StatusConflict, "Conflict", "The resource already exists, or changed since the version the request names."},
	{http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "The body is larger than the operation takes."},
	{http.StatusUnsupportedMediaType, "UnsupportedMediaType", "The body is announced as something other than JSON."},
	{http.StatusUnprocessableEntity, "UnprocessableEntity", "The patch cannot be applied to the resource as it is."},
	{http.StatusTooManyRequests, "TooManyRequests", "A rate limit is reached; retry after the time the headers give."},
	{http.StatusInternalServerError, "InternalServerError", "The server failed; the request id finds it in the log."},
	{http.StatusServiceUnavailable, "ServiceUnavailable", "The store does not answer, or the server is busy or stopping; retry."},
}

// errorResponse is the shared answer of status.
func errorResponse(status int) struct {
	status     int
	name, desc string
} {
	for _, e := range errorResponses {
		if e.status == status {
			return e
		}
	}
	panic("openapi: no error response " + strconv.Itoa(status))
}

// errorStatuses are the error answers op may give.
func errorStatuses(op catalog.Operation) []int {
	out := []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
		http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusServiceUnavailable}
	if op.Method != http.MethodGet {
		out = append(out, http.StatusMethodNotAllowed, http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType)
	}
	if op.Method == http.MethodPatch {
		out = append(out, http.StatusUnprocessableEntity)
	}
	return out
}

// Build describes ops: one path item per path, one operation per op, its
// success answer from answers (by operation id) when there is one, else a
// 2XX with no schema, and the error answers. The same input gives the
// same document.
func Build(ops []catalog.Operation, answers map[string]api.Answer) Document {
	g := newSchemas()
	errBody := g.of(reflect.TypeOf(api.ErrorBody{}), false)
	doc := Document{
		OpenAPI: Version,
		Info: Info{
			Title:   "flagplane control API",
			Version: "2",
			Description: "The management API of flagplane, compatible with LaunchDarkly's REST API v2. " +
				"Timestamps the spec gives as strings (format " + FormatUnixMillis + ") are strings of Unix " +
				"milliseconds; a request whose " + api.LDVersionHeader + " header names a dated version " +
				"(20240415) gets them as integers, as LaunchDarkly's clients decode them.",
		},
		Security: []SecurityRequirement{{securityScheme: {}}},
		Paths:    map[string]PathItem{},
		Components: Components{
			Responses: map[string]*Response{},
			SecuritySchemes: map[string]SecurityScheme{securityScheme: {
				Type: "apiKey", In: "header", Name: "Authorization",
				Description: "An access token, as is or after \"Bearer \".",
			}},
		},
	}
	tags := map[string]bool{}
	for _, op := range ops {
		tags[op.Group] = true
		item := doc.Paths[op.Path]
		if item == nil {
			item = PathItem{}
			doc.Paths[op.Path] = item
		}
		item[methodKey(op.Method)] = operation(g, op, answers, doc.Components.Responses, errBody)
	}
	for name := range tags {
		doc.Tags = append(doc.Tags, Tag{Name: name})
	}
	sort.Slice(doc.Tags, func(i, j int) bool { return doc.Tags[i].Name < doc.Tags[j].Name })
	doc.Components.Schemas = g.finish()
	doc.index()
	return doc
}

// operation describes op; the shared error answers it names are added to shared.
func operation(g *schemas, op catalog.Operation, answers map[string]api.Answer, shared map[string]*Response, errBody *Schema) *Operation {
	o := &Operation{OperationID: op.ID, Summary: summary(op.ID), Tags: []string{op.Group},
		Responses: map[string]*Response{}}
	for _, m := range pathParam.FindAllStringSubmatch(op.Path, -1) {
		o.Parameters = append(o.Parameters, Parameter{Name: m[1], In: "path", Required: true, Schema: &Schema{Type: "string"}})
	}
	if op.Beta {
		o.Description = "A beta operation: send the header " + api.BetaHeader + ": beta (or " + api.LDVersionHeader + ": beta)."
		o.Parameters = append(o.Parameters, Parameter{Name: api.BetaHeader, In: "header", Required: true,
			Description: "beta; " + api.LDVersionHeader + ": beta is taken alike.", Schema: &Schema{Type: "string", Enum: []string{"beta"}}})
	}
	if op.Public {
		o.Security = &[]SecurityRequirement{}
	}
	a, described := answers[op.ID]
	if described {
		r := &Response{Description: http.StatusText(a.Status)}
		if a.Rep != nil {
			r.Content = map[string]MediaType{"application/json": {Schema: g.of(reflect.TypeOf(a.Rep), false)}}
		}
		o.Responses[strconv.Itoa(a.Status)] = r
		if a.ETag {
			o.Responses["304"] = &Response{Description: "Not modified: the If-None-Match header names the current ETag."}
		}
	} else {
		o.Responses["2XX"] = &Response{Description: "Success (its body is not described yet)."}
		if op.Method == http.MethodGet {
			o.Responses["304"] = &Response{Description: "Not modified, if the answer carries an ETag."}
		}
	}
	for _, status := range errorStatuses(op) {
		e := errorResponse(status)
		switch {
		case a.Error != nil:
			o.Responses[strconv.Itoa(status)] = &Response{Description: e.desc,
				Content: map[string]MediaType{"application/json": {Schema: g.of(reflect.TypeOf(a.Error), false)}}}
		case !described:
			// Not described yet: the status only, whatever the body.
			name := e.name + "Undescribed"
			shared[name] = &Response{Description: e.desc}
			o.Responses[strconv.Itoa(status)] = &Response{Ref: "#/components/responses/" + name}
		default:
			shared[e.name] = &Response{Description: e.desc, Content: map[string]MediaType{"application/json": {Schema: errBody}}}
			o.Responses[strconv.Itoa(status)] = &Response{Ref: "#/components/responses/" + e.name}
		}
	}
	return o
}

// methodKey is the path item's key of an operation of method: its name in
// lower case, or for a method OpenAPI has no field for (the SDKs' REPORT),
// an extension, "x-report", so the document stays valid.
func methodKey(method string) string {
	m := strings.ToLower(method)
	switch m {
	case "get", "put", "post", "delete", "options", "head", "patch", "trace":
		return m
	}
	return "x-" + m
}

// summary reads an operation id as a sentence: getSDKLatestAll is
// "Get SDK latest all".
func summary(id string) string {
	var words []string
	rs := []rune(id)
	start := 0
	for i := 1; i <= len(rs); i++ {
		boundary := i == len(rs) ||
			(unicode.IsUpper(rs[i]) && (unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]))))
		if !boundary {
			continue
		}
		w := string(rs[start:i])
		if len(words) > 0 && !isAcronym(w) {
			w = strings.ToLower(w)
		}
		words = append(words, w)
		start = i
	}
	s := strings.Join(words, " ")
	return strings.ToUpper(s[:1]) + s[1:]
}

func isAcronym(w string) bool { return len(w) > 1 && strings.ToUpper(w) == w }
