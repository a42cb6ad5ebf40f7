package destination

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/flagplane/flagplane/shared/store"
)

// Export limits.
const (
	// MaxBatchParts bounds a batch's spooled parts: closing it deletes
	// them, the batch and the hour's counter in one transaction.
	MaxBatchParts = store.MaxWrites - 10
	// MaxBatchesPerRun bounds the batches one run writes per environment,
	// so one busy environment cannot hold the others back for long.
	MaxBatchesPerRun = 50
	// ExportInterval is how often the local server's timer exports.
	ExportInterval = 30 * time.Second
)

// Batch is an environment's open batch: the spooled parts it holds,
// fixed before anything is written, and the object they are written to.
// A run that stops part-way leaves it; the next run writes the same parts
// to the same object again and then closes it, so an event lands once.
type Batch struct {
	ID     string   `json:"id"`
	Hour   string   `json:"hour"`
	Name   string   `json:"name"`
	Parts  []string `json:"parts"`
	Events int64    `json:"events"`
}

// HourCount is the data-export counter of one environment and hour
// (store.DataExportHourKey), which the usage rollup reads.
type HourCount struct {
	Hour   string `json:"hour"`
	EnvID  string `json:"environmentId"`
	Events int64  `json:"events"`
}

// Exporter moves the events ingest spooled to the stage, one NDJSON
// object per batch, and counts them per hour and environment.
type Exporter struct {
	table  store.Table
	stage  Stage
	logger *slog.Logger
	now    func() time.Time
}

// NewExporter exports from table to stage, on the clock now.
func NewExporter(table store.Table, stage Stage, logger *slog.Logger, now func() time.Time) *Exporter {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Exporter{table: table, stage: stage, logger: logger, now: now}
}

// Report says what a run did.
type Report struct {
	Batches int
	Events  int64
}

// Run exports what every exporting environment has spooled. An
// environment that fails is reported and the others still run.
func (x *Exporter) Run(ctx context.Context) (Report, error) {
	var total Report
	var errs []error
	q := store.Query{PK: store.DataExportEnvsPK}
	for {
		page, err := x.table.Query(ctx, q)
		if err != nil {
			return total, fmt.Errorf("list exporting environments: %w", err)
		}
		for _, it := range page.Items {
			r, err := x.Drain(ctx, it.SK)
			total.Batches += r.Batches
			total.Events += r.Events
			if err != nil {
				errs = append(errs, fmt.Errorf("environment %s: %w", it.SK, err))
			}
		}
		if page.Cursor == "" {
			break
		}
		q.Cursor = page.Cursor
	}
	return total, errors.Join(errs...)
}

// Drain exports one environment's spool, batch after batch.
func (x *Exporter) Drain(ctx context.Context, envID string) (Report, error) {
	var r Report
	for range MaxBatchesPerRun {
		b, version, err := x.open(ctx, envID)
		if err != nil || b == nil {
			return r, err
		}
		body, err := x.body(ctx, envID, b)
		if err != nil {
			return r, err
		}
		if err := x.stage.Put(ctx, b.Name, body); err != nil {
			return r, fmt.Errorf("write batch %s to the stage: %w", b.Name, err)
		}
		if err := x.close(ctx, envID, b, version); err != nil {
			return r, err
		}
		r.Batches++
		r.Events += b.Events
	}
	return r, nil
}

// openAttempts bounds the races open may lose before giving up for this run.
const openAttempts = 5

// open returns the environment's open batch, or opens one over the
// oldest spooled parts; nil when nothing is spooled.
func (x *Exporter) open(ctx context.Context, envID string) (*Batch, int64, error) {
	k := store.DataExportBatchKey(envID)
	for range openAttempts {
		it, err := x.table.Get(ctx, k)
		if err == nil {
			var b Batch
			if err := json.Unmarshal(it.Data, &b); err != nil {
				return nil, 0, fmt.Errorf("decode open batch: %w", err)
			}
			return &b, it.Version, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return nil, 0, fmt.Errorf("read open batch: %w", err)
		}
		page, err := x.table.Query(ctx, store.Query{PK: store.DataExportSpoolPartition(envID), SKPrefix: store.DataExportSpoolPrefix, Limit: MaxBatchParts})
		if err != nil {
			return nil, 0, fmt.Errorf("read spool: %w", err)
		}
		if len(page.Items) == 0 {
			return nil, 0, nil
		}
		now := x.now().UTC()
		b := Batch{Hour: now.Format("2006010215")}
		h := sha256.New()
		for _, it := range page.Items {
			b.Parts = append(b.Parts, it.SK)
			b.Events += int64(bytes.Count(it.Data, []byte("\n")))
			h.Write([]byte(it.SK + "\n"))
		}
		b.ID = fmt.Sprintf("%013d-%s", now.UnixMilli(), hex.EncodeToString(h.Sum(nil))[:12])
		b.Name = EnvPrefix(envID) + now.Format("2006-01-02/15/") + b.ID + ".ndjson"
		data, err := json.Marshal(b)
		if err != nil {
			return nil, 0, fmt.Errorf("encode batch: %w", err)
		}
		// The parts must still be spooled as the batch opens: a run that
		// read them just before another closed its batch over them must
		// not open a batch of parts already exported.
		writes := []store.Write{store.Put(store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: data}, store.IfNotExists())}
		for _, sk := range b.Parts {
			writes = append(writes, store.Check(store.Key{PK: k.PK, SK: sk}, store.IfExists()))
		}
		err = x.table.Transact(ctx, writes)
		if err == nil {
			return &b, 1, nil
		}
		if !errors.Is(err, store.ErrConditionFailed) && !errors.Is(err, store.ErrConflict) {
			return nil, 0, fmt.Errorf("open batch: %w", err)
		}
		// Another run opened one first, or closed one over these parts: look again.
	}
	return nil, 0, fmt.Errorf("open batch: lost the race %d times", openAttempts)
}

// body is the batch's NDJSON: its parts in order. Parts are never
// changed once spooled, so the same batch is always the same bytes.
func (x *Exporter) body(ctx context.Context, envID string, b *Batch) ([]byte, error) {
	want := make(map[string]int, len(b.Parts))
	for i, sk := range b.Parts {
		want[sk] = i
	}
	got := make([][]byte, len(b.Parts))
	q := store.Query{PK: store.DataExportSpoolPartition(envID), SKFrom: b.Parts[0], SKTo: b.Parts[len(b.Parts)-1]}
	found := 0
	for {
		page, err := x.table.Query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("read batch %s: %w", b.ID, err)
		}
		for _, it := range page.Items {
			if i, ok := want[it.SK]; ok && got[i] == nil {
				got[i] = it.Data
				found++
			}
		}
		if page.Cursor == "" || found == len(b.Parts) {
			break
		}
		q.Cursor = page.Cursor
	}
	if found != len(b.Parts) {
		return nil, fmt.Errorf("batch %s: %d of its %d spooled parts are missing", b.ID, len(b.Parts)-found, len(b.Parts))
	}
	return bytes.Join(got, nil), nil
}

// close deletes the batch and its parts and adds its events to the
// hour's counter, in one transaction: the count moves exactly once.
func (x *Exporter) close(ctx context.Context, envID string, b *Batch, version int64) error {
	bk := store.DataExportBatchKey(envID)
	ck := store.DataExportHourKey(b.Hour, envID)
	for range 5 {
		count := HourCount{Hour: b.Hour, EnvID: envID}
		cond, cv := store.IfNotExists(), int64(0)
		it, err := x.table.Get(ctx, ck)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return fmt.Errorf("read export counter: %w", err)
		default:
			if err := json.Unmarshal(it.Data, &count); err != nil {
				return fmt.Errorf("decode export counter: %w", err)
			}
			cond, cv = store.IfVersion(it.Version), it.Version
		}
		count.Events += b.Events
		data, err := json.Marshal(count)
		if err != nil {
			return fmt.Errorf("encode export counter: %w", err)
		}
		writes := []store.Write{
			store.Delete(bk, store.IfVersion(version)),
			store.Put(store.Item{PK: ck.PK, SK: ck.SK, Version: cv + 1, Data: data}, cond),
		}
		for _, sk := range b.Parts {
			writes = append(writes, store.Delete(store.Key{PK: store.DataExportSpoolPartition(envID), SK: sk}, store.IfExists()))
		}
		err = x.table.Transact(ctx, writes)
		if err == nil {
			x.logger.Info("exported a batch", "environmentId", envID, "object", b.Name, "events", b.Events)
			return nil
		}
		if !errors.Is(err, store.ErrConditionFailed) && !errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("close batch %s: %w", b.ID, err)
		}
		// Closed by a concurrent run, or the counter moved: look again.
		cur, gerr := x.table.Get(ctx, bk)
		if errors.Is(gerr, store.ErrNotFound) {
			return nil
		}
		if gerr == nil {
			var open Batch
			if json.Unmarshal(cur.Data, &open) == nil && open.ID != b.ID {
				return nil
			}
		}
	}
	return fmt.Errorf("close batch %s: the counter kept changing", b.ID)
}

// Counted returns the events exported for envID in hour (yyyymmddhh).
func Counted(ctx context.Context, table store.Table, hour, envID string) (int64, error) {
	it, err := table.Get(ctx, store.DataExportHourKey(hour, envID))
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read export counter: %w", err)
	}
	var c HourCount
	if err := json.Unmarshal(it.Data, &c); err != nil {
		return 0, fmt.Errorf("decode export counter: %w", err)
	}
	return c.Events, nil
}
