package sdkdata

import (
	"github.com/launchdarkly/go-server-sdk-evaluation/v3/ldmodel"

	"github.com/flagplane/flagplane/shared/cache"
	"github.com/flagplane/flagplane/shared/evaluation"
	"github.com/flagplane/flagplane/shared/segment"
)

// Segment is one segment as SDKs see it.
type Segment struct {
	Key string
	// Version is the SDKs' segment version: the segment's, 1 when created
	// and one more at every change.
	Version int
	// Model is the SDKs' segment; nil when the segment cannot be
	// converted, and then SDKs do not receive it.
	Model *ldmodel.Segment
	// JSON is Model as SDKs read it.
	JSON []byte
}

// segmentCache keeps each segment's SDK form, keyed by the shared decoded
// segment (a new pointer when the stored segment changes).
type segmentCache struct {
	c cache.Bounded[*segment.Segment, *Segment]
}

func (c *segmentCache) get(s *segment.Segment) *Segment {
	if ss, ok := c.c.Get(s); ok {
		return ss
	}
	ss := &Segment{Key: s.Key, Version: s.Version}
	if m, err := evaluation.SegmentModel(s); err == nil {
		if data, err := serialization.MarshalSegment(*m); err == nil {
			ss.Model, ss.JSON = m, data
		}
	}
	c.c.Put(s, ss)
	return ss
}

// Segment returns one segment SDKs receive, or false.
func (sn *Snapshot) Segment(key string) (*Segment, bool) {
	s, ok := sn.segByKey[key]
	if !ok || s.JSON == nil {
		return nil, false
	}
	return s, true
}

// Segments returns the segments SDKs receive, by key.
func (sn *Snapshot) Segments() []*Segment {
	out := make([]*Segment, 0, len(sn.segments))
	for _, s := range sn.segments {
		if s.JSON != nil {
			out = append(out, s)
		}
	}
	return out
}
