package approval

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/semanticpatch"
	"github.com/flagplane/flagplane/shared/store"
)

// MaxDescriptionLength bounds a request's description, as the reference's
// updateDescription does.
const MaxDescriptionLength = 5000

// PatchKinds are the instructions an approval request takes (the
// reference's patchApprovalRequest).
var PatchKinds = []string{"addReviewers", "updateDescription"}

type patchParams struct {
	NotifyMemberIDs []string `json:"notifyMemberIds"`
	NotifyTeamKeys  []string `json:"notifyTeamKeys"`
	Value           *string  `json:"value"`
}

// Patch runs the instructions of a semantic patch on a request not yet
// applied (pending or scheduled): addReviewers adds members and teams to
// notify (each must exist; ones already there are kept once),
// updateDescription replaces the description (non-empty, at most 5000
// characters). Every instruction is checked before anything is written; a
// bad one is a 400 naming its index. The write is conditional on the
// version read, retried on a lost race.
func (s *Service) Patch(ctx context.Context, id string, sp semanticpatch.Patch) (*Request, error) {
	for attempt := 0; ; attempt++ {
		r, err := s.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if r.Status != StatusPending && r.Status != StatusScheduled {
			return nil, fault.New(fault.Invalid, "approval request %q is %s; only a pending or scheduled request can be updated", id, r.Status)
		}
		next := r.clone()
		next.NotifyMemberIDs = slices.Clone(r.NotifyMemberIDs)
		next.NotifyTeamKeys = slices.Clone(r.NotifyTeamKeys)
		if err := s.runPatch(ctx, next, sp.Instructions); err != nil {
			return nil, err
		}
		if next.Description == r.Description && slices.Equal(next.NotifyMemberIDs, r.NotifyMemberIDs) && slices.Equal(next.NotifyTeamKeys, r.NotifyTeamKeys) {
			return r, nil
		}
		next.Version = r.Version + 1
		put, err := next.put(store.IfVersion(r.Version))
		if err != nil {
			return nil, err
		}
		_, err = s.log.Commit(ctx, s.change(next, []store.Write{put}, "updateApprovalRequest", "updated the approval request for", sp.Comment, r))
		if errors.Is(err, store.ErrConditionFailed) && attempt < reviewRetries {
			time.Sleep(time.Duration(rand.IntN(5*(attempt+1))) * time.Millisecond)
			continue
		}
		if errors.Is(err, store.ErrConditionFailed) {
			return nil, fault.Wrap(err, fault.Conflict, "approval request %q kept changing while it was updated; try again", id)
		}
		if err != nil {
			return nil, err
		}
		return next, nil
	}
}

func (s *Service) runPatch(ctx context.Context, r *Request, ins []semanticpatch.Instruction) error {
	for i, in := range ins {
		var p patchParams
		if !slices.Contains(PatchKinds, in.Kind) {
			return semanticpatch.Invalid(i, in.Kind, "kind %q is not an approval request instruction; supported kinds: %s", in.Kind, strings.Join(PatchKinds, ", "))
		}
		if err := semanticpatch.Decode(in, i, &p); err != nil {
			return err
		}
		switch in.Kind {
		case "addReviewers":
			if len(p.NotifyMemberIDs) == 0 && len(p.NotifyTeamKeys) == 0 {
				return semanticpatch.Invalid(i, in.Kind, "give at least one of \"notifyMemberIds\" and \"notifyTeamKeys\"")
			}
			for j, mid := range p.NotifyMemberIDs {
				if _, err := s.members.Get(ctx, mid); err != nil {
					if fault.Is(err, fault.NotFound) {
						return semanticpatch.Invalid(i, in.Kind, "notifyMemberIds[%d]: member %q not found", j, mid)
					}
					return fmt.Errorf("approval request %q: %w", r.ID, err)
				}
				if !slices.Contains(r.NotifyMemberIDs, mid) {
					r.NotifyMemberIDs = append(r.NotifyMemberIDs, mid)
				}
			}
			for j, key := range p.NotifyTeamKeys {
				if _, err := s.teams.Get(ctx, key); err != nil {
					if fault.Is(err, fault.NotFound) {
						return semanticpatch.Invalid(i, in.Kind, "notifyTeamKeys[%d]: team %q not found", j, key)
					}
					return fmt.Errorf("approval request %q: %w", r.ID, err)
				}
				if !slices.Contains(r.NotifyTeamKeys, key) {
					r.NotifyTeamKeys = append(r.NotifyTeamKeys, key)
				}
			}
		case "updateDescription":
			if p.Value == nil || strings.TrimSpace(*p.Value) == "" {
				return semanticpatch.Invalid(i, in.Kind, "\"value\" is required: the new description, not empty")
			}
			if len([]rune(*p.Value)) > MaxDescriptionLength {
				return semanticpatch.Invalid(i, in.Kind, "\"value\" must be at most %d characters", MaxDescriptionLength)
			}
			r.Description = *p.Value
		}
	}
	return nil
}
