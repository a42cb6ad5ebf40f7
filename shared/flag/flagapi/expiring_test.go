package flagapi_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// Expiring user targets over HTTP: scheduling, rescheduling and
// unscheduling a user's removal from a flag's individual targets, the
// reads by user and by flag, and the job that removes them when due.

type expTarget struct {
	ID             string `json:"_id"`
	Version        int64  `json:"_version"`
	ExpirationDate int64  `json:"expirationDate"`
	UserKey        string `json:"userKey"`
	VariationID    string `json:"variationId"`
	ResourceID     struct {
		ProjectKey     string `json:"projectKey"`
		EnvironmentKey string `json:"environmentKey"`
		FlagKey        string `json:"flagKey"`
		Key            string `json:"key"`
	} `json:"_resourceId"`
}

type expList struct {
	Items                  []expTarget `json:"items"`
	TotalInstructions      int         `json:"totalInstructions"`
	SuccessfulInstructions int         `json:"successfulInstructions"`
}

func expDecode(t testing.TB, res *apptest.Response) expList {
	t.Helper()
	apptest.WantStatus(t, res, http.StatusOK)
	var l expList
	res.JSON(t, &l)
	return l
}

// expFixture is a project with flags f1 and f2 (a, b, c), user "u"
// targeted with b on both in production and "v" with a on f1.
type expFixture struct {
	srv    *apptest.Server
	f1, f2 apptest.FlagDoc
}

func newExpFixture(t *testing.T) expFixture {
	t.Helper()
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	fx := expFixture{srv: srv, f1: apptest.ABCFlag(t, srv, "p", "f1"), f2: apptest.ABCFlag(t, srv, "p", "f2")}
	apptest.WantStatus(t, apptest.SemanticPatchFlag(t, srv, "p", "f1", apptest.SemanticBody("production",
		apptest.Instr("addUserTargets", "values", []string{"u"}, "variationId", fx.f1.VID(1)),
		apptest.Instr("addUserTargets", "values", []string{"v"}, "variationId", fx.f1.VID(0)))), http.StatusOK)
	apptest.WantStatus(t, apptest.SemanticPatchFlag(t, srv, "p", "f2", apptest.SemanticBody("production",
		apptest.Instr("addUserTargets", "values", []string{"u"}, "variationId", fx.f2.VID(1)))), http.StatusOK)
	return fx
}

func (fx expFixture) patchUser(t testing.TB, user string, ins ...map[string]any) *apptest.Response {
	t.Helper()
	return fx.srv.Do(t, http.MethodPatch, apptest.UserExpiringPath("p", user, "production"), map[string]any{"instructions": ins}, "Content-Type", apptest.SemanticType)
}

func (fx expFixture) patchFlag(t testing.TB, f string, ins ...map[string]any) *apptest.Response {
	t.Helper()
	return fx.srv.Do(t, http.MethodPatch, apptest.FlagExpiringPath("p", f, "production"), map[string]any{"instructions": ins}, "Content-Type", apptest.SemanticType)
}

func (fx expFixture) sweep(t testing.TB, at time.Time) (removed, dropped int) {
	t.Helper()
	res, err := fx.srv.App.Services.Expiring.Sweep(context.Background(), at)
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	return res.Removed, res.Dropped
}

func later(d time.Duration) int64 { return time.Now().Add(d).UnixMilli() }

func TestExpiringUserTargetsPatch(t *testing.T) {
	hour := later(time.Hour)
	cases := []struct {
		name  string
		run   func(t *testing.T, fx expFixture) *apptest.Response
		check func(t *testing.T, fx expFixture, res *apptest.Response)
	}{
		{"adding a date for a targeted user schedules it on each flag named",
			func(t *testing.T, fx expFixture) *apptest.Response {
				return fx.patchUser(t, "u",
					apptest.Instr("addExpireUserTargetDate", "flagKey", "f1", "variationId", fx.f1.VID(1), "value", hour),
					apptest.Instr("addExpireUserTargetDate", "flagKey", "f2", "variationId", fx.f2.VID(1), "value", hour+1))
			},
			func(t *testing.T, fx expFixture, res *apptest.Response) {
				l := expDecode(t, res)
				if len(l.Items) != 2 || l.TotalInstructions != 2 || l.SuccessfulInstructions != 2 {
					t.Fatalf("answer %s", res.Body)
				}
				it := l.Items[0]
				if it.ResourceID.FlagKey != "f1" || it.UserKey != "u" || it.ExpirationDate != hour || it.Version != 1 || it.ID == "" ||
					it.ResourceID.ProjectKey != "p" || it.ResourceID.EnvironmentKey != "production" || it.ResourceID.Key != "f1" {
					t.Errorf("first item %+v", it)
				}
				e := apptest.LatestAuditEntry(t, fx.srv)
				if len(e.Accesses) != 1 || e.Accesses[0].Action != "updateExpiringTargets" || e.Accesses[0].Resource != "proj/p:env/production:flag/*" {
					t.Errorf("audit entry accesses %+v", e.Accesses)
				}
			}},
		{"a user not targeted with that variation is refused with 422 naming the instruction",
			func(t *testing.T, fx expFixture) *apptest.Response {
				return fx.patchUser(t, "u",
					apptest.Instr("addExpireUserTargetDate", "flagKey", "f1", "variationId", fx.f1.VID(1), "value", hour),
					apptest.Instr("addExpireUserTargetDate", "flagKey", "f2", "variationId", fx.f2.VID(0), "value", hour))
			},
			func(t *testing.T, fx expFixture, res *apptest.Response) {
				apptest.WantError(t, res, http.StatusUnprocessableEntity, "patch_failed", "instructions[1]", "not individually targeted")
				if l := expDecode(t, fx.srv.Do(t, http.MethodGet, apptest.UserExpiringPath("p", "u", "production"), nil)); len(l.Items) != 0 {
					t.Errorf("instruction 0 applied although 1 failed: %+v", l.Items)
				}
			}},
		{"a user targeted nowhere is refused with 422",
			func(t *testing.T, fx expFixture) *apptest.Response {
				return fx.patchUser(t, "nobody", apptest.Instr("addExpireUserTargetDate", "flagKey", "f1", "variationId", fx.f1.VID(1), "value", hour))
			},
			func(t *testing.T, fx expFixture, res *apptest.Response) {
				apptest.WantError(t, res, http.StatusUnprocessableEntity, "patch_failed", "instructions[0]")
			}},
		{"a date in the past is refused with 400",
			func(t *testing.T, fx expFixture) *apptest.Response {
				return fx.patchUser(t, "u", apptest.Instr("addExpireUserTargetDate", "flagKey", "f1", "variationId", fx.f1.VID(1), "value", later(-time.Minute)))
			},
			func(t *testing.T, fx expFixture, res *apptest.Response) {
				apptest.WantError(t, res, http.StatusBadRequest, "invalid_request", "instructions[0]", "future")
			}},
		{"a missing flagKey is refused with 400",
			func(t *testing.T, fx expFixture) *apptest.Response {
				return fx.patchUser(t, "u", apptest.Instr("addExpireUserTargetDate", "variationId", fx.f1.VID(1), "value", hour))
			},
			func(t *testing.T, fx expFixture, res *apptest.Response) {
				apptest.WantError(t, res, http.StatusBadRequest, "invalid_request", "instructions[0]", "flagKey")
			}},
		{"an unknown instruction kind is refused with 400",
			func(t *testing.T, fx expFixture) *apptest.Response {
				return fx.patchUser(t, "u", apptest.Instr("turnFlagOn"))
			},
			func(t *testing.T, fx expFixture, res *apptest.Response) {
				apptest.WantError(t, res, http.StatusBadRequest, "invalid_request", "instructions[0]")
			}},
		{"a JSON patch body is refused with 400",
			func(t *testing.T, fx expFixture) *apptest.Response {
				return fx.srv.Do(t, http.MethodPatch, apptest.UserExpiringPath("p", "u", "production"),
					[]map[string]any{{"op": "remove", "path": "/f1"}})
			},
			func(t *testing.T, fx expFixture, res *apptest.Response) {
				apptest.WantError(t, res, http.StatusBadRequest, "invalid_request", "semantic patch")
			}},
		{"updating with the current version moves the date and the version",
			func(t *testing.T, fx expFixture) *apptest.Response {
				apptest.WantStatus(t, fx.patchUser(t, "u", apptest.Instr("addExpireUserTargetDate", "flagKey", "f1", "variationId", fx.f1.VID(1), "value", hour)), http.StatusOK)
				return fx.patchUser(t, "u", apptest.Instr("updateExpireUserTargetDate", "flagKey", "f1", "variationId", fx.f1.VID(1), "value", hour+5000, "version", 1))
			},
			func(t *testing.T, fx expFixture, res *apptest.Response) {
				l := expDecode(t, res)
				if len(l.Items) != 1 || l.Items[0].ExpirationDate != hour+5000 || l.Items[0].Version != 2 {
					t.Errorf("items %+v", l.Items)
				}
			}},
		{"updating with another version fails with 422 and changes nothing",
			func(t *testing.T, fx expFixture) *apptest.Response {
				apptest.WantStatus(t, fx.patchUser(t, "u", apptest.Instr("addExpireUserTargetDate", "flagKey", "f1", "variationId", fx.f1.VID(1), "value", hour)), http.StatusOK)
				return fx.patchUser(t, "u", apptest.Instr("updateExpireUserTargetDate", "flagKey", "f1", "variationId", fx.f1.VID(1), "value", hour+5000, "version", 7))
			},
			func(t *testing.T, fx expFixture, res *apptest.Response) {
				apptest.WantError(t, res, http.StatusUnprocessableEntity, "patch_failed", "instructions[0]", "version")
				l := expDecode(t, fx.srv.Do(t, http.MethodGet, apptest.UserExpiringPath("p", "u", "production"), nil))
				if len(l.Items) != 1 || l.Items[0].ExpirationDate != hour {
					t.Errorf("items %+v", l.Items)
				}
			}},
		{"updating what was never scheduled fails with 422",
			func(t *testing.T, fx expFixture) *apptest.Response {
				return fx.patchUser(t, "u", apptest.Instr("updateExpireUserTargetDate", "flagKey", "f1", "variationId", fx.f1.VID(1), "value", hour))
			},
			func(t *testing.T, fx expFixture, res *apptest.Response) {
				apptest.WantError(t, res, http.StatusUnprocessableEntity, "patch_failed", "instructions[0]")
			}},
		{"removing a scheduled date unschedules it",
			func(t *testing.T, fx expFixture) *apptest.Response {
				apptest.WantStatus(t, fx.patchUser(t, "u", apptest.Instr("addExpireUserTargetDate", "flagKey", "f1", "variationId", fx.f1.VID(1), "value", hour)), http.StatusOK)
				return fx.patchUser(t, "u", apptest.Instr("removeExpireUserTargetDate", "flagKey", "f1", "variationId", fx.f1.VID(1)))
			},
			func(t *testing.T, fx expFixture, res *apptest.Response) {
				if l := expDecode(t, res); len(l.Items) != 0 {
					t.Errorf("items %+v", l.Items)
				}
				if l := expDecode(t, fx.srv.Do(t, http.MethodGet, apptest.FlagExpiringPath("p", "f1", "production"), nil)); len(l.Items) != 0 {
					t.Errorf("flag still lists %+v", l.Items)
				}
			}},
		{"the per-flag patch takes the user as userKey",
			func(t *testing.T, fx expFixture) *apptest.Response {
				return fx.patchFlag(t, "f1",
					apptest.Instr("addExpireUserTargetDate", "userKey", "u", "variationId", fx.f1.VID(1), "value", hour),
					apptest.Instr("addExpireUserTargetDate", "userKey", "v", "variationId", fx.f1.VID(0), "value", hour))
			},
			func(t *testing.T, fx expFixture, res *apptest.Response) {
				l := expDecode(t, res)
				if len(l.Items) != 2 || l.Items[0].UserKey != "u" || l.Items[1].UserKey != "v" {
					t.Errorf("items %+v", l.Items)
				}
				if e := apptest.LatestAuditEntry(t, fx.srv); e.Accesses[0].Resource != "proj/p:env/production:flag/f1" {
					t.Errorf("audit resource %q", e.Accesses[0].Resource)
				}
			}},
		{"the per-flag patch without userKey is refused with 400",
			func(t *testing.T, fx expFixture) *apptest.Response {
				return fx.patchFlag(t, "f1", apptest.Instr("addExpireUserTargetDate", "variationId", fx.f1.VID(1), "value", hour))
			},
			func(t *testing.T, fx expFixture, res *apptest.Response) {
				apptest.WantError(t, res, http.StatusBadRequest, "invalid_request", "userKey")
			}},
		{"an unknown environment is not found",
			func(t *testing.T, fx expFixture) *apptest.Response {
				return fx.srv.Do(t, http.MethodPatch, apptest.UserExpiringPath("p", "u", "nope"),
					map[string]any{"instructions": []any{apptest.Instr("removeExpireUserTargetDate", "flagKey", "f1", "variationId", fx.f1.VID(1))}}, "Content-Type", apptest.SemanticType)
			},
			func(t *testing.T, fx expFixture, res *apptest.Response) {
				apptest.WantStatus(t, res, http.StatusNotFound)
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fx := newExpFixture(t)
			c.check(t, fx, c.run(t, fx))
		})
	}
}

func TestExpiringUserTargetsRead(t *testing.T) {
	fx := newExpFixture(t)
	hour := later(time.Hour)
	apptest.WantStatus(t, fx.patchUser(t, "u",
		apptest.Instr("addExpireUserTargetDate", "flagKey", "f1", "variationId", fx.f1.VID(1), "value", hour),
		apptest.Instr("addExpireUserTargetDate", "flagKey", "f2", "variationId", fx.f2.VID(1), "value", hour)), http.StatusOK)
	apptest.WantStatus(t, fx.patchUser(t, "v", apptest.Instr("addExpireUserTargetDate", "flagKey", "f1", "variationId", fx.f1.VID(0), "value", hour)), http.StatusOK)
	cases := []struct {
		name string
		path string
		want []string // flag/user of each item
	}{
		{"by user lists the user's targets on every flag", apptest.UserExpiringPath("p", "u", "production"), []string{"f1/u", "f2/u"}},
		{"by user lists only that user", apptest.UserExpiringPath("p", "v", "production"), []string{"f1/v"}},
		{"by user in another environment lists nothing", apptest.UserExpiringPath("p", "u", "test"), nil},
		{"by flag lists every user of that flag", apptest.FlagExpiringPath("p", "f1", "production"), []string{"f1/u", "f1/v"}},
		{"by flag lists only that flag", apptest.FlagExpiringPath("p", "f2", "production"), []string{"f2/u"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := expDecode(t, fx.srv.Do(t, http.MethodGet, c.path, nil))
			var got []string
			for _, it := range l.Items {
				got = append(got, it.ResourceID.FlagKey+"/"+it.UserKey)
			}
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("items %v, want %v", got, c.want)
			}
		})
	}
	t.Run("by flag of an unknown flag is not found", func(t *testing.T) {
		apptest.WantStatus(t, fx.srv.Do(t, http.MethodGet, apptest.FlagExpiringPath("p", "nope", "production"), nil), http.StatusNotFound)
	})
}

func TestExpiringUserTargetsJob(t *testing.T) {
	hour := later(time.Hour)
	schedule := func(t *testing.T, fx expFixture) {
		apptest.WantStatus(t, fx.patchUser(t, "u",
			apptest.Instr("addExpireUserTargetDate", "flagKey", "f1", "variationId", fx.f1.VID(1), "value", hour),
			apptest.Instr("addExpireUserTargetDate", "flagKey", "f2", "variationId", fx.f2.VID(1), "value", hour+int64(time.Hour/time.Millisecond))), http.StatusOK)
	}
	targeted := func(t *testing.T, fx expFixture, f string) bool {
		return strings.Contains(apptest.TargetValues(apptest.GetFlag(t, fx.srv, "p", f).Prod().Targets)["user/1"], "u")
	}
	cases := []struct {
		name  string
		run   func(t *testing.T, fx expFixture)
		check func(t *testing.T, fx expFixture)
	}{
		{"the job removes a due target, drops its expiry and writes an audit entry",
			func(t *testing.T, fx expFixture) {
				if removed, _ := fx.sweep(t, time.UnixMilli(hour)); removed != 1 {
					t.Errorf("removed %d, want 1", removed)
				}
			},
			func(t *testing.T, fx expFixture) {
				if targeted(t, fx, "f1") {
					t.Errorf("u still targeted on f1")
				}
				if !targeted(t, fx, "f2") {
					t.Errorf("u no longer targeted on f2, which is not yet due")
				}
				l := expDecode(t, fx.srv.Do(t, http.MethodGet, apptest.UserExpiringPath("p", "u", "production"), nil))
				if len(l.Items) != 1 || l.Items[0].ResourceID.FlagKey != "f2" {
					t.Errorf("left %+v", l.Items)
				}
				e := apptest.LatestAuditEntry(t, fx.srv)
				if e.Kind != "flag" || len(e.Accesses) == 0 || e.Accesses[0].Action != "updateTargets" || e.Accesses[0].Resource != "proj/p:env/production:flag/f1" {
					t.Errorf("audit entry %s %+v", e.Kind, e.Accesses)
				}
			}},
		{"running the job twice removes once",
			func(t *testing.T, fx expFixture) {
				r1, _ := fx.sweep(t, time.UnixMilli(hour))
				v := apptest.GetFlag(t, fx.srv, "p", "f1").Version
				r2, d2 := fx.sweep(t, time.UnixMilli(hour))
				if r1 != 1 || r2 != 0 || d2 != 0 {
					t.Errorf("removed %d then %d (dropped %d)", r1, r2, d2)
				}
				if v2 := apptest.GetFlag(t, fx.srv, "p", "f1").Version; v2 != v {
					t.Errorf("second run changed the flag: version %d -> %d", v, v2)
				}
			},
			func(t *testing.T, fx expFixture) {
				if targeted(t, fx, "f1") {
					t.Errorf("u still targeted on f1")
				}
			}},
		{"concurrent runs remove once",
			func(t *testing.T, fx expFixture) {
				v := apptest.GetFlag(t, fx.srv, "p", "f1").Version
				var mu sync.Mutex
				total := 0
				var wg sync.WaitGroup
				for range 4 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						res, err := fx.srv.App.Services.Expiring.Sweep(context.Background(), time.UnixMilli(hour))
						if err != nil {
							t.Errorf("sweep: %v", err)
						}
						mu.Lock()
						total += res.Removed
						mu.Unlock()
					}()
				}
				wg.Wait()
				if total != 1 {
					t.Errorf("removed %d times, want 1", total)
				}
				if v2 := apptest.GetFlag(t, fx.srv, "p", "f1").Version; v2 != v+1 {
					t.Errorf("flag version %d -> %d, want one change", v, v2)
				}
			},
			func(t *testing.T, fx expFixture) {}},
		{"an expiry not yet due stays",
			func(t *testing.T, fx expFixture) {
				if removed, dropped := fx.sweep(t, time.UnixMilli(hour-1)); removed+dropped != 0 {
					t.Errorf("removed %d dropped %d", removed, dropped)
				}
			},
			func(t *testing.T, fx expFixture) {
				if !targeted(t, fx, "f1") || !targeted(t, fx, "f2") {
					t.Errorf("a target was removed early")
				}
				if l := expDecode(t, fx.srv.Do(t, http.MethodGet, apptest.UserExpiringPath("p", "u", "production"), nil)); len(l.Items) != 2 {
					t.Errorf("left %+v", l.Items)
				}
			}},
		{"a user no longer targeted just drops the expiry",
			func(t *testing.T, fx expFixture) {
				apptest.WantStatus(t, apptest.SemanticPatchFlag(t, fx.srv, "p", "f1", apptest.SemanticBody("production",
					apptest.Instr("removeUserTargets", "values", []string{"u"}, "variationId", fx.f1.VID(1)))), http.StatusOK)
				v := apptest.GetFlag(t, fx.srv, "p", "f1").Version
				if removed, dropped := fx.sweep(t, time.UnixMilli(hour)); removed != 0 || dropped != 1 {
					t.Errorf("removed %d dropped %d", removed, dropped)
				}
				if v2 := apptest.GetFlag(t, fx.srv, "p", "f1").Version; v2 != v {
					t.Errorf("flag changed: %d -> %d", v, v2)
				}
			},
			func(t *testing.T, fx expFixture) {
				l := expDecode(t, fx.srv.Do(t, http.MethodGet, apptest.FlagExpiringPath("p", "f1", "production"), nil))
				if len(l.Items) != 0 {
					t.Errorf("left %+v", l.Items)
				}
			}},
		{"a rescheduled expiry is removed at its new date",
			func(t *testing.T, fx expFixture) {
				apptest.WantStatus(t, fx.patchUser(t, "u", apptest.Instr("updateExpireUserTargetDate", "flagKey", "f1", "variationId", fx.f1.VID(1), "value", hour+10)), http.StatusOK)
				if removed, _ := fx.sweep(t, time.UnixMilli(hour)); removed != 0 {
					t.Errorf("removed %d at the old date", removed)
				}
				if removed, _ := fx.sweep(t, time.UnixMilli(hour+10)); removed != 1 {
					t.Errorf("removed %d at the new date", removed)
				}
			},
			func(t *testing.T, fx expFixture) {
				if targeted(t, fx, "f1") {
					t.Errorf("u still targeted on f1")
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fx := newExpFixture(t)
			schedule(t, fx)
			c.run(t, fx)
			c.check(t, fx)
		})
	}
}
