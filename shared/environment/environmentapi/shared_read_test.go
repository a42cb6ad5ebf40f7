package environmentapi_test

import (
	"net/http"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// GET one environment and GET one flag read through decode memos shared
// between requests; a change made by another instance (its own memos, the
// same table) must show on the next read, and a reader's answer must not
// leak into the next one.
func TestMemoizedReadsSeeAnotherWritersChange(t *testing.T) {
	a := apptest.New(t)
	b := a.Reopen(t)
	a.MustCreateProject(t, "p")
	if r := a.Do(t, http.MethodPost, "/api/v2/flags/p", map[string]any{"key": "f", "name": "Before"}); r.Status != http.StatusCreated {
		t.Fatalf("create flag: %d %s", r.Status, r)
	}
	cases := []struct {
		name, path, patch, field, want string
	}{
		{"an environment renamed by another instance reads renamed", "/api/v2/projects/p/environments/production",
			`[{"op":"replace","path":"/name","value":"After"}]`, "name", "After"},
		{"a flag renamed by another instance reads renamed", "/api/v2/flags/p/f",
			`[{"op":"replace","path":"/name","value":"After"}]`, "name", "After"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for range 2 { // the second read comes from the memo
				if r := a.Do(t, http.MethodGet, tc.path, nil); r.Status != http.StatusOK {
					t.Fatalf("GET %s: %d %s", tc.path, r.Status, r)
				}
			}
			if r := b.Do(t, http.MethodPatch, tc.path, tc.patch); r.Status != http.StatusOK {
				t.Fatalf("PATCH %s on the other instance: %d %s", tc.path, r.Status, r)
			}
			if got := a.Do(t, http.MethodGet, tc.path, nil).Map(t)[tc.field]; got != tc.want {
				t.Errorf("%s after the other instance's change: %s is %v, want %q", tc.path, tc.field, got, tc.want)
			}
		})
	}
}
