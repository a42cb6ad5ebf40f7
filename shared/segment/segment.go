// Package segment holds segments: named sets of contexts of one
// environment, by listed keys (included and excluded, per context kind)
// and by rules, that flag rules match with the segmentMatch operator. A
// big segment (unbounded) keeps its members apart from the segment, in
// the store the SDKs' big segment integrations read.
package segment

import (
	"encoding/json"
	"fmt"

	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/resource"
	"github.com/flagplane/flagplane/shared/store"
)

// Segment is one segment of one environment, as stored; its JSON is the
// reference's segment representation less the links and access.
type Segment struct {
	Key  string `json:"key"`
	Name string `json:"name"`
	// Description is always shown, so that a JSON patch may replace it
	// (the reference's own example does).
	Description      string   `json:"description"`
	Tags             []string `json:"tags"`
	CreationDate     int64    `json:"creationDate"`
	LastModifiedDate int64    `json:"lastModifiedDate"`
	// Included and Excluded are user keys; IncludedContexts and
	// ExcludedContexts keys of other context kinds.
	Included         []string `json:"included"`
	Excluded         []string `json:"excluded"`
	IncludedContexts []Target `json:"includedContexts"`
	ExcludedContexts []Target `json:"excludedContexts"`
	Rules            []Rule   `json:"rules"`
	// Version is the segment's version as SDKs and the API see it: 1 when
	// created, one more at every change.
	Version int  `json:"version"`
	Deleted bool `json:"deleted"`
	// Salt buckets the segment's rollouts: the segment key unless a
	// segment of the same key was deleted and created again.
	Salt string `json:"salt"`
	// Unbounded marks a big segment: its targets are kept apart (see
	// Generation) and only the SDKs' big segment store holds them.
	Unbounded            bool   `json:"unbounded"`
	UnboundedContextKind string `json:"unboundedContextKind,omitempty"`
	// Generation counts how many times a big segment of this key was
	// created; the SDKs' store names memberships "<key>.g<generation>".
	Generation int `json:"generation"`

	ProjectKey     string `json:"projectKey"`
	EnvironmentKey string `json:"environmentKey"`
	// ItemVersion is the store version, for optimistic locking.
	ItemVersion int64 `json:"-"`
}

// Target lists context keys of one kind.
type Target struct {
	Values      []string `json:"values"`
	ContextKind string   `json:"contextKind"`
}

// Rule matches contexts that pass all its clauses; with a weight, only
// that share of them (in thousandths of a percent), bucketed by bucketBy
// of rolloutContextKind.
type Rule struct {
	ID                 string        `json:"_id"`
	Description        string        `json:"description,omitempty"`
	Clauses            []flag.Clause `json:"clauses"`
	Weight             *int          `json:"weight,omitempty"`
	RolloutContextKind string        `json:"rolloutContextKind,omitempty"`
	BucketBy           string        `json:"bucketBy,omitempty"`
}

// Input is the body of a create request.
type Input struct {
	Key                  string   `json:"key"`
	Name                 string   `json:"name"`
	Description          string   `json:"description"`
	Tags                 []string `json:"tags"`
	Unbounded            bool     `json:"unbounded"`
	UnboundedContextKind string   `json:"unboundedContextKind"`
}

// Href is a segment's API path.
func Href(projectKey, envKey, key string) string {
	return CollectionHref(projectKey, envKey) + "/" + key
}

// CollectionHref is the API path of an environment's segments.
func CollectionHref(projectKey, envKey string) string {
	return "/api/v2/segments/" + projectKey + "/" + envKey
}

// Href is the segment's API path.
func (s *Segment) Href() string { return Href(s.ProjectKey, s.EnvironmentKey, s.Key) }

// Specifier is the segment's resource specifier (without tags).
func Specifier(projectKey, envKey, key string) string {
	return fmt.Sprintf("proj/%s:env/%s:segment/%s", projectKey, envKey, key)
}

// Actions are the actions `_access` reports on a segment.
var Actions = []string{
	"updateName", "updateDescription", "updateTags", "updateIncluded", "updateExcluded",
	"updateRules", "updateExpiringTargets", "deleteSegment",
}

// patchable maps each field a JSON patch may change to its action.
var patchable = map[string]string{
	"name":             "updateName",
	"description":      "updateDescription",
	"tags":             "updateTags",
	"included":         "updateIncluded",
	"includedContexts": "updateIncluded",
	"excluded":         "updateExcluded",
	"excludedContexts": "updateExcluded",
	"rules":            "updateRules",
}

// PatchActions returns the actions a JSON patch of a segment performs,
// refusing a path no patch may change with a 400: the rights a patch needs.
func PatchActions(p patch.Patch) ([]string, error) { return kind.PatchActions(p) }

// Clone returns a deep copy of s.
func (s *Segment) Clone() *Segment {
	data, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("segment: encode %q: %v", s.Key, err))
	}
	var c Segment
	if err := json.Unmarshal(data, &c); err != nil {
		panic(fmt.Sprintf("segment: decode %q: %v", s.Key, err))
	}
	c.ItemVersion = s.ItemVersion
	return &c
}

// normalize gives every list a value, so the API shows [] and not null.
func (s *Segment) normalize() {
	if s.Tags == nil {
		s.Tags = []string{}
	}
	if s.Included == nil {
		s.Included = []string{}
	}
	if s.Excluded == nil {
		s.Excluded = []string{}
	}
	if s.IncludedContexts == nil {
		s.IncludedContexts = []Target{}
	}
	if s.ExcludedContexts == nil {
		s.ExcludedContexts = []Target{}
	}
	if s.Rules == nil {
		s.Rules = []Rule{}
	}
	for i := range s.Rules {
		if s.Rules[i].Clauses == nil {
			s.Rules[i].Clauses = []flag.Clause{}
		}
	}
}

// kind describes segments to the resource kit.
var kind = resource.Kind[Segment]{
	Audit: "segment", Noun: "segment", Created: "createSegment", Deleted: "deleteSegment",
	Patchable: patchable, Called: "a segment",
	Item:    (*Segment).item,
	Decode:  decode,
	Version: func(s *Segment) int64 { return s.ItemVersion },
	Name:    func(s *Segment) string { return s.Name },
	Shown:   func(s *Segment) any { return s.shown() },
}

func (s *Segment) item() (store.Item, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return store.Item{}, err
	}
	return store.Item{Data: data}, nil
}

func decode(it store.Item) (*Segment, error) {
	var s Segment
	if err := json.Unmarshal(it.Data, &s); err != nil {
		return nil, fmt.Errorf("decode segment %s: %w", it.SK, err)
	}
	s.ItemVersion = it.Version
	s.normalize()
	return &s, nil
}

// shownTargets is how many keys of a target list an audit entry shows;
// beyond it, it shows how many there are, so that the entry of a segment
// of 15,000 keys stays well within an item.
const shownTargets = 100

// shown is the segment as audit entries show it.
func (s *Segment) shown() any {
	if s == nil {
		return nil
	}
	n := len(s.Included) + len(s.Excluded)
	for _, t := range s.IncludedContexts {
		n += len(t.Values)
	}
	for _, t := range s.ExcludedContexts {
		n += len(t.Values)
	}
	if n <= shownTargets {
		return s
	}
	c := *s
	c.Included, c.Excluded, c.IncludedContexts, c.ExcludedContexts = nil, nil, nil, nil
	return struct {
		Segment
		IncludedCount int `json:"includedCount"`
		ExcludedCount int `json:"excludedCount"`
	}{c, len(s.Included) + countTargets(s.IncludedContexts), len(s.Excluded) + countTargets(s.ExcludedContexts)}
}

// KeyBytes is about how many bytes the segment's listed keys take in JSON.
func (s *Segment) KeyBytes() int {
	n := 0
	for _, list := range [][]string{s.Included, s.Excluded} {
		for _, k := range list {
			n += len(k) + 3
		}
	}
	for _, ts := range [][]Target{s.IncludedContexts, s.ExcludedContexts} {
		for _, t := range ts {
			for _, k := range t.Values {
				n += len(k) + 3
			}
		}
	}
	return n
}

func countTargets(ts []Target) int {
	n := 0
	for _, t := range ts {
		n += len(t.Values)
	}
	return n
}

// ref names the segment key of an environment, for a read.
func ref(projectKey, envKey, key string) resource.Ref {
	return resource.Ref{
		Key:      store.SegmentKey(projectKey, envKey, key),
		What:     fmt.Sprintf("segment %q", key),
		Resource: Specifier(projectKey, envKey, key),
		Href:     Href(projectKey, envKey, key),
		Missing:  fmt.Sprintf("segment %q not found in environment %q of project %q", key, envKey, projectKey),
	}
}
