package pipelineapi_test

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/pipeline"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

// releaseFixture is a project with a two-phase pipeline (test, then
// production) and flags released through it.
type releaseFixture struct {
	srv     *apptest.Server
	project string
}

func newReleaseFixture(tb testing.TB, srv *apptest.Server, project string) *releaseFixture {
	tb.Helper()
	srv.MustCreateProject(tb, project) // environments test and production
	body := apptest.PipelineBody("two", "test", "production")
	// The test audience asks for approval, so its phase takes extra configuration as it starts.
	body["phases"].([]map[string]any)[0]["audiences"].([]map[string]any)[0]["configuration"] = map[string]any{"releaseStrategy": "monitoredRelease", "requireApproval": true}
	apptest.WantStatus(tb, doBeta(tb, srv, http.MethodPost, apptest.PipelinesPath(project), body), http.StatusCreated)
	return &releaseFixture{srv: srv, project: project}
}

// release creates flag key and adds it to the pipeline; it returns the release.
func (f *releaseFixture) release(tb testing.TB, key string) map[string]any {
	tb.Helper()
	apptest.WantStatus(tb, f.srv.Do(tb, http.MethodPost, apptest.FlagsPath(f.project), map[string]any{"key": key, "name": "Flag " + key}), http.StatusCreated)
	res := doBeta(tb, f.srv, http.MethodPut, apptest.FlagReleasePath(f.project, key), map[string]any{"releasePipelineKey": "two"})
	apptest.WantStatus(tb, res, http.StatusOK)
	return res.Map(tb)
}

func (f *releaseFixture) get(tb testing.TB, key string) map[string]any {
	tb.Helper()
	res := doBeta(tb, f.srv, http.MethodGet, apptest.API+"/flags/"+f.project+"/"+key+"/release", nil)
	apptest.WantStatus(tb, res, http.StatusOK)
	return res.Map(tb)
}

func (f *releaseFixture) setStatus(tb testing.TB, key, phaseID string, body any) *apptest.Response {
	tb.Helper()
	return doBeta(tb, f.srv, http.MethodPut, apptest.FlagReleasePath(f.project, key)+"/phases/"+phaseID, body)
}

func (f *releaseFixture) patch(tb testing.TB, key string, ops ...apptest.PatchOp) *apptest.Response {
	tb.Helper()
	return doBeta(tb, f.srv, http.MethodPatch, apptest.API+"/flags/"+f.project+"/"+key+"/release", ops)
}

func (f *releaseFixture) progressions(tb testing.TB, query string) map[string]any {
	tb.Helper()
	res := doBeta(tb, f.srv, http.MethodGet, apptest.PipelinesPath(f.project)+"/two/releases"+query, nil)
	apptest.WantStatus(tb, res, http.StatusOK)
	return res.Map(tb)
}

// latestAudit is the newest audit log entry.
func latestAudit(tb testing.TB, srv *apptest.Server) map[string]any {
	tb.Helper()
	return srv.Do(tb, http.MethodGet, apptest.API+"/auditlog", nil).Map(tb)["items"].([]any)[0].(map[string]any)
}

func phaseOf(rel map[string]any, i int) map[string]any {
	return rel["phases"].([]any)[i].(map[string]any)
}

func phaseIDs(tb testing.TB, rel map[string]any) []string {
	tb.Helper()
	var ids []string
	for _, p := range rel["phases"].([]any) {
		ids = append(ids, p.(map[string]any)["_id"].(string))
	}
	if len(ids) != 2 {
		tb.Fatalf("release phases %v, want 2", rel["phases"])
	}
	return ids
}

func TestReleasePhaseStatus(t *testing.T) {
	f := newReleaseFixture(t, apptest.New(t), "p")
	rel := f.release(t, "f1")
	ids := phaseIDs(t, rel)

	t.Run("a new release's first phase is neither started nor complete", func(t *testing.T) {
		first := phaseOf(rel, 0)
		if first["started"] != false || first["complete"] != false || first["status"] != pipeline.StatusNotStarted || rel["_version"] != float64(1) {
			t.Errorf("first phase %v of release %v", first, rel)
		}
	})
	t.Run("a later phase cannot start or complete before the earlier ones, naming the earlier phase", func(t *testing.T) {
		for _, status := range []string{"active", "completed"} {
			apptest.WantError(t, f.setStatus(t, "f1", ids[1], map[string]any{"status": status}), http.StatusBadRequest, "invalid_request", "Phase test", "in order")
		}
		if got := f.get(t, "f1"); got["_version"] != float64(1) {
			t.Errorf("a refused update changed the release: %v", got)
		}
	})
	t.Run("bad input is refused naming the field, unknown phases and releases are 404", func(t *testing.T) {
		apptest.WantError(t, f.setStatus(t, "f1", ids[0], map[string]any{"status": "paused"}), http.StatusBadRequest, "invalid_request", "status", "active or completed")
		apptest.WantError(t, f.setStatus(t, "f1", ids[0], map[string]any{}), http.StatusBadRequest, "invalid_request", "status")
		apptest.WantError(t, f.setStatus(t, "f1", ids[0], map[string]any{"status": "active", "audiences": []map[string]any{{"audienceId": "nope"}}}),
			http.StatusBadRequest, "invalid_request", "audiences[0].audienceId")
		apptest.WantError(t, f.setStatus(t, "f1", "no-such-phase", map[string]any{"status": "active"}), http.StatusNotFound, "not_found", "phase")
		apptest.WantError(t, f.setStatus(t, "ghost", ids[0], map[string]any{"status": "active"}), http.StatusNotFound, "not_found", "release")
	})
	t.Run("starting the first phase makes it active with its audiences' configuration, once", func(t *testing.T) {
		audience := phaseOf(rel, 0)["_audiences"].([]any)[0].(map[string]any)["_id"]
		body := map[string]any{"status": "active", "audiences": []map[string]any{{"audienceId": audience, "notifyMemberIds": []string{"m1"},
			"releaseGuardianConfiguration": map[string]any{"monitoringWindowMilliseconds": 60000, "rolloutWeight": 50, "rollbackOnRegression": true, "randomizationUnit": "user"}}}}
		res := f.setStatus(t, "f1", ids[0], body)
		apptest.WantStatus(t, res, http.StatusOK)
		got := res.Map(t)
		first := phaseOf(got, 0)
		conf := first["_audiences"].([]any)[0].(map[string]any)["configuration"].(map[string]any)
		if first["status"] != pipeline.StatusActive || first["started"] != true || first["complete"] != false || got["_version"] != float64(2) {
			t.Errorf("after start: %v", got)
		}
		if _, ok := first["_startedDate"].(float64); !ok {
			t.Errorf("_startedDate %v is not set", first["_startedDate"])
		}
		if conf["notifyMemberIds"].([]any)[0] != "m1" || conf["releaseGuardianConfiguration"].(map[string]any)["rolloutWeight"] != float64(50) || conf["requireApproval"] != true {
			t.Errorf("audience configuration %v", conf)
		}
		if e := latestAudit(t, f.srv); !strings.Contains(e["titleVerb"].(string), "started phase Phase test") || e["name"] != "Flag f1" {
			t.Errorf("audit entry %v", e)
		}
		// A retried start changes nothing.
		again := f.setStatus(t, "f1", ids[0], map[string]any{"status": "active"})
		apptest.WantStatus(t, again, http.StatusOK)
		if v := again.Map(t)["_version"]; v != float64(2) {
			t.Errorf("a retried start moved the version to %v", v)
		}
	})
	t.Run("completing the first phase moves the release's progression to the second", func(t *testing.T) {
		res := f.setStatus(t, "f1", ids[0], map[string]any{"status": "completed"})
		apptest.WantStatus(t, res, http.StatusOK)
		got := res.Map(t)
		first := phaseOf(got, 0)
		if first["complete"] != true || first["status"] != pipeline.StatusCompleted || got["_version"] != float64(3) {
			t.Errorf("after complete: %v", got)
		}
		if _, ok := first["_completionDate"].(float64); !ok {
			t.Errorf("_completionDate %v is not set", first["_completionDate"])
		}
		if e := latestAudit(t, f.srv); !strings.Contains(e["titleVerb"].(string), "completed phase Phase test") {
			t.Errorf("audit entry %v", e)
		}
		prog := f.progressions(t, "")
		item := prog["items"].([]any)[0].(map[string]any)
		counts := prog["phases"].([]any)
		if item["activePhaseId"] != ids[1] || counts[0].(map[string]any)["releaseCount"] != float64(0) || counts[1].(map[string]any)["releaseCount"] != float64(1) {
			t.Errorf("progressions %v", prog)
		}
		apptest.WantError(t, f.setStatus(t, "f1", ids[0], map[string]any{"status": "active"}), http.StatusBadRequest, "invalid_request", "already complete")
	})
	t.Run("completing the last phase completes the release", func(t *testing.T) {
		apptest.WantStatus(t, f.setStatus(t, "f1", ids[1], map[string]any{"status": "completed"}), http.StatusOK)
		prog := f.progressions(t, "?filter=status:completed")
		if prog["totalCount"] != float64(1) || prog["completedCount"] != float64(1) || prog["activeCount"] != float64(0) {
			t.Fatalf("progressions %v", prog)
		}
		if item := prog["items"].([]any)[0].(map[string]any); item["_completedAt"] == nil || item["activePhaseId"] != nil {
			t.Errorf("completed progression %v", item)
		}
	})
}

func TestReleasePatch(t *testing.T) {
	f := newReleaseFixture(t, apptest.New(t), "p")
	f.release(t, "f1")
	for _, c := range []struct {
		name   string
		ops    []apptest.PatchOp
		status int
		want   string
	}{
		{"marking the second phase complete first is refused naming the first", []apptest.PatchOp{apptest.Replace("/phases/1/complete", true)}, http.StatusBadRequest, "Phase test"},
		{"a path other than a phase's complete is refused", []apptest.PatchOp{apptest.Replace("/name", "x")}, http.StatusBadRequest, "/phases/{index}/complete"},
		{"an index past the phases is refused", []apptest.PatchOp{apptest.Replace("/phases/2/complete", true)}, http.StatusBadRequest, "index 0 to 1"},
		{"a value that is not a boolean is refused", []apptest.PatchOp{apptest.Replace("/phases/0/complete", "yes")}, http.StatusBadRequest, "true or false"},
		{"an op other than replace is refused", []apptest.PatchOp{{Op: "remove", Path: "/phases/0/complete"}}, http.StatusBadRequest, "replace"},
		{"both phases complete in one patch, in order", []apptest.PatchOp{apptest.Replace("/phases/0/complete", true), apptest.Replace("/phase/1/complete", true)}, http.StatusOK, ""},
		{"the first phase cannot be reopened while the second has started", []apptest.PatchOp{apptest.Replace("/phases/0/complete", false)}, http.StatusBadRequest, "Phase production"},
		{"the last phase can be reopened", []apptest.PatchOp{apptest.Replace("/phases/1/complete", false)}, http.StatusOK, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := f.get(t, "f1")["_version"]
			res := f.patch(t, "f1", c.ops...)
			if c.status != http.StatusOK {
				apptest.WantError(t, res, c.status, "invalid_request", c.want)
				if after := f.get(t, "f1")["_version"]; after != before {
					t.Errorf("a refused patch moved the version from %v to %v", before, after)
				}
				return
			}
			apptest.WantStatus(t, res, http.StatusOK)
			if got := res.Map(t)["_version"]; got != before.(float64)+1 {
				t.Errorf("version %v after %v", got, before)
			}
		})
	}
	t.Run("the release is active on its last phase again and the audit log records the patch", func(t *testing.T) {
		rel := f.get(t, "f1")
		if phaseOf(rel, 0)["complete"] != true || phaseOf(rel, 1)["complete"] != false || phaseOf(rel, 1)["status"] != pipeline.StatusActive {
			t.Errorf("release %v", rel)
		}
		if prog := f.progressions(t, ""); prog["activeCount"] != float64(1) {
			t.Errorf("progressions %v", prog)
		}
		if e := latestAudit(t, f.srv); !strings.Contains(e["titleVerb"].(string), "updated the phases") {
			t.Errorf("audit entry %v", e)
		}
	})
}

func TestReleaseDelete(t *testing.T) {
	f := newReleaseFixture(t, apptest.New(t), "p")
	f.release(t, "f1")
	apptest.WantStatus(t, doBeta(t, f.srv, http.MethodPost, apptest.PipelinesPath("p"), apptest.PipelineBody("other", "production")), http.StatusCreated)
	path := apptest.API + "/flags/p/f1/release"

	t.Run("deleting a release takes the flag out of its pipeline", func(t *testing.T) {
		apptest.WantStatus(t, doBeta(t, f.srv, http.MethodDelete, path, nil), http.StatusNoContent)
		apptest.WantStatus(t, doBeta(t, f.srv, http.MethodGet, path, nil), http.StatusNotFound)
		if prog := f.progressions(t, ""); prog["totalCount"] != float64(0) || prog["activeCount"] != float64(0) {
			t.Errorf("progressions %v", prog)
		}
		if e := latestAudit(t, f.srv); !strings.Contains(e["titleVerb"].(string), "removed the flag from release pipeline") || e["name"] != "Flag f1" {
			t.Errorf("audit entry %v", e)
		}
	})
	t.Run("a missing release is 404 and the flag may join another pipeline", func(t *testing.T) {
		apptest.WantError(t, doBeta(t, f.srv, http.MethodDelete, path, nil), http.StatusNotFound, "not_found", "release")
		apptest.WantError(t, doBeta(t, f.srv, http.MethodDelete, apptest.API+"/flags/p/ghost/release", nil), http.StatusNotFound, "not_found")
		apptest.WantStatus(t, doBeta(t, f.srv, http.MethodPut, apptest.FlagReleasePath("p", "f1"), map[string]any{"releasePipelineKey": "other"}), http.StatusOK)
	})
	t.Run("deleting the flag deletes its release, so a flag made again with the key starts outside any pipeline", func(t *testing.T) {
		f.release(t, "f2")
		if prog := f.progressions(t, ""); prog["totalCount"] != float64(1) {
			t.Fatalf("progressions with f2's release %v; want it counted", prog)
		}
		apptest.WantStatus(t, f.srv.Do(t, http.MethodDelete, apptest.API+"/flags/p/f2", nil), http.StatusNoContent)
		if prog := f.progressions(t, ""); prog["totalCount"] != float64(0) {
			t.Errorf("progressions after the flag's delete %v; want f2's release gone", prog)
		}
		apptest.WantStatus(t, f.srv.Do(t, http.MethodPost, apptest.API+"/flags/p", map[string]any{"key": "f2", "name": "Flag f2"}), http.StatusCreated)
		apptest.WantStatus(t, doBeta(t, f.srv, http.MethodGet, apptest.API+"/flags/p/f2/release", nil), http.StatusNotFound)
	})
	t.Run("an audience its pipeline left unconfigured takes no extra configuration", func(t *testing.T) {
		rel := f.get(t, "f1")
		audience := phaseOf(rel, 0)["_audiences"].([]any)[0].(map[string]any)["_id"]
		body := map[string]any{"status": "active", "audiences": []map[string]any{{"audienceId": audience, "notifyTeamKeys": []string{"devs"}}}}
		apptest.WantError(t, f.setStatus(t, "f1", phaseOf(rel, 0)["_id"].(string), body), http.StatusBadRequest, "invalid_request", "audiences[0].audienceId", "no configuration")
	})
}

// releaseRaceTable runs hook once, when armed, right after a request has
// read a flag's release: another writer landing between a read and its commit.
type releaseRaceTable struct {
	store.Table
	armed atomic.Bool
	hook  func()
}

func (t *releaseRaceTable) Get(ctx context.Context, k store.Key) (store.Item, error) {
	it, err := t.Table.Get(ctx, k)
	if strings.HasPrefix(k.SK, store.ReleaseSKPrefix) && t.armed.CompareAndSwap(true, false) {
		t.hook()
	}
	return it, err
}

func TestReleaseLostRaces(t *testing.T) {
	bt, err := bolt.Open(filepath.Join(t.TempDir(), "race.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bt.Close() })
	table := &releaseRaceTable{Table: bt}
	f := newReleaseFixture(t, apptest.New(t, apptest.WithTable(table)), "race")
	pipes := f.srv.App.Services.Pipelines
	complete := func(tb testing.TB, phase string) func() {
		return func() {
			if _, err := pipes.UpdatePhaseStatus(context.Background(), "race", "f1", phase, pipeline.PhaseStatusInput{Status: "completed"}); err != nil {
				tb.Errorf("the other writer: %v", err)
			}
		}
	}
	ids := phaseIDs(t, f.release(t, "f1"))

	for _, c := range []struct {
		name string
		send func(tb testing.TB) *apptest.Response
		hook string
	}{
		{"a phase status update", func(tb testing.TB) *apptest.Response {
			return f.setStatus(tb, "f1", ids[0], map[string]any{"status": "active"})
		}, ids[0]},
		{"a patch", func(tb testing.TB) *apptest.Response {
			return f.patch(tb, "f1", apptest.Replace("/phases/0/complete", false))
		}, ids[1]},
		{"a delete", func(tb testing.TB) *apptest.Response {
			return doBeta(tb, f.srv, http.MethodDelete, apptest.API+"/flags/race/f1/release", nil)
		}, ""},
	} {
		t.Run(c.name+" that loses the race to another write is 409 and leaves the other write", func(t *testing.T) {
			if c.hook == "" {
				// Reopen the last phase, so the other writer has something to do.
				apptest.WantStatus(t, f.patch(t, "f1", apptest.Replace("/phases/1/complete", false)), http.StatusOK)
				c.hook = ids[1]
			}
			before := f.get(t, "f1")["_version"].(float64)
			table.hook = complete(t, c.hook)
			table.armed.Store(true)
			apptest.WantError(t, c.send(t), http.StatusConflict, "optimistic_locking_error", "changed by another request")
			if got := f.get(t, "f1"); got["_version"] != before+1 || phaseOf(got, slices.Index(ids, c.hook))["complete"] != true {
				t.Errorf("after the race: %v (version before %v)", got, before)
			}
		})
	}
}

func TestReleaseConcurrentUpdates(t *testing.T) {
	f := newReleaseFixture(t, apptest.New(t), "p")
	ids := phaseIDs(t, f.release(t, "f1"))
	t.Run("concurrent completions of one phase write it once; the others answer it or 409", func(t *testing.T) {
		won := apptest.Concurrently(t, 8, func(int) *apptest.Response {
			return f.setStatus(t, "f1", ids[0], map[string]any{"status": "completed"})
		})
		got := f.get(t, "f1")
		if got["_version"] != float64(2) || phaseOf(got, 0)["complete"] != true {
			t.Errorf("%d answered 200, release %v: want one write (version 2) and the phase complete", len(won), got)
		}
	})
}
