package ingest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/axiomhq/hyperloglog"
	"github.com/flagplane/flagplane/shared/store"
)

// AIGenerationEvent is the custom event key LaunchDarkly's AI SDKs send
// once per generation (trackSuccess, trackError and the provider helpers
// all emit it): one AI run.
const AIGenerationEvent = "$ld:ai:generation"

// CellTTL is how long hour cells are kept: long enough for the usage
// rollup to catch up after weeks of downtime, and for a rolling 30 days.
const CellTTL = 35 * 24 * time.Hour

// Sender is who sent a payload (SDK type, name, version and application)
// into which environment: what names a cell, and the days and months the
// usage rollup folds cells into. Embedded, its fields stand at the top
// level of their item's JSON.
type Sender struct {
	ProjectKey string `json:"projectKey"`
	EnvKey     string `json:"environmentKey"`
	EnvID      string `json:"environmentId"`
	// SDKType is server, mobile or browser (by the route the events took).
	SDKType    string `json:"sdkType"`
	SDKName    string `json:"sdkName"`
	SDKVersion string `json:"sdkVersion"`
	AppID      string `json:"applicationId,omitempty"`
}

// Cell is one environment's hour for one sender: the counters the usage
// series are rolled up from. A payload comes from one sender, so it adds
// to exactly one cell.
type Cell struct {
	Hour string `json:"hour"`
	Sender
	// Events counts events by kind; AIRuns the AI SDKs' generations.
	Events   map[string]int64 `json:"events"`
	AIRuns   int64            `json:"aiRuns,omitempty"`
	Payloads int64            `json:"payloads"`
	// Sketches are HyperLogLog sketches (precision 14) of distinct context
	// keys, by SketchKey(kind, anonymous).
	Sketches map[string][]byte `json:"sketches"`
}

// SketchKey names the sketch of one context kind, anonymous or not.
func SketchKey(kind string, anonymous bool) string {
	if anonymous {
		return kind + "|true"
	}
	return kind + "|false"
}

// CellID is the hash naming a sender's cell in its hour and environment.
func CellID(sdkType, sdkName, sdkVersion, appID string) string {
	sum := sha256.Sum256([]byte(sdkType + "\x00" + sdkName + "\x00" + sdkVersion + "\x00" + appID))
	return hex.EncodeToString(sum[:8])
}

// cellAdd records one event in the payload's cell.
func (b *batch) cellAdd(e *event) {
	if e.Kind == "custom" && e.Key == AIGenerationEvent {
		b.aiRuns++
	}
	if e.parsed.IsDefined() {
		for _, c := range e.parsed.GetAllIndividualContexts(nil) {
			b.cellSketch(SketchKey(string(c.Kind()), c.Anonymous())).Insert([]byte(c.Key()))
		}
		return
	}
	// Events carrying only contextKeys say nothing of anonymity.
	for kind, key := range e.ContextKeys {
		b.cellSketch(SketchKey(kind, false)).Insert([]byte(key))
	}
}

func (b *batch) cellSketch(k string) *hyperloglog.Sketch {
	if b.cellSketches == nil {
		b.cellSketches = map[string]*hyperloglog.Sketch{}
	}
	s := b.cellSketches[k]
	if s == nil {
		s = hyperloglog.New14()
		b.cellSketches[k] = s
	}
	return s
}

// cellChange adds the payload to its sender's hour cell.
func (b *batch) cellChange() change {
	p, sdk := b.p, b.sdk
	hour := hourOf(b.now.UnixMilli())
	k := store.UsageCellKey(hour, p.EnvID, CellID(sdk.Type, sdk.Name, sdk.Version, b.app.ID))
	ttl := b.now.Add(CellTTL).Unix()
	return change{key: k, merge: func(old *store.Item) (store.Item, bool, error) {
		c := Cell{Hour: hour, Sender: Sender{ProjectKey: p.ProjectKey, EnvKey: p.EnvKey, EnvID: p.EnvID, SDKType: sdk.Type,
			SDKName: sdk.Name, SDKVersion: sdk.Version, AppID: b.app.ID}, Events: map[string]int64{}, Sketches: map[string][]byte{}}
		if old != nil {
			if err := json.Unmarshal(old.Data, &c); err != nil {
				return store.Item{}, false, fmt.Errorf("decode usage cell of %s: %w", hour, err)
			}
		}
		for kind, n := range b.counts {
			c.Events[kind] += n
		}
		c.AIRuns += b.aiRuns
		c.Payloads++
		if err := MergeSketches(c.Sketches, b.cellSketches); err != nil {
			return store.Item{}, false, err
		}
		data, err := json.Marshal(c)
		return store.Item{Data: data, TTL: ttl}, err == nil, err
	}}
}

// MergeSketches merges each sketch of add into the encoded one of the
// same name in into, which it updates.
func MergeSketches(into map[string][]byte, add map[string]*hyperloglog.Sketch) error {
	for name, s := range add {
		merged := hyperloglog.New14()
		if raw, ok := into[name]; ok {
			if err := merged.UnmarshalBinary(raw); err != nil {
				return fmt.Errorf("decode sketch %s: %w", name, err)
			}
		}
		if err := merged.Merge(s); err != nil {
			return fmt.Errorf("merge sketch %s: %w", name, err)
		}
		raw, err := Canonical(merged).MarshalBinary()
		if err != nil {
			return fmt.Errorf("encode sketch %s: %w", name, err)
		}
		into[name] = raw
	}
	return nil
}

// Canonical returns s in the one form its content has, so equal sketches
// encode to equal bytes however they were merged: the library keeps
// recent inserts in a set it encodes in map order, and switches to dense
// registers at a point that depends on the order of merges. Merged into
// a fresh sketch, the content decides the form (dense beyond 2^14 sparse
// entries), and the estimate folds the pending set into the sorted list.
func Canonical(s *hyperloglog.Sketch) *hyperloglog.Sketch {
	c := hyperloglog.New14()
	_ = c.Merge(s) // same precision: cannot fail
	c.Estimate()
	return c
}

// keepConnection writes an SDK seen through its events, keeping the
// connection type (streaming, polling, relay) its diagnostic events told:
// events do not say it.
func keepConnection(it store.Item) func(*store.Item) (store.Item, bool, error) {
	return func(old *store.Item) (store.Item, bool, error) {
		if old == nil {
			return it, true, nil
		}
		var prev, next SDKSeen
		if err := json.Unmarshal(old.Data, &prev); err != nil || prev.Connection == "" {
			return it, true, nil
		}
		if err := json.Unmarshal(it.Data, &next); err != nil {
			return store.Item{}, false, fmt.Errorf("decode SDK seen: %w", err)
		}
		next.Connection = prev.Connection
		data, err := json.Marshal(next)
		return store.Item{Data: data}, err == nil, err
	}
}
