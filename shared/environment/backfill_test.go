package environment_test

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/environment/credtest"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

// hookTable runs afterEnvList once, right after the first Query of a
// project's environments that the backfill makes: between its read of the
// environments and its writes.
type hookTable struct {
	store.Table
	once         sync.Once
	afterEnvList func()
}

func (h *hookTable) Query(ctx context.Context, q store.Query) (store.Page, error) {
	page, err := h.Table.Query(ctx, q)
	if err == nil && q.Index == "" && q.SKPrefix == store.EnvironmentSKPrefix && h.afterEnvList != nil {
		h.once.Do(h.afterEnvList)
	}
	return page, err
}

// oldStore serves a store whose environments lack their credential items,
// as environments made before the credential index do.
func oldStore(tb testing.TB, table *hookTable) (*apptest.Server, []credtest.Env) {
	tb.Helper()
	bt, err := bolt.Open(filepath.Join(tb.TempDir(), "flagplane.db"))
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	tb.Cleanup(func() {
		if err := bt.Close(); err != nil {
			tb.Errorf("close store: %v", err)
		}
	})
	table.Table = bt
	srv := apptest.New(tb, apptest.WithTable(table))
	srv.MustCreateProject(tb, "p") // each with the environments test and production
	srv.MustCreateProject(tb, "q")
	srv.MustCreateEnvironment(tb, "q", "staging", nil)
	return srv, credtest.Drop(tb, srv.Table)
}

func latestAll(tb testing.TB, srv *apptest.Server, sdkKey string) int {
	tb.Helper()
	return srv.Do(tb, http.MethodGet, "/sdk/latest-all", nil, "Authorization", sdkKey).Status
}

// opens reports whether each of the environment's credentials opens it.
func opens(tb testing.TB, table store.Table, e credtest.Env) map[environment.CredentialKind]bool {
	tb.Helper()
	svc := environment.NewService(table, nil, nil, false, time.Now)
	got := map[environment.CredentialKind]bool{}
	for kind, secret := range map[environment.CredentialKind]string{
		environment.ServerCredential: e.SDKKey, environment.MobileCredential: e.MobileKey, environment.ClientSideCredential: e.ClientSideID,
	} {
		env, err := svc.ByCredential(context.Background(), kind, secret)
		got[kind] = err == nil && env.ProjectKey == e.ProjectKey && env.Key == e.Key
	}
	return got
}

func allOpen(m map[environment.CredentialKind]bool) bool {
	return m[environment.ServerCredential] && m[environment.MobileCredential] && m[environment.ClientSideCredential]
}

func TestBackfillCredentials(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"environments without credential items get 401 before the backfill and 200 after it", func(t *testing.T) {
			srv, envs := oldStore(t, &hookTable{})
			if len(envs) != 5 {
				t.Fatalf("environments: %d, want 5", len(envs))
			}
			for _, e := range envs {
				if got := latestAll(t, srv, e.SDKKey); got != http.StatusUnauthorized {
					t.Fatalf("before the backfill, %s/%s: status %d, want 401", e.ProjectKey, e.Key, got)
				}
			}
			n, err := environment.BackfillCredentials(t.Context(), srv.Table)
			if err != nil {
				t.Fatal(err)
			}
			if n != 3*len(envs) {
				t.Errorf("wrote %d items, want %d (three per environment)", n, 3*len(envs))
			}
			for _, e := range envs {
				if got := latestAll(t, srv, e.SDKKey); got != http.StatusOK {
					t.Errorf("after the backfill, %s/%s: status %d, want 200", e.ProjectKey, e.Key, got)
				}
				if got := opens(t, srv.Table, e); !allOpen(got) {
					t.Errorf("after the backfill, %s/%s opens with %v, want every credential", e.ProjectKey, e.Key, got)
				}
			}
		}},
		{"a second run writes nothing", func(t *testing.T) {
			srv, _ := oldStore(t, &hookTable{})
			if _, err := environment.BackfillCredentials(t.Context(), srv.Table); err != nil {
				t.Fatal(err)
			}
			n, err := environment.BackfillCredentials(t.Context(), srv.Table)
			if err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("the second run wrote %d items, want 0", n)
			}
		}},
		{"a store made after the credential index needs nothing", func(t *testing.T) {
			srv := apptest.New(t)
			srv.MustCreateProject(t, "p")
			n, err := environment.BackfillCredentials(t.Context(), srv.Table)
			if err != nil || n != 0 {
				t.Errorf("wrote %d items (%v), want 0", n, err)
			}
		}},
		{"a key reset between reading the environment and writing its items is not undone", func(t *testing.T) {
			table := &hookTable{}
			srv, envs := oldStore(t, table)
			first := envs[0] // the first environment the backfill reads
			var reset struct {
				APIKey string `json:"apiKey"`
			}
			table.afterEnvList = func() {
				res := srv.Do(t, http.MethodPost, "/api/v2/projects/"+first.ProjectKey+"/environments/"+first.Key+"/apiKey", nil)
				if res.Status != http.StatusOK {
					t.Errorf("reset the SDK key: status %d: %s", res.Status, res)
				}
				res.JSON(t, &reset)
			}
			n, err := environment.BackfillCredentials(t.Context(), srv.Table)
			if err != nil {
				t.Fatal(err)
			}
			if reset.APIKey == "" || reset.APIKey == first.SDKKey {
				t.Fatalf("the key was not reset: %q", reset.APIKey)
			}
			// The reset wrote the new key's item; the backfill writes the rest, and not the old key's.
			if n != 3*len(envs)-1 {
				t.Errorf("wrote %d items, want %d", n, 3*len(envs)-1)
			}
			if _, err := srv.Table.Get(t.Context(), credtest.Key("sdk", first.SDKKey)); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("the reset key has a credential item (%v), want none", err)
			}
			if got := latestAll(t, srv, first.SDKKey); got != http.StatusUnauthorized {
				t.Errorf("the reset key: status %d, want 401", got)
			}
			if got := latestAll(t, srv, reset.APIKey); got != http.StatusOK {
				t.Errorf("the new key: status %d, want 200", got)
			}
			first.SDKKey = reset.APIKey
			for _, e := range append([]credtest.Env{first}, envs[1:]...) {
				if got := opens(t, srv.Table, e); !allOpen(got) {
					t.Errorf("%s/%s opens with %v, want every current credential", e.ProjectKey, e.Key, got)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}
