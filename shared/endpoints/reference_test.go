package endpoints_test

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"
)

// The reference API (LaunchDarkly's REST API v2, OpenAPI 3) as far as the
// answer checks need it: each operation's success responses and the
// component schemas they name. The 3 MB document is parsed once per
// package run, by the first test that asks for it.

// referencePath is the reference document, beside the repository.
const referencePath = "../../../shared/reference/launchdarkly-openapi-v23.yaml"

// schema is the part of an OpenAPI schema object the checks read.
type schema struct {
	Ref                  string             `yaml:"$ref"`
	Type                 string             `yaml:"type"`
	Format               string             `yaml:"format"`
	Properties           map[string]*schema `yaml:"properties"`
	Required             []string           `yaml:"required"`
	Items                *schema            `yaml:"items"`
	AllOf                []*schema          `yaml:"allOf"`
	OneOf                []*schema          `yaml:"oneOf"`
	AnyOf                []*schema          `yaml:"anyOf"`
	AdditionalProperties *additional        `yaml:"additionalProperties"`
	Nullable             bool               `yaml:"nullable"`
}

// additional is additionalProperties: false, true or a schema.
type additional struct{ schema *schema }

func (a *additional) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		return nil // true or false: no schema for the values
	}
	a.schema = &schema{}
	return n.Decode(a.schema)
}

type mediaType struct {
	Schema *schema `yaml:"schema"`
}

type response struct {
	Content map[string]mediaType `yaml:"content"`
}

type operation struct {
	OperationID string               `yaml:"operationId"`
	Responses   map[string]*response `yaml:"responses"`
}

// reference is the parsed document: operations by id and schemas by name.
type reference struct {
	ops     map[string]*refOp
	schemas map[string]*schema
}

// refOp is one operation of the reference.
type refOp struct {
	ID, Method, Path string
	// Success are the 2xx responses by status code; a nil schema is an
	// answer without a JSON body.
	Success map[string]*schema
}

var (
	refOnce   sync.Once
	refLoaded *reference
	refErr    error
)

// loadReference returns the parsed reference, parsing it on first use.
func loadReference(tb testing.TB) *reference {
	tb.Helper()
	refOnce.Do(func() { refLoaded, refErr = parseReference(referencePath) })
	if refErr != nil {
		tb.Fatalf("reference API: %v", refErr)
	}
	return refLoaded
}

func parseReference(path string) (*reference, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Paths      map[string]map[string]yaml.Node `yaml:"paths"`
		Components struct {
			Schemas map[string]*schema `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	ref := &reference{ops: map[string]*refOp{}, schemas: doc.Components.Schemas}
	for p, item := range doc.Paths {
		for method, node := range item {
			switch method {
			case "get", "put", "post", "patch", "delete":
			default:
				continue // parameters, summary, ...
			}
			var op operation
			if err := node.Decode(&op); err != nil {
				return nil, fmt.Errorf("%s %s: %w", method, p, err)
			}
			ro := &refOp{ID: op.OperationID, Method: strings.ToUpper(method), Path: p, Success: map[string]*schema{}}
			for code, r := range op.Responses {
				if !strings.HasPrefix(code, "2") {
					continue
				}
				var s *schema
				if r != nil {
					if mt, ok := r.Content["application/json"]; ok {
						s = mt.Schema
					}
				}
				ro.Success[code] = s
			}
			ref.ops[ro.ID] = ro
		}
	}
	return ref, nil
}

// resolve follows $ref until a schema with content.
func (r *reference) resolve(s *schema) (*schema, string) {
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
func (r *reference) flatten(s *schema) flat {
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

func TestReferenceLoads(t *testing.T) {
	ref := loadReference(t)
	op, ok := ref.ops["getFeatureFlag"]
	if !ok {
		t.Fatalf("getFeatureFlag is not in the reference")
	}
	f := ref.flatten(op.Success["200"])
	if f.name != "FeatureFlag" || !refContains(f.required, "customProperties") {
		t.Errorf("getFeatureFlag answers %s requiring %v", f.name, f.required)
	}
}

func refContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
