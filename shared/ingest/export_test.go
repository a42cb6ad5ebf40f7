package ingest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/storetest"
)

// markExporting writes the marker that makes envID's events spooled.
func markExporting(tb testing.TB, table store.Table, envID string, active ...string) {
	tb.Helper()
	data, _ := json.Marshal(ingest.ExportEnv{ProjectKey: "p", EnvKey: "e", EnvID: envID, Active: active})
	k := store.DataExportEnvKey(envID)
	if err := table.Put(context.Background(), store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: data}, store.Cond{}); err != nil {
		tb.Fatal(err)
	}
}

// spooledLines returns every NDJSON line spooled for envID.
func spooledLines(tb testing.TB, table store.Table, envID string) []ingest.ExportLine {
	tb.Helper()
	page, err := table.Query(context.Background(), store.Query{PK: store.DataExportSpoolPartition(envID), SKPrefix: store.DataExportSpoolPrefix})
	if err != nil {
		tb.Fatal(err)
	}
	var out []ingest.ExportLine
	for _, it := range page.Items {
		for _, line := range bytes.Split(bytes.TrimSuffix(it.Data, []byte("\n")), []byte("\n")) {
			var l ingest.ExportLine
			if err := json.Unmarshal(line, &l); err != nil {
				tb.Fatalf("spooled line %q: %v", line, err)
			}
			out = append(out, l)
		}
	}
	return out
}

func TestSpoolTapsThePayloadsOfExportingEnvironments(t *testing.T) {
	ctx := context.Background()
	payload := func(env, id string, body []byte) ingest.Payload {
		return ingest.Payload{Source: ingest.SourceServer, ProjectKey: "p", EnvKey: "e", EnvID: env, PayloadID: id, ReceivedAt: time.Now().UnixMilli(), Body: body}
	}
	t.Run("an environment without an active destination spools nothing", func(t *testing.T) {
		agg, table := newAggregator(t)
		markExporting(t, table, "off")
		if _, err := agg.Apply(ctx, payload("off", "1", identifies(0, 3))); err != nil {
			t.Fatal(err)
		}
		if got := spooledLines(t, table, "off"); len(got) != 0 {
			t.Errorf("%d lines spooled", len(got))
		}
	})
	t.Run("an exporting environment spools every event once, with where it came from", func(t *testing.T) {
		agg, table := newAggregator(t)
		markExporting(t, table, "on", "d1")
		for range 3 { // the same payload delivered three times
			if _, err := agg.Apply(ctx, payload("on", "pl-1", identifies(0, 5))); err != nil {
				t.Fatal(err)
			}
		}
		got := spooledLines(t, table, "on")
		if len(got) != 5 {
			t.Fatalf("%d lines spooled, want 5", len(got))
		}
		for i, l := range got {
			if l.Kind != "identify" || l.EnvID != "on" || l.ProjectKey != "p" || l.PayloadID != "pl-1" || !strings.Contains(string(l.Event), fmt.Sprintf(`"u%d"`, i)) {
				t.Errorf("line %d: %+v", i, l)
			}
		}
	})
	t.Run("a crash after spooling and before aggregating loses no event and spools none twice", func(t *testing.T) {
		_, table := newAggregator(t)
		markExporting(t, table, "crash", "d1")
		crashing := &storetest.CrashOnce{Table: table}
		agg := ingest.NewAggregator(crashing, discardLogger(), time.Now)
		if _, err := agg.Apply(ctx, payload("crash", "pl-2", identifies(0, 4))); err == nil {
			t.Fatal("the crash was not reported, so the queue would not deliver again")
		}
		res, err := agg.Apply(ctx, payload("crash", "pl-2", identifies(0, 4)))
		if err != nil || res.Duplicate || res.Accepted != 4 {
			t.Fatalf("redelivery: %+v %v", res, err)
		}
		if got := spooledLines(t, table, "crash"); len(got) != 4 {
			t.Errorf("%d lines spooled, want 4", len(got))
		}
	})
	t.Run("a large payload is cut into parts that each fit an item", func(t *testing.T) {
		agg, table := newAggregator(t)
		markExporting(t, table, "big", "d1")
		pad := strings.Repeat("x", 40_000)
		var events []string
		for i := range 20 {
			events = append(events, fmt.Sprintf(`{"kind":"custom","key":"k%d","creationDate":1,"data":"%s"}`, i, pad))
		}
		events = append(events, fmt.Sprintf(`{"kind":"custom","key":"huge","data":"%s"}`, strings.Repeat("y", ingest.MaxSpoolPart)))
		if _, err := agg.Apply(ctx, payload("big", "pl-3", []byte("["+strings.Join(events, ",")+"]"))); err != nil {
			t.Fatal(err)
		}
		page, _ := table.Query(ctx, store.Query{PK: store.DataExportSpoolPartition("big"), SKPrefix: store.DataExportSpoolPrefix})
		if len(page.Items) < 3 {
			t.Errorf("%d parts, want the 800 KB cut in at least 3", len(page.Items))
		}
		for _, it := range page.Items {
			if len(it.Data) > ingest.MaxSpoolPart {
				t.Errorf("part %s has %d bytes", it.SK, len(it.Data))
			}
		}
		if got := spooledLines(t, table, "big"); len(got) != 20 {
			t.Errorf("%d lines, want the 20 that fit (the oversized one left out)", len(got))
		}
	})
	t.Run("diagnostic payloads are not events and are not spooled", func(t *testing.T) {
		agg, table := newAggregator(t)
		markExporting(t, table, "diag", "d1")
		p := payload("diag", "pl-4", []byte(`{"kind":"diagnostic","sdk":{"name":"go-server-sdk","version":"7.0.0"}}`))
		p.Source = ingest.SourceDiagnostic
		if _, err := agg.Apply(ctx, p); err != nil {
			t.Fatal(err)
		}
		if got := spooledLines(t, table, "diag"); len(got) != 0 {
			t.Errorf("%d lines spooled", len(got))
		}
	})
}

// BenchmarkApplyWithExportTap is a 400-event payload applied on the
// embedded store for an environment without a destination (the tap costs
// a cached marker read) and for one that exports (it also spools the
// events: one part, one transaction).
func BenchmarkApplyWithExportTap(b *testing.B) {
	for _, exporting := range []bool{false, true} {
		b.Run(fmt.Sprintf("exporting=%v", exporting), func(b *testing.B) {
			agg, table := newAggregator(b)
			if exporting {
				markExporting(b, table, "env", "d1")
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if _, err := agg.Apply(context.Background(), ingest.Payload{Source: ingest.SourceServer, ProjectKey: "p", EnvKey: "e", EnvID: "env",
					PayloadID: fmt.Sprint("bench-", i), ReceivedAt: time.Now().UnixMilli(), Body: flush(i, 10)}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
