// Command extract writes the part of LaunchDarkly's OpenAPI document the
// answer checks read (each operation's success responses and the schemas
// they reach) as the reference package's embedded JSON. Run it by hand when
// the reference changes:
//
//	go run ./shared/app/apptest/reference/extract launchdarkly-openapi.yaml > shared/app/apptest/reference/launchdarkly.json
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: extract <LaunchDarkly OpenAPI YAML>")
		os.Exit(2)
	}
	out, err := extract(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "extract:", err)
		os.Exit(1)
	}
	os.Stdout.Write(out)
}

// checked are the schema keywords the answer checks read; descriptions
// and examples are left out.
var checked = map[string]bool{"$ref": true, "type": true, "format": true, "properties": true, "required": true, "items": true,
	"allOf": true, "oneOf": true, "anyOf": true, "additionalProperties": true, "nullable": true}

// keep is schema s with only the checked keywords, at every depth.
func keep(s any) any {
	m, ok := s.(map[string]any)
	if !ok {
		return s
	}
	out := map[string]any{}
	for k, v := range m {
		if !checked[k] {
			continue
		}
		switch k {
		case "properties":
			props := map[string]any{}
			for name, p := range v.(map[string]any) {
				props[name] = keep(p)
			}
			out[k] = props
		case "allOf", "oneOf", "anyOf":
			var list []any
			for _, p := range v.([]any) {
				list = append(list, keep(p))
			}
			out[k] = list
		case "items", "additionalProperties":
			out[k] = keep(v)
		default:
			out[k] = v
		}
	}
	return out
}

type operation struct {
	Method  string         `json:"method"`
	Path    string         `json:"path"`
	Success map[string]any `json:"success"` // status → schema (null: no JSON body)
}

func extract(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Info       map[string]any            `yaml:"info"`
		Paths      map[string]map[string]any `yaml:"paths"`
		Components struct {
			Schemas map[string]any `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	ops := map[string]operation{}
	needed := map[string]bool{}
	var reach func(v any)
	reach = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				name := strings.TrimPrefix(ref, "#/components/schemas/")
				if !needed[name] {
					needed[name] = true
					reach(doc.Components.Schemas[name])
				}
			}
			for _, c := range x {
				reach(c)
			}
		case []any:
			for _, c := range x {
				reach(c)
			}
		}
	}
	for p, item := range doc.Paths {
		for method, node := range item {
			switch method {
			case "get", "put", "post", "patch", "delete":
			default:
				continue
			}
			o, _ := node.(map[string]any)
			id, _ := o["operationId"].(string)
			responses, _ := o["responses"].(map[string]any)
			op := operation{Method: strings.ToUpper(method), Path: p, Success: map[string]any{}}
			for code, r := range responses {
				if !strings.HasPrefix(code, "2") {
					continue
				}
				var schema any
				if rm, ok := r.(map[string]any); ok {
					if content, ok := rm["content"].(map[string]any); ok {
						if mt, ok := content["application/json"].(map[string]any); ok {
							schema = mt["schema"]
						}
					}
				}
				reach(schema)
				op.Success[code] = schema
			}
			ops[id] = op
		}
	}
	schemas := map[string]any{}
	for name := range needed {
		schemas[name] = keep(doc.Components.Schemas[name])
	}
	for id, op := range ops {
		for code, s := range op.Success {
			op.Success[code] = keep(s)
		}
		ops[id] = op
	}
	return json.MarshalIndent(map[string]any{
		"source":     "LaunchDarkly REST API v2 OpenAPI document (github.com/launchdarkly/ld-openapi), reduced to operations' success responses and the schemas they reach",
		"license":    doc.Info["license"],
		"operations": ops,
		"schemas":    schemas,
	}, "", " ")
}
