package releasepolicyapi_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/releasepolicy"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

func releasePoliciesPath(project string) string {
	return apptest.ProjectPath(project) + "/release-policies"
}

func guardedPolicy(key string) map[string]any {
	return map[string]any{"key": key, "name": "Policy " + key, "releaseMethod": "guarded-release",
		"scope": map[string]any{"environmentKeys": []string{"production"}, "flagTagKeys": []string{"frontend"}},
		"guardedReleaseConfig": map[string]any{"metricKeys": []string{"http-errors"}, "rolloutContextKindKey": "user", "minSampleSize": 100,
			"rollbackOnRegression": true, "stages": []map[string]any{{"allocation": 25000, "durationMillis": 60000}, {"allocation": 50000, "durationMillis": 60000}}}}
}

func progressivePolicy(key string) map[string]any {
	return map[string]any{"key": key, "name": "Policy " + key, "releaseMethod": "progressive-release",
		"progressiveReleaseConfig": map[string]any{"stages": []map[string]any{{"allocation": 10000, "durationMillis": 1000}}}}
}

// policyRanks lists the project's policies as key:rank, in the list's order.
func policyRanks(tb testing.TB, srv *apptest.Server, project string) string {
	tb.Helper()
	res := srv.Do(tb, http.MethodGet, releasePoliciesPath(project), nil, apptest.BetaHeader...)
	apptest.WantStatus(tb, res, http.StatusOK)
	var got struct {
		Items []struct {
			Key  string `json:"key"`
			Rank int    `json:"rank"`
		} `json:"items"`
		TotalCount int `json:"totalCount"`
	}
	res.JSON(tb, &got)
	var parts []string
	for _, it := range got.Items {
		parts = append(parts, it.Key+":"+strconv.Itoa(it.Rank))
	}
	if got.TotalCount != len(got.Items) {
		tb.Errorf("totalCount %d for %d items", got.TotalCount, len(got.Items))
	}
	return strings.Join(parts, " ")
}

func TestReleasePolicies(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "rp")
	list := releasePoliciesPath("rp")
	beta := apptest.BetaHeader

	t.Run("a create answers 201 with rank, _id and _access", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, list, guardedPolicy("guarded"), beta...)
		apptest.WantStatus(t, res, http.StatusCreated)
		m := res.Map(t)
		if m["rank"] != float64(1) || m["_id"] == "" || m["_access"] == nil || m["releaseMethod"] != "guarded-release" {
			t.Errorf("want rank 1, an _id, _access: %s", res.Body)
		}
		apptest.WantStatus(t, srv.Do(t, http.MethodPost, list, progressivePolicy("progressive"), beta...), http.StatusCreated)
		apptest.WantStatus(t, srv.Do(t, http.MethodPost, list, map[string]any{"key": "now", "name": "Now", "releaseMethod": "immediate-release"}, beta...), http.StatusCreated)
	})
	t.Run("release policies are beta: without the header they are refused", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodGet, list, nil), http.StatusForbidden, "forbidden", "beta")
	})
	t.Run("LD-API-Version: beta opens them too", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, list, nil, "LD-API-Version", "beta"), http.StatusOK)
	})
	t.Run("the list is ordered by rank", func(t *testing.T) {
		if got := policyRanks(t, srv, "rp"); got != "guarded:1 progressive:2 now:3" {
			t.Errorf("got %s", got)
		}
	})
	t.Run("a second create of a key is a conflict", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPost, list, guardedPolicy("guarded"), beta...), http.StatusConflict, "conflict", "guarded")
	})

	invalid := []struct {
		name  string
		edit  func(m map[string]any)
		parts []string
	}{
		{"a missing releaseMethod", func(m map[string]any) { delete(m, "releaseMethod") }, []string{"releaseMethod"}},
		{"an unknown releaseMethod", func(m map[string]any) { m["releaseMethod"] = "yolo-release" }, []string{"releaseMethod", "yolo-release"}},
		{"a guarded release without its config", func(m map[string]any) { delete(m, "guardedReleaseConfig") }, []string{"guardedReleaseConfig"}},
		{"a missing name", func(m map[string]any) { m["name"] = "" }, []string{"name"}},
		{"a bad key", func(m map[string]any) { m["key"] = "no spaces" }, []string{"key"}},
		{"an allocation over 100000", func(m map[string]any) { stages(m)[1]["allocation"] = 100001 }, []string{"guardedReleaseConfig.stages[1].allocation", "100000"}},
		{"a negative allocation", func(m map[string]any) { stages(m)[0]["allocation"] = -1 }, []string{"guardedReleaseConfig.stages[0].allocation"}},
		{"allocations that shrink", func(m map[string]any) { stages(m)[1]["allocation"] = 1000 }, []string{"guardedReleaseConfig.stages[1].allocation", "grow"}},
		{"a zero duration", func(m map[string]any) { stages(m)[0]["durationMillis"] = 0 }, []string{"guardedReleaseConfig.stages[0].durationMillis", "positive"}},
		{"no stages", func(m map[string]any) { guarded(m)["stages"] = []any{} }, []string{"guardedReleaseConfig.stages"}},
		{"an empty metric key", func(m map[string]any) { guarded(m)["metricKeys"] = []string{"ok", " "} }, []string{"guardedReleaseConfig.metricKeys[1]"}},
		{"no metric at all", func(m map[string]any) { guarded(m)["metricKeys"] = []string{} }, []string{"guardedReleaseConfig", "metric"}},
		{"a zero minSampleSize", func(m map[string]any) { guarded(m)["minSampleSize"] = 0 }, []string{"guardedReleaseConfig.minSampleSize", "positive"}},
		{"an environment the project lacks", func(m map[string]any) {
			m["scope"] = map[string]any{"environmentKeys": []string{"production", "staging"}}
		}, []string{"scope.environmentKeys[1]", "staging"}},
		{"a bad progressive stage", func(m map[string]any) {
			m["progressiveReleaseConfig"] = map[string]any{"stages": []map[string]any{{"allocation": 5000, "durationMillis": -5}}}
		}, []string{"progressiveReleaseConfig.stages[0].durationMillis"}},
	}
	for _, c := range invalid {
		t.Run("a create with "+c.name+" is refused with 400 naming it, and stores nothing", func(t *testing.T) {
			before := policyRanks(t, srv, "rp")
			body := guardedPolicy("bad")
			c.edit(body)
			apptest.WantError(t, srv.Do(t, http.MethodPost, list, body, beta...), http.StatusBadRequest, "invalid_request", c.parts...)
			if after := policyRanks(t, srv, "rp"); after != before {
				t.Errorf("the list changed: %s, then %s", before, after)
			}
		})
	}

	t.Run("a get answers the policy, and 404 for one that does not exist", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, list+"/guarded", nil, beta...)
		apptest.WantStatus(t, res, http.StatusOK)
		if !strings.Contains(res.String(), `"metricKeys":["http-errors"]`) {
			t.Errorf("want the guarded config: %s", res.Body)
		}
		apptest.WantError(t, srv.Do(t, http.MethodGet, list+"/nope", nil, beta...), http.StatusNotFound, "not_found", "nope")
		apptest.WantError(t, srv.Do(t, http.MethodGet, releasePoliciesPath("no-project"), nil, beta...), http.StatusNotFound, "not_found")
	})
	t.Run("a put replaces the policy, keeping its _id and rank", func(t *testing.T) {
		id := srv.Do(t, http.MethodGet, list+"/progressive", nil, beta...).Map(t)["_id"]
		body := guardedPolicy("progressive")
		body["name"] = "Now guarded"
		res := srv.Do(t, http.MethodPut, list+"/progressive", body, beta...)
		apptest.WantStatus(t, res, http.StatusOK)
		if m := res.Map(t); m["_id"] != id || m["rank"] != float64(2) || m["name"] != "Now guarded" || m["progressiveReleaseConfig"] != nil {
			t.Errorf("want the same _id, rank 2, the new name and no progressive config: %s", res.Body)
		}
		apptest.WantError(t, srv.Do(t, http.MethodPut, list+"/progressive", guardedPolicy("other"), beta...), http.StatusBadRequest, "invalid_request", "key")
		bad := guardedPolicy("progressive")
		stages(bad)[0]["durationMillis"] = 0
		apptest.WantError(t, srv.Do(t, http.MethodPut, list+"/progressive", bad, beta...), http.StatusBadRequest, "invalid_request", "durationMillis")
		apptest.WantError(t, srv.Do(t, http.MethodPut, list+"/nope", guardedPolicy("nope"), beta...), http.StatusNotFound, "not_found")
	})
	t.Run("an order reassigns every rank", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, list+"/order", []string{"now", "guarded", "progressive"}, beta...)
		apptest.WantStatus(t, res, http.StatusOK)
		if !strings.HasPrefix(res.String(), `[{`) || !strings.Contains(res.String(), `"_access"`) {
			t.Errorf("want the policies, with _access: %s", res.Body)
		}
		if got := policyRanks(t, srv, "rp"); got != "now:1 guarded:2 progressive:3" {
			t.Errorf("got %s", got)
		}
	})
	orders := []struct {
		name  string
		body  any
		parts []string
	}{
		{"a key missing", []string{"now", "guarded"}, []string{"missing keys: progressive"}},
		{"an unknown key", []string{"now", "guarded", "progressive", "ghost"}, []string{"unknown keys: ghost"}},
		{"a key twice", []string{"now", "guarded", "progressive", "now"}, []string{"repeated keys: now"}},
		{"no list", map[string]any{"keys": []string{"now"}}, nil},
	}
	for _, c := range orders {
		t.Run("an order with "+c.name+" is refused with 400, and changes nothing", func(t *testing.T) {
			apptest.WantError(t, srv.Do(t, http.MethodPost, list+"/order", c.body, beta...), http.StatusBadRequest, "invalid_request", c.parts...)
			if got := policyRanks(t, srv, "rp"); got != "now:1 guarded:2 progressive:3" {
				t.Errorf("got %s", got)
			}
		})
	}
	t.Run("a delete answers 204, then the policy is gone and the others keep their ranks", func(t *testing.T) {
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, list+"/guarded", nil, beta...), http.StatusNoContent)
		apptest.WantError(t, srv.Do(t, http.MethodGet, list+"/guarded", nil, beta...), http.StatusNotFound, "not_found")
		apptest.WantError(t, srv.Do(t, http.MethodDelete, list+"/guarded", nil, beta...), http.StatusNotFound, "not_found")
		if got := policyRanks(t, srv, "rp"); got != "now:1 progressive:3" {
			t.Errorf("got %s", got)
		}
	})
	t.Run("every mutation is in the audit log", func(t *testing.T) {
		log := srv.Do(t, http.MethodGet, apptest.API+"/auditlog?limit=20", nil).String()
		for _, verb := range []string{"created the release policy", "updated the release policy", "reordered the", "deleted the release policy"} {
			if !strings.Contains(log, verb) {
				t.Errorf("no entry %q in %s", verb, log)
			}
		}
	})
}

func guarded(m map[string]any) map[string]any { return m["guardedReleaseConfig"].(map[string]any) }

func stages(m map[string]any) []map[string]any {
	return guarded(m)["stages"].([]map[string]any)
}

// raceTable runs hook once, the first time after it is armed that the
// release policies of a project have been listed: a write of another request
// landing between the read and the commit of an order.
type raceTable struct {
	store.Table
	armed atomic.Bool
	hook  func()
}

func (t *raceTable) Query(ctx context.Context, q store.Query) (store.Page, error) {
	page, err := t.Table.Query(ctx, q)
	if q.SKPrefix == store.ReleasePolicyPrefix && t.armed.CompareAndSwap(true, false) {
		t.hook()
	}
	return page, err
}

func TestReleasePolicyOrderRaces(t *testing.T) {
	bt, err := bolt.Open(filepath.Join(t.TempDir(), "race.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bt.Close() })
	table := &raceTable{Table: bt}
	srv := apptest.New(t, apptest.WithTable(table))
	srv.MustCreateProject(t, "race")
	list := releasePoliciesPath("race")
	for _, k := range []string{"a", "b"} {
		apptest.WantStatus(t, srv.Do(t, http.MethodPost, list, progressivePolicy(k), apptest.BetaHeader...), http.StatusCreated)
	}
	policies := srv.App.Services.ReleasePolicies

	races := []struct {
		name string
		hook func() error
		want string
	}{
		{"a create", func() error {
			_, err := policies.Create(context.Background(), "race", releasepolicy.Input{Key: "c", Name: "C", ReleaseMethod: releasepolicy.MethodImmediate})
			return err
		}, "a:1 b:2 c:3"},
		{"a delete", func() error { return policies.Delete(context.Background(), "race", "c") }, "a:1 b:2"},
	}
	for _, c := range races {
		t.Run(c.name+" between an order's read and its commit makes the order 409, and no rank changes", func(t *testing.T) {
			table.hook = func() {
				if err := c.hook(); err != nil {
					t.Errorf("%s: %v", c.name, err)
				}
			}
			table.armed.Store(true)
			body := []string{"b", "a"}
			if c.name == "a delete" {
				body = []string{"b", "a", "c"}
			}
			apptest.WantError(t, srv.Do(t, http.MethodPost, list+"/order", body, apptest.BetaHeader...), http.StatusConflict, "optimistic_locking_error", "changed by another request")
			if got := policyRanks(t, srv, "race"); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}
