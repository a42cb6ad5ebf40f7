package auditapi_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// The audit log search (postAuditLogEntries) and counts
// (postAuditLogEntryCounts): statements select entries by their accesses,
// and counts fall in the buckets of their times.

func auditSearchServer(tb testing.TB) *apptest.Server {
	tb.Helper()
	srv := apptest.New(tb)
	srv.MustCreateProject(tb, "a")
	srv.MustCreateProject(tb, "b")
	for _, p := range []string{"a", "b"} {
		apptest.WantStatus(tb, srv.Do(tb, http.MethodPost, apptest.API+"/flags/"+p, map[string]any{"key": "f", "name": "F"}), http.StatusCreated)
	}
	apptest.WantStatus(tb, srv.Do(tb, http.MethodPatch, apptest.EnvPath("a", "production"), []apptest.PatchOp{apptest.Replace("/name", "Prod")}), http.StatusOK)
	return srv
}

func searchKinds(tb testing.TB, res *apptest.Response) []string {
	tb.Helper()
	apptest.WantStatus(tb, res, http.StatusOK)
	var out []string
	for _, it := range res.Map(tb)["items"].([]any) {
		e := it.(map[string]any)
		out = append(out, e["kind"].(string)+" "+e["accesses"].([]any)[0].(map[string]any)["resource"].(string))
	}
	return out
}

func TestAuditLogSearchKeepsWhatTheStatementsAllow(t *testing.T) {
	srv := auditSearchServer(t)
	cases := []struct {
		name  string
		body  any
		query string
		want  []string
	}{
		{"flags of project a", []any{apptest.Statement("allow", []string{"proj/a:env/*:flag/*"}, []string{"*"})}, "", []string{"flag proj/a:env/*:flag/f"}},
		{"every flag but a denied project", []any{apptest.Statement("allow", []string{"proj/*:env/*:flag/*"}, []string{"*"}), apptest.Statement("deny", []string{"proj/b:env/*:flag/*"}, []string{"*"})}, "",
			[]string{"flag proj/a:env/*:flag/f"}},
		{"one action on environments", []any{apptest.Statement("allow", []string{"proj/*:env/*"}, []string{"updateName"})}, "", []string{"environment proj/a:env/production"}},
		{"an action nothing did", []any{apptest.Statement("allow", []string{"proj/*"}, []string{"deleteProject"})}, "", nil},
		{"text and statements together", []any{apptest.Statement("allow", []string{"proj/*:env/*:flag/*"}, []string{"*"})}, "?q=proj/b", []string{"flag proj/b:env/*:flag/f"}},
	}
	for _, c := range cases {
		t.Run("a search for "+c.name+" finds exactly those entries", func(t *testing.T) {
			got := searchKinds(t, srv.Do(t, http.MethodPost, apptest.API+"/auditlog"+c.query, c.body))
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("found %q, want %q", got, c.want)
			}
		})
	}
	t.Run("no statements keep every entry, newest first, paged by the cursor", func(t *testing.T) {
		all := searchKinds(t, srv.Do(t, http.MethodPost, apptest.API+"/auditlog?limit=20", nil))
		if len(all) < 5 || !strings.HasPrefix(all[0], "environment") {
			t.Fatalf("entries: %q", all)
		}
		res := srv.Do(t, http.MethodPost, apptest.API+"/auditlog?limit=2", []any{})
		apptest.WantStatus(t, res, http.StatusOK)
		next := res.Map(t)["_links"].(map[string]any)["next"].(map[string]any)["href"].(string)
		page2 := searchKinds(t, srv.Do(t, http.MethodPost, next, []any{}))
		if len(page2) != 2 || page2[0] != all[2] {
			t.Errorf("second page %q, want it to start at %q", page2, all[2])
		}
	})
	t.Run("a time window bounds the search", func(t *testing.T) {
		got := searchKinds(t, srv.Do(t, http.MethodPost, apptest.API+"/auditlog?before=1000", nil))
		if len(got) != 0 {
			t.Errorf("entries before 1970+1s: %q", got)
		}
	})
	refused := []struct {
		name string
		body string
	}{
		{"a statement without an effect", `[{"resources":["proj/*"],"actions":["*"]}]`},
		{"a statement with a bad specifier", `[{"effect":"allow","resources":["proj/a:env"],"actions":["*"]}]`},
		{"an object instead of a list", `{"effect":"allow"}`},
	}
	for _, c := range refused {
		t.Run("a search with "+c.name+" is refused", func(t *testing.T) {
			apptest.WantStatus(t, srv.Do(t, http.MethodPost, apptest.API+"/auditlog", c.body), http.StatusBadRequest)
		})
	}
}

func TestAuditLogCountsFallInTheirBuckets(t *testing.T) {
	srv := auditSearchServer(t)
	now := time.Now().UnixMilli()
	after := now - 60*60*1000
	counts := func(tb testing.TB, query string, body any) map[string]any {
		tb.Helper()
		res := srv.Do(tb, http.MethodPost, apptest.API+"/auditlog/counts?after="+strconv.FormatInt(after, 10)+query, body)
		apptest.WantStatus(tb, res, http.StatusOK)
		return res.Map(tb)
	}
	t.Run("every entry of the last hour is in the last of six buckets", func(t *testing.T) {
		before := strconv.FormatInt(now+1000, 10)
		m := counts(t, "&buckets=6&before="+before, []any{})
		buckets := m["buckets"].([]any)
		if len(buckets) != 6 || m["bucketIntervalMs"] != float64((now+1000-after+5)/6) {
			t.Fatalf("buckets: %v", m)
		}
		if buckets[0].(map[string]any)["timestamp"] != float64(after) {
			t.Errorf("first bucket starts at %v, want %d", buckets[0], after)
		}
		last := buckets[5].(map[string]any)["count"].(float64)
		if last < 5 || m["totalCount"] != last {
			t.Errorf("counts: %v", m)
		}
	})
	t.Run("statements count only what they allow", func(t *testing.T) {
		m := counts(t, "", []any{apptest.Statement("allow", []string{"proj/*:env/*:flag/*"}, []string{"createFlag"})})
		if m["totalCount"] != float64(2) || len(m["buckets"].([]any)) != 50 {
			t.Errorf("flag creations: %v", m)
		}
	})
	for _, q := range []string{"?after=1000&before=2000", "?after=0&before=1"} {
		t.Run("a window with nothing in it counts zero: "+q, func(t *testing.T) {
			res := srv.Do(t, http.MethodPost, apptest.API+"/auditlog/counts"+q, []any{})
			apptest.WantStatus(t, res, http.StatusOK)
			if res.Map(t)["totalCount"] != float64(0) {
				t.Errorf("counts: %s", res.Body)
			}
		})
	}
	for _, q := range []string{"", "?after=5&before=5", "?after=1&buckets=501", "?after=1&buckets=0", "?after=x"} {
		t.Run("counts with "+q+" are refused", func(t *testing.T) {
			apptest.WantStatus(t, srv.Do(t, http.MethodPost, apptest.API+"/auditlog/counts"+q, []any{}), http.StatusBadRequest)
		})
	}
	t.Run("counts without a body are refused", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodPost, apptest.API+"/auditlog/counts?after=1", nil), http.StatusBadRequest)
	})
}

func TestAuditLogCountsEndAtTheServersClock(t *testing.T) {
	ahead := 24 * time.Hour
	srv := apptest.New(t, apptest.WithClock(func() time.Time { return time.Now().Add(ahead) }))
	after := time.Now().Add(-time.Hour).UnixMilli()
	t.Run("counts without before span from after to the server's now, a day ahead of the wall clock", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, apptest.API+"/auditlog/counts?buckets=1&after="+strconv.FormatInt(after, 10), []any{})
		apptest.WantStatus(t, res, http.StatusOK)
		got, _ := res.Map(t)["bucketIntervalMs"].(float64)
		if min := float64((time.Hour + ahead).Milliseconds()); got < min {
			t.Errorf("one bucket of %v ms, want at least %v (after to the server's clock): %s", got, min, res.Body)
		}
	})
}
