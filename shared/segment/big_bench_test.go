package segment_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/segment/segmenttest"
	"github.com/flagplane/flagplane/shared/store"
)

// countingWrites counts the items written through Transact.
type countingWrites struct {
	store.Table
	items, txs atomic.Int64
}

func (c *countingWrites) Transact(ctx context.Context, ws []store.Write) error {
	c.items.Add(int64(len(ws)))
	c.txs.Add(1)
	return c.Table.Transact(ctx, ws)
}

// csvOf is a CSV of n context keys, with a header.
func csvOf(n int) []byte {
	var buf bytes.Buffer
	buf.WriteString("key\n")
	for i := range n {
		fmt.Fprintf(&buf, "user-%08d\n", i)
	}
	return buf.Bytes()
}

// BenchmarkBigSegmentImport imports a CSV of a million keys into a big
// segment on the embedded store: upload (staging) and the worker's run,
// with the items written (DynamoDB write units are twice that in
// transactions) and the peak heap. Run it with -benchtime=1x.
func BenchmarkBigSegmentImport(b *testing.B) {
	const members = 1_000_000
	file := csvOf(members)
	ctx := context.Background()
	for range b.N {
		b.StopTimer()
		_, rig := segmenttest.New(b, "p", "production")
		table := &countingWrites{Table: rig.Table}
		segs := segment.NewService(table, rig.Log, segmenttest.AnyEnv{}, time.Now)
		if _, err := segs.Create(ctx, "p", "production", segment.Input{Key: "big", Name: "Big", Unbounded: true}); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		peak := sampleHeap()
		b.StartTimer()
		start := time.Now()
		up, err := segs.BeginImport(ctx, "p", "production", "big")
		if err != nil {
			b.Fatal(err)
		}
		if err := up.ReadCSV(ctx, "keys.csv", io.NopCloser(bytes.NewReader(file))); err != nil {
			b.Fatal(err)
		}
		if _, err := up.Finish(ctx, segment.ModeMerge); err != nil {
			b.Fatal(err)
		}
		staged := time.Since(start)
		if err := segs.RunJobs(ctx, time.Hour); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		heap := peak()
		included, _, err := segs.Membership(ctx, "p", "production", "big", 1, fmt.Sprintf("user-%08d", members-1))
		if err != nil || !included {
			b.Fatalf("the last key is not a member: %v", err)
		}
		b.ReportMetric(staged.Seconds(), "upload-s")
		b.ReportMetric(float64(table.items.Load()), "items-written")
		b.ReportMetric(float64(table.txs.Load()), "transactions")
		b.ReportMetric(float64(heap-before.HeapAlloc)/(1<<20), "peak-heap-MB")
		b.ReportMetric(float64(len(file))/(1<<20), "csv-MB")
		b.StartTimer()
	}
}

// sampleHeap samples the heap every 10 ms until the returned function is
// called, which returns the highest figure seen.
func sampleHeap() func() uint64 {
	var top atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > top.Load() {
				top.Store(m.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-stopped
		return top.Load()
	}
}

// BenchmarkBigSegmentMembership reads one key's membership of a big
// segment of 100,000 members (two Gets on the embedded store).
func BenchmarkBigSegmentMembership(b *testing.B) {
	ctx := context.Background()
	segs, _ := segmenttest.New(b, "p", "production")
	if _, err := segs.Create(ctx, "p", "production", segment.Input{Key: "big", Name: "Big", Unbounded: true}); err != nil {
		b.Fatal(err)
	}
	const members = 100_000
	up, err := segs.BeginImport(ctx, "p", "production", "big")
	if err != nil {
		b.Fatal(err)
	}
	if err := up.ReadCSV(ctx, "keys.csv", bytes.NewReader(csvOf(members))); err != nil {
		b.Fatal(err)
	}
	if _, err := up.Finish(ctx, ""); err != nil {
		b.Fatal(err)
	}
	if err := segs.RunJobs(ctx, time.Hour); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		included, _, err := segs.Membership(ctx, "p", "production", "big", 1, fmt.Sprintf("user-%08d", i%(2*members)))
		if err != nil || included != (i%(2*members) < members) {
			b.Fatalf("key %d: included %v, %v", i, included, err)
		}
		i++
	}
}
