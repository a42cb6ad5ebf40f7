package allgroups_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	_ "github.com/flagplane/flagplane/shared/app/allgroups"
	"github.com/flagplane/flagplane/shared/catalog"
)

// registeringPackage is the import path of the package whose init
// registered g: the package of its Handlers function.
func registeringPackage(tb testing.TB, g app.Group) string {
	tb.Helper()
	name := runtime.FuncForPC(reflect.ValueOf(g.Handlers).Pointer()).Name()
	slash := strings.LastIndex(name, "/")
	dot := strings.Index(name[slash+1:], ".")
	if slash < 0 || dot < 0 {
		tb.Fatalf("cannot tell the package of %s", name)
	}
	return name[:slash+1+dot]
}

// TestEveryRegisteredGroupIsLinkedByItsFunction holds each Lambda main to
// the group package it must import: without it the function would answer
// 501 in AWS while the local server serves the group.
func TestEveryRegisteredGroupIsLinkedByItsFunction(t *testing.T) {
	for _, g := range app.Registered() {
		t.Run("the "+g.Name+" function imports its group package", func(t *testing.T) {
			want := registeringPackage(t, g)
			main := filepath.Join("..", "..", "..", "functions", g.Name, "main.go")
			f, err := parser.ParseFile(token.NewFileSet(), main, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatalf("read the function of group %q: %v", g.Name, err)
			}
			for _, imp := range f.Imports {
				if p, _ := strconv.Unquote(imp.Path.Value); p == want {
					return
				}
			}
			t.Errorf("%s does not import %s, which registers group %q", main, want, g.Name)
		})
	}
}

func TestRegisterRefusesWhatTheCatalogDoesNotHave(t *testing.T) {
	none := func(*app.App) map[string]api.Handler { return nil }
	for _, tc := range []struct {
		name string
		g    app.Group
	}{
		{"a group the catalog does not have panics", app.Group{Name: "no-such-group", Handlers: none}},
		{"a group registered a second time panics", app.Group{Name: app.Registered()[0].Name, Handlers: none}},
		{"a group without handlers panics", app.Group{Name: catalog.Groups()[0]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("Register did not panic")
				}
			}()
			app.Register(tc.g)
		})
	}
}
