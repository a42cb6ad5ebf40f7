// Package figures keeps the numbers of the README and the docs/*.md pages
// honest. A figure sits between markers, <!-- fig:NAME -->TEXT<!-- /fig -->, which render as
// nothing; TestREADMEFigures computes each figure from the code, the build
// output or the benchmark output and either checks the docs against it
// (make test) or rewrites the text between the markers (make figures).
package figures

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Figure is one number (or short phrase) of the README.
type Figure struct {
	Name string
	// Text is what the README shows between the markers.
	Text string
	// Accept, when set, decides whether the README's text is still true
	// (for measured values that vary a little from build to build);
	// otherwise the README's text must equal Text.
	Accept func(readme string) bool
}

func (f Figure) accepts(readme string) bool {
	if f.Accept != nil {
		return f.Accept(readme)
	}
	return readme == f.Text
}

// marker finds a figure: the text may not span lines or hold another marker.
var marker = regexp.MustCompile(`<!-- fig:([a-z0-9-]+) -->([^<\n]*)<!-- /fig -->`)

// Region is one figure's place in the README.
type Region struct {
	Name, Text string
	Line       int
}

// Regions lists every figure marker of doc, in order.
func Regions(doc []byte) []Region {
	var out []Region
	for _, m := range marker.FindAllSubmatchIndex(doc, -1) {
		out = append(out, Region{
			Name: string(doc[m[2]:m[3]]),
			Text: string(doc[m[4]:m[5]]),
			Line: 1 + bytes.Count(doc[:m[0]], []byte("\n")),
		})
	}
	return out
}

// Doc is one file that shows figures: its path as problems name it
// (relative to the repository root, such as README.md or docs/costs.md) and
// its text.
type Doc struct {
	Path string
	Body []byte
}

// ReadDocs reads the files that show figures, under the repository root:
// README.md, then every docs/*.md in name order.
func ReadDocs(root string) ([]Doc, error) {
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	slices.Sort(pages)
	paths := []string{"README.md"}
	for _, p := range pages {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return nil, err
		}
		paths = append(paths, filepath.ToSlash(rel))
	}
	var docs []Doc
	for _, p := range paths {
		body, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			return nil, err
		}
		docs = append(docs, Doc{Path: p, Body: body})
	}
	return docs, nil
}

// Check lists what in docs disagrees with figs: a figure whose text is no
// longer true (as path:line), a marker of no known figure, and a known
// figure no doc shows any longer (so a marker deleted by an edit, or a page
// moved without its markers, does not go unnoticed). A figure may be shown
// in several docs, and several times in one. Figures in optional may be
// missing from figs (not measured this run); their markers are then left
// unchecked.
func Check(docs []Doc, figs []Figure, optional []string) []string {
	byName := map[string]Figure{}
	for _, f := range figs {
		byName[f.Name] = f
	}
	var problems []string
	seen := map[string]bool{}
	for _, d := range docs {
		for _, r := range Regions(d.Body) {
			seen[r.Name] = true
			f, ok := byName[r.Name]
			switch {
			case !ok && slices.Contains(optional, r.Name):
			case !ok:
				problems = append(problems, fmt.Sprintf("%s:%d: no figure is called %q", d.Path, r.Line, r.Name))
			case !f.accepts(r.Text):
				problems = append(problems, fmt.Sprintf("%s:%d: %s says %q, but it is %q now", d.Path, r.Line, r.Name, r.Text, f.Text))
			}
		}
	}
	for _, f := range figs {
		if !seen[f.Name] {
			problems = append(problems, fmt.Sprintf("figure %s (%q) has no <!-- fig:%s --> marker in any of the %d files read", f.Name, f.Text, f.Name, len(docs)))
		}
	}
	return problems
}

// Rewrite puts each figure's text between its markers. Markers of figures
// not in figs keep their text.
func Rewrite(doc []byte, figs []Figure) []byte {
	byName := map[string]Figure{}
	for _, f := range figs {
		byName[f.Name] = f
	}
	return marker.ReplaceAllFunc(doc, func(m []byte) []byte {
		sub := marker.FindSubmatch(m)
		f, ok := byName[string(sub[1])]
		if !ok {
			return m
		}
		return fmt.Appendf(nil, "<!-- fig:%s -->%s<!-- /fig -->", f.Name, f.Text)
	})
}

// MB formats bytes as megabytes (10^6) with one decimal.
func MB(bytes int64) string { return strconv.FormatFloat(float64(bytes)/1e6, 'f', 1, 64) }

// SizeRange is the text of a set of file sizes: "10.2 MB", or "10.1–10.3 MB"
// when they differ at one decimal.
func SizeRange(sizes []int64) string {
	lo, hi := MB(slices.Min(sizes)), MB(slices.Max(sizes))
	if lo == hi {
		return lo + " MB"
	}
	return lo + "–" + hi + " MB"
}

// NearSizes accepts a README size text whose numbers are each within tol
// megabytes of the measured smallest and largest size: a bootstrap grows and
// shrinks a little with every change, and the README should not need an
// edit for each one.
func NearSizes(sizes []int64, tol float64) func(string) bool {
	lo, hi := float64(slices.Min(sizes))/1e6, float64(slices.Max(sizes))/1e6
	return func(text string) bool {
		nums := numbers(text)
		switch len(nums) {
		case 1:
			return math.Abs(nums[0]-lo) <= tol && math.Abs(nums[0]-hi) <= tol
		case 2:
			return math.Abs(nums[0]-lo) <= tol && math.Abs(nums[1]-hi) <= tol
		}
		return false
	}
}

// NearNumber accepts a README text whose one number is within a factor
// (e.g. 0.25 for ±25%) of the measured value.
func NearNumber(measured, factor float64) func(string) bool {
	return func(text string) bool {
		nums := numbers(text)
		return len(nums) == 1 && math.Abs(nums[0]-measured) <= factor*math.Abs(measured)
	}
}

var number = regexp.MustCompile(`[0-9][0-9,]*(\.[0-9]+)?`)

func numbers(text string) []float64 {
	var out []float64
	for _, s := range number.FindAllString(text, -1) {
		if v, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// FileSizes returns the size of dir/<name>/bootstrap for each name.
func FileSizes(dir string, names []string) ([]int64, error) {
	var out []int64
	for _, n := range names {
		fi, err := os.Stat(filepath.Join(dir, n, "bootstrap"))
		if err != nil {
			return nil, err
		}
		out = append(out, fi.Size())
	}
	return out, nil
}

// Template is the part of a synthesized CloudFormation template the
// figures read.
type Template struct {
	Resources map[string]struct {
		Type       string         `json:"Type"`
		Properties map[string]any `json:"Properties"`
	} `json:"Resources"`
	Outputs map[string]json.RawMessage `json:"Outputs"`
}

// LoadTemplate reads a template that cdk synth wrote.
func LoadTemplate(path string) (*Template, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var t Template
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &t, nil
}

// Properties lists the properties of every resource of type typ.
func (t *Template) Properties(typ string) []map[string]any {
	var out []map[string]any
	for _, r := range t.Resources {
		if r.Type == typ {
			out = append(out, r.Properties)
		}
	}
	return out
}

// OutputNames lists the template's outputs, sorted.
func (t *Template) OutputNames() []string {
	names := make([]string, 0, len(t.Outputs))
	for n := range t.Outputs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// MakeVariable reads NAME := VALUE (or =, ?=) from a Makefile.
func MakeVariable(path, name string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	def := regexp.MustCompile(`^` + regexp.QuoteMeta(name) + `\s*[:?]?=\s*(.*?)\s*$`)
	s := bufio.NewScanner(f)
	for s.Scan() {
		if m := def.FindStringSubmatch(s.Text()); m != nil {
			return m[1], nil
		}
	}
	if err := s.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s: no variable %s", path, name)
}

// GoDirective reads a go.mod's go version, or with module set, the
// version it requires of that module.
func GoDirective(path, module string) (string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(raw)) {
		f := strings.Fields(line)
		if module == "" && len(f) == 2 && f[0] == "go" {
			return f[1], nil
		}
		for i := range f {
			if module != "" && f[i] == module && i+1 < len(f) {
				return f[i+1], nil
			}
		}
	}
	return "", fmt.Errorf("%s: no version of %q", path, cmp(module, "go"))
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// NPMPins reads the exact versions package.json pins.
func NPMPins(path string) (map[string]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p struct {
		DevDependencies map[string]string `json:"devDependencies"`
		Dependencies    map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string]string{}
	for _, deps := range []map[string]string{p.Dependencies, p.DevDependencies} {
		for k, v := range deps {
			out[k] = v
		}
	}
	return out, nil
}

// ErrNoBenchmark is returned when benchmark output lacks a result.
var ErrNoBenchmark = errors.New("benchmark result not found")

// BenchMetric finds, in `go test -bench` output, the value of unit (such
// as "ns/op" or "req/s") of the first benchmark whose name starts with
// prefix ("BenchmarkEvaluate/compiled/allowed"): the median of its lines.
func BenchMetric(output, prefix, unit string) (float64, error) {
	// With -count N a benchmark prints N lines; the figure is their median,
	// which one slow run on a shared machine does not move.
	name := ""
	var values []float64
	for line := range strings.Lines(output) {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], prefix) || name != "" && f[0] != name {
			continue
		}
		for i := 2; i+1 < len(f); i += 2 {
			if f[i+1] == unit {
				v, err := strconv.ParseFloat(f[i], 64)
				if err != nil {
					return 0, err
				}
				name, values = f[0], append(values, v)
				break
			}
		}
	}
	if len(values) == 0 {
		return 0, fmt.Errorf("%s %s: %w", prefix, unit, ErrNoBenchmark)
	}
	slices.Sort(values)
	if n := len(values); n%2 == 0 {
		return (values[n/2-1] + values[n/2]) / 2, nil
	}
	return values[len(values)/2], nil
}

// Round formats v with sig significant digits and thousands separators:
// 22134 is "22,100", 2.128 is "2.13", 0.2634 with two digits "0.26".
// Measurements vary more than their last digits, so more would mislead.
func Round(v float64, sig int) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	exp := int(math.Floor(math.Log10(math.Abs(v))))
	unit := math.Pow(10, float64(exp-sig+1))
	v = math.Round(v/unit) * unit
	s := strconv.FormatFloat(v, 'f', max(0, sig-1-exp), 64)
	whole, frac, hasFrac := strings.Cut(s, ".")
	sign := ""
	if strings.HasPrefix(whole, "-") {
		sign, whole = "-", whole[1:]
	}
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "," + whole[i:]
	}
	if hasFrac {
		return sign + whole + "." + frac
	}
	return sign + whole
}

// Span is "lo–hi" of vals, each rounded as Round does; one value when
// both round the same.
func Span(vals []float64, sig int) string {
	lo, hi := Round(slices.Min(vals), sig), Round(slices.Max(vals), sig)
	if lo == hi {
		return lo
	}
	return lo + "–" + hi
}
