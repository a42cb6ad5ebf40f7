package flagimport

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/resource"
	"github.com/flagplane/flagplane/shared/segment"
)

// SourceSegment is a segment the source's flags match (segmentMatch
// clauses name it by Key), in flagplane's terms, as one source
// environment has it.
type SourceSegment struct {
	// Env is the source environment; the segment goes to the project's
	// environment it maps to, where the flags' rules of Env go.
	Env              string
	Key              string
	Name             string
	Description      string
	Tags             []string
	Included         []string
	Excluded         []string
	IncludedContexts []segment.Target
	ExcludedContexts []segment.Target
	Rules            []segment.Rule
	// Problem, when set, is why the segment cannot be imported faithfully:
	// it is left out, and so is every flag that matches it.
	Problem string
}

// segmentID names a segment of a project environment.
func segmentID(env, key string) string { return env + "/" + key }

// segmentsUsed are the keys of the segments the flag's rules of source
// environment env match.
func segmentsUsed(sf SourceFlag, env string) []string {
	return flag.SegmentsUsed(&flag.Flag{Environments: sf.Envs}, env)
}

// importSegments brings every segment of the source whose environment is
// mapped to what the source has, through the segment service (audited,
// and refused like any change, by approvals say), before the flags that
// match them: a flag's segmentMatch must name a segment of its
// environment. Every segment is created first, then each brought up to
// date, so a segment matching another finds it whatever their order. A
// segment of the same key is the same segment: a rerun updates it, and
// changes nothing when nothing differs. It returns why each segment that
// could not be imported was not, by segmentID of the project environment.
func (s *Service) importSegments(ctx context.Context, c *Configuration, segs []SourceSegment, envs map[string]string, deadline time.Time) map[string]error {
	failed := map[string]error{}
	type target struct {
		ss SourceSegment
		to string
	}
	var todo []target
	for _, ss := range segs {
		to, ok := envs[ss.Env]
		if !ok {
			continue
		}
		if ss.Problem != "" {
			failed[segmentID(to, ss.Key)] = fault.New(fault.PatchFailed, "not imported: %s", ss.Problem)
			continue
		}
		todo = append(todo, target{ss, to})
	}
	slices.SortFunc(todo, func(a, b target) int {
		return strings.Compare(segmentID(a.to, a.ss.Key), segmentID(b.to, b.ss.Key))
	})
	outOfTime := func() error {
		if s.Now().After(deadline) || ctx.Err() != nil {
			return fault.New(fault.Unavailable, "the run's time budget (%s) ran out before the segment was imported; trigger the import again", s.RunBudget)
		}
		return nil
	}
	comment := fmt.Sprintf("Imported from %s by flag import configuration %s (%s)", c.IntegrationKey, c.ID, c.Name)
	for _, t := range todo {
		if err := outOfTime(); err != nil {
			failed[segmentID(t.to, t.ss.Key)] = err
			continue
		}
		_, err := s.Segments.Get(ctx, c.ProjectKey, t.to, t.ss.Key)
		if fault.Is(err, fault.NotFound) {
			_, err = s.Segments.Create(ctx, c.ProjectKey, t.to, segment.Input{Key: t.ss.Key, Name: importedName(t.ss.Name, t.ss.Key), Description: t.ss.Description, Tags: importedTags(c, t.ss.Tags)})
		}
		if err != nil {
			failed[segmentID(t.to, t.ss.Key)] = err
		}
	}
	for _, t := range todo {
		id := segmentID(t.to, t.ss.Key)
		if failed[id] != nil {
			continue
		}
		if err := outOfTime(); err != nil {
			failed[id] = err
			continue
		}
		ss := t.ss
		_, err := s.Segments.Change(ctx, c.ProjectKey, t.to, ss.Key, func(next *segment.Segment) error {
			if next.Unbounded {
				return fault.New(fault.Conflict, "segment %q of environment %q is a big segment here; an import brings list and rule segments only", ss.Key, t.to)
			}
			next.Name, next.Description, next.Tags = importedName(ss.Name, ss.Key), ss.Description, importedTags(c, ss.Tags)
			next.Included, next.Excluded = ss.Included, ss.Excluded
			next.IncludedContexts, next.ExcludedContexts = ss.IncludedContexts, ss.ExcludedContexts
			next.Rules = ss.Rules
			return nil
		}, resource.Change{Comment: comment})
		if err != nil {
			failed[id] = err
		}
	}
	return failed
}

// segmentFailure is why flag sf cannot be imported for a segment it
// matches in a mapped environment, or nil.
func segmentFailure(sf SourceFlag, envs map[string]string, failed map[string]error) error {
	if len(failed) == 0 {
		return nil
	}
	for _, from := range slices.Sorted(maps.Keys(sf.Envs)) {
		to, ok := envs[from]
		if !ok {
			continue
		}
		for _, key := range segmentsUsed(sf, from) {
			if err := failed[segmentID(to, key)]; err != nil {
				return fault.Wrap(err, fault.CodeOf(err), "segment %q of environment %q, which the flag matches, was not imported: %s", key, to, fault.MessageOf(err))
			}
		}
	}
	return nil
}
