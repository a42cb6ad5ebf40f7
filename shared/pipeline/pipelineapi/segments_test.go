package pipelineapi_test

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// segmentPath is the API path of a segment (of an environment's segments when key is "").
func segmentPath(p, env, key string) string {
	path := apptest.API + "/segments/" + p + "/" + env
	if key != "" {
		path += "/" + key
	}
	return path
}

func createSegment(tb testing.TB, srv *apptest.Server, p, env, key string) {
	tb.Helper()
	res := srv.Do(tb, http.MethodPost, segmentPath(p, env, ""), map[string]any{"key": key, "name": "Segment " + key})
	apptest.WantStatus(tb, res, http.StatusCreated)
}

// audience is one audience of a pipeline body: an environment and the segments it names.
type audience struct {
	env      string
	segments []string
}

// segmentPipeline is a pipeline body with one phase per audience.
func segmentPipeline(key string, audiences ...audience) map[string]any {
	var phases []map[string]any
	for i, a := range audiences {
		phases = append(phases, map[string]any{"name": fmt.Sprintf("Phase %d", i), "audiences": []map[string]any{
			{"environmentKey": a.env, "name": "Audience of " + a.env, "segmentKeys": a.segments}}})
	}
	return map[string]any{"key": key, "name": "Pipeline " + key, "phases": phases}
}

// segmentKeysOf are the segment keys of each audience of a pipeline or
// release answer (a release's phases hold `_audiences`), phase by phase.
func segmentKeysOf(tb testing.TB, res *apptest.Response) [][]string {
	tb.Helper()
	type audiences []struct {
		SegmentKeys []string `json:"segmentKeys"`
	}
	var doc struct {
		Phases []struct {
			Audiences        audiences `json:"audiences"`
			ReleaseAudiences audiences `json:"_audiences"`
		} `json:"phases"`
	}
	res.JSON(tb, &doc)
	var out [][]string
	for _, ph := range doc.Phases {
		for _, a := range append(ph.Audiences, ph.ReleaseAudiences...) {
			out = append(out, a.SegmentKeys)
		}
	}
	return out
}

func TestReleaseAudiencesNameSegmentsOfTheirEnvironment(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p") // environments test and production
	createSegment(t, srv, "p", "test", "staff")
	createSegment(t, srv, "p", "production", "beta")
	createSegment(t, srv, "p", "production", "spare")
	good := segmentPipeline("rollout", audience{"test", []string{"staff"}}, audience{"production", []string{"beta", "spare"}})

	t.Run("audiences naming segments of their environments are stored and shown", func(t *testing.T) {
		res := doBeta(t, srv, http.MethodPost, apptest.PipelinesPath("p"), good)
		apptest.WantStatus(t, res, http.StatusCreated)
		got := segmentKeysOf(t, doBeta(t, srv, http.MethodGet, apptest.PipelinesPath("p")+"/rollout", nil))
		if fmt.Sprint(got) != "[[staff] [beta spare]]" {
			t.Errorf("segmentKeys %v, want [[staff] [beta spare]]", got)
		}
	})
	t.Run("an audience naming a segment its environment lacks is refused naming the field, the segment and the environment", func(t *testing.T) {
		for _, c := range []struct {
			name   string
			body   map[string]any
			field  string
			detail string
		}{
			{"a segment of another environment", segmentPipeline("x", audience{"test", []string{"staff"}}, audience{"production", []string{"beta", "staff"}}),
				"phases[1].audiences[0].segmentKeys[1]", `segment "staff" does not exist in environment "production"`},
			{"a segment that exists nowhere", segmentPipeline("x", audience{"test", []string{"ghost"}}),
				"phases[0].audiences[0].segmentKeys[0]", `segment "ghost" does not exist in environment "test"`},
			{"a segment named twice by one audience", segmentPipeline("x", audience{"production", []string{"beta", "spare", "beta"}}),
				"phases[0].audiences[0].segmentKeys[2]", `repeats segment "beta"`},
			{"a key no segment can have", segmentPipeline("x", audience{"test", []string{"no spaces"}}),
				"phases[0].audiences[0].segmentKeys[0]", `"no spaces" is not a segment key`},
		} {
			t.Run(c.name+", on create: nothing is stored", func(t *testing.T) {
				res := doBeta(t, srv, http.MethodPost, apptest.PipelinesPath("p"), c.body)
				apptest.WantError(t, res, http.StatusBadRequest, "invalid_request", c.field, c.detail)
				apptest.WantStatus(t, doBeta(t, srv, http.MethodGet, apptest.PipelinesPath("p")+"/x", nil), http.StatusNotFound)
			})
			t.Run(c.name+", on replace: the pipeline stays as it was", func(t *testing.T) {
				before := doBeta(t, srv, http.MethodGet, apptest.PipelinesPath("p")+"/rollout", nil).Map(t)["_version"]
				c.body["key"] = "rollout"
				res := doBeta(t, srv, http.MethodPut, apptest.PipelinesPath("p")+"/rollout", c.body)
				apptest.WantError(t, res, http.StatusBadRequest, "invalid_request", c.field, c.detail)
				after := doBeta(t, srv, http.MethodGet, apptest.PipelinesPath("p")+"/rollout", nil)
				if v := after.Map(t)["_version"]; v != before || fmt.Sprint(segmentKeysOf(t, after)) != "[[staff] [beta spare]]" {
					t.Errorf("pipeline at version %v (was %v) with segments %v", v, before, segmentKeysOf(t, after))
				}
			})
		}
	})
	t.Run("a segment an audience names cannot be deleted, and the 409 names the pipeline", func(t *testing.T) {
		res := srv.Do(t, http.MethodDelete, segmentPath("p", "production", "beta"), nil)
		apptest.WantError(t, res, http.StatusConflict, "conflict", `release pipeline "rollout"`)
		apptest.WantStatus(t, srv.Do(t, http.MethodGet, segmentPath("p", "production", "beta"), nil), http.StatusOK)
	})
	t.Run("a flag's active release keeps naming the segment after its pipeline drops it, so the segment stays", func(t *testing.T) {
		apptest.ABCFlag(t, srv, "p", "f")
		rel := doBeta(t, srv, http.MethodPut, apptest.FlagReleasePath("p", "f"), map[string]any{"releasePipelineKey": "rollout"})
		apptest.WantStatus(t, rel, http.StatusOK)
		if got := fmt.Sprint(segmentKeysOf(t, rel)); got != "[[staff] [beta spare]]" {
			t.Errorf("the release's audiences name %v, want the pipeline's [[staff] [beta spare]]", got)
		}
		apptest.WantStatus(t, doBeta(t, srv, http.MethodPut, apptest.PipelinesPath("p")+"/rollout",
			segmentPipeline("rollout", audience{"test", nil}, audience{"production", []string{"spare"}})), http.StatusOK)
		res := srv.Do(t, http.MethodDelete, segmentPath("p", "production", "beta"), nil)
		apptest.WantError(t, res, http.StatusConflict, "conflict", `the release of flag "f"`)
	})
	t.Run("once the release is complete and no pipeline names it, the segment can be deleted", func(t *testing.T) {
		done := doBeta(t, srv, http.MethodPatch, apptest.API+"/flags/p/f/release",
			[]apptest.PatchOp{apptest.Replace("/phases/0/complete", true), apptest.Replace("/phases/1/complete", true)})
		apptest.WantStatus(t, done, http.StatusOK)
		apptest.WantStatus(t, srv.Do(t, http.MethodDelete, segmentPath("p", "production", "beta"), nil), http.StatusNoContent)
		res := srv.Do(t, http.MethodDelete, segmentPath("p", "production", "spare"), nil)
		apptest.WantError(t, res, http.StatusConflict, "conflict", `release pipeline "rollout"`)
	})
}

func TestAPipelineNamingASegmentAndTheSegmentsDeleteNeverBothSucceed(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	const rounds = 8 // a project holds at most 20 pipelines
	outcomes := map[string]int{}
	for i := range rounds {
		seg := fmt.Sprintf("seg-%d", i)
		createSegment(t, srv, "p", "production", seg)
		var created, deleted *apptest.Response
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			created = doBeta(t, srv, http.MethodPost, apptest.PipelinesPath("p"), segmentPipeline(fmt.Sprintf("pipe-%d", i), audience{"production", []string{seg}}))
		}()
		go func() {
			defer wg.Done()
			deleted = srv.Do(t, http.MethodDelete, segmentPath("p", "production", seg), nil)
		}()
		wg.Wait()
		exists := srv.Do(t, http.MethodGet, segmentPath("p", "production", seg), nil).Status == http.StatusOK
		outcome := fmt.Sprintf("pipeline %d, delete %d", created.Status, deleted.Status)
		outcomes[outcome]++
		switch {
		case created.Status == http.StatusCreated && deleted.Status == http.StatusNoContent:
			t.Fatalf("round %d: both the pipeline naming %s and its delete succeeded", i, seg)
		case created.Status == http.StatusCreated && !exists:
			t.Fatalf("round %d: pipeline created naming %s, which no longer exists", i, seg)
		case !slices.Contains([]int{http.StatusCreated, http.StatusBadRequest, http.StatusConflict}, created.Status),
			!slices.Contains([]int{http.StatusNoContent, http.StatusConflict}, deleted.Status):
			t.Fatalf("round %d: %s: %s / %s", i, outcome, created.Body, deleted.Body)
		}
	}
	t.Logf("outcomes: %v", outcomes)
}
