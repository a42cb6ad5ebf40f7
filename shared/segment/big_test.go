package segment_test

import (
	"context"
	"slices"
	"testing"

	"github.com/flagplane/flagplane/shared/audit/audittest"
	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/segment/segmenttest"
)

func TestRacingTargetsUpdatesBothLand(t *testing.T) {
	ctx := context.Background()
	segs, rig := segmenttest.New(t, "p", "production")
	if _, err := segs.Create(ctx, "p", "production", segment.Input{Key: "big", Name: "Big", Unbounded: true}); err != nil {
		t.Fatal(err)
	}
	keys := []string{"alice", "bob"}
	errs := rig.Table.Race(2, func(i int) error {
		return segs.UpdateTargets(ctx, "p", "production", "big", "", segment.TargetChanges{Included: &segment.KeyChanges{Add: keys[i : i+1]}})
	})
	t.Run("neither writer is refused: the one that lost the race commits again", func(t *testing.T) {
		for i, err := range errs {
			if err != nil {
				t.Fatalf("writer %d: %v", i, err)
			}
		}
	})
	t.Run("both keys are members, each change one audit entry", func(t *testing.T) {
		for _, k := range keys {
			if included, _, err := segs.Membership(ctx, "p", "production", "big", 1, k); err != nil || !included {
				t.Fatalf("%s: included %v, %v", k, included, err)
			}
		}
		if got := audittest.Actions(t, rig.Log, "segment"); !slices.Equal(got, []string{"createSegment", "updateIncluded", "updateIncluded"}) {
			t.Fatalf("segment entries %v", got)
		}
	})
}
