package patch_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/flagplane/flagplane/shared/patch"
)

func TestWithoutNoOps(t *testing.T) {
	doc := []byte(`{"name":"a","tags":["x","y"],"settings":{"kind":"k","n":1},"list":[{"v":1},{"v":2}]}`)
	cases := []struct {
		name string
		body string
		kept []string // op path of each operation kept, in order
	}{
		{"a replace with the value already there is dropped", `[{"op":"replace","path":"/settings/kind","value":"k"},{"op":"replace","path":"/name","value":"b"}]`, []string{"/name"}},
		{"values are compared as JSON, not as text", `[{"op":"replace","path":"/settings","value":{"n":1.0,"kind":"k"}}]`, nil},
		{"a replace that changes the value is kept", `[{"op":"replace","path":"/settings/kind","value":"other"}]`, []string{"/settings/kind"}},
		{"a replace of a missing member is kept, for Apply to refuse", `[{"op":"replace","path":"/missing","value":null}]`, []string{"/missing"}},
		{"a replace after a kept replace of its parent is kept", `[{"op":"replace","path":"/settings","value":{}},{"op":"replace","path":"/settings/kind","value":"k"}]`, []string{"/settings", "/settings/kind"}},
		{"a replace after a kept replace of its child is kept", `[{"op":"replace","path":"/settings/n","value":2},{"op":"replace","path":"/settings","value":{"kind":"k","n":1}}]`, []string{"/settings/n", "/settings"}},
		{"a replace after an add, which may shift indexes, is kept", `[{"op":"add","path":"/list/0","value":{"v":0}},{"op":"replace","path":"/list/1/v","value":2}]`, []string{"/list/0", "/list/1/v"}},
		{"a replace of a sibling after a kept replace is still judged", `[{"op":"replace","path":"/list/0/v","value":5},{"op":"replace","path":"/list/1/v","value":2}]`, []string{"/list/0/v"}},
		{"test operations are kept", `[{"op":"test","path":"/name","value":"a"},{"op":"replace","path":"/name","value":"a"}]`, []string{"/name"}},
		{"an array index must be canonical to match", `[{"op":"replace","path":"/tags/01","value":"y"}]`, []string{"/tags/01"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := patch.Parse([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			got := p.WithoutNoOps(doc)
			var paths []string
			for _, op := range got.Ops {
				paths = append(paths, op.Path)
			}
			if !slices.Equal(paths, tc.kept) {
				t.Errorf("kept %q, want %q", paths, tc.kept)
			}
			if string(got.Raw) != string(p.Raw) {
				t.Errorf("Raw %s, want what was sent %s", got.Raw, p.Raw)
			}
		})
	}
	t.Run("the kept operations apply as the whole patch does", func(t *testing.T) {
		p, _ := patch.Parse([]byte(`[{"op":"replace","path":"/name","value":"a"},{"op":"replace","path":"/settings/n","value":3},{"op":"add","path":"/tags/-","value":"z"}]`))
		whole, err := p.Apply(doc)
		if err != nil {
			t.Fatal(err)
		}
		part, err := p.WithoutNoOps(doc).Apply(doc)
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		_ = json.Unmarshal(whole, &a)
		_ = json.Unmarshal(part, &b)
		if string(mustJSON(t, a)) != string(mustJSON(t, b)) {
			t.Errorf("whole %s, without no-ops %s", whole, part)
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
