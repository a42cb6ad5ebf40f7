package flagapi_test

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

// queryLog records the sort-key prefix of every Query of its table.
type queryLog struct {
	store.Table
	mu       sync.Mutex
	prefixes []string
}

func (l *queryLog) Query(ctx context.Context, q store.Query) (store.Page, error) {
	l.mu.Lock()
	l.prefixes = append(l.prefixes, q.SKPrefix)
	l.mu.Unlock()
	return l.Table.Query(ctx, q)
}

func (l *queryLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.prefixes
	l.prefixes = nil
	return out
}

// A list that shows no environment (LaunchDarkly's default) reads the
// project's flags alone, and the project only to tell a project without
// flags from a missing one; a list that shows environments reads them.
func TestFlagListReadsTheProjectOnlyWhenItNeedsIt(t *testing.T) {
	bt, err := bolt.Open(filepath.Join(t.TempDir(), "flagplane.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bt.Close() })
	table := &queryLog{Table: bt}
	srv := apptest.New(t, apptest.WithTable(table))
	srv.MustCreateProject(t, "p")
	srv.MustCreateProject(t, "empty")
	apptest.WantStatus(t, srv.Do(t, http.MethodPost, apptest.FlagsPath("p"), map[string]any{"key": "f", "name": "F"}), http.StatusCreated)

	cases := []struct {
		name        string
		path        string
		status      int
		items       int
		readProject bool
		envs        bool
	}{
		{"a list without environments reads only the flags", apptest.FlagsPath("p"), http.StatusOK, 1, false, false},
		{"a list filtered down to nothing still reads only the flags", apptest.FlagsPath("p") + "?filter=query:nothing", http.StatusOK, 0, false, false},
		{"a list naming an environment reads the project and its environments", apptest.FlagsPath("p") + "?env=production", http.StatusOK, 1, true, true},
		{"a project without flags lists none, read to know it exists", apptest.FlagsPath("empty"), http.StatusOK, 0, true, false},
		{"a missing project is not found", apptest.FlagsPath("missing"), http.StatusNotFound, 0, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			table.take()
			res := srv.Do(t, http.MethodGet, tc.path, nil)
			apptest.WantStatus(t, res, tc.status)
			queries := table.take()
			if got := slices.Contains(queries, store.ProjectAndEnvironmentsPrefix); got != tc.readProject {
				t.Errorf("queries %q: project read %v, want %v", queries, got, tc.readProject)
			}
			if tc.status != http.StatusOK {
				return
			}
			var page struct {
				TotalCount int              `json:"totalCount"`
				Items      []map[string]any `json:"items"`
			}
			res.JSON(t, &page)
			if len(page.Items) != tc.items || page.TotalCount != tc.items {
				t.Fatalf("%d items, totalCount %d; want %d", len(page.Items), page.TotalCount, tc.items)
			}
			for _, it := range page.Items {
				if _, shown := it["environments"]; shown != tc.envs {
					t.Errorf("environments shown %v, want %v: %v", shown, tc.envs, it)
				}
			}
		})
	}
	t.Run("a deleted project is not found", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, "/api/v2/projects/p", nil), http.StatusNoContent)
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, apptest.FlagsPath("p"), nil), http.StatusNotFound)
	})
}
