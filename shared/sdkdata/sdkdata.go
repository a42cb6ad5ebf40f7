// Package sdkdata is the flag data LaunchDarkly's SDKs read from flagplane:
// which environment an SDK credential opens, each environment's flags in
// the SDKs' flag data model (as go-server-sdk-evaluation's ldmodel writes
// it), the evaluations client-side and mobile SDKs ask for, and the feed of
// changes that streaming connections follow (see Streams).
//
// It only reads the table. Flags and segments are read with two Queries
// per environment request (the project's flags, the environment's
// segments); in a process that is the store's only writer (the local server)
// what it derived is kept until a commit of this process says otherwise.
package sdkdata

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/launchdarkly/go-server-sdk-evaluation/v3/ldmodel"

	"github.com/flagplane/flagplane/shared/cache"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/evaluation"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/store"
)

// CredentialTTL is how long a resolved credential is trusted before it is
// read again, unless a commit of this process comes first. Another process
// (another Lambda instance) that resets a key is seen within this time.
const CredentialTTL = 10 * time.Second

// Resolver finds the environment whose current credential of a kind is a
// given secret; environment.Service does, with a fault.Unauthorized error
// for an unknown, reset or deleted one.
type Resolver interface {
	ByCredential(ctx context.Context, kind environment.CredentialKind, secret string) (*environment.Environment, error)
}

// Service serves SDK data. Its zero value is not usable: call NewService.
type Service struct {
	table    store.Table
	resolver Resolver
	decoded  *flag.Decoded
	models   modelCache
	// segDecoded and segModels are segments' decoded and SDK forms;
	// members reads big segments' members for client-side evaluations.
	segDecoded *segment.Decoded
	segModels  segmentCache
	members    evaluation.Memberships
	now        func() time.Time

	// gen counts the commits of this process: what was derived before the
	// latest one is not trusted.
	gen atomic.Uint64
	// soleWriter: no other process writes the table, so data derived at
	// the current generation is current.
	soleWriter atomic.Bool

	creds cache.Bounded[credKey, credEntry]
	snaps cache.Bounded[EnvRef, snapEntry]

	streams *Streams
}

type credKey struct {
	kind   environment.CredentialKind
	secret string
}

type credEntry struct {
	env *environment.Environment
	gen uint64
	at  time.Time
}

type snapEntry struct {
	snap *Snapshot
	gen  uint64
}

// maxCached bounds the credentials and snapshots a process keeps.
const maxCached = 10000

// NewService returns the SDK data service over table.
func NewService(table store.Table, resolver Resolver, now func() time.Time) *Service {
	s := &Service{table: table, resolver: resolver, decoded: &flag.Decoded{}, segDecoded: segment.NewDecoded(), now: now}
	s.creds.Max, s.snaps.Max, s.models.c.Max, s.segModels.c.Max = maxCached, maxCached, maxModels, maxModels
	s.streams = newStreams(s)
	return s
}

// SetMemberships gives client-side evaluations the big segments' members.
// Call it while wiring.
func (s *Service) SetMemberships(m evaluation.Memberships) { s.members = m }

// SetSoleWriter says whether this process is the only writer of the table
// (the local server, which holds the data file's lock). Then flag data is
// read again only after a commit of this process; otherwise every request
// reads the table.
func (s *Service) SetSoleWriter(v bool) { s.soleWriter.Store(v) }

// Changed tells the service a commit of this process landed: credentials
// and flag data are read again, and streams learn what changed. It is
// cheap and never blocks.
func (s *Service) Changed() {
	s.gen.Add(1)
	s.streams.wake()
}

// Streams is the feed of changes streaming SDK connections follow.
func (s *Service) Streams() *Streams { return s.streams }

// Environment returns the environment the credential opens, from a cache
// of CredentialTTL; a fault.Unauthorized error when it opens none.
func (s *Service) Environment(ctx context.Context, kind environment.CredentialKind, secret string) (*environment.Environment, error) {
	k := credKey{kind, secret}
	gen := s.gen.Load()
	now := s.now()
	if e, ok := s.creds.Get(k); ok && e.gen == gen && now.Sub(e.at) < CredentialTTL {
		return e.env, nil
	}
	// A stale entry whose credential no longer resolves stays: it fails
	// the check above again, so it is never served.
	env, err := s.resolver.ByCredential(ctx, kind, secret)
	if err != nil {
		return nil, err
	}
	s.creds.Put(k, credEntry{env: env, gen: gen, at: now})
	return env, nil
}

// EnvRef names one environment of one project.
type EnvRef struct {
	ProjectKey, EnvKey string
}

// RefOf is the environment's EnvRef.
func RefOf(e *environment.Environment) EnvRef { return EnvRef{e.ProjectKey, e.Key} }

// Snapshot is the flag data one environment serves SDKs at one moment:
// the live (not archived) flags and the segments, in the SDKs' data
// model. It is shared and read-only.
type Snapshot struct {
	Ref EnvRef
	// ETag is the quoted entity tag of the flag data: it changes whenever
	// a flag of the project or a segment of the environment is created,
	// changed or deleted.
	ETag string

	flags []*Flag          // by key
	byKey map[string]*Flag // the same

	segments []*Segment          // by key
	segByKey map[string]*Segment // the same
	// evalSegments are the segments as the evaluator reads them, and
	// members the big segments' members.
	evalSegments evaluation.Segments
	members      evaluation.Memberships

	allOnce sync.Once
	all     []byte
}

// Flag is one flag as SDKs see it in one environment.
type Flag struct {
	Key string
	// Version is the SDKs' flag version: the stored flag's version, which
	// grows with every change to the flag.
	Version int
	// Model is the SDKs' flag; nil when the flag cannot be converted (a
	// value is not JSON), and then SDKs do not receive it.
	Model *ldmodel.FeatureFlag
	// JSON is Model as SDKs read it.
	JSON []byte

	source *flag.Flag
}

// Flags returns the environment's live flags and its segments: two
// Queries, or none when this process is the only writer and nothing was
// committed since the last read.
func (s *Service) Flags(ctx context.Context, ref EnvRef) (*Snapshot, error) {
	gen := s.gen.Load()
	if s.soleWriter.Load() {
		if e, ok := s.snaps.Get(ref); ok && e.gen == gen {
			return e.snap, nil
		}
	}
	flags, err := flag.Shared(ctx, s.table, s.decoded, ref.ProjectKey)
	if err != nil {
		return nil, err
	}
	segs, err := segment.Shared(ctx, s.table, s.segDecoded, ref.ProjectKey, ref.EnvKey)
	if err != nil {
		return nil, err
	}
	snap := s.snapshot(ref, flags, segs)
	if s.soleWriter.Load() {
		s.snaps.Put(ref, snapEntry{snap: snap, gen: gen})
	}
	return snap, nil
}

// snapshot converts the project's flags and the environment's segments.
func (s *Service) snapshot(ref EnvRef, flags []*flag.Flag, segs []*segment.Segment) *Snapshot {
	snap := &Snapshot{Ref: ref, byKey: make(map[string]*Flag, len(flags)),
		segByKey: make(map[string]*Segment, len(segs)), evalSegments: make(evaluation.Segments, len(segs)), members: s.members}
	h := sha256.New()
	h.Write([]byte(ref.ProjectKey + "\x00" + ref.EnvKey + "\x00"))
	var buf [16]byte
	for _, f := range flags {
		if archived(f, ref.EnvKey) {
			continue
		}
		sf := s.models.get(f, ref.EnvKey)
		snap.flags = append(snap.flags, sf)
		snap.byKey[f.Key] = sf
		h.Write([]byte(f.Key))
		binary.BigEndian.PutUint64(buf[:8], uint64(f.ItemVersion))
		binary.BigEndian.PutUint64(buf[8:], uint64(f.CreationDate))
		h.Write(buf[:])
	}
	sort.Slice(snap.flags, func(i, j int) bool { return snap.flags[i].Key < snap.flags[j].Key })
	// Segments come ordered by key; a zero byte keeps their part of the
	// hash apart from the flags'.
	h.Write([]byte{0})
	for _, seg := range segs {
		ss := s.segModels.get(seg)
		snap.segments = append(snap.segments, ss)
		snap.segByKey[seg.Key] = ss
		if ss.Model != nil {
			snap.evalSegments[seg.Key] = ss.Model
		}
		h.Write([]byte(seg.Key))
		binary.BigEndian.PutUint64(buf[:8], uint64(seg.ItemVersion))
		binary.BigEndian.PutUint64(buf[8:], uint64(seg.CreationDate))
		h.Write(buf[:])
	}
	snap.ETag = `"` + hex.EncodeToString(h.Sum(nil)[:16]) + `"`
	return snap
}

// archived reports whether the flag is archived (as a whole or in envKey):
// SDKs never receive those.
func archived(f *flag.Flag, envKey string) bool {
	if f.Archived {
		return true
	}
	env, ok := f.Environments[envKey]
	return ok && env != nil && env.Archived
}

// All is the polling payload of server-side SDKs:
// {"flags":{"<key>":<flag>,...},"segments":{"<key>":<segment>,...}}.
func (sn *Snapshot) All() []byte {
	sn.allOnce.Do(func() {
		n := 32
		for _, f := range sn.flags {
			n += len(f.Key) + len(f.JSON) + 8
		}
		for _, s := range sn.segments {
			n += len(s.Key) + len(s.JSON) + 8
		}
		b := make([]byte, 0, n)
		b = append(b, `{"flags":`...)
		b = appendObject(b, sn.flags, flagEntry)
		b = append(b, `,"segments":`...)
		b = appendObject(b, sn.segments, segmentEntry)
		sn.all = append(b, '}')
	})
	return sn.all
}

// FlagsJSON is the flags alone, {"<key>":<flag>,...}.
func (sn *Snapshot) FlagsJSON() []byte {
	return appendObject(nil, sn.flags, flagEntry)
}

// entry is one flag or segment as SDKs receive it: the payload's objects
// and the streams' patches are built from entries.
type entry struct {
	key     string
	version int
	json    []byte // nil when SDKs do not receive it
}

func flagEntry(f *Flag) entry { return entry{f.Key, f.Version, f.JSON} }

func segmentEntry(s *Segment) entry { return entry{s.Key, s.Version, s.JSON} }

// appendObject appends the JSON object of items by key, leaving out
// those SDKs do not receive.
func appendObject[T any](b []byte, items []T, of func(T) entry) []byte {
	b = append(b, '{')
	first := true
	for _, e := range entries(items, of) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendString(b, e.key)
		b = append(b, ':')
		b = append(b, e.json...)
	}
	return append(b, '}')
}

// Flag returns one live flag SDKs receive, or false.
func (sn *Snapshot) Flag(key string) (*Flag, bool) {
	f, ok := sn.byKey[key]
	if !ok || f.JSON == nil {
		return nil, false
	}
	return f, true
}

// Len is the number of flags SDKs receive.
func (sn *Snapshot) Len() int {
	n := 0
	for _, f := range sn.flags {
		if f.JSON != nil {
			n++
		}
	}
	return n
}

// appendString appends s as a JSON string. Flag keys are letters, digits,
// '.', '_' and '-', so the plain case is the common one.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f || c == '<' || c == '>' || c == '&' {
			enc, _ := json.Marshal(s)
			return append(b, enc...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// modelCache keeps each flag's SDK form per environment, keyed by the
// shared decoded flag (a new pointer when the stored flag changes).
type modelCache struct {
	c cache.Bounded[modelKey, *Flag]
}

type modelKey struct {
	f   *flag.Flag
	env string
}

// maxModels bounds the flags a process keeps converted.
const maxModels = 20000

func (c *modelCache) get(f *flag.Flag, envKey string) *Flag {
	k := modelKey{f, envKey}
	if sf, ok := c.c.Get(k); ok {
		return sf
	}
	sf := convert(f, envKey)
	c.c.Put(k, sf)
	return sf
}

var serialization = ldmodel.NewJSONDataModelSerialization()

func convert(f *flag.Flag, envKey string) *Flag {
	sf := &Flag{Key: f.Key, Version: int(f.ItemVersion), source: f}
	m, err := evaluation.Model(f, envKey)
	if err != nil {
		return sf
	}
	m.Version = sf.Version
	data, err := serialization.MarshalFeatureFlag(*m)
	if err != nil {
		return sf
	}
	sf.Model, sf.JSON = m, data
	return sf
}
