package infra

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

// Synthesis goes through a node process (jsii) and takes seconds, so each
// template is synthesized once per test binary and shared. Tests only read
// the parsed JSON.

// testRoot holds the fake bootstraps and the apps' output directories.
var testRoot string

func TestMain(m *testing.M) {
	code := func() int {
		dir, err := os.MkdirTemp("", "flagplane-infra-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "infra tests:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		testRoot = dir
		// Instead of jsii.Close (see IsolateJSII for why).
		cleanup, err := IsolateJSII()
		if err != nil {
			fmt.Fprintln(os.Stderr, "infra tests:", err)
			return 1
		}
		defer cleanup()
		return m.Run()
	}()
	os.Exit(code)
}

// fakeAssets writes an empty bootstrap for every named function, which is
// all Code.FromAsset needs: the tests never run the binaries.
func fakeAssets(tb testing.TB, names []string) string {
	tb.Helper()
	dir, err := os.MkdirTemp(testRoot, "assets-")
	if err != nil {
		tb.Fatal(err)
	}
	for _, n := range names {
		if err := os.MkdirAll(filepath.Join(dir, n), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n, "bootstrap"), nil, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

func specNames(ss []Spec) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name
	}
	return out
}

// synth builds the stack with props (AssetDir filled in with fake
// bootstraps for its functions) and returns the parsed template.
func synth(tb testing.TB, props FlagplaneStackProps) *template {
	tb.Helper()
	ws := props.workers
	if ws == nil {
		ws = workers
	}
	props.AssetDir = fakeAssets(tb, specNames(specs(ws)))
	out, err := os.MkdirTemp(testRoot, "cdk.out-")
	if err != nil {
		tb.Fatal(err)
	}
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(out)})
	stack := NewFlagplaneStack(app, "Test", &props)
	raw, err := json.Marshal(assertions.Template_FromStack(stack, nil).ToJSON())
	if err != nil {
		tb.Fatalf("encode template: %v", err)
	}
	var t template
	if err := json.Unmarshal(raw, &t); err != nil {
		tb.Fatalf("decode template: %v", err)
	}
	t.size = len(raw)
	t.outdir = out
	return &t
}

var (
	defaultOnce sync.Once
	defaultTpl  *template
)

// defaultTemplate is the stack as `cdk deploy` makes it with no options.
func defaultTemplate(tb testing.TB) *template {
	tb.Helper()
	defaultOnce.Do(func() { defaultTpl = synth(tb, FlagplaneStackProps{}) })
	if defaultTpl == nil {
		tb.Fatal("the default template failed to synthesize in an earlier test")
	}
	return defaultTpl
}

// template is the part of a CloudFormation template the tests read.
type template struct {
	Resources map[string]resource `json:"Resources"`
	Outputs   map[string]struct {
		Value any `json:"Value"`
	} `json:"Outputs"`
	size int
	// outdir is the cloud assembly the app wrote: manifests and assets.
	outdir string
}

type resource struct {
	Type                string         `json:"Type"`
	Properties          map[string]any `json:"Properties"`
	DeletionPolicy      string         `json:"DeletionPolicy"`
	UpdateReplacePolicy string         `json:"UpdateReplacePolicy"`
}

// ofType returns the logical ids of every resource of type t, sorted.
func (t *template) ofType(typ string) []string {
	var ids []string
	for id, r := range t.Resources {
		if r.Type == typ {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// only returns the one resource of type typ, failing if there are more or none.
func (t *template) only(tb testing.TB, typ string) (string, resource) {
	tb.Helper()
	ids := t.ofType(typ)
	if len(ids) != 1 {
		tb.Fatalf("want exactly one %s, found %d: %v", typ, len(ids), ids)
	}
	return ids[0], t.Resources[ids[0]]
}

// functions maps each function's name (its tag) to its logical id.
func (t *template) functions(tb testing.TB) map[string]string {
	tb.Helper()
	out := map[string]string{}
	for _, id := range t.ofType("AWS::Lambda::Function") {
		name := ""
		for _, tag := range list(t.Resources[id].Properties["Tags"]) {
			m, _ := tag.(map[string]any)
			if m["Key"] == FunctionTagKey {
				name, _ = m["Value"].(string)
			}
		}
		if name == "" {
			tb.Fatalf("function %s has no %s tag", id, FunctionTagKey)
		}
		if prev, dup := out[name]; dup {
			tb.Fatalf("function %q twice: %s and %s", name, prev, id)
		}
		out[name] = id
	}
	return out
}

// render flattens the intrinsic functions the stack uses into comparable
// text: {"Ref": X} is "X", {"Fn::GetAtt": [X, A]} is "X.A", and
// {"Fn::Join": ["", parts]} is the parts rendered and joined.
func render(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return fmt.Sprint(x)
	case bool:
		return fmt.Sprint(x)
	case map[string]any:
		if ref, ok := x["Ref"].(string); ok && len(x) == 1 {
			return ref
		}
		if ga := list(x["Fn::GetAtt"]); len(ga) == 2 && len(x) == 1 {
			return render(ga[0]) + "." + render(ga[1])
		}
		if j := list(x["Fn::Join"]); len(j) == 2 && len(x) == 1 {
			var parts []string
			for _, p := range list(j[1]) {
				parts = append(parts, render(p))
			}
			return strings.Join(parts, render(j[0]))
		}
	}
	raw, _ := json.Marshal(v)
	return string(raw)
}

// list reads a value CloudFormation allows as one item or a list.
func list(v any) []any {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		return x
	default:
		return []any{x}
	}
}

// strs renders every item of a one-or-many value.
func strs(v any) []string {
	var out []string
	for _, x := range list(v) {
		out = append(out, render(x))
	}
	return out
}

// prop walks nested properties: prop(r.Properties, "A", "B") is r.Properties.A.B.
func prop(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}

// jsonEqual compares two values by their JSON encodings.
func jsonEqual(a, b any) bool {
	ra, _ := json.Marshal(a)
	rb, _ := json.Marshal(b)
	return string(ra) == string(rb)
}
