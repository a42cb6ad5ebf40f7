package approval_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/approval"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/fault/faulttest"
	"github.com/flagplane/flagplane/shared/jsondoc"
	"github.com/flagplane/flagplane/shared/resource"
	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/store/storetest"
)

// segmentRig is the rig with production segment "s" (including u1) and
// an approved request adding u9 to it (req); segments is a segment service with
// no approval check, as another writer's.
type segmentRig struct {
	*rig
	segments *segment.Service
	req      *approval.Request
}

func newSegmentRig(tb testing.TB) *segmentRig {
	tb.Helper()
	r := &segmentRig{rig: newRig(tb, `{"minNumApprovals":1}`)}
	r.segments = segment.NewService(r.table, r.log, r.envs, r.clock.now)
	r.svc.SetSegments(segment.NewService(r.table, r.log, r.envs, r.clock.now))
	ctx := context.Background()
	if _, err := r.segments.Create(ctx, "p", "production", segment.Input{Key: "s", Name: "S"}); err != nil {
		tb.Fatal(err)
	}
	if _, err := r.segments.Change(ctx, "p", "production", "s", func(s *segment.Segment) error {
		s.Included = []string{"u1"}
		return nil
	}, resource.Change{}); err != nil {
		tb.Fatal(err)
	}
	r.req = r.approved(tb, `[{"kind":"addIncludedUsers","values":["u9"]}]`, nil)
	return r
}

// approved is a request on "s" with instructions (executed at execution,
// when set), approved by a reviewer.
func (r *segmentRig) approved(tb testing.TB, instructions string, execution *int64) *approval.Request {
	tb.Helper()
	req, err := r.svc.Create(as("requester"), approval.Input{ResourceID: ptr("proj/p:env/production:segment/s"), Description: ptr("change s"),
		Instructions: json.RawMessage(instructions), ExecutionDate: (*jsondoc.Millis)(execution)})
	if err != nil {
		tb.Fatal(err)
	}
	if req, err = r.svc.Review(as("reviewer"), req.ID, approval.ReviewInput{Kind: approval.KindApprove}); err != nil {
		tb.Fatal(err)
	}
	return req
}

func (r *segmentRig) segment(tb testing.TB) *segment.Segment {
	tb.Helper()
	s, err := r.segments.Get(context.Background(), "p", "production", "s")
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func TestSegmentRequestAppliedOnce(t *testing.T) {
	r := newSegmentRig(t)
	other := r.newService()
	other.SetSegments(segment.NewService(r.table, r.log, r.envs, r.clock.now))
	before := r.segment(t).Version
	services := []*approval.Service{r.svc, other}
	errs := r.table.(*storetest.Barrier).Race(2, func(i int) error {
		_, err := services[i].Apply(as("applier"), r.req.ID, approval.ApplyInput{})
		return err
	})
	faulttest.OneWins(t, errs, fault.Conflict)
	s := r.segment(t)
	if s.Version != before+1 || !slices.Equal(s.Included, []string{"u1", "u9"}) {
		t.Errorf("segment version %d -> %d, included %v", before, s.Version, s.Included)
	}
	if got, err := r.svc.Get(context.Background(), r.req.ID); err != nil || got.Status != approval.StatusCompleted {
		t.Errorf("request %+v, %v", got, err)
	}
}

func TestSegmentRequestAppliedOnASegmentChangedMeanwhile(t *testing.T) {
	r := newSegmentRig(t)
	before := r.segment(t).Version
	errs := r.table.(*storetest.Barrier).Race(2, func(i int) error {
		if i == 0 {
			_, err := r.svc.Apply(as("applier"), r.req.ID, approval.ApplyInput{})
			return err
		}
		// The direct writer, like a client, tries again when it lost.
		for {
			_, err := r.segments.Change(context.Background(), "p", "production", "s", func(s *segment.Segment) error {
				s.Tags = []string{"touched"}
				return nil
			}, resource.Change{})
			if !fault.Is(err, fault.OptimisticLock) {
				return err
			}
		}
	})
	s := r.segment(t)
	if errs[0] != nil || errs[1] != nil || s.Version != before+2 || !slices.Contains(s.Included, "u9") || !slices.Contains(s.Tags, "touched") {
		t.Errorf("apply %v, direct change %v: version %d -> %d, included %v", errs[0], errs[1], before, s.Version, s.Included)
	}
}

func TestScheduledSegmentRequest(t *testing.T) {
	r := newSegmentRig(t)
	ctx := context.Background()
	due := r.clock.now().Add(time.Hour).UnixMilli()
	if req := r.approved(t, `[{"kind":"addTags","values":["later"]}]`, &due); req.Status != approval.StatusScheduled {
		t.Fatalf("approved request %+v; want scheduled", req)
	}
	if n, err := r.svc.RunDue(ctx, time.UnixMilli(due-1)); err != nil || n != 0 || len(r.segment(t).Tags) != 0 {
		t.Errorf("before its date: RunDue = %d, %v; tags %v", n, err, r.segment(t).Tags)
	}
	if n, err := r.svc.RunDue(ctx, time.UnixMilli(due)); err != nil || n != 1 || !slices.Equal(r.segment(t).Tags, []string{"later"}) {
		t.Errorf("at its date: RunDue = %d, %v; tags %v", n, err, r.segment(t).Tags)
	}
}
