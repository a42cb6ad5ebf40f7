package ldcompat_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// A problem is one place where an answer does not fit the client's model.
type problem struct {
	// Field is the JSON path in the answer: "creationDate",
	// "items[].creationDate", "environments.*.sel"; "" is the whole answer.
	Field string
	// Kind is "type" (the value has a JSON type the model's field cannot
	// take: a decode error of the client) or "missing" (a field the model
	// requires is absent or null, so the client silently keeps a zero value).
	Kind   string
	Detail string
}

func (p problem) String() string {
	f := p.Field
	if f == "" {
		f = "(answer)"
	}
	return f + ": " + p.Detail
}

// checkModel walks a JSON answer against the Go type the client decodes
// it into. encoding/json reports only the first type error and fills
// required fields it never saw with zero values; this names every
// mismatch and every required field that is missing. A field is required
// when the generated model makes it a value (not a pointer) without
// omitempty, which is how openapi-generator spells the spec's "required".
func checkModel(t reflect.Type, body []byte) ([]problem, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("the answer is not JSON: %w", err)
	}
	c := checker{seen: map[string]bool{}}
	c.walk("", t, v)
	sort.Slice(c.out, func(i, j int) bool {
		if c.out[i].Field != c.out[j].Field {
			return c.out[i].Field < c.out[j].Field
		}
		return c.out[i].Kind < c.out[j].Kind
	})
	return c.out, nil
}

type checker struct {
	out  []problem
	seen map[string]bool // kind + field: an array reports each path once
}

func (c *checker) add(field, kind, detail string) {
	if c.seen[kind+" "+field] {
		return
	}
	c.seen[kind+" "+field] = true
	c.out = append(c.out, problem{Field: field, Kind: kind, Detail: detail})
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func (c *checker) walk(path string, t reflect.Type, v any) {
	if t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(unmarshalerType) {
		// time.Time and the like: let the type judge its own JSON.
		raw, _ := json.Marshal(v)
		if err := json.Unmarshal(raw, reflect.New(t).Interface()); err != nil {
			c.add(path, "type", fmt.Sprintf("%s does not decode into %s: %v", jsonKind(v), t, err))
		}
		return
	}
	if v == nil { // null decodes into anything (as the zero value); required fields are checked by the caller
		return
	}
	mismatch := func() {
		c.add(path, "type", fmt.Sprintf("JSON %s where the model has %s", jsonKind(v), t))
	}
	switch t.Kind() {
	case reflect.Pointer:
		c.walk(path, t.Elem(), v)
	case reflect.Interface:
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			mismatch()
			return
		}
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			// An interface{} field takes any JSON value, null too, but must be there.
			required := !strings.Contains(opts, "omitempty") && f.Type.Kind() != reflect.Pointer
			fv, present := obj[name]
			switch {
			case required && !present:
				c.add(join(path, name), "missing", "absent, so a zero "+f.Type.String())
			case required && fv == nil && f.Type.Kind() != reflect.Interface:
				c.add(join(path, name), "missing", "null, so a zero "+f.Type.String())
			case present:
				c.walk(join(path, name), f.Type, fv)
			}
		}
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			mismatch()
			return
		}
		for _, e := range arr {
			c.walk(path+"[]", t.Elem(), e)
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			mismatch()
			return
		}
		for _, e := range obj {
			c.walk(join(path, "*"), t.Elem(), e)
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			mismatch()
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			mismatch()
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			mismatch()
			return
		}
		if i, err := n.Int64(); err != nil || reflect.New(t).Elem().OverflowInt(i) {
			c.add(path, "type", fmt.Sprintf("number %s does not fit %s", n, t))
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := v.(json.Number)
		if !ok {
			mismatch()
			return
		}
		var u uint64
		if _, err := fmt.Sscan(n.String(), &u); err != nil || reflect.New(t).Elem().OverflowUint(u) {
			c.add(path, "type", fmt.Sprintf("number %s does not fit %s", n, t))
		}
	case reflect.Float32, reflect.Float64:
		if _, ok := v.(json.Number); !ok {
			mismatch()
		}
	default:
		c.add(path, "type", "the model has "+t.String()+", which this check does not know")
	}
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		return "number " + x.String()
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// TestCheckModel holds the checker to what encoding/json does.
func TestCheckModel(t *testing.T) {
	type inner struct {
		When int64  `json:"when"`
		Note string `json:"note,omitempty"`
	}
	type model struct {
		ID    string           `json:"_id"`
		Count int32            `json:"count"`
		Opt   *int64           `json:"opt,omitempty"`
		Items []inner          `json:"items"`
		Envs  map[string]inner `json:"envs,omitempty"`
		Any   interface{}      `json:"any,omitempty"`
		Value interface{}      `json:"value"`
	}
	body := `{"_id": 7, "count": 1712000000000, "opt": "1", "items": [{"when": "1"}, {"when": 2, "note": 3}, {}],
		"envs": {"a": {"when": null}}, "any": {"x": 1}}`
	got, err := checkModel(reflect.TypeFor[model](), []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, p := range got {
		lines = append(lines, p.Kind+" "+p.Field)
	}
	want := []string{"type _id", "type count", "missing envs.*.when", "type items[].note", "missing items[].when", "type items[].when", "type opt", "missing value"}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("problems %q, want %q", lines, want)
	}
	// Every type problem is one encoding/json reports too.
	if err := json.Unmarshal([]byte(`{"count": 1712000000000}`), new(model)); err == nil {
		t.Error("encoding/json takes an int32 overflow")
	}
	if got, _ := checkModel(reflect.TypeFor[model](), []byte(`{"_id": "a", "count": 1, "items": [], "value": null}`)); len(got) != 0 {
		t.Errorf("a fitting answer has problems: %v", got)
	}
}
