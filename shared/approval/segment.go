package approval

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/resource"
	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/semanticpatch"
	"github.com/flagplane/flagplane/shared/store"
)

// Approval requests on segments: the instructions of the segment's
// semantic patch (segment.Apply), checked against the segment at creation
// and applied through its audited update in the transaction that marks
// the request completed. Environments require them through their
// resourceApprovalSettings for the kind segment.

// KindSegment is the resource kind of a request on a segment.
const KindSegment = "segment"

// SetSegments lets requests act on segments (resourceId kind segment) and
// installs the check that refuses direct changes to segments in
// environments that require approval for them. Call it while wiring.
func (s *Service) SetSegments(segments *segment.Service) {
	s.segments = segments
	segments.SetApprovalCheck(s.CheckSegment)
}

// CheckSegment refuses (403) a direct change to seg when its environment's
// resourceApprovalSettings require approval for segments: for every
// segment, or for those carrying one of requiredApprovalTags. Creating a
// segment needs none: a request acts on a segment that exists.
func (s *Service) CheckSegment(ctx context.Context, projectKey, envKey string, seg *segment.Segment) error {
	if seg.ItemVersion == 0 {
		return nil // not stored yet: being created
	}
	required, err := s.requires(ctx, projectKey, envKey, seg.Tags, func(e *environment.Environment) (environment.ApprovalSettings, bool) {
		a, ok := e.ResourceApprovalSettings[KindSegment]
		return a, ok
	})
	if err != nil || !required {
		return err
	}
	return fault.New(fault.Forbidden,
		"environment %q of project %q requires approval for changes to segment %q: create an approval request with POST %s and resourceId %q",
		envKey, projectKey, seg.Key, CollectionHref, segment.Specifier(projectKey, envKey, seg.Key))
}

// checkSegment runs a segment request's instructions on a copy of the
// segment as it is now: a 404 when the segment is missing, a 400 naming
// the instruction that does not apply.
func (s *Service) checkSegment(ctx context.Context, projectKey, envKey, key string, ins []semanticpatch.Instruction) error {
	if s.segments == nil {
		return fault.New(fault.Invalid, "field \"resourceId\": approval requests for segments are not available")
	}
	seg, err := s.segments.Get(ctx, projectKey, envKey, key)
	if err != nil {
		return err
	}
	return segment.Apply(seg.Clone(), ins)
}

// segmentConflicts is Conflicts for a segment request.
func (s *Service) segmentConflicts(ctx context.Context, r *Request) ([]Conflict, error) {
	err := s.checkSegment(ctx, r.ProjectKey, r.EnvironmentKey, r.SegmentKey, r.Instructions)
	var se *semanticpatch.Error
	switch {
	case err == nil:
		return []Conflict{}, nil
	case errors.As(err, &se) && se.Index >= 0 && se.Index < len(r.Instructions):
		return []Conflict{{Instruction: r.Instructions[se.Index], Reason: se.Reason()}}, nil
	case fault.Is(err, fault.NotFound):
		return []Conflict{{Instruction: r.Instructions[0], Reason: fmt.Sprintf("segment %q no longer exists in environment %q", r.SegmentKey, r.EnvironmentKey)}}, nil
	case fault.Is(err, fault.Invalid):
		return []Conflict{{Instruction: r.Instructions[0], Reason: fault.MessageOf(err)}}, nil
	}
	return nil, err
}

// runSegment applies a segment request through the segment's audited
// update, skipping the approval check, in the same transaction as put
// (the request marked completed, on its version): of two applies exactly
// one changes the segment. A segment changed meanwhile is read again and
// the instructions run on it; a request changed meanwhile is a 409.
func (s *Service) runSegment(ctx context.Context, r, next *Request, put store.Write, comment string) (*Request, error) {
	if s.segments == nil {
		return s.fail(ctx, r, "approval requests for segments are not available")
	}
	for attempt := 0; ; attempt++ {
		_, err := s.segments.Change(segment.WithoutApprovalCheck(ctx), r.ProjectKey, r.EnvironmentKey, r.SegmentKey, func(seg *segment.Segment) error {
			return segment.Apply(seg, r.Instructions)
		}, resource.Change{Comment: comment, Also: []store.Write{put}})
		switch {
		case err == nil:
			return next, nil
		case fault.Is(err, fault.OptimisticLock), fault.Is(err, fault.Conflict):
			cur, gerr := s.Get(ctx, r.ID)
			if gerr == nil && cur.Version == r.Version && attempt < reviewRetries {
				time.Sleep(time.Duration(rand.IntN(5*(attempt+1))) * time.Millisecond)
				continue // only the segment moved: run the instructions on it as it is now
			}
			return nil, fault.Wrap(err, fault.Conflict, "approval request %q was applied or changed by another request", r.ID)
		case fault.Is(err, fault.Invalid), fault.Is(err, fault.NotFound):
			return s.fail(ctx, r, fault.MessageOf(err))
		}
		return nil, fmt.Errorf("apply approval request %s to segment %q: %w", r.ID, r.SegmentKey, err)
	}
}
