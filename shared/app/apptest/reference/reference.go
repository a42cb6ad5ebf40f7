// Package reference holds the part of LaunchDarkly's REST API v2 OpenAPI
// document that answer checks read (launchdarkly.json: each operation's
// success responses and the schemas they reach; source and licence in
// NOTICE), and checks an answer against it: every field the reference
// requires is present at every depth (resolving $ref and allOf), and each
// field has the reference's JSON type, or the one the caller overrides.
// LaunchDarkly's generated clients decode a missing required field as a
// zero value or refuse the answer; this finds them.
package reference

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
)

//go:embed launchdarkly.json
var document []byte

// schema is the part of an OpenAPI schema object the checks read.
type schema struct {
	Ref                  string             `json:"$ref"`
	Type                 string             `json:"type"`
	Format               string             `json:"format"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	Items                *schema            `json:"items"`
	AllOf                []*schema          `json:"allOf"`
	OneOf                []*schema          `json:"oneOf"`
	AnyOf                []*schema          `json:"anyOf"`
	AdditionalProperties *additional        `json:"additionalProperties"`
	Nullable             bool               `json:"nullable"`
}

// additional is additionalProperties: false, true or a schema.
type additional struct{ schema *schema }

func (a *additional) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] != '{' {
		return nil // true or false: no schema for the values
	}
	a.schema = &schema{}
	return json.Unmarshal(b, a.schema)
}

// Reference is the parsed document: operations by id and schemas by name.
type Reference struct {
	ops     map[string]*Op
	schemas map[string]*schema
}

// resolve follows $ref until a schema with content.
func (r *Reference) resolve(s *schema) (*schema, string) {
	name := ""
	for s != nil && s.Ref != "" {
		name = strings.TrimPrefix(s.Ref, "#/components/schemas/")
		s = r.schemas[name]
	}
	return s, name
}

// flat is a schema with allOf merged in: its properties, the required
// ones, its type and its item and value schemas.
type flat struct {
	name       string
	typ        string
	props      map[string]*schema
	required   []string
	items      *schema
	additional *schema
	alts       []*schema // oneOf / anyOf: the value must match one
}

// flatten merges s with its allOf parts (resolving references).
func (r *Reference) flatten(s *schema) flat {
	s, name := r.resolve(s)
	out := flat{name: name, props: map[string]*schema{}}
	var walk func(s *schema)
	walk = func(s *schema) {
		s, n := r.resolve(s)
		if s == nil {
			return
		}
		if out.name == "" {
			out.name = n
		}
		if s.Type != "" {
			out.typ = s.Type
		}
		for k, v := range s.Properties {
			out.props[k] = v
		}
		out.required = append(out.required, s.Required...)
		if s.Items != nil {
			out.items = s.Items
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.schema != nil {
			out.additional = s.AdditionalProperties.schema
		}
		out.alts = append(out.alts, s.OneOf...)
		out.alts = append(out.alts, s.AnyOf...)
		for _, part := range s.AllOf {
			walk(part)
		}
	}
	walk(s)
	if out.typ == "" && len(out.props) > 0 {
		out.typ = "object"
	}
	sort.Strings(out.required)
	return out
}

// Op is one operation of the reference.
type Op struct {
	ID, Method, Path string
	// Success are the 2xx responses by status code; a nil schema is an
	// answer without a JSON body.
	Success map[string]*schema
}

var (
	once   sync.Once
	loaded *Reference
	err    error
)

// Load returns the parsed reference, parsed once.
func Load() (*Reference, error) {
	once.Do(func() { loaded, err = parse(document) })
	return loaded, err
}

func parse(raw []byte) (*Reference, error) {
	var doc struct {
		Operations map[string]struct {
			Method  string             `json:"method"`
			Path    string             `json:"path"`
			Success map[string]*schema `json:"success"`
		} `json:"operations"`
		Schemas map[string]*schema `json:"schemas"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("parse the reference: %w", err)
	}
	r := &Reference{ops: map[string]*Op{}, schemas: doc.Schemas}
	for id, o := range doc.Operations {
		r.ops[id] = &Op{ID: id, Method: o.Method, Path: o.Path, Success: o.Success}
	}
	return r, nil
}

// Op returns the reference's operation id, if it has it.
func (r *Reference) Op(id string) (*Op, bool) {
	op, ok := r.ops[id]
	return op, ok
}

// Check checks one answer of op: a success status the reference lists,
// and a body its schema accepts, with types overriding the reference's
// JSON type of a field, by the reference schema that holds it and the
// field's name. It returns each problem, naming its place in the answer.
func (r *Reference) Check(op *Op, status int, body []byte, types map[string]map[string]string) []string {
	if status < 200 || status > 299 {
		return []string{fmt.Sprintf("status %d: %s", status, body)}
	}
	var out []string
	s, ok := op.Success[fmt.Sprint(status)]
	if !ok {
		out = append(out, fmt.Sprintf("status %d; the reference answers %v", status, sortedKeys(op.Success)))
		for _, other := range op.Success {
			s = other
		}
	}
	if s == nil {
		// No JSON schema: a 204 has no body; another status's body is
		// one the reference does not describe (the OpenAPI document).
		if status == 204 && len(body) != 0 {
			out = append(out, fmt.Sprintf("the reference answers %d without a body; flagplane sends %s", status, body))
		}
		return out
	}
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		return append(out, fmt.Sprintf("the answer is not JSON: %v: %s", err, body))
	}
	return append(out, r.check("", doc, s, types)...)
}

// Required returns the required fields of op's answer for status, with the
// name of its schema.
func (r *Reference) Required(op *Op, status string) (string, []string) {
	f := r.flatten(op.Success[status])
	return f.name, f.required
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// check walks an answer against a reference schema and returns what is
// missing or of another type, each naming its place in the answer. types
// overrides the reference's type of a field (specTypes: the spec's).
func (r *Reference) check(at string, v any, s *schema, types map[string]map[string]string) []string {
	f := r.flatten(s)
	if len(f.alts) > 0 && len(f.props) == 0 {
		var first []string
		for i, alt := range f.alts {
			p := r.check(at, v, alt, types)
			if len(p) == 0 {
				return nil
			}
			if i == 0 {
				first = p
			}
		}
		return first
	}
	if v == nil {
		return nil // null: the client keeps the zero value
	}
	if f.typ != "" {
		if got := JSONType(v); !refTypeFits(got, f.typ) {
			return []string{fmt.Sprintf("%s is a JSON %s; the reference (%s) says %s", refPlace(at), got, refName(f.name), f.typ)}
		}
	}
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for _, name := range f.required {
			v, ok := x[name]
			switch {
			case !ok:
				out = append(out, fmt.Sprintf("%s lacks %q, which the reference (%s) requires", refPlace(at), name, refName(f.name)))
			case v == nil && !r.nullable(f.props[name]):
				out = append(out, fmt.Sprintf("%s has %q null, which the reference (%s) requires", refPlace(at), name, refName(f.name)))
			}
		}
		names := sortedKeys(x)
		for _, name := range names {
			child := refJoin(at, name)
			if want, ok := types[f.name][name]; ok {
				if got := JSONType(x[name]); x[name] != nil && got != want {
					out = append(out, fmt.Sprintf("%s is a JSON %s; it should be %s (the spec's part 2 type, or for a dated LD-API-Version LaunchDarkly's)", child, got, want))
				}
				continue
			}
			if ps, ok := f.props[name]; ok {
				out = append(out, r.check(child, x[name], ps, types)...)
			} else if f.additional != nil {
				out = append(out, r.check(child, x[name], f.additional, types)...)
			}
		}
	case []any:
		if f.items != nil {
			for i, item := range x {
				out = append(out, r.check(fmt.Sprintf("%s[%d]", at, i), item, f.items, types)...)
			}
		}
	}
	return out
}

// nullable reports whether a property's schema allows null.
func (r *Reference) nullable(s *schema) bool {
	s, _ = r.resolve(s)
	return s == nil || s.Nullable
}

func refName(name string) string {
	if name == "" {
		return "inline schema"
	}
	return name
}

func refPlace(at string) string {
	if at == "" {
		return "the answer"
	}
	return at
}

func refJoin(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}

// JSONType names the JSON type of a decoded value; whole numbers are integer.
func JSONType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// refTypeFits reports whether a JSON value of type got satisfies want.
func refTypeFits(got, want string) bool {
	return got == want || (want == "number" && got == "integer") || slices.Contains(strings.Fields(want), got)
}
