package jsondoc_test

import (
	"encoding/json"
	"testing"

	"github.com/flagplane/flagplane/shared/jsondoc"
)

type inner struct {
	At jsondoc.MillisString `json:"at"`
}

type embedded struct {
	Created jsondoc.MillisString `json:"created"`
}

type ownEncoding struct{ At jsondoc.MillisString }

func (ownEncoding) MarshalJSON() ([]byte, error) { return []byte(`{"at":"5"}`), nil }

type answer struct {
	embedded
	At       jsondoc.MillisString            `json:"at"`
	Skipped  jsondoc.MillisString            `json:"skipped,omitempty"`
	Ptr      *inner                          `json:"ptr"`
	Nil      *inner                          `json:"nil"`
	List     []inner                         `json:"list"`
	ByKey    map[string]jsondoc.MillisString `json:"byKey"`
	Any      any                             `json:"any"`
	Digits   string                          `json:"digits"`
	Tagged   int64                           `json:"tagged,string"`
	Raw      json.RawMessage                 `json:"raw"`
	Own      ownEncoding                     `json:"own"`
	Untagged jsondoc.MillisString
}

func TestStringMillisAsIntegers(t *testing.T) {
	v := answer{
		embedded: embedded{Created: 1}, At: 2, Ptr: &inner{At: 3}, List: []inner{{At: 4}, {At: 6}},
		ByKey: map[string]jsondoc.MillisString{"k": 7}, Any: inner{At: 8}, Digits: "9", Tagged: 10,
		Raw: json.RawMessage(`{"at":"11"}`), Own: ownEncoding{At: 12}, Untagged: 13,
	}
	body, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsondoc.StringMillisAsIntegers(v, body)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	get := func(path ...any) any {
		var cur any = got
		for _, p := range path {
			switch k := p.(type) {
			case string:
				cur = cur.(map[string]any)[k]
			case int:
				cur = cur.([]any)[k]
			}
		}
		return cur
	}
	cases := []struct {
		name string
		path []any
		want any
	}{
		{"a field becomes an integer", []any{"at"}, 2.0},
		{"a field of an embedded struct becomes an integer", []any{"created"}, 1.0},
		{"a field behind a pointer becomes an integer", []any{"ptr", "at"}, 3.0},
		{"fields in a list become integers", []any{"list", 1, "at"}, 6.0},
		{"map values become integers", []any{"byKey", "k"}, 7.0},
		{"a field inside an interface becomes an integer", []any{"any", "at"}, 8.0},
		{"a field without a tag becomes an integer", []any{"Untagged"}, 13.0},
		{"a string of digits of another type stays a string", []any{"digits"}, "9"},
		{"a ,string number stays a string", []any{"tagged"}, "10"},
		{"raw JSON stays as it is", []any{"raw", "at"}, "11"},
		{"a type that writes itself stays as it wrote itself", []any{"own", "at"}, "5"},
		{"a nil pointer stays null", []any{"nil"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if g := get(tc.path...); g != tc.want {
				t.Errorf("%v = %#v, want %#v in %s", tc.path, g, tc.want, out)
			}
		})
	}
	t.Run("an omitted zero stays omitted", func(t *testing.T) {
		if _, ok := got["skipped"]; ok {
			t.Errorf("skipped is present: %s", out)
		}
	})
	t.Run("without a MillisString the answer is returned untouched", func(t *testing.T) {
		plain := []byte(`{"b":"1","a":2}`)
		out, err := jsondoc.StringMillisAsIntegers(map[string]string{"b": "1"}, plain)
		if err != nil || string(out) != string(plain) {
			t.Errorf("%s, %v", out, err)
		}
	})
	t.Run("it reads both forms back", func(t *testing.T) {
		for _, in := range []string{`"14"`, `14`} {
			var m jsondoc.MillisString
			if err := json.Unmarshal([]byte(in), &m); err != nil || m != 14 {
				t.Errorf("%s: %d, %v", in, m, err)
			}
		}
	})
}
