package ingest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/axiomhq/hyperloglog"
	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/store"
)

func readCell(tb testing.TB, table store.Table, hour, envID, cellID string) ingest.Cell {
	tb.Helper()
	it, err := table.Get(context.Background(), store.UsageCellKey(hour, envID, cellID))
	if err != nil {
		tb.Fatalf("read cell: %v", err)
	}
	var c ingest.Cell
	if err := json.Unmarshal(it.Data, &c); err != nil {
		tb.Fatal(err)
	}
	if it.TTL == 0 {
		tb.Errorf("cell has no TTL")
	}
	return c
}

func estimate(tb testing.TB, raw []byte) uint64 {
	tb.Helper()
	s := hyperloglog.New14()
	if err := s.UnmarshalBinary(raw); err != nil {
		tb.Fatal(err)
	}
	return s.Estimate()
}

func TestCellsCountBySenderKindAndAnonymity(t *testing.T) {
	agg, table := newAggregator(t)
	ctx := context.Background()
	now := time.Now().UTC()
	body := `[
	 {"kind":"identify","creationDate":1,"context":{"kind":"user","key":"a"}},
	 {"kind":"identify","creationDate":1,"context":{"kind":"user","key":"b","anonymous":true}},
	 {"kind":"custom","key":"$ld:ai:generation","creationDate":1,"context":{"kind":"multi","user":{"key":"a"},"org":{"key":"o1"}}},
	 {"kind":"custom","key":"$ld:ai:generation","creationDate":1,"context":{"kind":"user","key":"a"}},
	 {"kind":"custom","key":"clicked","creationDate":1,"context":{"kind":"user","key":"a"}}]`
	p := ingest.Payload{Source: ingest.SourceClient, ProjectKey: "p", EnvKey: "e", EnvID: "env1", UserAgent: "JSClient/3.1.0",
		Tags: "application-id/shop", ReceivedAt: now.UnixMilli(), Body: json.RawMessage(body)}
	for i := 0; i < 2; i++ { // the same events twice: counts double, sketches do not
		if _, err := agg.Apply(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	c := readCell(t, table, now.Format("2006010215"), "env1", ingest.CellID("browser", "JSClient", "3.1.0", "shop"))
	if c.SDKType != "browser" || c.SDKName != "JSClient" || c.SDKVersion != "3.1.0" || c.AppID != "shop" || c.ProjectKey != "p" || c.EnvKey != "e" {
		t.Errorf("cell sender = %+v", c)
	}
	if c.Events["identify"] != 4 || c.Events["custom"] != 6 || c.AIRuns != 4 || c.Payloads != 2 {
		t.Errorf("counts = %v aiRuns %d payloads %d", c.Events, c.AIRuns, c.Payloads)
	}
	want := map[string]uint64{"user|false": 1, "user|true": 1, "org|false": 1}
	if len(c.Sketches) != len(want) {
		t.Errorf("sketches = %v", c.Sketches)
	}
	for k, n := range want {
		if got := estimate(t, c.Sketches[k]); got != n {
			t.Errorf("sketch %s estimates %d, want %d", k, got, n)
		}
	}
}

func TestCanonicalSketchesEncodeEqualContentEqually(t *testing.T) {
	for _, n := range []int{3, 500, 40_000} {
		t.Run(fmt.Sprintf("%d keys merged in two orders", n), func(t *testing.T) {
			a, b := hyperloglog.New14(), hyperloglog.New14()
			for i := 0; i < n; i++ {
				a.Insert([]byte(fmt.Sprint("a", i)))
				b.Insert([]byte(fmt.Sprint("b", i)))
			}
			ab, ba := hyperloglog.New14(), hyperloglog.New14()
			_ = ab.Merge(a)
			_ = ab.Merge(b)
			_ = ba.Merge(b)
			_ = ba.Merge(a)
			_ = ba.Merge(a) // merged twice: a union changes nothing
			x, _ := ingest.Canonical(ab).MarshalBinary()
			y, _ := ingest.Canonical(ba).MarshalBinary()
			if !bytes.Equal(x, y) {
				t.Errorf("encodings differ (%d and %d bytes)", len(x), len(y))
			}
		})
	}
}

func TestEventsKeepTheConnectionDiagnosticsTold(t *testing.T) {
	agg, table := newAggregator(t)
	ctx := context.Background()
	now := time.Now().UnixMilli()
	diag := ingest.Payload{Source: ingest.SourceDiagnostic, ProjectKey: "p", EnvKey: "e", EnvID: "env1", UserAgent: "GoClient/7.14.6", ReceivedAt: now,
		Body: json.RawMessage(`{"kind":"diagnostic-init","sdk":{"name":"GoClient","version":"7.14.6"},"configuration":{"usingRelayDaemon":true}}`)}
	events := ingest.Payload{Source: ingest.SourceServer, ProjectKey: "p", EnvKey: "e", EnvID: "env1", UserAgent: "GoClient/7.14.6", ReceivedAt: now,
		Body: json.RawMessage(`[{"kind":"identify","creationDate":1,"context":{"kind":"user","key":"a"}}]`)}
	for _, p := range []ingest.Payload{diag, events} {
		if _, err := agg.Apply(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	it, err := table.Get(ctx, store.SDKSeenKey("env1", "server", "GoClient", "7.14.6"))
	if err != nil {
		t.Fatal(err)
	}
	var seen ingest.SDKSeen
	if err := json.Unmarshal(it.Data, &seen); err != nil || seen.Connection != "relay" {
		t.Errorf("SDK seen = %s, want the relay connection kept", it.Data)
	}
}
