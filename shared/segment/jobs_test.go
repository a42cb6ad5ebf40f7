package segment_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/audit/audittest"
	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/segment/segmenttest"
	"github.com/flagplane/flagplane/shared/store"
)

// failingAt fails its nth transaction once armed, writing nothing: a
// worker that died before that write.
type failingAt struct {
	store.Table
	armed   atomic.Bool
	n, seen atomic.Int64
}

func (f *failingAt) Transact(ctx context.Context, ws []store.Write) error {
	if f.armed.Load() && f.seen.Add(1) == f.n.Load() {
		return errors.New("worker died")
	}
	return f.Table.Transact(ctx, ws)
}

func TestAnImportCutShortIsResumedByTheNextRun(t *testing.T) {
	ctx := context.Background()
	_, rig := segmenttest.New(t, "p", "production")
	table := &failingAt{Table: rig.Table}
	segs := segment.NewService(table, rig.Log, segmenttest.AnyEnv{}, time.Now)
	if _, err := segs.Create(ctx, "p", "production", segment.Input{Key: "big", Name: "Big", Unbounded: true}); err != nil {
		t.Fatal(err)
	}
	// Keys of 60 bytes: 12,000 of them are three staged chunks.
	var csv bytes.Buffer
	for i := range 12000 {
		fmt.Fprintf(&csv, "%060d\n", i)
	}
	up, err := segs.BeginImport(ctx, "p", "production", "big")
	if err != nil {
		t.Fatal(err)
	}
	if err := up.ReadCSV(ctx, "keys.csv", &csv); err != nil {
		t.Fatal(err)
	}
	job, err := up.Finish(ctx, segment.ModeMerge)
	if err != nil {
		t.Fatal(err)
	}
	// Lease, then 40 transactions of chunk 0 and its progress: the run
	// dies within the second chunk.
	table.n.Store(60)
	table.armed.Store(true)
	if err := segs.RunJobs(ctx, time.Hour); err == nil {
		t.Fatal("the run that died reported no error")
	}
	stopped, err := segs.Job(ctx, "p", "production", "big", segment.JobImport, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("the run that died saved the chunks it applied and gave its lease back", func(t *testing.T) {
		if stopped.Status != segment.StatusInProgress || stopped.Next != 1 || stopped.LeaseUntil != 0 {
			t.Fatalf("job after the failed run: status %s, next chunk %d of %d, lease %d", stopped.Status, stopped.Next, stopped.Chunks, stopped.LeaseUntil)
		}
	})
	if err := segs.RunJobs(ctx, time.Hour); err != nil {
		t.Fatalf("the next run: %v", err)
	}
	t.Run("the next run completes it, every key a member", func(t *testing.T) {
		done, err := segs.Job(ctx, "p", "production", "big", segment.JobImport, job.ID)
		if err != nil || done.Status != segment.StatusComplete {
			t.Fatalf("job %+v, %v", done, err)
		}
		for _, i := range []int{0, 4000, 11999} {
			included, _, err := segs.Membership(ctx, "p", "production", "big", 1, fmt.Sprintf("%060d", i))
			if err != nil || !included {
				t.Fatalf("key %d: included %v, %v", i, included, err)
			}
		}
	})
	t.Run("the import is one audit entry on the segment", func(t *testing.T) {
		if got := audittest.Actions(t, rig.Log, "segment"); !slices.Equal(got, []string{"createSegment", "updateIncluded"}) {
			t.Fatalf("segment entries %v", got)
		}
	})
	t.Run("a finished import lets the next one start", func(t *testing.T) {
		if _, err := segs.BeginImport(ctx, "p", "production", "big"); err != nil {
			t.Fatal(err)
		}
	})
}
