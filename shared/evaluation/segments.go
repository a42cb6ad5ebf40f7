package evaluation

import (
	"context"
	"strconv"

	ldeval "github.com/launchdarkly/go-server-sdk-evaluation/v3"
	"github.com/launchdarkly/go-server-sdk-evaluation/v3/ldmodel"

	"github.com/launchdarkly/go-sdk-common/v3/ldreason"
	"github.com/launchdarkly/go-sdk-common/v3/ldvalue"

	"github.com/flagplane/flagplane/shared/cache"
	"github.com/flagplane/flagplane/shared/segment"
)

// Memberships reads a big segment's members: whether the context key is
// included in or excluded from one generation of the segment (both false
// when it is neither).
type Memberships interface {
	Membership(ctx context.Context, projectKey, envKey, segmentKey string, generation int, contextKey string) (included, excluded bool, err error)
}

// SegmentModels keeps each segment's SDK model, keyed by the shared
// decoded segment (a new pointer when the stored segment changes), so an
// unchanged segment is converted once. Its zero value is not usable: call
// NewSegmentModels.
type SegmentModels struct {
	c cache.Bounded[*segment.Segment, segmentResult]
}

type segmentResult struct {
	m   *ldmodel.Segment
	err error
}

// NewSegmentModels returns an empty SegmentModels.
func NewSegmentModels() *SegmentModels {
	m := &SegmentModels{}
	m.c.Max = maxModels
	return m
}

// Model returns the segment's SDK model; an error when a clause value of
// the segment is not JSON (SDKs would not receive it).
func (c *SegmentModels) Model(s *segment.Segment) (*ldmodel.Segment, error) {
	if r, ok := c.c.Get(s); ok {
		return r.m, r.err
	}
	m, err := SegmentModel(s)
	c.c.Put(s, segmentResult{m, err})
	return m, err
}

// Segments are an environment's segments in the SDKs' model, by key, as
// the evaluator's data provider gives them; read-only and shared.
type Segments map[string]*ldmodel.Segment

// SegmentsOf converts segs through models; a segment that cannot be
// converted is left out, as SDKs never receive it (a segmentMatch naming it
// does not match).
func SegmentsOf(models *SegmentModels, segs []*segment.Segment) Segments {
	out := make(Segments, len(segs))
	for _, s := range segs {
		if m, err := models.Model(s); err == nil {
			out[s.Key] = m
		}
	}
	return out
}

// NewEvaluator returns LaunchDarkly's evaluator over flags and segments;
// with members, big segments are matched from their membership in the
// environment (as an SDK with a big segment store does), else never.
func NewEvaluator(ctx context.Context, flags func(string) *ldmodel.FeatureFlag, segs Segments, members Memberships, projectKey, envKey string) ldeval.Evaluator {
	p := provider{flags: flags, segments: segs}
	if members == nil {
		return ldeval.NewEvaluator(p)
	}
	return ldeval.NewEvaluatorWithOptions(p, ldeval.EvaluatorOptionBigSegmentProvider(
		&bigSegments{ctx: ctx, members: members, segments: segs, projectKey: projectKey, envKey: envKey}))
}

// provider gives the evaluator the flags (for prerequisites) and the
// segments of one environment.
type provider struct {
	flags    func(string) *ldmodel.FeatureFlag
	segments Segments
}

func (p provider) GetFeatureFlag(key string) *ldmodel.FeatureFlag { return p.flags(key) }

func (p provider) GetSegment(key string) *ldmodel.Segment { return p.segments[key] }

// bigSegments answers the evaluator's membership questions for one
// evaluation request (one goroutine). The evaluator asks per flag and
// context key, and only when it reaches a big segment; then every big
// segment of the environment is read for that key, so that a failed read
// is the evaluation's STORE_ERROR status, as an SDK reports it, and the
// answer is kept for the request's other flags.
type bigSegments struct {
	ctx                context.Context
	members            Memberships
	segments           Segments
	projectKey, envKey string
	read               map[string]readMembership
}

type readMembership struct {
	m      membership
	status ldreason.BigSegmentsStatus
}

func (b *bigSegments) GetMembership(contextKey string) (ldeval.BigSegmentMembership, ldreason.BigSegmentsStatus) {
	if r, ok := b.read[contextKey]; ok {
		return r.m, r.status
	}
	m, status := b.membership(contextKey)
	if b.read == nil {
		b.read = map[string]readMembership{}
	}
	b.read[contextKey] = readMembership{m, status}
	return m, status
}

func (b *bigSegments) membership(contextKey string) (membership, ldreason.BigSegmentsStatus) {
	m := membership{}
	for _, s := range b.segments {
		if !s.Unbounded || !s.Generation.IsDefined() {
			continue
		}
		gen := s.Generation.IntValue()
		included, excluded, err := b.members.Membership(b.ctx, b.projectKey, b.envKey, s.Key, gen, contextKey)
		switch {
		case err != nil:
			return nil, ldreason.BigSegmentsStoreError
		case included:
			m[bigSegmentRef(s.Key, gen)] = ldvalue.NewOptionalBool(true)
		case excluded:
			m[bigSegmentRef(s.Key, gen)] = ldvalue.NewOptionalBool(false)
		}
	}
	return m, ldreason.BigSegmentsHealthy
}

// bigSegmentRef is how the evaluator names a generation of a big segment.
func bigSegmentRef(key string, generation int) string {
	return key + ".g" + strconv.Itoa(generation)
}

// membership is one context key's, by big segment ref.
type membership map[string]ldvalue.OptionalBool

func (m membership) CheckMembership(segmentRef string) ldvalue.OptionalBool { return m[segmentRef] }
