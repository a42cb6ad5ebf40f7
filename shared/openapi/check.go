package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Check reports whether an answer of operation opID with status and body
// is one the document declares: the status is the op's (exactly or by its
// class, 2XX), and when a JSON body is declared, body is JSON whose
// required members are present and whose values have the declared types,
// at every depth. The error names the operation, the status and the
// member. dated checks an answer to a request naming a dated
// LD-API-Version, whose unix-millis strings are integers.
func (d *Document) Check(opID string, status int, body []byte, dated bool) error {
	op := d.operation(opID)
	if op == nil {
		return fmt.Errorf("%s: the document has no such operation", opID)
	}
	res := op.Responses[strconv.Itoa(status)]
	if res == nil {
		res = op.Responses[strconv.Itoa(status/100)+"XX"]
	}
	if res == nil {
		return fmt.Errorf("%s answered %d, a status the document does not declare for it (%s)", opID, status, declared(op))
	}
	if res.Ref != "" {
		res = d.Components.Responses[strings.TrimPrefix(res.Ref, "#/components/responses/")]
		if res == nil {
			return fmt.Errorf("%s %d: the document's $ref %s names no response", opID, status, op.Responses[strconv.Itoa(status)].Ref)
		}
	}
	mt, ok := res.Content["application/json"]
	if !ok || mt.Schema == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // integers are told from fractions by their text
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("%s answered %d with a body that is not JSON (%v), where the document declares one", opID, status, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%s answered %d with more than one JSON value", opID, status)
	}
	c := checker{doc: d, dated: dated}
	if err := c.value(mt.Schema, v, "$"); err != nil {
		return fmt.Errorf("%s answered %d: %w", opID, status, err)
	}
	return nil
}

// index finds operations by id for Check; Build and Parse call it, so
// checks in parallel only read.
func (d *Document) index() {
	d.byID = map[string]*Operation{}
	for _, item := range d.Paths {
		for _, op := range item {
			d.byID[op.OperationID] = op
		}
	}
}

func (d *Document) operation(id string) *Operation { return d.byID[id] }

func declared(op *Operation) string {
	var s []string
	for k := range op.Responses {
		s = append(s, k)
	}
	sort.Strings(s)
	return "declared: " + strings.Join(s, ", ")
}

type checker struct {
	doc   *Document
	dated bool
}

// value checks v, decoded with UseNumber, against s; at names the member.
func (c checker) value(s *Schema, v any, at string) error {
	if s.Ref != "" {
		name := strings.TrimPrefix(s.Ref, "#/components/schemas/")
		target := c.doc.Components.Schemas[name]
		if target == nil {
			return fmt.Errorf("%s: the document's $ref %s names no schema", at, s.Ref)
		}
		return c.value(target, v, at)
	}
	if v == nil {
		if s.Nullable || (s.Type == "" && len(s.AllOf) == 0) {
			return nil
		}
		return fmt.Errorf("%s is null, where the document declares %s", at, describe(s))
	}
	for _, part := range s.AllOf {
		if err := c.value(part, v, at); err != nil {
			return err
		}
	}
	switch s.Type {
	case "":
		return nil
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return mismatch(at, s, v)
		}
		for _, name := range s.Required {
			if _, ok := obj[name]; !ok {
				return fmt.Errorf("%s lacks the required member %q", at, name)
			}
		}
		names := make([]string, 0, len(obj))
		for name := range obj {
			names = append(names, name)
		}
		sort.Strings(names) // the first error is the same every run
		for _, name := range names {
			ms := s.Properties[name]
			if ms == nil {
				ms = s.AdditionalProperties
			}
			if ms == nil {
				continue
			}
			if err := c.value(ms, obj[name], at+"."+name); err != nil {
				return err
			}
		}
	case "array":
		list, ok := v.([]any)
		if !ok {
			return mismatch(at, s, v)
		}
		if s.Items != nil {
			for i, item := range list {
				if err := c.value(s.Items, item, at+"["+strconv.Itoa(i)+"]"); err != nil {
					return err
				}
			}
		}
	case "string":
		if n, ok := v.(json.Number); ok && c.dated && s.Format == FormatUnixMillis {
			if _, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
				return nil
			}
		}
		str, ok := v.(string)
		if !ok {
			return mismatch(at, s, v)
		}
		switch s.Format {
		case "date-time":
			if _, err := time.Parse(time.RFC3339Nano, str); err != nil {
				return fmt.Errorf("%s is %q, not a date-time (RFC 3339)", at, str)
			}
		case FormatUnixMillis:
			if _, err := strconv.ParseInt(str, 10, 64); err != nil {
				return fmt.Errorf("%s is %q, not a string of Unix milliseconds", at, str)
			}
		}
		if len(s.Enum) > 0 && !slices.Contains(s.Enum, str) {
			return fmt.Errorf("%s is %q, not one of %q", at, str, s.Enum)
		}
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return mismatch(at, s, v)
		}
		if _, err := strconv.ParseInt(n.String(), 10, 64); err != nil {
			if _, err := strconv.ParseUint(n.String(), 10, 64); err != nil {
				return fmt.Errorf("%s is %s, not an integer", at, n)
			}
		}
	case "number":
		if _, ok := v.(json.Number); !ok {
			return mismatch(at, s, v)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return mismatch(at, s, v)
		}
	default:
		return fmt.Errorf("%s: the document declares the unknown type %q", at, s.Type)
	}
	return nil
}

func mismatch(at string, s *Schema, v any) error {
	return fmt.Errorf("%s is %s, where the document declares %s", at, kindOf(v), describe(s))
}

func describe(s *Schema) string {
	d := s.Type
	if d == "" {
		d = "a schema"
	}
	if s.Format != "" {
		d += " (" + s.Format + ")"
	}
	return d
}

// kindOf names a decoded JSON value's type.
func kindOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return fmt.Sprintf("the string %.40q", x)
	case json.Number:
		return "the number " + x.String()
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}
