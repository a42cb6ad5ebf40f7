package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/flagplane/flagplane/shared/cache"
	"github.com/flagplane/flagplane/shared/store"
)

// Exporter takes each payload's events before the aggregator counts them:
// the tap of the data export to warehouse destinations. Export must be
// idempotent: a payload delivered again (a retry, a redelivery after a
// crash) must leave what the first delivery left.
type Exporter interface {
	Export(ctx context.Context, p Payload) error
}

// ExportTo replaces the exporter (a Spool over the aggregator's table by default).
func (a *Aggregator) ExportTo(x Exporter) *Aggregator {
	a.exportTap.once.Do(func() {})
	a.exportTap.x = x
	return a
}

// exportTap holds an aggregator's exporter, built on first use.
type exportTap struct {
	once sync.Once
	x    Exporter
}

// export runs the exporter; Apply calls it before marking the payload id,
// so a crash between the two leaves the payload to be delivered again,
// and the spool, keyed by payload part, takes it once.
func (a *Aggregator) export(ctx context.Context, p Payload) error {
	a.exportTap.once.Do(func() { a.exportTap.x = NewSpool(a.table, a.logger, a.now) })
	if a.exportTap.x == nil {
		return nil
	}
	return a.exportTap.x.Export(ctx, p)
}

// ExportEnv is the marker of an environment whose events are exported
// (store.DataExportEnvKey); the destination service keeps it.
type ExportEnv struct {
	ProjectKey string `json:"projectKey"`
	EnvKey     string `json:"environmentKey"`
	EnvID      string `json:"environmentId"`
	// Active are the ids of the environment's destinations that are on.
	Active []string `json:"active"`
}

// ExportLine is one exported event: one line of the NDJSON the stage
// receives, the event as the SDK sent it with where and when it came.
type ExportLine struct {
	EnvID        string          `json:"environmentId"`
	ProjectKey   string          `json:"projectKey"`
	EnvKey       string          `json:"environmentKey"`
	PayloadID    string          `json:"payloadId,omitempty"`
	Source       string          `json:"source"`
	ReceivedAt   int64           `json:"receivedAt"`
	Kind         string          `json:"kind"`
	CreationDate int64           `json:"creationDate,omitempty"`
	Event        json.RawMessage `json:"event"`
}

// Spool limits: a part stays well under DynamoDB's 400 KB item size.
const (
	// MaxSpoolPart is the most NDJSON bytes one spooled part holds.
	MaxSpoolPart = 300 << 10
	// SpoolSeenTTL is how long a spooled part is remembered after its
	// export: the same window in which ingest dedupes payload ids.
	SpoolSeenTTL = PayloadTTL
	// ExportEnvCacheTTL is how long a process trusts what it read of an
	// environment's export marker: a destination turned on exports the
	// events ingested from at most this long after.
	ExportEnvCacheTTL = 15 * time.Second
)

// Spool is the default exporter: it writes the events of environments
// with an active destination into the table, one item per part of a
// payload, for the export job to move to the stage. Each part is written
// once, in one transaction with a marker of its key that outlives its
// export, so a payload delivered again is neither lost nor exported twice.
type Spool struct {
	table  store.Table
	logger *slog.Logger
	now    func() time.Time
	ttl    time.Duration
	envs   cache.Bounded[string, cachedEnv]
}

type cachedEnv struct {
	active bool
	at     time.Time
}

// NewSpool spools into table.
func NewSpool(table store.Table, logger *slog.Logger, now func() time.Time) *Spool {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Spool{table: table, logger: logger, now: now, ttl: ExportEnvCacheTTL, envs: cache.Bounded[string, cachedEnv]{Max: 10_000}}
}

// WithCacheTTL sets how long an environment's marker is trusted (0: read every time).
func (s *Spool) WithCacheTTL(d time.Duration) *Spool {
	s.ttl = d
	return s
}

// Active reports whether envID has an active destination.
func (s *Spool) Active(ctx context.Context, envID string) (bool, error) {
	now := s.now()
	if c, ok := s.envs.Get(envID); ok && s.ttl > 0 && now.Sub(c.at) < s.ttl {
		return c.active, nil
	}
	active := false
	it, err := s.table.Get(ctx, store.DataExportEnvKey(envID))
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return false, fmt.Errorf("read export marker of environment %s: %w", envID, err)
	default:
		var m ExportEnv
		if err := json.Unmarshal(it.Data, &m); err != nil {
			return false, fmt.Errorf("decode export marker of environment %s: %w", envID, err)
		}
		active = len(m.Active) > 0
	}
	s.envs.Put(envID, cachedEnv{active: active, at: now})
	return active, nil
}

// Export spools p's events when its environment exports.
func (s *Spool) Export(ctx context.Context, p Payload) error {
	if IsDiagnostic(p.Source) || p.EnvID == "" {
		return nil
	}
	active, err := s.Active(ctx, p.EnvID)
	if err != nil || !active {
		return err
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(p.Body, &raws); err != nil {
		return nil // not an array of events: the aggregator counts it as skipped
	}
	parts, dropped := SpoolParts(p, raws)
	if dropped > 0 {
		s.logger.Warn("events too large to export were left out", "environmentId", p.EnvID, "payloadId", p.PayloadID, "events", dropped, "maxBytes", MaxSpoolPart)
	}
	base := spoolID(p)
	ttl := s.now().Add(SpoolSeenTTL).Unix()
	for i, part := range parts {
		id := base + "#" + strconv.Itoa(i)
		seen := store.DataExportSeenKey(p.EnvID, id)
		k := store.DataExportSpoolKey(p.EnvID, id)
		err := s.table.Transact(ctx, []store.Write{
			store.Put(store.Item{PK: seen.PK, SK: seen.SK, Version: 1, TTL: ttl, Data: []byte("{}")}, store.IfNotExists()),
			store.Put(store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: part}, store.IfNotExists()),
		})
		if errors.Is(err, store.ErrConditionFailed) {
			continue // spooled by an earlier delivery of the same payload
		}
		if err != nil {
			return fmt.Errorf("spool part %d of payload %q: %w", i, p.PayloadID, err)
		}
	}
	return nil
}

var plainID = regexp.MustCompile(`^[A-Za-z0-9._:#-]{1,80}$`)

// spoolID names a payload's parts: its payload id when it is a plain
// one, otherwise a hash of it; without one, a hash of the body, so the
// same body sent again is the same parts.
func spoolID(p Payload) string {
	if p.PayloadID != "" && plainID.MatchString(p.PayloadID) {
		return p.PayloadID
	}
	h := sha256.New()
	if p.PayloadID != "" {
		h.Write([]byte("id:" + p.PayloadID))
	} else {
		h.Write([]byte("body:"))
		h.Write(p.Body)
	}
	return "h" + hex.EncodeToString(h.Sum(nil))[:40]
}

// SpoolParts turns a payload's events into NDJSON parts of at most
// MaxSpoolPart bytes each, in the order sent; an event whose line alone is
// larger is left out and counted in dropped. The cut depends only on the
// payload, so a payload delivered again is cut the same way.
func SpoolParts(p Payload, raws []json.RawMessage) (parts [][]byte, dropped int) {
	var cur bytes.Buffer
	for _, raw := range raws {
		var head struct {
			Kind         string `json:"kind"`
			CreationDate int64  `json:"creationDate"`
		}
		_ = json.Unmarshal(raw, &head)
		line, err := json.Marshal(ExportLine{EnvID: p.EnvID, ProjectKey: p.ProjectKey, EnvKey: p.EnvKey, PayloadID: p.PayloadID,
			Source: p.Source, ReceivedAt: p.ReceivedAt, Kind: head.Kind, CreationDate: head.CreationDate, Event: raw})
		if err != nil || len(line)+1 > MaxSpoolPart {
			dropped++
			continue
		}
		if cur.Len()+len(line)+1 > MaxSpoolPart {
			parts = append(parts, bytes.Clone(cur.Bytes()))
			cur.Reset()
		}
		cur.Write(line)
		cur.WriteByte('\n')
	}
	if cur.Len() > 0 {
		parts = append(parts, bytes.Clone(cur.Bytes()))
	}
	return parts, dropped
}
