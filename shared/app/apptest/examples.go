package apptest

import (
	"slices"
	"sort"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest/reference"
	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/example"
)

// DatedHeaders are the headers of LaunchDarkly's Terraform provider: a
// dated API version, and its user agent.
var DatedHeaders = []string{"LD-API-Version", "20240415", "User-Agent", "terraform-provider-launchdarkly/v2.26.2"}

// CheckExamples makes every example of group's set on a world of its own,
// once as the spec answers and once with DatedHeaders, and checks each
// answer against LaunchDarkly's reference: every field it requires present
// at every depth, each field of its JSON type, or of the spec's where the
// two differ. Each built operation of the group needs an example.
func CheckExamples(t *testing.T, group string, e example.Set) {
	ref, err := reference.Load()
	if err != nil {
		t.Fatal(err)
	}
	for schema, fields := range e.Dated {
		for _, f := range fields {
			if _, ok := e.SpecTypes[schema][f]; !ok {
				t.Errorf("%s.%s is dated but SpecTypes does not set it apart", schema, f)
			}
		}
	}
	dated := map[string]map[string]string{}
	for schema, fields := range e.SpecTypes {
		dated[schema] = map[string]string{}
		for f, typ := range fields {
			if slices.Contains(e.Dated[schema], f) {
				typ = "integer"
			}
			dated[schema][f] = typ
		}
	}
	w := NewWorld(t)
	ops := builtOps(t, w, group)
	for id := range e.Calls {
		if !slices.ContainsFunc(ops, func(op catalog.Operation) bool { return op.ID == id }) {
			t.Errorf("an example for %s, which is not a built operation of %s", id, group)
		}
	}
	for _, variant := range []struct {
		what    string
		headers []string
		types   map[string]map[string]string
	}{
		{"answers every field the reference requires", nil, e.SpecTypes},
		{"answers its timestamps as integers under a dated API version", DatedHeaders, dated},
	} {
		for _, op := range ops {
			t.Run(op.ID+" "+variant.what, func(t *testing.T) {
				rop, ok := ref.Op(op.ID)
				if !ok {
					t.Skipf("%s is flagplane's own (not in the reference)", op.ID)
				}
				mk, ok := e.Calls[op.ID]
				if !ok {
					t.Fatalf("no example for %s: add one that succeeds to the %s group's Examples", op.ID, group)
				}
				if rop.Method != op.Method {
					t.Errorf("the catalog has %s %s, the reference %s %s", op.Method, op.Path, rop.Method, rop.Path)
				}
				req := mk(w.For(t))
				headers := append(append([]string{}, req.Headers...), variant.headers...)
				check := func(t *testing.T, res *Response) {
					t.Helper()
					for _, p := range ref.Check(rop, res.Status, res.Body, variant.types) {
						t.Error(p)
					}
				}
				check(t, w.Srv.Do(t, op.Method, req.Path, req.Body, headers...))
				for _, q := range e.Queries[op.ID] {
					t.Run("with "+q, func(t *testing.T) {
						check(t, w.Srv.Do(t, op.Method, req.Path+q, req.Body, headers...))
					})
				}
			})
		}
	}
}

// builtOps are the group's catalog operations with a handler, by id.
func builtOps(tb testing.TB, w *World, group string) []catalog.Operation {
	tb.Helper()
	ops, err := catalog.Group(group)
	if err != nil {
		tb.Fatal(err)
	}
	handlers := w.Srv.App.Handlers()
	var out []catalog.Operation
	for _, op := range ops {
		if _, ok := handlers[op.ID]; ok {
			out = append(out, op)
		}
	}
	if len(out) == 0 {
		tb.Fatalf("group %s has no built operation", group)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
