// Package evaluation answers which variation each flag of a project serves
// a context in one environment, with the SDKs' exact semantics: the flags
// are converted to the SDKs' data model and evaluated by LaunchDarkly's own
// evaluation library (github.com/launchdarkly/go-server-sdk-evaluation).
//
// It only reads: no context is stored, no event is recorded, nothing is
// written. The evaluator sees the environment's segments as SDKs receive
// them, and, when memberships are set (SetMemberships), matches big
// segments from them as an SDK with a big segment store does.
package evaluation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/launchdarkly/go-server-sdk-evaluation/v3/ldmodel"

	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"
	"github.com/launchdarkly/go-sdk-common/v3/ldreason"
	"github.com/launchdarkly/go-sdk-common/v3/ldvalue"

	"github.com/flagplane/flagplane/shared/cache"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/listing"
	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/store"
)

// Service evaluates flags; it holds the table and never writes to it.
type Service struct {
	table   store.Table
	decoded *flag.Decoded
	models  modelCache
	// segments and segmentModels keep the environments' segments decoded
	// and converted; members reads big segments' members (nil: none match).
	segments      *segment.Decoded
	segmentModels *SegmentModels
	members       Memberships
}

// NewService returns the evaluation service over table.
func NewService(table store.Table) *Service {
	s := &Service{table: table, decoded: &flag.Decoded{}, segments: segment.NewDecoded(), segmentModels: NewSegmentModels()}
	s.models.c.Max = maxModels
	return s
}

// SetMemberships gives evaluation the big segments' members. Call it
// while wiring.
func (s *Service) SetMemberships(m Memberships) { s.members = m }

// Query selects, orders and pages the flags evaluated.
type Query struct {
	// Filter is the raw filter parameter (see ParseFilter).
	Filter string
	// Sort is "key", "name", "-key" or "-name", comma-separated; by key when empty.
	Sort string
	// Offset skips that many flags; Limit caps the page, all flags when negative.
	Offset int64
	Limit  int64
}

// Result is one page of evaluations and how many flags matched the filter.
type Result struct {
	Items      []Evaluation
	TotalCount int64
}

// Evaluation is what one flag serves the context.
type Evaluation struct {
	Key  string
	Name string
	// Value is the JSON value served; JSON null when no variation is
	// served (an off flag without an off variation, or an error).
	Value json.RawMessage
	// VariationIndex is the index of the variation served, nil when none.
	VariationIndex *int
	Reason         Reason
}

// Reason says why the value was served, as an SDK's evaluation reason.
type Reason struct {
	// Kind is OFF, FALLTHROUGH, TARGET_MATCH, RULE_MATCH, PREREQUISITE_FAILED or ERROR.
	Kind string
	// RuleIndex and RuleID name the matching rule when Kind is RULE_MATCH.
	RuleIndex *int
	RuleID    string
	// PrerequisiteKey is the prerequisite that failed when Kind is PREREQUISITE_FAILED.
	PrerequisiteKey string
	// InExperiment is true when the value came from an experiment rollout.
	InExperiment bool
	// ErrorKind is the SDK's error kind (e.g. MALFORMED_FLAG) when Kind is ERROR.
	ErrorKind string
}

// sortFields are the fields Query.Sort accepts.
var sortFields = []string{"key", "name"}

// Evaluate evaluates every flag of the project that the filter keeps, for c
// in envKey. Unknown project or environment is a 404. Archived flags are
// left out, and count as missing when another flag needs them as a
// prerequisite, as SDKs (which never receive them) see it.
func (s *Service) Evaluate(ctx context.Context, projectKey, envKey string, c ldcontext.Context, q Query) (Result, error) {
	filter, err := ParseFilter(q.Filter)
	if err != nil {
		return Result{}, err
	}
	order, err := listing.ParseSort(q.Sort, sortFields...)
	if err != nil {
		return Result{}, err
	}
	if err := s.environmentExists(ctx, projectKey, envKey); err != nil {
		return Result{}, err
	}
	flags, err := flag.Shared(ctx, s.table, s.decoded, projectKey)
	if err != nil {
		return Result{}, err
	}

	segs, err := segment.Shared(ctx, s.table, s.segments, projectKey, envKey)
	if err != nil {
		return Result{}, err
	}

	// Every live flag is in the data provider (prerequisites may name any
	// of them); those the filter keeps are the result.
	provider := map[string]*ldmodel.FeatureFlag{}
	var kept []*flag.Flag
	for _, f := range flags {
		if archived(f, envKey) {
			continue
		}
		// A flag whose values are not JSON stays out of the provider: it
		// evaluates to a MALFORMED_FLAG error, and as a prerequisite it fails.
		if m, err := s.models.model(f, envKey); err == nil {
			provider[f.Key] = m
		}
		if filter.Match(f) {
			kept = append(kept, f)
		}
	}
	sortFlags(kept, order)
	limit := q.Limit
	if limit < 0 {
		limit = int64(len(kept))
	}
	page := listing.Window(kept, q.Offset, limit)

	evaluator := NewEvaluator(ctx, func(key string) *ldmodel.FeatureFlag { return provider[key] },
		SegmentsOf(s.segmentModels, segs), s.members, projectKey, envKey)
	out := Result{TotalCount: int64(len(kept)), Items: make([]Evaluation, 0, len(page))}
	for _, f := range page {
		var detail ldreason.EvaluationDetail
		if m, ok := provider[f.Key]; ok {
			detail = evaluator.Evaluate(m, c, nil).Detail
		} else {
			detail = ldreason.NewEvaluationDetailForError(ldreason.EvalErrorMalformedFlag, ldvalue.Null())
		}
		out.Items = append(out.Items, newEvaluation(f, detail))
	}
	return out, nil
}

// environmentExists answers 404 for an unknown project or environment.
func (s *Service) environmentExists(ctx context.Context, projectKey, envKey string) error {
	if environment.ValidKey("projectKey", projectKey) != nil {
		return fault.New(fault.NotFound, "project %q not found", projectKey)
	}
	if environment.ValidKey("environmentKey", envKey) != nil {
		return fault.New(fault.NotFound, "environment %q not found in project %q", envKey, projectKey)
	}
	_, err := s.table.Get(ctx, store.EnvironmentKey(projectKey, envKey))
	if err == nil {
		return nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("load environment %q of project %q: %w", envKey, projectKey, err)
	}
	if _, perr := s.table.Get(ctx, store.ProjectKey(projectKey)); errors.Is(perr, store.ErrNotFound) {
		return fault.Wrap(perr, fault.NotFound, "project %q not found", projectKey)
	} else if perr != nil {
		return fmt.Errorf("load project %q: %w", projectKey, perr)
	}
	return fault.Wrap(err, fault.NotFound, "environment %q not found in project %q", envKey, projectKey)
}

// archived reports whether the flag is archived (as a whole or in envKey).
func archived(f *flag.Flag, envKey string) bool {
	if f.Archived {
		return true
	}
	env, ok := f.Environments[envKey]
	return ok && env != nil && env.Archived
}

// sortFlags orders by the given fields, then by key.
func sortFlags(flags []*flag.Flag, order []listing.SortKey) {
	order = append(order, listing.SortKey{Field: "key"})
	sort.SliceStable(flags, func(i, j int) bool {
		for _, k := range order {
			var c int
			if k.Field == "name" {
				c = strings.Compare(strings.ToLower(flags[i].Name), strings.ToLower(flags[j].Name))
			} else {
				c = strings.Compare(flags[i].Key, flags[j].Key)
			}
			if k.Desc {
				c = -c
			}
			if c != 0 {
				return c < 0
			}
		}
		return false
	})
}

func newEvaluation(f *flag.Flag, d ldreason.EvaluationDetail) Evaluation {
	value, err := d.Value.MarshalJSON()
	if err != nil {
		value = []byte("null")
	}
	e := Evaluation{Key: f.Key, Name: f.Name, Value: value}
	if d.VariationIndex.IsDefined() {
		i := d.VariationIndex.IntValue()
		e.VariationIndex = &i
	}
	r := d.Reason
	e.Reason = Reason{
		Kind:            string(r.GetKind()),
		RuleID:          r.GetRuleID(),
		PrerequisiteKey: r.GetPrerequisiteKey(),
		InExperiment:    r.IsInExperiment(),
		ErrorKind:       string(r.GetErrorKind()),
	}
	if r.GetKind() == ldreason.EvalReasonRuleMatch {
		i := r.GetRuleIndex()
		e.Reason.RuleIndex = &i
	}
	return e
}

// modelCache keeps each flag's SDK model per environment, keyed by the
// shared decoded flag (a new pointer when the stored flag changes), so an
// unchanged flag is converted once. The evaluator only reads models.
type modelCache struct {
	c cache.Bounded[modelKey, modelResult]
}

type modelKey struct {
	f   *flag.Flag
	env string
}

type modelResult struct {
	m   *ldmodel.FeatureFlag
	err error
}

// maxModels bounds the models a process keeps.
const maxModels = 20000

func (c *modelCache) model(f *flag.Flag, envKey string) (*ldmodel.FeatureFlag, error) {
	k := modelKey{f, envKey}
	if r, ok := c.c.Get(k); ok {
		return r.m, r.err
	}
	m, err := Model(f, envKey)
	c.c.Put(k, modelResult{m, err})
	return m, err
}
