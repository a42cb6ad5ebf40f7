package expiring_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/audit/audittest"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/expiring"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/fault/faulttest"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/semanticpatch"
	"github.com/flagplane/flagplane/shared/store/storetest"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// rig is the expiring-targets service over a fresh embedded store holding
// project "p" and boolean flag "f", whose production targets u1 and u2
// with variation on (vOn) and u3 with off (vOff).
type rig struct {
	table      *storetest.Barrier
	log        *audit.Log
	flags      *flag.Service
	svc        *expiring.Service
	newService func() *expiring.Service
	vOn, vOff  string
}

func newRig(tb testing.TB) *rig {
	tb.Helper()
	now := func() time.Time { return t0 }
	a := audittest.New(tb, now)
	b, log := a.Table, a.Log
	projects := project.NewService(b, log, now)
	envs := environment.NewService(b, log, projects, false, now)
	flags := flag.NewService(b, log, now)
	ctx := context.Background()
	if _, _, err := projects.Create(ctx, project.Input{Key: ptr("p"), Name: ptr("P")}); err != nil {
		tb.Fatal(err)
	}
	d, err := flags.Create(ctx, "p", flag.Input{Key: ptr("f"), Name: ptr("F")})
	if err != nil {
		tb.Fatal(err)
	}
	r := &rig{table: b, log: log, flags: flags, svc: expiring.NewService(b, log, flags, envs, now),
		vOn: d.Flag.Variations[0].ID, vOff: d.Flag.Variations[1].ID}
	r.newService = func() *expiring.Service { return expiring.NewService(b, log, flag.NewService(b, log, now), envs, now) }
	sp := patchOf(tb, fmt.Sprintf(`{"kind":"addUserTargets","values":["u1","u2"],"variationId":%q}`, r.vOn),
		fmt.Sprintf(`{"kind":"addUserTargets","values":["u3"],"variationId":%q}`, r.vOff))
	sp.EnvironmentKey = "production"
	if _, err := flags.SemanticPatchWith(ctx, "p", "f", sp); err != nil {
		tb.Fatal(err)
	}
	return r
}

func ptr[T any](v T) *T { return &v }

func patchOf(tb testing.TB, ins ...string) semanticpatch.Patch {
	tb.Helper()
	sp, err := semanticpatch.Parse([]byte(`{"instructions":[` + strings.Join(ins, ",") + `]}`))
	if err != nil {
		tb.Fatal(err)
	}
	return sp
}

// at is an instruction of kind for user with variation v due at due.
func at(kind, user, v string, due time.Time) string {
	return fmt.Sprintf(`{"kind":%q,"userKey":%q,"variationId":%q,"value":%d}`, kind, user, v, due.UnixMilli())
}

func (r *rig) schedule(tb testing.TB, ins ...string) []*expiring.Target {
	tb.Helper()
	got, err := r.svc.PatchForFlag(context.Background(), "p", "production", "f", patchOf(tb, ins...))
	if err != nil {
		tb.Fatal(err)
	}
	return got
}

func (r *rig) scheduled(tb testing.TB) string {
	tb.Helper()
	got, err := r.svc.ForFlag(context.Background(), "p", "production", "f")
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, t := range got {
		out = append(out, fmt.Sprintf("%s@%d", t.UserKey, t.ExpirationDate))
	}
	return strings.Join(out, " ")
}

// targeted lists the users production targets individually.
func (r *rig) targeted(tb testing.TB) string {
	tb.Helper()
	f, err := r.flags.Load(context.Background(), "p", "f")
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, u := range []string{"u1", "u2", "u3"} {
		if _, ok := f.EnvView("production").TargetOf(flag.UserKind, u); ok {
			out = append(out, u)
		}
	}
	return strings.Join(out, " ")
}

// entries counts the audit entries recording updateExpiringTargets.
func (r *rig) entries(tb testing.TB) int {
	tb.Helper()
	return len(slices.DeleteFunc(audittest.Actions(tb, r.log), func(a string) bool { return a != expiring.Action }))
}

func TestPatchRefusals(t *testing.T) {
	r := newRig(t)
	later := t0.Add(time.Hour)
	r.schedule(t, at(expiring.KindAdd, "u2", r.vOn, later))
	cases := []struct {
		name string
		ins  []string
		code fault.Code
		part string
	}{
		{"an instruction of another kind is refused naming its index", []string{at(expiring.KindAdd, "u1", r.vOn, later), `{"kind":"turnFlagOn"}`}, fault.Invalid, "instructions[1]"},
		{"an instruction without a user is refused", []string{fmt.Sprintf(`{"kind":%q,"variationId":%q,"value":%d}`, expiring.KindAdd, r.vOn, later.UnixMilli())}, fault.Invalid, `"userKey"`},
		{"an instruction without a variation is refused", []string{fmt.Sprintf(`{"kind":%q,"userKey":"u1","value":%d}`, expiring.KindAdd, later.UnixMilli())}, fault.Invalid, `"variationId"`},
		{"an add without a time is refused", []string{fmt.Sprintf(`{"kind":%q,"userKey":"u1","variationId":%q}`, expiring.KindAdd, r.vOn)}, fault.Invalid, `"value"`},
		{"a time that is not in the future is refused", []string{at(expiring.KindAdd, "u1", r.vOn, t0)}, fault.Invalid, "not in the future"},
		{"a flag key other than the path's is refused", []string{fmt.Sprintf(`{"kind":%q,"flagKey":"g","userKey":"u1","variationId":%q,"value":%d}`, expiring.KindAdd, r.vOn, later.UnixMilli())}, fault.Invalid, "differs from the flag of the path"},
		{"a variation the flag does not have fails", []string{at(expiring.KindAdd, "u1", "nope", later)}, fault.PatchFailed, `"nope"`},
		{"a user not targeted with that variation fails", []string{at(expiring.KindAdd, "u3", r.vOn, later)}, fault.PatchFailed, "not individually targeted"},
		{"a second add for one user fails pointing to update", []string{at(expiring.KindAdd, "u2", r.vOn, later)}, fault.PatchFailed, expiring.KindUpdate},
		{"an update with nothing scheduled fails pointing to add", []string{at(expiring.KindUpdate, "u1", r.vOn, later)}, fault.PatchFailed, expiring.KindAdd},
		{"an update at a stale version fails", []string{fmt.Sprintf(`{"kind":%q,"userKey":"u2","variationId":%q,"value":%d,"version":7}`, expiring.KindUpdate, r.vOn, later.UnixMilli())}, fault.PatchFailed, "not the current version"},
		{"a remove naming another variation fails", []string{fmt.Sprintf(`{"kind":%q,"userKey":"u2","variationId":%q}`, expiring.KindRemove, r.vOff)}, fault.PatchFailed, "is for variation"},
		{"one failing instruction fails the valid ones before it", []string{at(expiring.KindAdd, "u1", r.vOn, later), at(expiring.KindAdd, "u3", r.vOn, later)}, fault.PatchFailed, "instructions[1]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.svc.PatchForFlag(context.Background(), "p", "production", "f", patchOf(t, c.ins...))
			faulttest.Want(t, err, c.code, c.part)
		})
	}
	t.Run("the per-user route needs the flag in each instruction", func(t *testing.T) {
		_, err := r.svc.PatchForUser(context.Background(), "p", "production", "u1", patchOf(t, at(expiring.KindAdd, "u1", r.vOn, later)))
		faulttest.Want(t, err, fault.Invalid, `"flagKey"`)
	})
	t.Run("nothing refused was stored or recorded", func(t *testing.T) {
		if got, want := r.scheduled(t), fmt.Sprintf("u2@%d", later.UnixMilli()); got != want || r.entries(t) != 1 {
			t.Errorf("scheduled %q with %d entries, want %q with 1", got, r.entries(t), want)
		}
	})
}

func TestPatchTransitions(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	h1, h2 := t0.Add(time.Hour), t0.Add(2*time.Hour)
	steps := []struct {
		name string
		ins  []string
		want string
	}{
		{"an add schedules a removal per user", []string{at(expiring.KindAdd, "u1", r.vOn, h1), at(expiring.KindAdd, "u2", r.vOn, h1)},
			fmt.Sprintf("u1@%d u2@%d", h1.UnixMilli(), h1.UnixMilli())},
		{"an update moves one", []string{fmt.Sprintf(`{"kind":%q,"userKey":"u1","variationId":%q,"value":"%d","version":1}`, expiring.KindUpdate, r.vOn, h2.UnixMilli())},
			fmt.Sprintf("u1@%d u2@%d", h2.UnixMilli(), h1.UnixMilli())},
		{"a remove of one never scheduled changes nothing", []string{fmt.Sprintf(`{"kind":%q,"userKey":"u3","variationId":%q}`, expiring.KindRemove, r.vOff)},
			fmt.Sprintf("u1@%d u2@%d", h2.UnixMilli(), h1.UnixMilli())},
		{"a remove and a new add of the same user in one patch reschedule it", []string{
			fmt.Sprintf(`{"kind":%q,"userKey":"u2","variationId":%q}`, expiring.KindRemove, r.vOn), at(expiring.KindAdd, "u2", r.vOn, h2)},
			fmt.Sprintf("u1@%d u2@%d", h2.UnixMilli(), h2.UnixMilli())},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			r.schedule(t, s.ins...)
			if got := r.scheduled(t); got != s.want {
				t.Errorf("scheduled %q, want %q", got, s.want)
			}
		})
	}
	t.Run("each patch that changed something is one audit entry", func(t *testing.T) {
		if n := r.entries(t); n != 3 {
			t.Errorf("%d entries, want 3", n)
		}
	})
	t.Run("the per-user route lists the user's removals", func(t *testing.T) {
		got, err := r.svc.ForUser(ctx, "p", "production", "u1")
		if err != nil || len(got) != 1 || got[0].ResourceID.FlagKey != "f" || got[0].Version != 2 {
			t.Errorf("ForUser = %+v, %v", got, err)
		}
	})
}

func TestRacingPatches(t *testing.T) {
	r := newRig(t)
	later := t0.Add(time.Hour)
	dues := []time.Time{later, later.Add(time.Minute)}
	errs := r.table.Race(2, func(i int) error {
		_, err := r.svc.PatchForFlag(context.Background(), "p", "production", "f", patchOf(t, at(expiring.KindAdd, "u1", r.vOn, dues[i])))
		return err
	})
	faulttest.OneWins(t, errs, fault.Conflict)
	if got := r.scheduled(t); !strings.HasPrefix(got, "u1@") || strings.Contains(got, " ") || r.entries(t) != 1 {
		t.Errorf("scheduled %q with %d entries; want one removal, one entry", got, r.entries(t))
	}
}

func TestSweep(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	h1, h2 := t0.Add(time.Hour), t0.Add(2*time.Hour)
	r.schedule(t, at(expiring.KindAdd, "u1", r.vOn, h1), at(expiring.KindAdd, "u2", r.vOn, h2), at(expiring.KindAdd, "u3", r.vOff, h1))
	// u3 leaves the targets by hand: its removal finds nothing to do.
	sp := patchOf(t, fmt.Sprintf(`{"kind":"removeUserTargets","values":["u3"],"variationId":%q}`, r.vOff))
	sp.EnvironmentKey = "production"
	if _, err := r.flags.SemanticPatchWith(ctx, "p", "f", sp); err != nil {
		t.Fatal(err)
	}
	t.Run("nothing is removed before it is due", func(t *testing.T) {
		res, err := r.svc.Sweep(ctx, h1.Add(-time.Millisecond))
		if err != nil || res != (expiring.Result{}) || r.targeted(t) != "u1 u2" {
			t.Errorf("sweep %+v, %v; targeted %q", res, err, r.targeted(t))
		}
	})
	t.Run("racing sweeps at the due time remove each due user once and drop what has nothing left", func(t *testing.T) {
		services := []*expiring.Service{r.svc, r.newService(), r.newService()}
		results := make([]expiring.Result, len(services))
		var wg sync.WaitGroup
		for i, s := range services {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var err error
				if results[i], err = s.Sweep(ctx, h1); err != nil {
					t.Errorf("sweep: %v", err)
				}
			}()
		}
		wg.Wait()
		var total expiring.Result
		for _, res := range results {
			total.Removed += res.Removed
			total.Dropped += res.Dropped
		}
		if total.Removed != 1 || r.targeted(t) != "u2" || r.scheduled(t) != fmt.Sprintf("u2@%d", h2.UnixMilli()) {
			t.Errorf("results %+v; targeted %q, scheduled %q", results, r.targeted(t), r.scheduled(t))
		}
		if total.Dropped < 1 {
			t.Errorf("results %+v: u3's removal was not dropped", results)
		}
	})
	t.Run("a later sweep finds nothing left that is due", func(t *testing.T) {
		res, err := r.svc.Sweep(ctx, h1)
		if err != nil || res != (expiring.Result{}) {
			t.Errorf("sweep %+v, %v", res, err)
		}
	})
	t.Run("a removal rescheduled later is not applied at its old time", func(t *testing.T) {
		h3 := t0.Add(3 * time.Hour)
		r.schedule(t, fmt.Sprintf(`{"kind":%q,"userKey":"u2","variationId":%q,"value":%d}`, expiring.KindUpdate, r.vOn, h3.UnixMilli()))
		res, err := r.svc.Sweep(ctx, h2)
		if err != nil || res != (expiring.Result{}) || r.targeted(t) != "u2" {
			t.Errorf("sweep %+v, %v; targeted %q", res, err, r.targeted(t))
		}
	})
}
