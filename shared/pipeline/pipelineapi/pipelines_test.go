package pipelineapi_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// doBeta sends a request with the beta header the release pipeline operations need.
func doBeta(tb testing.TB, srv *apptest.Server, method, path string, body any) *apptest.Response {
	tb.Helper()
	return srv.Do(tb, method, path, body, apptest.BetaHeader...)
}

func TestReleasePipelines(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p") // environments test and production
	defaultOf := func(tb testing.TB) any {
		tb.Helper()
		return srv.Do(tb, http.MethodGet, apptest.ProjectPath("p"), nil).Map(tb)["defaultReleasePipelineKey"]
	}

	t.Run("the first pipeline of a project becomes its default", func(t *testing.T) {
		res := doBeta(t, srv, http.MethodPost, apptest.PipelinesPath("p"), apptest.PipelineBody("first", "test", "production"))
		apptest.WantStatus(t, res, http.StatusCreated)
		got := res.Map(t)
		if got["isProjectDefault"] != true || got["_access"] == nil || got["_version"] != float64(1) {
			t.Fatalf("pipeline %v", got)
		}
		if _, ok := got["createdAt"].(string); !ok {
			t.Errorf("createdAt %v is not a string", got["createdAt"])
		}
		phases := got["phases"].([]any)
		env := phases[0].(map[string]any)["audiences"].([]any)[0].(map[string]any)["environment"].(map[string]any)
		if len(phases) != 2 || env["key"] != "test" || env["name"] != "Test" {
			t.Errorf("phases %v", phases)
		}
		if d := defaultOf(t); d != "first" {
			t.Errorf("project default %v, want first", d)
		}
		entry := srv.Do(t, http.MethodGet, apptest.API+"/auditlog", nil).Map(t)["items"].([]any)[0].(map[string]any)
		if entry["name"] != "Pipeline first" {
			t.Errorf("latest audit entry %v", entry)
		}
	})
	t.Run("a second pipeline is not the default unless it asks to be", func(t *testing.T) {
		res := doBeta(t, srv, http.MethodPost, apptest.PipelinesPath("p"), apptest.PipelineBody("second", "production"))
		apptest.WantStatus(t, res, http.StatusCreated)
		if got := res.Map(t)["isProjectDefault"]; got != false {
			t.Errorf("isProjectDefault %v", got)
		}
		body := apptest.PipelineBody("third", "test")
		body["isProjectDefault"] = true
		apptest.WantStatus(t, doBeta(t, srv, http.MethodPost, apptest.PipelinesPath("p"), body), http.StatusCreated)
		if d := defaultOf(t); d != "third" {
			t.Errorf("project default %v, want third", d)
		}
		list := doBeta(t, srv, http.MethodGet, apptest.PipelinesPath("p"), nil)
		apptest.WantStatus(t, list, http.StatusOK)
		if got := apptest.ItemKeys(t, list); fmt.Sprint(got) != "[first second third]" {
			t.Errorf("list %v", got)
		}
	})
	t.Run("bad input is refused naming the field and stores nothing", func(t *testing.T) {
		for _, c := range []struct {
			name  string
			body  map[string]any
			field string
		}{
			{"an unknown environment", apptest.PipelineBody("bad", "test", "staging"), "phases[1].audiences[0].environmentKey"},
			{"no phases", apptest.PipelineBody("bad"), "phases"},
			{"no name", map[string]any{"key": "bad", "phases": apptest.PipelineBody("x", "test")["phases"]}, "name"},
			{"a bad key", apptest.PipelineBody("bad key", "test"), "key"},
		} {
			t.Run(c.name, func(t *testing.T) {
				apptest.WantError(t, doBeta(t, srv, http.MethodPost, apptest.PipelinesPath("p"), c.body), http.StatusBadRequest, "invalid_request", c.field)
			})
		}
		apptest.WantStatus(t, doBeta(t, srv, http.MethodGet, apptest.PipelinesPath("p")+"/bad", nil), http.StatusNotFound)
		apptest.WantError(t, doBeta(t, srv, http.MethodPost, apptest.PipelinesPath("p"), apptest.PipelineBody("first", "test")), http.StatusConflict, "conflict")
	})
	t.Run("a replace changes the pipeline and keeps phase ids by position", func(t *testing.T) {
		before := doBeta(t, srv, http.MethodGet, apptest.PipelinesPath("p")+"/second", nil).Map(t)
		body := apptest.PipelineBody("second", "production", "test")
		res := doBeta(t, srv, http.MethodPut, apptest.PipelinesPath("p")+"/second", body)
		apptest.WantStatus(t, res, http.StatusOK)
		after := res.Map(t)
		id := func(m map[string]any) any { return m["phases"].([]any)[0].(map[string]any)["id"] }
		if len(after["phases"].([]any)) != 2 || id(after) != id(before) || after["_version"] != float64(2) {
			t.Errorf("before %v after %v", before, after)
		}
		bad := apptest.PipelineBody("second", "nowhere")
		apptest.WantError(t, doBeta(t, srv, http.MethodPut, apptest.PipelinesPath("p")+"/second", bad), http.StatusBadRequest, "invalid_request", "phases[0].audiences[0].environmentKey")
		apptest.WantStatus(t, doBeta(t, srv, http.MethodPut, apptest.PipelinesPath("p")+"/missing", body), http.StatusNotFound)
	})
	t.Run("the default pipeline cannot be deleted and the default must name a pipeline", func(t *testing.T) {
		apptest.WantError(t, doBeta(t, srv, http.MethodDelete, apptest.PipelinesPath("p")+"/third", nil), http.StatusConflict, "conflict", "default")
		apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.ProjectPath("p"), []apptest.PatchOp{apptest.Replace("/defaultReleasePipelineKey", "nope")}),
			http.StatusBadRequest, "invalid_request", "defaultReleasePipelineKey")
		apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.ProjectPath("p"), []apptest.PatchOp{apptest.Replace("/defaultReleasePipelineKey", "first")}), http.StatusOK)
		apptest.WantStatus(t, doBeta(t, srv, http.MethodDelete, apptest.PipelinesPath("p")+"/third", nil), http.StatusNoContent)
		apptest.WantStatus(t, doBeta(t, srv, http.MethodGet, apptest.PipelinesPath("p")+"/third", nil), http.StatusNotFound)
		apptest.WantError(t, srv.Do(t, http.MethodPatch, apptest.ProjectPath("p"), []apptest.PatchOp{apptest.Replace("/defaultReleasePipelineKey", "third")}),
			http.StatusBadRequest, "invalid_request", "defaultReleasePipelineKey")
	})
	t.Run("progressions are the flags released through the pipeline", func(t *testing.T) {
		for _, f := range []string{"f1", "f2"} {
			apptest.WantStatus(t, srv.Do(t, http.MethodPost, apptest.FlagsPath("p"), map[string]any{"key": f, "name": f}), http.StatusCreated)
		}
		progress := func(tb testing.TB, pipe, query string) map[string]any {
			tb.Helper()
			res := doBeta(tb, srv, http.MethodGet, apptest.PipelinesPath("p")+"/"+pipe+"/releases"+query, nil)
			apptest.WantStatus(tb, res, http.StatusOK)
			return res.Map(tb)
		}
		if got := progress(t, "first", ""); got["totalCount"] != float64(0) || len(got["items"].([]any)) != 0 {
			t.Fatalf("before any release: %v", got)
		}
		res := doBeta(t, srv, http.MethodPut, apptest.FlagReleasePath("p", "f1"), map[string]any{"releasePipelineKey": "first"})
		apptest.WantStatus(t, res, http.StatusOK)
		if got := res.Map(t); got["releasePipelineKey"] != "first" || len(got["phases"].([]any)) != 2 {
			t.Fatalf("release %v", got)
		}
		apptest.WantStatus(t, doBeta(t, srv, http.MethodPut, apptest.FlagReleasePath("p", "f2"), map[string]any{"releasePipelineKey": "second"}), http.StatusOK)
		apptest.WantError(t, doBeta(t, srv, http.MethodPut, apptest.FlagReleasePath("p", "f1"), map[string]any{"releasePipelineKey": "second"}), http.StatusConflict, "conflict")
		apptest.WantError(t, doBeta(t, srv, http.MethodPut, apptest.FlagReleasePath("p", "f2"), map[string]any{"releasePipelineKey": "nope"}), http.StatusBadRequest, "invalid_request", "releasePipelineKey")
		apptest.WantStatus(t, doBeta(t, srv, http.MethodPut, apptest.FlagReleasePath("p", "ghost"), map[string]any{"releasePipelineKey": "first"}), http.StatusNotFound)

		got := progress(t, "first", "")
		items := got["items"].([]any)
		firstPhase := doBeta(t, srv, http.MethodGet, apptest.PipelinesPath("p")+"/first", nil).Map(t)["phases"].([]any)[0].(map[string]any)["id"]
		if got["totalCount"] != float64(1) || got["activeCount"] != float64(1) || len(items) != 1 {
			t.Fatalf("progressions %v", got)
		}
		if item := items[0].(map[string]any); item["flagKey"] != "f1" || item["activePhaseId"] != firstPhase {
			t.Errorf("progression %v, want f1 active on %v", item, firstPhase)
		}
		if phases := got["phases"].([]any); phases[0].(map[string]any)["releaseCount"] != float64(1) {
			t.Errorf("phases %v", phases)
		}
		if got := progress(t, "first", "?filter=status:completed"); got["totalCount"] != float64(0) {
			t.Errorf("completed %v", got)
		}
		apptest.WantError(t, doBeta(t, srv, http.MethodGet, apptest.PipelinesPath("p")+"/first/releases?filter=status:done", nil), http.StatusBadRequest, "invalid_request", "status")
		release := doBeta(t, srv, http.MethodGet, apptest.API+"/flags/p/f1/release", nil)
		apptest.WantStatus(t, release, http.StatusOK)

		apptest.WantStatus(t, doBeta(t, srv, http.MethodDelete, apptest.PipelinesPath("p")+"/second", nil), http.StatusNoContent)
		apptest.WantStatus(t, doBeta(t, srv, http.MethodGet, apptest.API+"/flags/p/f2/release", nil), http.StatusNotFound)
	})
}

func TestReleasePipelineLimit(t *testing.T) {
	srv := apptest.New(t)
	t.Run("a project holds at most 20 pipelines", func(t *testing.T) {
		srv.MustCreateProject(t, "serial")
		for i := range 20 {
			apptest.WantStatus(t, doBeta(t, srv, http.MethodPost, apptest.PipelinesPath("serial"), apptest.PipelineBody(fmt.Sprintf("p%d", i), "test")), http.StatusCreated)
		}
		apptest.WantError(t, doBeta(t, srv, http.MethodPost, apptest.PipelinesPath("serial"), apptest.PipelineBody("p20", "test")), http.StatusBadRequest, "invalid_request", "20")
		apptest.WantStatus(t, doBeta(t, srv, http.MethodDelete, apptest.PipelinesPath("serial")+"/p5", nil), http.StatusNoContent)
		apptest.WantStatus(t, doBeta(t, srv, http.MethodPost, apptest.PipelinesPath("serial"), apptest.PipelineBody("p20", "test")), http.StatusCreated)
	})
	t.Run("25 concurrent creates leave exactly 20 pipelines and one default", func(t *testing.T) {
		srv.MustCreateProject(t, "race")
		statuses := make([]int, 25)
		var wg sync.WaitGroup
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = doBeta(t, srv, http.MethodPost, apptest.PipelinesPath("race"), apptest.PipelineBody(fmt.Sprintf("r%d", i), "production")).Status
			}()
		}
		wg.Wait()
		counts := map[int]int{}
		for _, s := range statuses {
			counts[s]++
		}
		if counts[http.StatusCreated] != 20 || counts[http.StatusBadRequest] != 5 {
			t.Errorf("statuses %v, want 20 created and 5 refused", counts)
		}
		list := doBeta(t, srv, http.MethodGet, apptest.PipelinesPath("race")+"?limit=100", nil).Map(t)
		defaults := 0
		for _, it := range list["items"].([]any) {
			if it.(map[string]any)["isProjectDefault"] == true {
				defaults++
			}
		}
		if list["totalCount"] != float64(20) || defaults != 1 {
			t.Errorf("totalCount %v with %d defaults, want 20 with 1", list["totalCount"], defaults)
		}
	})
}
