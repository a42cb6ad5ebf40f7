package flag_test

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/store/bolt"
	"github.com/flagplane/flagplane/shared/store/storetest"
)

// A flag's segmentMatch clauses must name segments of the environment
// when the change commits, whichever way the change comes; a segment a
// flag started using cannot be deleted under it.

// segmentServer serves project p with a flag f and segment "beta" in the
// test environment only, over a table whose writers a test can race.
func segmentServer(tb testing.TB) (*apptest.Server, *storetest.Barrier) {
	tb.Helper()
	table, err := bolt.Open(filepath.Join(tb.TempDir(), "segments.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { table.Close() })
	b := &storetest.Barrier{Table: table}
	srv := apptest.New(tb, apptest.WithTable(b))
	srv.MustCreateProject(tb, "p")
	if res := srv.Do(tb, http.MethodPost, "/api/v2/flags/p", map[string]any{"key": "f", "name": "F"}); res.Status != http.StatusCreated {
		tb.Fatalf("create flag: %d %s", res.Status, res.Body)
	}
	if res := srv.Do(tb, http.MethodPost, "/api/v2/segments/p/test", map[string]any{"key": "beta", "name": "Beta"}); res.Status != http.StatusCreated {
		tb.Fatalf("create segment: %d %s", res.Status, res.Body)
	}
	return srv, b
}

// segmentRule is a JSON patch adding a rule matching segments in env.
func segmentRule(env string, values ...any) []map[string]any {
	return []map[string]any{{"op": "add", "path": "/environments/" + env + "/rules/-", "value": map[string]any{
		"variation": 0, "clauses": []map[string]any{{"attribute": "", "op": "segmentMatch", "values": values}}}}}
}

// semanticRule is a semantic patch adding the same rule.
func semanticRule(env string, values ...any) map[string]any {
	return map[string]any{"environmentKey": env, "instructions": []map[string]any{{"kind": "addRule", "variationId": "", "clauses": []map[string]any{
		{"attribute": "", "op": "segmentMatch", "values": values}}}}}
}

func TestFlagsUseOnlySegmentsThatExist(t *testing.T) {
	srv, _ := segmentServer(t)
	var f struct {
		Variations []struct {
			ID string `json:"_id"`
		} `json:"variations"`
	}
	srv.Do(t, http.MethodGet, "/api/v2/flags/p/f", nil).JSON(t, &f)
	semantic := func(env string, values ...any) map[string]any {
		sp := semanticRule(env, values...)
		sp["instructions"].([]map[string]any)[0]["variationId"] = f.Variations[0].ID
		return sp
	}
	const semanticType = "application/json; domain-model=launchdarkly.semanticpatch"
	tests := []struct {
		name        string
		body        any
		contentType string
		status      int
		parts       []string
	}{
		{"a JSON patch adding a rule on a segment that does not exist is refused, naming it",
			segmentRule("test", "nobody"), "", http.StatusBadRequest, []string{`segment "nobody" does not exist in environment "test"`}},
		{"a segment of another environment does not count",
			segmentRule("production", "beta"), "", http.StatusBadRequest, []string{`segment "beta" does not exist in environment "production"`}},
		{"a segmentMatch value that is not a segment key is refused",
			segmentRule("test", 7), "", http.StatusBadRequest, []string{"values[0]", "segment key"}},
		{"a semantic patch adding a rule on a missing segment is refused, naming it",
			semantic("test", "nobody"), semanticType, http.StatusBadRequest, []string{`segment "nobody"`}},
		{"a semantic patch adding a rule on the environment's segment is made",
			semantic("test", "beta"), semanticType, http.StatusOK, nil},
		{"a JSON patch adding a second rule on it is made",
			segmentRule("test", "beta"), "", http.StatusOK, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var res *apptest.Response
			if tt.contentType != "" {
				data, _ := json.Marshal(tt.body)
				res = srv.Do(t, http.MethodPatch, "/api/v2/flags/p/f", data, "Content-Type", tt.contentType)
			} else {
				res = srv.Do(t, http.MethodPatch, "/api/v2/flags/p/f", tt.body)
			}
			if tt.status != http.StatusOK {
				apptest.WantError(t, res, tt.status, "invalid_request", tt.parts...)
				return
			}
			apptest.WantStatus(t, res, tt.status)
		})
	}

	t.Run("the segment the flag uses cannot be deleted, and the refusal names the flag", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodDelete, "/api/v2/segments/p/test/beta", nil), http.StatusConflict, "conflict", `flag "f"`)
	})
}

func TestAFlagStartingToUseASegmentRacesItsDelete(t *testing.T) {
	ctx := context.Background()
	for round := range 3 {
		srv, b := segmentServer(t)
		raw, _ := json.Marshal(segmentRule("test", "beta"))
		p, err := patch.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		errs := b.Race(2, func(i int) error {
			if i == 0 {
				_, err := srv.App.Services.Flags.Patch(ctx, "p", "f", p)
				return err
			}
			return srv.App.Services.Segments.Delete(ctx, "p", "test", "beta")
		})
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("round %d: flag change %v, segment delete %v: exactly one must win", round, errs[0], errs[1])
		}
		for _, err := range errs {
			if err != nil && !fault.Is(err, fault.Conflict) && !fault.Is(err, fault.OptimisticLock) {
				t.Fatalf("round %d: the loser's error %v is not a 409", round, err)
			}
		}
		_, segErr := srv.App.Services.Segments.Get(ctx, "p", "test", "beta")
		d, err := srv.App.Services.Flags.Get(ctx, "p", "f")
		if err != nil {
			t.Fatal(err)
		}
		if used := len(d.Flag.Env("test").Rules) > 0; used != (segErr == nil) {
			t.Fatalf("round %d: the flag uses the segment: %v; the segment exists: %v", round, used, segErr == nil)
		}
	}
}
