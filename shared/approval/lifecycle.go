package approval

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/semanticpatch"
	"github.com/flagplane/flagplane/shared/store"
)

// reviewRetries is how often a review that lost a race to another write
// of the same request is made again on the request as it now is.
const reviewRetries = 8

// ReviewInput is the body of a review.
type ReviewInput struct {
	Kind    string `json:"kind"`
	Comment string `json:"comment"`
}

// who is the caller's member id and, for a service token, token id.
func who(ctx context.Context) (memberID, tokenID string) {
	p, ok := identity.From(ctx)
	if !ok {
		return "", ""
	}
	if p.ServiceToken {
		return "", p.TokenID
	}
	return p.MemberID, ""
}

// ownRequest reports whether the caller made r.
func ownRequest(ctx context.Context, r *Request) bool {
	m, t := who(ctx)
	return (m != "" && m == r.RequestorID) || (t != "" && t == r.RequestorServiceTokenID)
}

// reviewStatus follows from the reviews: declined once anyone declines,
// approved once min distinct reviewers approved, else pending.
func reviewStatus(reviews []Review, min int) string {
	approvers := map[string]bool{}
	for _, rv := range reviews {
		switch rv.Kind {
		case KindDecline:
			return ReviewDeclined
		case KindApprove:
			approvers[rv.MemberID+"/"+rv.ServiceTokenID] = true
		}
	}
	if len(approvers) >= max(min, 1) {
		return ReviewApproved
	}
	return ReviewPending
}

// Review records a review. Approving or declining needs a request still
// pending; the requester may do either only when canReviewOwnRequest
// (403 otherwise); a comment is always allowed. The request becomes
// approved at minNumApprovals distinct approvers (scheduled then, when
// its executionDate is ahead) and is applied at once when
// autoApplyApprovedChanges.
func (s *Service) Review(ctx context.Context, id string, in ReviewInput) (*Request, error) {
	if in.Kind != KindApprove && in.Kind != KindDecline && in.Kind != KindComment {
		return nil, fault.New(fault.Invalid, "field \"kind\" must be approve, decline or comment, not %q", in.Kind)
	}
	for attempt := 0; ; attempt++ {
		r, err := s.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if in.Kind != KindComment {
			if r.Status != StatusPending || r.ReviewStatus == ReviewDeclined {
				return nil, fault.New(fault.Invalid, "approval request %q is %s (review %s); it can no longer be approved or declined", id, r.Status, r.ReviewStatus)
			}
			if ownRequest(ctx, r) && !r.ApprovalSettings.CanReviewOwnRequest {
				return nil, fault.New(fault.Forbidden, "you made approval request %q, and environment %q does not let requesters review their own requests", id, r.EnvironmentKey)
			}
		}
		now := s.now()
		m, t := who(ctx)
		next := r.clone()
		next.Version = r.Version + 1
		next.AllReviews = append(next.AllReviews, Review{ID: environment.NewID(), Kind: in.Kind, CreationDate: now.UnixMilli(), Comment: in.Comment, MemberID: m, ServiceTokenID: t})
		next.ReviewStatus = reviewStatus(next.AllReviews, r.ApprovalSettings.MinNumApprovals)
		approvedNow := r.ReviewStatus != ReviewApproved && next.ReviewStatus == ReviewApproved
		if approvedNow && next.ExecutionDate > now.UnixMilli() {
			next.Status = StatusScheduled
		}
		put, err := next.put(store.IfVersion(r.Version))
		if err != nil {
			return nil, err
		}
		_, err = s.log.Commit(ctx, s.change(next, []store.Write{put}, "reviewApprovalRequest", "reviewed ("+in.Kind+") the approval request for", in.Comment, r))
		if errors.Is(err, store.ErrConditionFailed) && attempt < reviewRetries {
			time.Sleep(time.Duration(rand.IntN(5*(attempt+1))) * time.Millisecond)
			continue
		}
		if errors.Is(err, store.ErrConditionFailed) {
			return nil, fault.Wrap(err, fault.Conflict, "approval request %q kept changing while it was reviewed; try again", id)
		}
		if err != nil {
			return nil, err
		}
		if approvedNow && next.Status == StatusPending && r.ApprovalSettings.AutoApplyApprovedChanges {
			return s.run(ctx, next, in.Comment)
		}
		return next, nil
	}
}

// ApplyInput is the body of an apply.
type ApplyInput struct {
	Comment string `json:"comment"`
}

// Apply runs an approved request (or a declined one when
// canApplyDeclinedChanges) on the flag as it is now. A request whose
// executionDate is ahead becomes scheduled instead. A request already
// applied, failed or scheduled is a 400; losing a race to another apply a 409.
func (s *Service) Apply(ctx context.Context, id string, in ApplyInput) (*Request, error) {
	r, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	switch r.Status {
	case StatusCompleted:
		return nil, fault.New(fault.Invalid, "approval request %q was already applied", id)
	case StatusFailed:
		return nil, fault.New(fault.Invalid, "approval request %q was already applied and failed: %s", id, r.FailureReason)
	case StatusScheduled:
		return nil, fault.New(fault.Invalid, "approval request %q is scheduled for %d (Unix ms) and will be applied then", id, r.ExecutionDate)
	}
	switch {
	case r.ReviewStatus == ReviewApproved:
	case r.ReviewStatus == ReviewDeclined && r.ApprovalSettings.CanApplyDeclinedChanges:
	case r.ReviewStatus == ReviewDeclined:
		return nil, fault.New(fault.Invalid, "approval request %q was declined, and environment %q does not allow applying declined changes", id, r.EnvironmentKey)
	default:
		return nil, fault.New(fault.Invalid, "approval request %q is not approved yet (%d approval(s) needed)", id, max(r.ApprovalSettings.MinNumApprovals, 1))
	}
	if r.ExecutionDate > s.now().UnixMilli() {
		next := r.clone()
		next.Version, next.Status = r.Version+1, StatusScheduled
		put, err := next.put(store.IfVersion(r.Version))
		if err != nil {
			return nil, err
		}
		_, err = s.log.Commit(ctx, s.change(next, []store.Write{put}, "applyApprovalRequest", "scheduled the approval request for", in.Comment, r))
		if errors.Is(err, store.ErrConditionFailed) {
			return nil, fault.Wrap(err, fault.Conflict, "approval request %q was changed by another request", id)
		}
		return next, err
	}
	return s.run(ctx, r, in.Comment)
}

// run applies r's instructions to its flag in the same transaction as the
// write marking r completed, conditional on r's version: of two runs
// exactly one changes the flag, the other gets a 409. When the
// instructions no longer apply (or the flag is gone) r is marked failed
// with the reason, and returned.
func (s *Service) run(ctx context.Context, r *Request, comment string) (*Request, error) {
	m, t := who(ctx)
	next := r.clone()
	next.Version = r.Version + 1
	next.Status, next.AppliedDate, next.AppliedByMemberID, next.AppliedByServiceTokenID = StatusCompleted, s.now().UnixMilli(), m, t
	put, err := next.put(store.IfVersion(r.Version))
	if err != nil {
		return nil, err
	}
	if r.Kind() == KindAIConfig {
		return s.runAI(ctx, r, next, put)
	}
	if comment == "" {
		comment = r.Description
	}
	if r.Kind() == KindSegment {
		return s.runSegment(ctx, r, next, put, comment)
	}
	sp := semanticpatch.Patch{Comment: comment, EnvironmentKey: r.EnvironmentKey, Instructions: r.Instructions}
	_, err = s.flags.SemanticPatchWith(flag.WithoutApprovalCheck(ctx), r.ProjectKey, r.FlagKey, sp, put)
	var se *semanticpatch.Error
	switch {
	case err == nil:
		return next, nil
	case fault.Is(err, fault.Conflict):
		return nil, fault.Wrap(err, fault.Conflict, "approval request %q was applied or changed by another request", r.ID)
	case errors.As(err, &se), fault.Is(err, fault.NotFound):
		return s.fail(ctx, r, err.Error())
	}
	return nil, err
}

// fail records that r could not be applied.
func (s *Service) fail(ctx context.Context, r *Request, reason string) (*Request, error) {
	next := r.clone()
	next.Version, next.Status, next.FailureReason = r.Version+1, StatusFailed, reason
	put, err := next.put(store.IfVersion(r.Version))
	if err != nil {
		return nil, err
	}
	_, err = s.log.Commit(ctx, s.change(next, []store.Write{put}, "applyApprovalRequest", "failed to apply the approval request for", reason, r))
	if errors.Is(err, store.ErrConditionFailed) {
		return nil, fault.Wrap(err, fault.Conflict, "approval request %q was applied or changed by another request", r.ID)
	}
	return next, err
}

// RunDue applies every scheduled request whose executionDate is at or
// before now, and returns how many it applied (completed or failed).
// Running it twice, or on two instances at once, applies each once: the
// apply is conditional on the request's version.
func (s *Service) RunDue(ctx context.Context, now time.Time) (int, error) {
	all, err := s.All(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, r := range all {
		if r.Status != StatusScheduled || r.ExecutionDate > now.UnixMilli() {
			continue
		}
		_, err := s.run(ctx, r, "")
		switch {
		case err == nil:
			n++
		case fault.Is(err, fault.Conflict):
			// Another run got there first.
		default:
			errs = append(errs, fmt.Errorf("approval request %s: %w", r.ID, err))
		}
	}
	return n, errors.Join(errs...)
}
