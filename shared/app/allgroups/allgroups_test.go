package allgroups_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/app/allgroups"
	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/catalog"
)

// builtGroup is one group of the list with the name of the function that
// builds it ("github.com/.../roleapi.New").
type builtGroup struct {
	app.Group
	builder string
}

func listed(tb testing.TB) []builtGroup {
	tb.Helper()
	a := apptest.New(tb).App
	var out []builtGroup
	for i, g := range a.Groups() {
		out = append(out, builtGroup{g, runtime.FuncForPC(reflect.ValueOf(allgroups.List()[i]).Pointer()).Name()})
	}
	return out
}

// calledWith returns the functions a main passes to lambdafn.<call>, as
// import path + "." + name.
func calledWith(tb testing.TB, function, call string) []string {
	tb.Helper()
	main := filepath.Join("..", "..", "..", "functions", function, "main.go")
	f, err := parser.ParseFile(token.NewFileSet(), main, nil, 0)
	if err != nil {
		tb.Fatalf("read the %s function: %v", function, err)
	}
	imports := map[string]string{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		imports[p[strings.LastIndex(p, "/")+1:]] = p
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := c.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != call {
			return true
		}
		for _, arg := range c.Args {
			if sel, ok := arg.(*ast.SelectorExpr); ok {
				if pkg, ok := sel.X.(*ast.Ident); ok {
					out = append(out, imports[pkg.Name]+"."+sel.Sel.Name)
				}
			}
		}
		return true
	})
	return out
}

func TestTheListHasEveryCatalogGroupOnce(t *testing.T) {
	var names []string
	for _, g := range listed(t) {
		names = append(names, g.Name)
	}
	slices.Sort(names)
	if want := catalog.Groups(); !slices.Equal(names, want) {
		t.Errorf("the list builds groups %v; the catalog has %v", names, want)
	}
}

// TestEveryGroupIsServedByItsFunction holds each Lambda main to its group:
// a main naming another group would answer 404 for its routes in AWS
// while the local server serves them.
func TestEveryGroupIsServedByItsFunction(t *testing.T) {
	for _, g := range listed(t) {
		t.Run("the "+g.Name+" function serves the group "+g.Name, func(t *testing.T) {
			got := calledWith(t, g.Name, "Serve")
			if len(got) != 1 {
				t.Fatalf("functions/%s/main.go passes %v to lambdafn.Serve; want one group", g.Name, got)
			}
			// Groups built by a closure (package endpoints, until each is in
			// its own package) are told apart by package only.
			want := g.builder
			if slash := strings.LastIndex(want, "/"); strings.Count(want[slash:], ".") > 1 {
				want, got[0] = want[:slash+strings.Index(want[slash:], ".")], got[0][:strings.LastIndex(got[0], ".")]
			}
			if got[0] != want {
				t.Errorf("functions/%s/main.go serves %s; the group is built by %s", g.Name, got[0], g.builder)
			}
		})
	}
}

// TestEveryOutboxConsumerIsRunByTheDeliveryFunction holds the
// webhook-delivery function to the groups whose consumers it must run: a
// consumer it does not name would never see an entry in AWS, while the
// local server, which builds every group, runs it.
func TestEveryOutboxConsumerIsRunByTheDeliveryFunction(t *testing.T) {
	named := calledWith(t, "webhook-delivery", "ServeWebhookDelivery")
	consumers := 0
	for _, g := range listed(t) {
		if len(g.Consumers) == 0 {
			continue
		}
		consumers++
		t.Run("webhook-delivery names the consumer of the group "+g.Name, func(t *testing.T) {
			// The function links a group's Consumer, not its handlers.
			want := g.builder[:strings.LastIndex(g.builder, ".")] + ".Consumer"
			if !slices.Contains(named, want) {
				t.Errorf("functions/webhook-delivery/main.go names %v, not %s", named, want)
			}
		})
	}
	if consumers == 0 {
		t.Fatal("no group has consumers: the test checks nothing")
	}
}

// TestEveryGroupsExamplesAnswerAsTheReferenceRequires makes each group's
// examples (app.Group.Examples) and checks their answers against
// LaunchDarkly's reference: a new group brings its examples and edits no
// other file.
func TestEveryGroupsExamplesAnswerAsTheReferenceRequires(t *testing.T) {
	for _, g := range listed(t) {
		t.Run(g.Name, func(t *testing.T) { apptest.CheckExamples(t, g.Name, g.Examples) })
	}
}
