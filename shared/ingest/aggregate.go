package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/axiomhq/hyperloglog"
	"github.com/flagplane/flagplane/shared/application"
	"github.com/flagplane/flagplane/shared/cache"
	"github.com/flagplane/flagplane/shared/sdkcontext"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"
	"github.com/launchdarkly/go-sdk-common/v3/ldvalue"
)

// PayloadTTL is how long a payload id is remembered: a retry within it counts once.
const PayloadTTL = 24 * time.Hour

// MaxValueLength is the longest attribute value (JSON) the index keeps.
const MaxValueLength = 256

// Aggregator applies payloads to the table.
type Aggregator struct {
	table  store.Table
	now    func() time.Time
	logger *slog.Logger
	// known remembers items that exist already (context kinds,
	// applications, versions, flags of applications, SDKs this hour), so a
	// payload writes them only once per process. Bounded: when full it
	// forgets them all, which only costs a few repeated create-once checks.
	known *cache.Bounded[string, struct{}]
	// perItem writes each aggregate with its own conditional put instead
	// of atomic batches (see PerItemWrites).
	perItem bool
	// exportTap spools events for warehouse destinations (export.go).
	exportTap exportTap
}

// PerItemWrites makes the aggregator write each item with its own
// conditional put, several at a time, instead of atomic batches of up to
// 100. Aggregates need no atomicity across items, and on DynamoDB a
// conditional PutItem costs half what the same item costs inside
// TransactWriteItems; the embedded store is faster with batches (one
// commit each), so local mode keeps them.
func (a *Aggregator) PerItemWrites() *Aggregator {
	a.perItem = true
	return a
}

func (a *Aggregator) write(ctx context.Context, changes []change) error {
	if a.perItem {
		return writeEach(ctx, a.table, changes)
	}
	return writeAll(ctx, a.table, changes)
}

// NewAggregator aggregates into table.
func NewAggregator(table store.Table, logger *slog.Logger, now func() time.Time) *Aggregator {
	return &Aggregator{table: table, now: now, logger: logger, known: &cache.Bounded[string, struct{}]{Max: 100_000}}
}

// Result says what one payload did.
type Result struct {
	// Duplicate is true when the payload id was counted before: nothing was written.
	Duplicate bool
	Accepted  int
	Skipped   int
}

// Apply aggregates one payload. A payload whose id was applied before is
// a duplicate and writes nothing. A payload with an id is applied in
// steps, each written in one commit with a mark of its own (writeSteps),
// so a delivery that failed or crashed part-way can be delivered again:
// the steps that landed are skipped, the others written, and each event
// counts once. A payload without an id is applied in one go, unmarked.
func (a *Aggregator) Apply(ctx context.Context, p Payload) (Result, error) {
	now := a.now()
	if p.PayloadID == "" {
		if err := a.export(ctx, p); err != nil {
			return Result{}, err
		}
		return a.apply(ctx, p, now, nil)
	}
	mark := store.PayloadKey(p.EnvID, p.PayloadID)
	it, err := a.table.Get(ctx, mark)
	switch {
	case err == nil:
		if !pendingMark(it.Data) {
			return Result{Duplicate: true}, nil
		}
	case !errors.Is(err, store.ErrNotFound):
		return Result{}, fmt.Errorf("read mark of payload %q: %w", p.PayloadID, err)
	}
	if err := a.export(ctx, p); err != nil {
		return Result{}, err
	}
	res, err := a.apply(ctx, p, now, &progress{envID: p.EnvID, payloadID: p.PayloadID, ttl: now.Add(PayloadTTL).Unix()})
	if err != nil {
		return res, err
	}
	// Only now is the payload a duplicate for later deliveries; a crash
	// before this put leaves each step's mark, so the next one skips them.
	if err := a.table.Put(ctx, store.Item{PK: mark.PK, SK: mark.SK, Version: 1, TTL: now.Add(PayloadTTL).Unix(), Data: []byte("{}")}, store.Cond{}); err != nil {
		return res, fmt.Errorf("mark payload %q applied: %w", p.PayloadID, err)
	}
	return res, nil
}

// payloadMark is the data of a payload's mark. Marks without Pending
// (and those older files hold, "{}") say the payload was applied.
type payloadMark struct {
	// Pending says the payload was accepted into the local inbox and is
	// not applied yet: a later payload with its id is still a duplicate,
	// but the inbox's worker applies this one.
	Pending bool `json:"pending,omitempty"`
}

func pendingMark(data []byte) bool {
	var m payloadMark
	return json.Unmarshal(data, &m) == nil && m.Pending
}

func (a *Aggregator) apply(ctx context.Context, p Payload, now time.Time, pr *progress) (Result, error) {
	if IsDiagnostic(p.Source) {
		return a.applyDiagnostic(ctx, p, now)
	}
	events, skipped, err := parseEvents(p.Body)
	if err != nil {
		// The handler checks the shape; a message that got this far malformed is counted, not retried.
		a.logger.Warn("ingest payload is not an array of events", "err", err)
		return Result{Skipped: 1}, nil
	}
	b := newBatch(p, now)
	for i := range events {
		b.add(&events[i])
	}
	// Instances first: which are new decides what the attribute index
	// and the context count count, so each chunk's mark keeps what its
	// writes found.
	if err := a.writeSteps(ctx, pr, "instances", b.instanceChanges(), b.fateOutcome()); err != nil {
		return Result{}, err
	}
	b.settle()
	b.attributeDeltas()
	values, err := b.valueChanges(ctx, a.table, pr)
	if err != nil {
		return Result{}, err
	}
	if err := a.writeSteps(ctx, pr, "values", values, b.newValueOutcome()); err != nil {
		return Result{}, err
	}
	// What may be written again without harm goes item by item; what adds
	// up goes in marked steps, in an order that depends only on the payload.
	if err := a.write(ctx, b.idempotentChanges(a.known)); err != nil {
		return Result{}, err
	}
	if err := a.writeSteps(ctx, pr, "counters", b.counterChanges(), nil); err != nil {
		return Result{}, err
	}
	for _, k := range b.learned {
		a.known.Put(k, struct{}{})
	}
	return Result{Accepted: len(events), Skipped: skipped}, nil
}

func (a *Aggregator) applyDiagnostic(ctx context.Context, p Payload, now time.Time) (Result, error) {
	var d diagnostic
	if err := json.Unmarshal(p.Body, &d); err != nil || d.SDK.Name == "" {
		return Result{Skipped: 1}, nil
	}
	sdk := p.SDK()
	sdk.Name, sdk.Version = d.SDK.Name, d.SDK.Version
	if d.SDK.WrapperName != "" {
		sdk.Wrapper = d.SDK.WrapperName + "/" + d.SDK.WrapperVersion
	}
	it, err := sdkSeenItem(p, sdk, d.connection(), now)
	if err != nil {
		return Result{}, err
	}
	if err := a.table.Put(ctx, it, store.Cond{}); err != nil {
		return Result{}, fmt.Errorf("record SDK %s: %w", sdk.Name, err)
	}
	return Result{Accepted: 1}, nil
}

// SDKSeen is one SDK seen in one environment.
type SDKSeen struct {
	SDK
	ProjectKey    string `json:"projectKey"`
	EnvKey        string `json:"environmentKey"`
	EnvID         string `json:"environmentId"`
	ApplicationID string `json:"applicationId,omitempty"`
	Connection    string `json:"connectionType,omitempty"`
	LastSeen      int64  `json:"lastSeen"`
}

func sdkSeenItem(p Payload, sdk SDK, connection string, now time.Time) (store.Item, error) {
	k := store.SDKSeenKey(p.EnvID, sdk.Type, sdk.Name, sdk.Version)
	data, err := json.Marshal(SDKSeen{SDK: sdk, ProjectKey: p.ProjectKey, EnvKey: p.EnvKey, EnvID: p.EnvID,
		ApplicationID: p.App().ID, Connection: connection, LastSeen: now.UnixMilli()})
	if err != nil {
		return store.Item{}, fmt.Errorf("encode SDK seen: %w", err)
	}
	return store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: data}, nil
}

// batch is one payload, aggregated in memory before anything is written.
type batch struct {
	p Payload
	// app and sdk are the payload's tags and user agent, parsed once.
	app Application
	sdk SDK
	now time.Time

	instances map[string]*pendingInstance
	// evals: flag key -> hour -> variation ("0", "1", "default", "unknown") -> count
	evals  map[string]map[string]map[string]int64
	kinds  map[string]bool
	counts map[string]int64 // events by kind, this payload's hour
	// cellSketches (by SketchKey) and aiRuns go to the sender's hour cell (cells.go).
	cellSketches map[string]*hyperloglog.Sketch
	aiRuns       int64
	// learned are what known will remember once the writes land.
	learned []string
	// names and values are the attribute index deltas of new instances;
	// newValues, by name, the values stored for the first time.
	names     map[store.Key]*sdkcontext.AttrName
	values    map[store.Key]*attrValueDelta
	newValues map[store.Key]map[store.Key]bool
	// fates are what each instance write did; newInstances, the created
	// ones, are listed from them once the instance writes landed.
	fates map[string]instanceFate
	// newInstances are filled by the instance writes.
	mu           sync.Mutex
	newInstances []*pendingInstance
}

type pendingInstance struct {
	id      string
	ctx     ldcontext.Context
	raw     json.RawMessage
	seen    int64
	singles []ldcontext.Context
}

func newBatch(p Payload, now time.Time) *batch {
	return &batch{p: p, app: p.App(), sdk: p.SDK(), now: now, instances: map[string]*pendingInstance{}, fates: map[string]instanceFate{},
		evals: map[string]map[string]map[string]int64{}, kinds: map[string]bool{},
		counts: map[string]int64{}}
}

func (b *batch) add(e *event) {
	b.counts[e.Kind]++
	b.cellAdd(e)
	when := e.CreationDate
	if when <= 0 || when > b.now.UnixMilli()+int64(time.Hour/time.Millisecond) {
		when = b.p.ReceivedAt
	}
	if e.parsed.IsDefined() {
		fq := e.parsed.FullyQualifiedKey()
		id := sdkcontext.InstanceID(fq)
		in := b.instances[id]
		if in == nil {
			in = &pendingInstance{id: id, singles: e.parsed.GetAllIndividualContexts(nil)}
			b.instances[id] = in
		}
		if when >= in.seen {
			in.ctx, in.raw, in.seen = e.parsed, e.Context, when
		}
		for _, c := range in.singles {
			b.kinds[string(c.Kind())] = true
		}
	} else {
		for kind := range e.ContextKeys {
			b.kinds[kind] = true
		}
	}
	if e.Kind == "summary" {
		hour := hourOf(e.EndDate)
		for flagKey, f := range e.Features {
			byHour := b.evals[flagKey]
			if byHour == nil {
				byHour = map[string]map[string]int64{}
				b.evals[flagKey] = byHour
			}
			counts := byHour[hour]
			if counts == nil {
				counts = map[string]int64{}
				byHour[hour] = counts
			}
			for _, c := range f.Counters {
				switch {
				case c.Unknown:
					counts["unknown"] += c.Count
				case c.Variation == nil:
					counts["default"] += c.Count
				default:
					counts[strconv.Itoa(*c.Variation)] += c.Count
				}
			}
			for _, k := range f.ContextKinds {
				b.kinds[k] = true
			}
		}
	}
}

func hourOf(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006010215") }

// instanceChanges write each context instance once, with its latest
// attributes; a new instance also gets a reference from each of its
// individual contexts, and is remembered for the attribute index.
func (b *batch) instanceChanges() []change {
	ids := make([]string, 0, len(b.instances))
	for id := range b.instances {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	appID := b.app.ID
	var out []change
	for _, id := range ids {
		in := b.instances[id]
		out = append(out, change{key: store.ContextInstanceKey(b.p.EnvID, id), merge: func(old *store.Item) (store.Item, bool, error) {
			doc := sdkcontext.Instance{ID: id, Context: string(in.raw), LastSeen: in.seen, ApplicationID: appID}
			// Each attempt says what it found; the one that lands decides.
			fate := instanceFate{isNew: old == nil}
			if old != nil {
				var prev sdkcontext.Instance
				if err := json.Unmarshal(old.Data, &prev); err == nil && prev.LastSeen > in.seen {
					b.setFate(id, instanceFate{})
					return store.Item{}, false, nil // a later payload already wrote newer attributes
				}
				if doc.ApplicationID == "" {
					doc.ApplicationID = prev.ApplicationID
				}
				if prev.ApplicationID != doc.ApplicationID {
					fate.fromApp, fate.toApp = &prev.ApplicationID, doc.ApplicationID
				}
			} else {
				fate.toApp = doc.ApplicationID
			}
			b.setFate(id, fate)
			for _, c := range in.singles {
				doc.Kinds = append(doc.Kinds, string(c.Kind())+":"+c.Key())
				if c.Anonymous() {
					doc.AnonymousKinds = append(doc.AnonymousKinds, string(c.Kind()))
				}
			}
			data, err := json.Marshal(doc)
			return store.Item{Data: data}, err == nil, err
		}})
	}
	return out
}

// instanceFate is what writing an instance did: created it, or moved it
// from one application to another (fromApp set), or neither.
type instanceFate struct {
	isNew   bool
	fromApp *string
	toApp   string
}

func (b *batch) setFate(id string, f instanceFate) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fates[id] = f
}

// settle lists the new instances once the instance writes landed.
func (b *batch) settle() {
	ids := make([]string, 0, len(b.fates))
	for id, f := range b.fates {
		if f.isNew {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		b.newInstances = append(b.newInstances, b.instances[id])
	}
}

// countChange keeps the environment's instance count, in all and by
// application, so a list's totalCount is one read.
func (b *batch) countChange() (change, bool) {
	delta := sdkcontext.Count{ByApp: map[string]int64{}}
	for _, f := range b.fates {
		switch {
		case f.isNew:
			delta.Total++
			delta.ByApp[f.toApp]++
		case f.fromApp != nil:
			delta.ByApp[*f.fromApp]--
			delta.ByApp[f.toApp]++
		}
	}
	if delta.Total == 0 && len(delta.ByApp) == 0 {
		return change{}, false
	}
	return change{key: store.ContextCountKey(b.p.EnvID), merge: func(old *store.Item) (store.Item, bool, error) {
		doc := sdkcontext.Count{ByApp: map[string]int64{}}
		if old != nil {
			if err := json.Unmarshal(old.Data, &doc); err != nil {
				return store.Item{}, false, fmt.Errorf("decode context count: %w", err)
			}
			if doc.ByApp == nil {
				doc.ByApp = map[string]int64{}
			}
		}
		doc.Add(delta)
		data, err := json.Marshal(doc)
		return store.Item{Data: data}, err == nil, err
	}}, true
}

// idempotentChanges are what a payload writes that may be written again
// without harm: the references of new instances, context kinds,
// applications, their versions and flags, and the SDK.
func (b *batch) idempotentChanges(known *cache.Bounded[string, struct{}]) []change {
	var out []change
	p := b.p
	now := b.now.UnixMilli()
	has := func(k string) bool { _, ok := known.Get(k); return ok }
	// References of new instances, and the attribute names they bring.
	for _, in := range b.newInstances {
		for _, c := range in.singles {
			ref, _ := json.Marshal(sdkcontext.Ref{ID: in.id, LastSeen: in.seen})
			k := store.ContextRefKey(p.EnvID, string(c.Kind()), sdkcontext.Hash(c.Key()), in.id)
			out = append(out, change{key: k, item: store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: ref}})
		}
	}
	// Context kinds, created the first time they are seen.
	// A known kind's lastSeen moves once an hour per process.
	for kind := range b.kinds {
		seen := "kind/" + p.ProjectKey + "/" + kind + "/" + hourOf(now)
		if kind == "" || has(seen) {
			continue
		}
		b.learned = append(b.learned, seen)
		out = append(out, change{key: store.ContextKindKey(p.ProjectKey, kind), merge: seeKind(sdkcontext.Kind{
			Key: kind, Name: kind, Version: 1, CreationDate: now, LastModified: now, LastSeen: now, CreatedFrom: sdkcontext.FromAutoAdd})})
	}
	// The application, its version and the flags it evaluated.
	app := b.app
	if app.ID != "" {
		if !has("app/" + app.ID) {
			b.learned = append(b.learned, "app/"+app.ID)
			out = append(out, change{key: store.ApplicationKey(app.ID), merge: createApp(application.Application{
				Key: app.ID, Name: app.ID, Kind: appKind(p.Source), AutoAdded: true, CreationDate: now})})
		}
		if app.Version != "" && !has("appver/"+app.ID+"/"+app.Version) {
			b.learned = append(b.learned, "appver/"+app.ID+"/"+app.Version)
			name := app.VersionName
			if name == "" {
				name = app.Version
			}
			out = append(out, change{key: store.ApplicationVersionKey(app.ID, app.Version), merge: createOnce(application.Version{
				Key: app.Version, Name: name, AutoAdded: true, CreationDate: now, Supported: true})})
		}
		for flagKey := range b.evals {
			id := "appflag/" + app.ID + "/" + p.ProjectKey + "/" + flagKey
			if has(id) {
				continue
			}
			b.learned = append(b.learned, id)
			k := store.ApplicationFlagKey(app.ID, p.ProjectKey, flagKey)
			data, _ := json.Marshal(application.Flag{ProjectKey: p.ProjectKey, FlagKey: flagKey, EnvKey: p.EnvKey, LastSeen: now})
			out = append(out, change{key: k, item: store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: data}})
		}
	}
	// The SDK, once an hour per process.
	sdk := b.sdk
	if seen := "sdk/" + p.EnvID + "/" + sdk.Type + "/" + sdk.Name + "/" + sdk.Version + "/" + hourOf(now); sdk.Name != "" && !has(seen) {
		b.learned = append(b.learned, seen)
		if it, err := sdkSeenItem(p, sdk, "", b.now); err == nil {
			out = append(out, change{key: it.Key(), merge: keepConnection(it)})
		}
	}
	return out
}

// counterChanges are what a payload adds up: the context count, the
// attribute names' counts, evaluation counters by flag, hour and
// variation, and the hour's usage cell. Their order depends only on the
// payload and what its instance and value steps found, so a delivery
// again cuts them into the same marked chunks; the cell, whose hour is
// the clock's, comes last.
func (b *batch) counterChanges() []change {
	var out []change
	p := b.p
	if c, ok := b.countChange(); ok {
		out = append(out, c)
	}
	names := make([]store.Key, 0, len(b.names))
	for k := range b.names {
		names = append(names, k)
	}
	sortKeys(names)
	for _, k := range names {
		out = append(out, change{key: k, merge: addName(b.names[k], int64(len(b.newValues[k])))})
	}
	flags := make([]string, 0, len(b.evals))
	for flagKey := range b.evals {
		flags = append(flags, flagKey)
	}
	sort.Strings(flags)
	for _, flagKey := range flags {
		byHour := b.evals[flagKey]
		hours := make([]string, 0, len(byHour))
		for hour := range byHour {
			hours = append(hours, hour)
		}
		sort.Strings(hours)
		for _, hour := range hours {
			out = append(out, change{key: store.FlagEvalKey(p.ProjectKey, p.EnvKey, flagKey, hour), merge: addEvals(flagKey, p.EnvKey, hour, byHour[hour])})
		}
	}
	return append(out, b.cellChange())
}

func sortKeys(keys []store.Key) {
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].PK != keys[j].PK {
			return keys[i].PK < keys[j].PK
		}
		return keys[i].SK < keys[j].SK
	})
}

// attributeDeltas gathers the attribute names and scalar values of the
// new instances' individual contexts, each with its count.
func (b *batch) attributeDeltas() {
	b.names = map[store.Key]*sdkcontext.AttrName{}
	b.values = map[store.Key]*attrValueDelta{}
	for _, in := range b.newInstances {
		for _, c := range in.singles {
			kind := string(c.Kind())
			for _, name := range append([]string{"key"}, c.GetOptionalAttributeNames(nil)...) {
				nk := store.ContextAttrNameKey(b.p.EnvID, kind, name)
				if b.names[nk] == nil {
					b.names[nk] = &sdkcontext.AttrName{Kind: kind, Name: name}
				}
				b.names[nk].Weight++
				v := c.GetValue(name)
				if v.Type() == ldvalue.ArrayType || v.Type() == ldvalue.ObjectType || v.IsNull() {
					continue
				}
				js := v.JSONString()
				if len(js) > MaxValueLength {
					continue
				}
				vk := store.ContextAttrValueKey(b.p.EnvID, sdkcontext.Hash(name), kind, js)
				if b.values[vk] == nil {
					b.values[vk] = &attrValueDelta{name: nk, doc: sdkcontext.AttrValue{Kind: kind, Name: name, Value: js}}
				}
				b.values[vk].doc.Weight++
			}
		}
	}
}

type attrValueDelta struct {
	name store.Key
	doc  sdkcontext.AttrValue
}

// MaxValuesPerAttribute bounds the distinct values indexed for one
// attribute of one kind: past it (emails, keys) new values are not
// indexed, so the index stays compact whatever the number of contexts.
const MaxValuesPerAttribute = 1000

// valueChanges are the value index writes, leaving out attributes that
// hold MaxValuesPerAttribute values already; each value stored for the
// first time is noted, so its name counts it. Which attributes are full
// is read once per payload: with progress it is kept in a mark, so a
// delivery again leaves out the same ones and cuts the same chunks, even
// though the counters the first delivery wrote may have filled one since.
func (b *batch) valueChanges(ctx context.Context, table store.Table, pr *progress) ([]change, error) {
	full, err := b.fullNames(ctx, table, pr)
	if err != nil {
		return nil, err
	}
	keys := make([]store.Key, 0, len(b.values))
	for vk, d := range b.values {
		if !full[d.name] {
			keys = append(keys, vk)
		}
	}
	sortKeys(keys)
	b.newValues = map[store.Key]map[store.Key]bool{}
	out := make([]change, 0, len(keys))
	for _, vk := range keys {
		d := b.values[vk]
		out = append(out, change{key: vk, merge: func(old *store.Item) (store.Item, bool, error) {
			doc := d.doc
			if old != nil {
				var prev sdkcontext.AttrValue
				if err := json.Unmarshal(old.Data, &prev); err == nil {
					doc.Weight += prev.Weight
				}
			}
			b.noteValue(d.name, vk, old == nil)
			data, err := json.Marshal(doc)
			return store.Item{Data: data}, err == nil, err
		}})
	}
	return out, nil
}

// noteValue records whether writing value vk of name created it.
func (b *batch) noteValue(name, vk store.Key, isNew bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !isNew {
		delete(b.newValues[name], vk)
		return
	}
	if b.newValues[name] == nil {
		b.newValues[name] = map[store.Key]bool{}
	}
	b.newValues[name][vk] = true
}

// fullNames reads which attribute names of the payload hold
// MaxValuesPerAttribute values already; with progress, the first
// delivery's answer is kept in a mark and read back by the next ones.
func (b *batch) fullNames(ctx context.Context, table store.Table, pr *progress) (map[store.Key]bool, error) {
	var mark store.Key
	if pr != nil {
		mark = pr.key("full")
		if it, err := table.Get(ctx, mark); err == nil {
			return decodeFull(it.Data)
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("read step mark %s: %w", mark.SK, err)
		}
	}
	full := map[store.Key]bool{}
	var names []store.Key
	for nk := range b.names {
		it, err := table.Get(ctx, nk)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read attribute name %s: %w", nk.SK, err)
		}
		var n sdkcontext.AttrName
		if err := json.Unmarshal(it.Data, &n); err == nil && n.Values >= MaxValuesPerAttribute {
			full[nk] = true
			names = append(names, nk)
		}
	}
	if pr == nil {
		return full, nil
	}
	data, err := json.Marshal(names)
	if err != nil {
		return nil, fmt.Errorf("encode full attribute names: %w", err)
	}
	err = table.Put(ctx, store.Item{PK: mark.PK, SK: mark.SK, Version: 1, TTL: pr.ttl, Data: data}, store.IfNotExists())
	if errors.Is(err, store.ErrConditionFailed) {
		// A concurrent delivery of the same payload read first: its answer holds.
		it, err := table.Get(ctx, mark)
		if err != nil {
			return nil, fmt.Errorf("read step mark %s: %w", mark.SK, err)
		}
		return decodeFull(it.Data)
	}
	if err != nil {
		return nil, fmt.Errorf("write step mark %s: %w", mark.SK, err)
	}
	return full, nil
}

func decodeFull(data []byte) (map[store.Key]bool, error) {
	var names []store.Key
	if err := json.Unmarshal(data, &names); err != nil {
		return nil, fmt.Errorf("decode full attribute names: %w", err)
	}
	full := make(map[store.Key]bool, len(names))
	for _, k := range names {
		full[k] = true
	}
	return full, nil
}

// addName adds an attribute name's counts to the stored ones.
func addName(delta *sdkcontext.AttrName, newValues int64) func(*store.Item) (store.Item, bool, error) {
	return func(old *store.Item) (store.Item, bool, error) {
		doc := *delta
		doc.Values = newValues
		if old != nil {
			var prev sdkcontext.AttrName
			if err := json.Unmarshal(old.Data, &prev); err == nil {
				doc.Weight += prev.Weight
				doc.Values += prev.Values
			}
		}
		data, err := json.Marshal(doc)
		return store.Item{Data: data}, err == nil, err
	}
}

func appKind(source string) string {
	switch source {
	case SourceMobile:
		return application.KindMobile
	case SourceClient:
		return application.KindBrowser
	}
	return application.KindServer
}

// createOnce writes doc when the item does not exist; an existing one (perhaps edited through the API) is kept.
func createOnce[T any](doc T) func(*store.Item) (store.Item, bool, error) {
	return func(old *store.Item) (store.Item, bool, error) {
		if old != nil {
			return store.Item{}, false, nil
		}
		data, err := json.Marshal(doc)
		return store.Item{Data: data}, err == nil, err
	}
}

// seeKind creates an auto-added context kind, or moves the lastSeen of
// an existing one (edited through the API or not) and nothing else.
func seeKind(k sdkcontext.Kind) func(*store.Item) (store.Item, bool, error) {
	return func(old *store.Item) (store.Item, bool, error) {
		doc := k
		if old != nil {
			if err := json.Unmarshal(old.Data, &doc); err != nil {
				return store.Item{}, false, fmt.Errorf("decode context kind %s: %w", k.Key, err)
			}
			if doc.LastSeen >= k.LastSeen {
				return store.Item{}, false, nil
			}
			doc.LastSeen = k.LastSeen
		}
		data, err := json.Marshal(doc)
		return store.Item{Data: data}, err == nil, err
	}
}

// createApp is createOnce, with the application placed in the list of applications.
func createApp(app application.Application) func(*store.Item) (store.Item, bool, error) {
	once := createOnce(app)
	return func(old *store.Item) (store.Item, bool, error) {
		it, ok, err := once(old)
		it.GSI1PK, it.GSI1SK = store.ApplicationIndexKeys(app.Key)
		return it, ok, err
	}
}

// FlagEvals counts one flag's evaluations in one environment and hour.
type FlagEvals struct {
	FlagKey string `json:"flagKey"`
	EnvKey  string `json:"environmentKey"`
	Hour    string `json:"hour"`
	// Counts by variation index ("0", "1", ...), "default" (the SDK's
	// fallback value served) and "unknown" (the flag did not exist).
	Counts map[string]int64 `json:"counts"`
}

func addEvals(flagKey, envKey, hour string, counts map[string]int64) func(*store.Item) (store.Item, bool, error) {
	return func(old *store.Item) (store.Item, bool, error) {
		doc := FlagEvals{FlagKey: flagKey, EnvKey: envKey, Hour: hour, Counts: map[string]int64{}}
		if old != nil {
			if err := json.Unmarshal(old.Data, &doc); err != nil {
				return store.Item{}, false, fmt.Errorf("decode evaluation counters of %s: %w", flagKey, err)
			}
		}
		for k, n := range counts {
			doc.Counts[k] += n
		}
		data, err := json.Marshal(doc)
		return store.Item{Data: data}, err == nil, err
	}
}
