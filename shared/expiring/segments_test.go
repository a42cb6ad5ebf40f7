package expiring_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	"github.com/flagplane/flagplane/shared/resource"
	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/storetest"
)

// segRig is the expiring-targets service with segments over a fresh
// embedded store holding project "p" whose production segment "s"
// includes users u1 and u2.
type segRig struct {
	table *storetest.Barrier
	log   *audit.Log
	envs  *environment.Service
	segs  *segment.Service
	svc   *expiring.Service
}

func newSegRig(tb testing.TB) *segRig {
	tb.Helper()
	now := func() time.Time { return t0 }
	a := audittest.New(tb, now)
	projects := project.NewService(a.Table, a.Log, now)
	envs := environment.NewService(a.Table, a.Log, projects, false, now)
	r := &segRig{table: a.Table, log: a.Log, envs: envs, segs: segment.NewService(a.Table, a.Log, envs, now)}
	r.svc = r.service(a.Table, a.Log)
	ctx := context.Background()
	if _, _, err := projects.Create(ctx, project.Input{Key: ptr("p"), Name: ptr("P")}); err != nil {
		tb.Fatal(err)
	}
	if _, err := r.segs.Create(ctx, "p", "production", segment.Input{Key: "s", Name: "S"}); err != nil {
		tb.Fatal(err)
	}
	if _, err := r.segs.Change(ctx, "p", "production", "s", func(s *segment.Segment) error {
		s.Included = []string{"u1", "u2"}
		return nil
	}, resource.Change{}); err != nil {
		tb.Fatal(err)
	}
	return r
}

// service is an expiring-targets service with segments over table.
func (r *segRig) service(table store.Table, log *audit.Log) *expiring.Service {
	now := func() time.Time { return t0 }
	svc := expiring.NewService(table, log, flag.NewService(table, log, now), r.envs, now)
	svc.SetSegments(segment.NewService(table, log, r.envs, now))
	return svc
}

func (r *segRig) schedule(tb testing.TB, svc *expiring.Service, kind, user string, due time.Time) error {
	_, err := svc.PatchSegment(context.Background(), "p", "production", "s",
		patchOf(tb, fmt.Sprintf(`{"kind":%q,"targetType":"included","userKey":%q,"value":%d}`, kind, user, due.UnixMilli())), true)
	return err
}

func (r *segRig) segment(tb testing.TB) *segment.Segment {
	tb.Helper()
	s, err := r.segs.Get(context.Background(), "p", "production", "s")
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func (r *segRig) scheduled(tb testing.TB) []string {
	tb.Helper()
	ts, err := r.svc.ForSegment(context.Background(), "p", "production", "s")
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, t := range ts {
		out = append(out, fmt.Sprintf("%s@%d", t.ContextKey, t.ExpirationDate))
	}
	return out
}

func TestSegmentRacingSchedules(t *testing.T) {
	r := newSegRig(t)
	later := t0.Add(time.Hour)
	errs := r.table.Race(2, func(i int) error {
		return r.schedule(t, r.svc, expiring.KindAdd, "u1", later.Add(time.Duration(i)*time.Minute))
	})
	faulttest.OneWins(t, errs, fault.Conflict)
	entries := slices.DeleteFunc(audittest.Actions(t, r.log, "segment"), func(a string) bool { return a != expiring.Action })
	if got := r.scheduled(t); len(got) != 1 || len(entries) != 1 {
		t.Errorf("scheduled %v with %d entries; want one removal, one entry", got, len(entries))
	}
}

func TestSegmentSweepAfterACrash(t *testing.T) {
	r := newSegRig(t)
	ctx := context.Background()
	due := t0.Add(time.Hour)
	if err := r.schedule(t, r.svc, expiring.KindAdd, "u1", due); err != nil {
		t.Fatal(err)
	}
	before := r.segment(t).Version
	crash := &storetest.CrashOnce{Table: r.table}
	crashed := r.service(crash, audit.New(crash, audit.Discard{}, "acct", audittest.Quiet, func() time.Time { return t0 }))
	if _, err := crashed.Sweep(ctx, due); err == nil {
		t.Fatal("the sweep whose transaction crashed reported no error")
	}
	res, err := r.svc.Sweep(ctx, due)
	if err != nil || res != (expiring.Result{}) {
		t.Errorf("the next sweep: %+v, %v; want nothing left to do", res, err)
	}
	if s := r.segment(t); s.Version != before+1 || slices.Contains(s.Included, "u1") || len(r.scheduled(t)) != 0 {
		t.Errorf("after the crash and a rerun: version %d -> %d, included %v, scheduled %v", before, s.Version, s.Included, r.scheduled(t))
	}
}

func TestSegmentRescheduleRacingTheSweep(t *testing.T) {
	r := newSegRig(t)
	ctx := context.Background()
	due, later := t0.Add(time.Hour), t0.Add(3*time.Hour)
	if err := r.schedule(t, r.svc, expiring.KindAdd, "u1", due); err != nil {
		t.Fatal(err)
	}
	var res expiring.Result
	errs := r.table.Race(2, func(i int) error {
		if i == 0 {
			var err error
			res, err = r.svc.Sweep(ctx, due)
			return err
		}
		return r.schedule(t, r.svc, expiring.KindUpdate, "u1", later)
	})
	removed := !slices.Contains(r.segment(t).Included, "u1")
	rescheduled := slices.Equal(r.scheduled(t), []string{fmt.Sprintf("u1@%d", later.UnixMilli())})
	switch {
	case removed && !rescheduled:
		if res.Removed != 1 || !fault.Is(errs[1], fault.Conflict) {
			t.Errorf("the sweep won: removed %d, the update got %v", res.Removed, errs[1])
		}
	case !removed && rescheduled:
		if res.Removed != 0 || errs[0] != nil || errs[1] != nil {
			t.Errorf("the update won: sweep %+v %v, update %v", res, errs[0], errs[1])
		}
	default:
		t.Errorf("removed %v and rescheduled %v: exactly one must hold (errors %v)", removed, rescheduled, errors.Join(errs...))
	}
}
