package app_test

import (
	"net/http"
	"testing"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

func TestGroupsRefuseWhatTheCatalogDoesNotHave(t *testing.T) {
	table, err := bolt.Open(t.TempDir() + "/flagplane.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { table.Close() })
	some := map[string]api.Handler{"x": func(http.ResponseWriter, *http.Request) error { return nil }}
	named := func(name string, h map[string]api.Handler) app.NewGroup {
		return func(*app.App) app.Group { return app.Group{Name: name, Handlers: h} }
	}
	first := catalog.Groups()[0]
	for _, tc := range []struct {
		name   string
		groups []app.NewGroup
	}{
		{"a group the catalog does not have panics", []app.NewGroup{named("no-such-group", some)}},
		{"a group given a second time panics", []app.NewGroup{named(first, some), named(first, some)}},
		{"a group without handlers panics", []app.NewGroup{named(first, nil)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("Groups did not panic")
				}
			}()
			app.New(table, audit.Discard{}, app.Settings{}, nil, tc.groups...).Groups()
		})
	}
	t.Run("groups are built once, in the order given", func(t *testing.T) {
		builds := 0
		counted := func(name string) app.NewGroup {
			return func(*app.App) app.Group { builds++; return app.Group{Name: name, Handlers: some} }
		}
		a := app.New(table, audit.Discard{}, app.Settings{}, nil, counted(catalog.Groups()[1]), counted(first))
		a.Groups()
		got := a.Groups()
		if builds != 2 || len(got) != 2 || got[0].Name != catalog.Groups()[1] || got[1].Name != first {
			t.Errorf("built %d times, groups %v; want 2 builds of [%s %s]", builds, got, catalog.Groups()[1], first)
		}
	})
}
