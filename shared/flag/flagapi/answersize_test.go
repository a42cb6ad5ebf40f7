package flagapi_test

import (
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// seedBenchFlags creates project p with n flags as the local server's
// benchmarks do (shared/localserver: flag-000, "Flag 0", tagged bench),
// in the project's two environments, production and test.
func seedBenchFlags(tb testing.TB, srv *apptest.Server, p string, n int) {
	tb.Helper()
	srv.MustCreateProject(tb, p)
	for i := 0; i < n; i++ {
		body := map[string]any{"key": fmt.Sprintf("flag-%03d", i), "name": fmt.Sprintf("Flag %d", i), "tags": []string{"bench"}}
		apptest.WantStatus(tb, srv.Do(tb, http.MethodPost, apptest.FlagsPath(p), body), http.StatusCreated)
	}
}

// leanQueries are the answers issue 26 sizes, for an admin token: the
// defaults, and what LaunchDarkly's ways to ask for more add.
var leanQueries = []struct {
	name, path string
	headers    []string
}{
	{"one flag", "/api/v2/flags/bench/flag-001", nil},
	{"one flag with expand=access", "/api/v2/flags/bench/flag-001?expand=access", nil},
	{"list of 20", "/api/v2/flags/bench", nil},
	{"list of 20 in both environments", "/api/v2/flags/bench?env=production&env=test", nil},
	{"list of 20 in both environments with expand=access", "/api/v2/flags/bench?env=production&env=test&expand=access", nil},
	{"list of 20 for LD-API-Version 20220603", "/api/v2/flags/bench", []string{"LD-API-Version", "20220603"}},
}

// TestLeanFlagAnswers holds the default answers to issue 26's goal (one
// flag at most 2 KB, a list of 20 at most 20 KB, for an admin token) and
// checks that expand, env and summary still give the rest.
func TestLeanFlagAnswers(t *testing.T) {
	srv := apptest.New(t)
	seedBenchFlags(t, srv, "bench", 100)

	t.Run("the default answers are within issue 26's sizes", func(t *testing.T) {
		for _, tc := range []struct {
			path string
			max  int
		}{
			{"/api/v2/flags/bench/flag-001", 2000},
			{"/api/v2/flags/bench", 20000},
		} {
			res := srv.Do(t, http.MethodGet, tc.path, nil)
			apptest.WantStatus(t, res, http.StatusOK)
			if len(res.Body) > tc.max {
				t.Errorf("%s is %d bytes, more than %d", tc.path, len(res.Body), tc.max)
			}
			t.Logf("%s: %d bytes", tc.path, len(res.Body))
		}
	})

	type env struct {
		Targets *[]any          `json:"targets"`
		Access  *map[string]any `json:"_access"`
	}
	type doc struct {
		Environments map[string]env  `json:"environments"`
		Access       *map[string]any `json:"_access"`
	}
	one := func(t *testing.T, query string) doc {
		t.Helper()
		var d doc
		res := srv.Do(t, http.MethodGet, "/api/v2/flags/bench/flag-001"+query, nil)
		apptest.WantStatus(t, res, http.StatusOK)
		res.JSON(t, &d)
		return d
	}
	list := func(t *testing.T, query string, headers ...string) []doc {
		t.Helper()
		var page struct{ Items []doc }
		res := srv.Do(t, http.MethodGet, "/api/v2/flags/bench"+query, nil, headers...)
		apptest.WantStatus(t, res, http.StatusOK)
		res.JSON(t, &page)
		if len(page.Items) != 20 {
			t.Fatalf("%d flags, want the default page of 20", len(page.Items))
		}
		return page.Items
	}

	t.Run("one flag shows every environment's targeting and no _access by default", func(t *testing.T) {
		d := one(t, "")
		if d.Access != nil || len(d.Environments) != 2 {
			t.Fatalf("_access %v, %d environments; want none and 2", d.Access, len(d.Environments))
		}
		for k, e := range d.Environments {
			if e.Access != nil || e.Targets == nil {
				t.Errorf("%s: _access %v, targets %v; want no _access and the targets", k, e.Access, e.Targets)
			}
		}
	})
	t.Run("one flag with expand=access carries the flag's and each environment's _access", func(t *testing.T) {
		d := one(t, "?expand=access")
		if d.Access == nil || len(d.Environments) != 2 {
			t.Fatalf("_access %v, %d environments", d.Access, len(d.Environments))
		}
		for k, e := range d.Environments {
			if e.Access == nil {
				t.Errorf("%s carries no _access", k)
			}
		}
	})
	t.Run("one flag with env shows that environment alone", func(t *testing.T) {
		if d := one(t, "?env=test"); len(d.Environments) != 1 || d.Environments["test"].Targets == nil {
			t.Errorf("environments %v, want test alone", d.Environments)
		}
	})
	t.Run("one flag refuses an unknown expansion naming it", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodGet, "/api/v2/flags/bench/flag-001?expand=acess", nil), http.StatusBadRequest, "invalid_request", "acess")
	})
	t.Run("a list leaves environments out unless env names them, as LaunchDarkly's since 20240415", func(t *testing.T) {
		for _, f := range list(t, "") {
			if f.Environments != nil || f.Access != nil {
				t.Fatalf("environments %v, _access %v; want neither", f.Environments, f.Access)
			}
		}
	})
	t.Run("a list with env shows those environments, summarised unless summary=0", func(t *testing.T) {
		for _, tc := range []struct {
			query   string
			targets bool
		}{
			{"?env=production", false},
			{"?env=production&summary=0", true},
		} {
			for _, f := range list(t, tc.query) {
				e, ok := f.Environments["production"]
				if len(f.Environments) != 1 || !ok || (e.Targets != nil) != tc.targets {
					t.Fatalf("%s: environments %v, want production alone with targets %v", tc.query, f.Environments, tc.targets)
				}
			}
		}
	})
	t.Run("a list for an LD-API-Version before 20240415 shows every environment", func(t *testing.T) {
		for _, v := range []string{"20220603", "20191212"} {
			if f := list(t, "", "LD-API-Version", v)[0]; len(f.Environments) != 2 {
				t.Errorf("%s: environments %v, want both", v, f.Environments)
			}
		}
		if f := list(t, "", "LD-API-Version", "20240415")[0]; f.Environments != nil {
			t.Errorf("20240415: environments %v, want none", f.Environments)
		}
	})
}

// BenchmarkFlagAnswers reports the bytes of each answer of leanQueries
// (answer-bytes) and what serving it costs in process, over httptest's
// loopback, without the tests' OpenAPI check.
func BenchmarkFlagAnswers(b *testing.B) {
	srv := apptest.New(b)
	seedBenchFlags(b, srv, "bench", 100)
	c := &http.Client{}
	for _, q := range leanQueries {
		b.Run(q.name, func(b *testing.B) {
			req, err := http.NewRequest(http.MethodGet, srv.URL+q.path, nil)
			if err != nil {
				b.Fatal(err)
			}
			req.Header.Set("Authorization", srv.Token)
			for i := 0; i+1 < len(q.headers); i += 2 {
				req.Header.Set(q.headers[i], q.headers[i+1])
			}
			b.ReportAllocs()
			size := 0
			for b.Loop() {
				res, err := c.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				body, err := io.ReadAll(res.Body)
				res.Body.Close()
				if err != nil || res.StatusCode != http.StatusOK {
					b.Fatalf("%s: %d %v", q.path, res.StatusCode, err)
				}
				size = len(body)
			}
			b.ReportMetric(float64(size), "answer-bytes")
		})
	}
}
