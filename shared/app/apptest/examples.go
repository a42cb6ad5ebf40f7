package apptest

import (
	"slices"
	"sort"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest/reference"
	"github.com/flagplane/flagplane/shared/catalog"
)

// Request is one call of an operation: its path (with query), body and
// headers; the method is the operation's.
type Request struct {
	Path    string
	Body    any
	Headers []string
}

// Get, Post, Patch and Semantic make the common requests.
func Get(path string, headers ...string) Request { return Request{Path: path, Headers: headers} }

func Post(path string, body any, headers ...string) Request {
	return Request{Path: path, Body: body, Headers: headers}
}

func Patch(path string, ops ...PatchOp) Request { return Request{Path: path, Body: ops} }

func Semantic(path string, ins ...map[string]any) Request {
	return Request{Path: path, Body: map[string]any{"instructions": ins}, Headers: []string{"Content-Type", SemanticType}}
}

// An Example is a successful call of one operation, made on the world.
type Example func(tb testing.TB, w *World) Request

// Examples are one group's successful calls, checked against LaunchDarkly's
// reference: every field it requires present at every depth, each field of
// its JSON type, or of the spec's where the two differ. A group's tests
// hold its examples, so a new group adds its own and edits no other file.
type Examples struct {
	// Group is the catalog group; each of its built operations needs a call.
	Group string
	// Calls are the examples, by operation id.
	Calls map[string]Example
	// Queries are further reads of an operation, by the query options that
	// change the answer's shape (expansions, full targeting), each checked
	// like the operation's own call.
	Queries map[string][]string
	// SpecTypes are the fields whose JSON type the spec sets apart from the
	// reference's (mostly Unix ms as strings), by the reference schema that
	// holds them and the field's name.
	SpecTypes map[string]map[string]string
	// Dated are the fields of SpecTypes that a dated LD-API-Version (as
	// LaunchDarkly's Terraform provider sends) answers as integers.
	Dated map[string][]string
}

// DatedHeaders are the headers of LaunchDarkly's Terraform provider: a
// dated API version, and its user agent.
var DatedHeaders = []string{"LD-API-Version", "20240415", "User-Agent", "terraform-provider-launchdarkly/v2.26.2"}

// Check runs every example on a world of its own: once as the spec answers,
// once with DatedHeaders.
func (e Examples) Check(t *testing.T) {
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
	ops := e.built(t, w)
	for id := range e.Calls {
		if !slices.ContainsFunc(ops, func(op catalog.Operation) bool { return op.ID == id }) {
			t.Errorf("an example for %s, which is not a built operation of %s", id, e.Group)
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
					t.Fatalf("no example for %s: add one that succeeds to the %s group's Examples", op.ID, e.Group)
				}
				if rop.Method != op.Method {
					t.Errorf("the catalog has %s %s, the reference %s %s", op.Method, op.Path, rop.Method, rop.Path)
				}
				req := mk(t, w)
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

// built are the group's catalog operations with a handler, by id.
func (e Examples) built(tb testing.TB, w *World) []catalog.Operation {
	tb.Helper()
	ops, err := catalog.Group(e.Group)
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
		tb.Fatalf("group %s has no built operation", e.Group)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
