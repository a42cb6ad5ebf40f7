package segmentapi_test

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/segment"
)

// Expiring targets of segments over HTTP: scheduling, rescheduling and
// unscheduling the removal of a context from a segment's included or
// excluded targets, in the context and the user forms, and the expiry job
// that removes them when due, on a moved clock.

type expResource struct {
	Kind           string `json:"kind"`
	ProjectKey     string `json:"projectKey"`
	EnvironmentKey string `json:"environmentKey"`
	Key            string `json:"key"`
}

type expTarget struct {
	ID             string      `json:"_id"`
	Version        int64       `json:"_version"`
	ExpirationDate int64       `json:"expirationDate"`
	ContextKind    string      `json:"contextKind"`
	ContextKey     string      `json:"contextKey"`
	UserKey        string      `json:"userKey"`
	TargetType     string      `json:"targetType"`
	ResourceID     expResource `json:"_resourceId"`
}

type expList struct {
	Items                  []expTarget `json:"items"`
	TotalInstructions      int         `json:"totalInstructions"`
	SuccessfulInstructions int         `json:"successfulInstructions"`
	Links                  map[string]struct{ Href string }
}

// expClock is the app's clock, which the tests move.
type expClock struct{ ms atomic.Int64 }

func (c *expClock) now() time.Time           { return time.UnixMilli(c.ms.Load()) }
func (c *expClock) move(d time.Duration)     { c.ms.Add(d.Milliseconds()) }
func (c *expClock) at(d time.Duration) int64 { return c.now().Add(d).UnixMilli() }

// expFixture is project p whose production segment "beta" includes users
// u1 and u2 and org acme, and excludes user x1.
type expFixture struct {
	srv   *apptest.Server
	clock *expClock
}

func newExpFixture(t *testing.T) expFixture {
	t.Helper()
	c := &expClock{}
	c.ms.Store(time.Now().UnixMilli())
	fx := expFixture{srv: apptest.New(t, apptest.WithClock(c.now)), clock: c}
	fx.srv.MustCreateProject(t, "p")
	fx.segment(t, "beta")
	// The clock stands still: what the test does next is dated after the setup.
	c.move(time.Second)
	return fx
}

// segment creates segment key of production with the fixture's targets.
func (fx expFixture) segment(t testing.TB, key string) {
	t.Helper()
	apptest.WantStatus(t, fx.srv.Do(t, http.MethodPost, segment.CollectionHref("p", "production"), map[string]any{"key": key, "name": "Beta"}), http.StatusCreated)
	apptest.WantStatus(t, fx.srv.Do(t, http.MethodPatch, segment.Href("p", "production", key), []map[string]any{
		{"op": "replace", "path": "/included", "value": []string{"u1", "u2"}},
		{"op": "replace", "path": "/excluded", "value": []string{"x1"}},
		{"op": "replace", "path": "/includedContexts", "value": []map[string]any{{"contextKind": "org", "values": []string{"acme"}}}},
	}), http.StatusOK)
}

func contextPath(seg string) string {
	return "/api/v2/segments/p/" + seg + "/expiring-targets/production"
}
func userPath(seg string) string {
	return "/api/v2/segments/p/" + seg + "/expiring-user-targets/production"
}

func (fx expFixture) patch(t testing.TB, path string, ins ...map[string]any) *apptest.Response {
	t.Helper()
	return fx.srv.Do(t, http.MethodPatch, path, map[string]any{"comment": "tidy up", "instructions": ins}, "Content-Type", apptest.SemanticType)
}

func (fx expFixture) list(t testing.TB, path string) expList {
	t.Helper()
	return expDecode(t, fx.srv.Do(t, http.MethodGet, path, nil))
}

func expDecode(t testing.TB, res *apptest.Response) expList {
	t.Helper()
	apptest.WantStatus(t, res, http.StatusOK)
	var l expList
	res.JSON(t, &l)
	return l
}

func (fx expFixture) sweep(t testing.TB) (removed, dropped int) {
	t.Helper()
	res, err := fx.srv.App.Services.Expiring.Sweep(context.Background(), fx.clock.now())
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	return res.Removed, res.Dropped
}

func (fx expFixture) get(t testing.TB, key string) segment.Segment {
	t.Helper()
	res := fx.srv.Do(t, http.MethodGet, segment.Href("p", "production", key), nil)
	apptest.WantStatus(t, res, http.StatusOK)
	var s segment.Segment
	res.JSON(t, &s)
	return s
}

func add(targetType, kind, key string, at int64) map[string]any {
	return apptest.Instr("addExpiringTarget", "targetType", targetType, "contextKind", kind, "contextKey", key, "value", at)
}

func TestSegmentExpiringTargetsPatch(t *testing.T) {
	cases := []struct {
		name  string
		run   func(t *testing.T, fx expFixture) *apptest.Response
		check func(t *testing.T, fx expFixture, res *apptest.Response)
	}{
		{"scheduling contexts by kind answers them in the context form, and the user form shows only the users",
			func(t *testing.T, fx expFixture) *apptest.Response {
				return fx.patch(t, contextPath("beta"), add("included", "user", "u1", fx.clock.at(time.Hour)),
					add("included", "org", "acme", fx.clock.at(2*time.Hour)), add("excluded", "user", "x1", fx.clock.at(3*time.Hour)))
			},
			func(t *testing.T, fx expFixture, res *apptest.Response) {
				l := expDecode(t, res)
				if len(l.Items) != 3 || l.TotalInstructions != 3 || l.SuccessfulInstructions != 3 {
					t.Fatalf("answer %s", res.Body)
				}
				var acme expTarget
				for _, it := range l.Items {
					if it.ContextKey == "acme" {
						acme = it
					}
				}
				want := expResource{Kind: "segment", ProjectKey: "p", EnvironmentKey: "production", Key: "beta"}
				if acme.ContextKind != "org" || acme.TargetType != "included" || acme.ExpirationDate != fx.clock.at(2*time.Hour) ||
					acme.Version != 1 || acme.ID == "" || acme.ResourceID != want {
					t.Errorf("acme's removal %+v", acme)
				}
				users := fx.list(t, userPath("beta"))
				if len(users.Items) != 2 || users.Items[0].UserKey == "" || users.Items[0].ContextKey != "" {
					t.Errorf("the user form lists %+v, want u1 and x1 by userKey", users.Items)
				}
				if got := fx.list(t, contextPath("beta")); len(got.Items) != 3 {
					t.Errorf("the context form lists %d removals, want 3", len(got.Items))
				}
				e := apptest.LatestAuditEntry(t, fx.srv)
				if e.Access() != "updateExpiringTargets proj/p:env/production:segment/beta" || e.Comment != "tidy up" {
					t.Errorf("audit entry %s, comment %q", e.Access(), e.Comment)
				}
			}},
		{"the user form schedules a user key with addExpireUserTargetDate",
			func(t *testing.T, fx expFixture) *apptest.Response {
				return fx.patch(t, userPath("beta"), apptest.Instr("addExpireUserTargetDate", "targetType", "excluded", "userKey", "x1", "value", fx.clock.at(time.Hour)))
			},
			func(t *testing.T, fx expFixture, res *apptest.Response) {
				l := expDecode(t, res)
				if len(l.Items) != 1 || l.Items[0].UserKey != "x1" || l.Items[0].TargetType != "excluded" {
					t.Fatalf("answer %s", res.Body)
				}
				if c := fx.list(t, contextPath("beta")).Items; len(c) != 1 || c[0].ContextKind != "user" || c[0].ContextKey != "x1" {
					t.Errorf("the context form shows %+v", c)
				}
			}},
		{"a context not among the targets of that type is refused with 422 naming the instruction, and nothing is scheduled",
			func(t *testing.T, fx expFixture) *apptest.Response {
				return fx.patch(t, contextPath("beta"), add("included", "user", "u1", fx.clock.at(time.Hour)), add("included", "user", "x1", fx.clock.at(time.Hour)))
			},
			func(t *testing.T, fx expFixture, res *apptest.Response) {
				apptest.WantError(t, res, http.StatusUnprocessableEntity, "patch_failed", "instructions[1]", "not in the included targets")
				if l := fx.list(t, contextPath("beta")); len(l.Items) != 0 {
					t.Errorf("instruction 0 applied although 1 failed: %+v", l.Items)
				}
			}},
		{"a context kind that differs from the target's is not the target",
			func(t *testing.T, fx expFixture) *apptest.Response {
				return fx.patch(t, contextPath("beta"), add("included", "org", "u1", fx.clock.at(time.Hour)))
			},
			func(t *testing.T, fx expFixture, res *apptest.Response) {
				apptest.WantError(t, res, http.StatusUnprocessableEntity, "patch_failed", "instructions[0]", `org "u1"`)
			}},
		{"a targetType other than included or excluded is a 400",
			func(t *testing.T, fx expFixture) *apptest.Response {
				return fx.patch(t, contextPath("beta"), add("both", "user", "u1", fx.clock.at(time.Hour)))
			},
			func(t *testing.T, fx expFixture, res *apptest.Response) {
				apptest.WantError(t, res, http.StatusBadRequest, "invalid_request", "instructions[0]", "targetType")
			}},
		{"a date that is not in the future is a 400",
			func(t *testing.T, fx expFixture) *apptest.Response {
				return fx.patch(t, contextPath("beta"), add("included", "user", "u1", fx.clock.at(-time.Minute)))
			},
			func(t *testing.T, fx expFixture, res *apptest.Response) {
				apptest.WantError(t, res, http.StatusBadRequest, "invalid_request", "instructions[0]", "future")
			}},
		{"the other form's instruction kinds are a 400 naming the instruction",
			func(t *testing.T, fx expFixture) *apptest.Response {
				return fx.patch(t, contextPath("beta"), apptest.Instr("addExpireUserTargetDate", "targetType", "included", "userKey", "u1", "value", fx.clock.at(time.Hour)))
			},
			func(t *testing.T, fx expFixture, res *apptest.Response) {
				apptest.WantError(t, res, http.StatusBadRequest, "invalid_request", "instructions[0]", "addExpiringTarget")
			}},
		{"a JSON patch body is refused: expiring targets take semantic patches only",
			func(t *testing.T, fx expFixture) *apptest.Response {
				return fx.srv.Do(t, http.MethodPatch, contextPath("beta"), []map[string]any{{"op": "replace", "path": "/x", "value": 1}})
			},
			func(t *testing.T, fx expFixture, res *apptest.Response) {
				apptest.WantError(t, res, http.StatusBadRequest, "invalid_request", "semantic patch")
			}},
		{"a missing segment is a 404 naming it, for reads and patches",
			func(t *testing.T, fx expFixture) *apptest.Response {
				apptest.WantError(t, fx.srv.Do(t, http.MethodGet, contextPath("nope"), nil), http.StatusNotFound, "not_found", `segment "nope"`)
				return fx.patch(t, userPath("nope"), apptest.Instr("addExpireUserTargetDate", "targetType", "included", "userKey", "u1", "value", fx.clock.at(time.Hour)))
			},
			func(t *testing.T, fx expFixture, res *apptest.Response) {
				apptest.WantError(t, res, http.StatusNotFound, "not_found", `segment "nope"`)
			}},
		{"a big segment's targets cannot be scheduled",
			func(t *testing.T, fx expFixture) *apptest.Response {
				apptest.WantStatus(t, fx.srv.Do(t, http.MethodPost, segment.CollectionHref("p", "production"),
					map[string]any{"key": "big", "name": "Big", "unbounded": true, "unboundedContextKind": "user"}), http.StatusCreated)
				return fx.patch(t, contextPath("big"), add("included", "user", "u1", fx.clock.at(time.Hour)))
			},
			func(t *testing.T, fx expFixture, res *apptest.Response) {
				apptest.WantError(t, res, http.StatusBadRequest, "invalid_request", "big segment")
			}},
		{"adding twice is refused, an update moves the date and the version, a stale version is refused, a removal unschedules",
			func(t *testing.T, fx expFixture) *apptest.Response {
				apptest.WantStatus(t, fx.patch(t, contextPath("beta"), add("included", "user", "u1", fx.clock.at(time.Hour))), http.StatusOK)
				apptest.WantError(t, fx.patch(t, contextPath("beta"), add("included", "user", "u1", fx.clock.at(time.Hour))),
					http.StatusUnprocessableEntity, "patch_failed", "already", "updateExpiringTarget")
				l := expDecode(t, fx.patch(t, contextPath("beta"), apptest.Instr("updateExpiringTarget", "targetType", "included", "contextKind", "user",
					"contextKey", "u1", "value", fx.clock.at(2*time.Hour), "version", 1)))
				if len(l.Items) != 1 || l.Items[0].Version != 2 || l.Items[0].ExpirationDate != fx.clock.at(2*time.Hour) {
					t.Errorf("after the update %+v", l.Items)
				}
				apptest.WantError(t, fx.patch(t, contextPath("beta"), apptest.Instr("updateExpiringTarget", "targetType", "included", "contextKind", "user",
					"contextKey", "u1", "value", fx.clock.at(3*time.Hour), "version", 1)), http.StatusUnprocessableEntity, "patch_failed", "version 1")
				return fx.patch(t, userPath("beta"), apptest.Instr("removeExpireUserTargetDate", "targetType", "included", "userKey", "u1"))
			},
			func(t *testing.T, fx expFixture, res *apptest.Response) {
				if l := expDecode(t, res); len(l.Items) != 0 {
					t.Errorf("after the removal %+v", l.Items)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fx := newExpFixture(t)
			c.check(t, fx, c.run(t, fx))
		})
	}
}

func TestSegmentExpiringTargetsSweep(t *testing.T) {
	t.Run("due removals take the context out of the segment once, through its audited update, and later ones wait", func(t *testing.T) {
		fx := newExpFixture(t)
		apptest.WantStatus(t, fx.patch(t, contextPath("beta"), add("included", "user", "u1", fx.clock.at(time.Hour)),
			add("included", "org", "acme", fx.clock.at(time.Hour)), add("excluded", "user", "x1", fx.clock.at(2*time.Hour))), http.StatusOK)
		before := fx.get(t, "beta")
		fx.clock.move(30 * time.Minute)
		if removed, dropped := fx.sweep(t); removed+dropped != 0 {
			t.Fatalf("a sweep before the date removed %d, dropped %d", removed, dropped)
		}
		fx.clock.move(31 * time.Minute)
		if removed, dropped := fx.sweep(t); removed != 2 || dropped != 0 {
			t.Fatalf("sweep removed %d, dropped %d; want 2, 0", removed, dropped)
		}
		after := fx.get(t, "beta")
		if !slices.Equal(after.Included, []string{"u2"}) || len(after.IncludedContexts) != 0 || !slices.Equal(after.Excluded, []string{"x1"}) {
			t.Errorf("segment after the sweep: included %v, contexts %+v, excluded %v", after.Included, after.IncludedContexts, after.Excluded)
		}
		if after.Version != before.Version+2 {
			t.Errorf("version %d after two removals from %d", after.Version, before.Version)
		}
		e := apptest.LatestAuditEntry(t, fx.srv)
		if e.Kind != "segment" || !slices.Contains(e.Actions(), "updateIncluded") || e.Comment == "" {
			t.Errorf("audit entry %s %v %q", e.Kind, e.Actions(), e.Comment)
		}
		if l := fx.list(t, contextPath("beta")); len(l.Items) != 1 || l.Items[0].ContextKey != "x1" {
			t.Errorf("left scheduled %+v, want x1 only", l.Items)
		}
		if removed, dropped := fx.sweep(t); removed+dropped != 0 {
			t.Errorf("a second sweep removed %d, dropped %d", removed, dropped)
		}
		fx.clock.move(time.Hour)
		if removed, _ := fx.sweep(t); removed != 1 || len(fx.get(t, "beta").Excluded) != 0 {
			t.Errorf("the excluded user's removal: removed %d, excluded %v", removed, fx.get(t, "beta").Excluded)
		}
	})
	t.Run("a context no longer in the segment makes its removal go quietly, the segment untouched", func(t *testing.T) {
		fx := newExpFixture(t)
		apptest.WantStatus(t, fx.patch(t, contextPath("beta"), add("included", "user", "u1", fx.clock.at(time.Hour))), http.StatusOK)
		apptest.WantStatus(t, fx.srv.Do(t, http.MethodPatch, segment.Href("p", "production", "beta"),
			[]map[string]any{{"op": "replace", "path": "/included", "value": []string{"u2"}}}), http.StatusOK)
		before := fx.get(t, "beta")
		fx.clock.move(2 * time.Hour)
		if removed, dropped := fx.sweep(t); removed != 0 || dropped != 1 {
			t.Fatalf("sweep removed %d, dropped %d; want 0, 1", removed, dropped)
		}
		if after := fx.get(t, "beta"); after.Version != before.Version {
			t.Errorf("the segment changed: version %d -> %d", before.Version, after.Version)
		}
		if l := fx.list(t, contextPath("beta")); len(l.Items) != 0 {
			t.Errorf("the removal stayed: %+v", l.Items)
		}
	})
	t.Run("a deleted segment's removals go with it, and never touch a segment created again under its key", func(t *testing.T) {
		fx := newExpFixture(t)
		apptest.WantStatus(t, fx.patch(t, contextPath("beta"), add("included", "user", "u1", fx.clock.at(time.Hour))), http.StatusOK)
		apptest.WantStatus(t, fx.srv.Do(t, http.MethodDelete, segment.Href("p", "production", "beta"), nil), http.StatusNoContent)
		fx.segment(t, "beta")
		if l := fx.list(t, contextPath("beta")); len(l.Items) != 0 {
			t.Errorf("the new segment shows the old one's removals: %+v", l.Items)
		}
		fx.clock.move(2 * time.Hour)
		if removed, dropped := fx.sweep(t); removed != 0 || dropped != 1 {
			t.Errorf("sweep removed %d, dropped %d; want 0, 1", removed, dropped)
		}
		if got := fx.get(t, "beta").Included; !slices.Equal(got, []string{"u1", "u2"}) {
			t.Errorf("the new segment's included users %v", got)
		}
	})
	t.Run("sweeps racing each other remove each due context once", func(t *testing.T) {
		fx := newExpFixture(t)
		apptest.WantStatus(t, fx.patch(t, contextPath("beta"), add("included", "user", "u1", fx.clock.at(time.Hour)),
			add("included", "user", "u2", fx.clock.at(time.Hour))), http.StatusOK)
		before := fx.get(t, "beta")
		fx.clock.move(2 * time.Hour)
		var total atomic.Int64
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				removed, _ := fx.sweep(t)
				total.Add(int64(removed))
			}()
		}
		wg.Wait()
		for total.Load() < 2 {
			// A sweep that lost the segment's version to another leaves its removal to the next run.
			removed, _ := fx.sweep(t)
			if removed == 0 {
				break
			}
			total.Add(int64(removed))
		}
		after := fx.get(t, "beta")
		if total.Load() != 2 || len(after.Included) != 0 || after.Version != before.Version+2 {
			t.Errorf("removed %d in all, included %v, version %d -> %d", total.Load(), after.Included, before.Version, after.Version)
		}
	})
	t.Run("an environment requiring approval for segments does not hold a scheduled removal", func(t *testing.T) {
		fx := newExpFixture(t)
		apptest.WantStatus(t, fx.patch(t, contextPath("beta"), add("included", "user", "u1", fx.clock.at(time.Hour))), http.StatusOK)
		apptest.SetApprovals(t, fx.srv, "p", "production", apptest.PatchOp{Op: "replace", Path: "/resourceApprovalSettings/segment/required", Value: true})
		fx.clock.move(2 * time.Hour)
		if removed, _ := fx.sweep(t); removed != 1 || slices.Contains(fx.get(t, "beta").Included, "u1") {
			t.Errorf("removed %d, included %v", removed, fx.get(t, "beta").Included)
		}
	})
}
