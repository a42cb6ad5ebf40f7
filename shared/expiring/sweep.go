package expiring

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/semanticpatch"
	"github.com/flagplane/flagplane/shared/store"
)

// Result counts what one sweep did.
type Result struct {
	// Removed is how many users were taken out of a flag's individual
	// targets, or contexts out of a segment's targets.
	Removed int
	// Dropped is how many due removals were deleted without a flag change:
	// the user was no longer targeted with that variation, or the flag
	// (segment) is gone.
	Dropped int
}

// Sweep removes every target due at or before now: the user leaves the
// flag's individual targets and the scheduled removal is deleted in the
// same transaction (with the flag's audit entry), conditional on the
// removal's version. So a second run, or a concurrent one, finds nothing
// left to do, and a removal rescheduled meanwhile is not applied early.
// It reads due removals from the due-time index, never scanning.
func (s *Service) Sweep(ctx context.Context, now time.Time) (Result, error) {
	var res Result
	due, err := record.All(ctx, s.table, store.Query{Index: store.IndexGSI1, PK: store.ExpiringIndexPK, SKTo: store.ExpiringDueTo(now.UnixMilli())},
		"due expiring targets", decode)
	if err != nil {
		return res, err
	}
	var errs []error
	for _, t := range due {
		removed, dropped, err := s.expire(ctx, t, now)
		if err != nil {
			errs = append(errs, fmt.Errorf("expire user %q on flag %q in %s/%s: %w", t.UserKey, t.ResourceID.FlagKey, t.ResourceID.ProjectKey, t.ResourceID.EnvironmentKey, err))
			continue
		}
		if removed {
			res.Removed++
		}
		if dropped {
			res.Dropped++
		}
	}
	errs = append(errs, s.sweepSegments(ctx, now.UnixMilli(), &res))
	return res, errors.Join(errs...)
}

func (s *Service) expire(ctx context.Context, seen *Target, now time.Time) (removed, dropped bool, err error) {
	// The index may lag (DynamoDB's is eventually consistent): read the item itself.
	it, err := s.table.Get(ctx, seen.key())
	if errors.Is(err, store.ErrNotFound) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	t, err := decode(it)
	if err != nil {
		return false, false, err
	}
	if t.ExpirationDate > now.UnixMilli() {
		return false, false, nil // rescheduled later
	}
	r := t.ResourceID
	del := store.Delete(t.key(), store.IfVersion(t.Version))
	f, err := s.flags.Load(ctx, r.ProjectKey, r.FlagKey)
	if fault.Is(err, fault.NotFound) {
		return false, true, s.drop(ctx, t, del)
	}
	if err != nil {
		return false, false, err
	}
	v, ok := f.EnvView(r.EnvironmentKey).TargetOf(t.ContextKind, t.UserKey)
	if !ok || v >= len(f.Variations) || f.Variations[v].ID != t.VariationID {
		return false, true, s.drop(ctx, t, del)
	}
	in := semanticpatch.New("removeUserTargets", map[string]any{"values": []string{t.UserKey}, "variationId": t.VariationID})
	if t.ContextKind != flag.UserKind {
		in = semanticpatch.New("removeTargets", map[string]any{"values": []string{t.UserKey}, "variationId": t.VariationID, "contextKind": t.ContextKind})
	}
	sp := semanticpatch.Patch{EnvironmentKey: r.EnvironmentKey, Instructions: []semanticpatch.Instruction{in},
		Comment: fmt.Sprintf("scheduled removal of %s %q from individual targeting", t.ContextKind, t.UserKey)}
	_, err = s.flags.SemanticPatchWith(ctx, r.ProjectKey, r.FlagKey, sp, del)
	switch {
	case err == nil:
		return true, false, nil
	case fault.Is(err, fault.Conflict):
		return false, false, nil // another run deleted or rescheduled it first
	case fault.Is(err, fault.NotFound):
		return false, true, s.drop(ctx, t, del)
	}
	return false, false, err
}

// drop deletes a due removal that has nothing left to remove, with an audit entry.
func (s *Service) drop(ctx context.Context, t *Target, del store.Write) error {
	r := t.ResourceID
	_, err := s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{del}, Kind: "flag", Resource: "proj/" + r.ProjectKey + ":env/" + r.EnvironmentKey + ":flag/" + r.FlagKey,
		Actions: []string{Action}, Name: fmt.Sprintf("expiring target of %s %s on flag %s in %s", t.ContextKind, t.UserKey, r.FlagKey, r.EnvironmentKey),
		Href:      flag.Href(r.ProjectKey, r.FlagKey) + "/expiring-user-targets/" + r.EnvironmentKey,
		TitleVerb: "dropped (no longer targeted) the", Comment: "scheduled removal found nothing to remove",
		Parent:   &audit.Parent{Name: r.ProjectKey, Resource: "proj/" + r.ProjectKey, Href: project.Href(r.ProjectKey)},
		Previous: t,
	})
	if errors.Is(err, store.ErrConditionFailed) || fault.Is(err, fault.OptimisticLock) {
		return nil // another run got there first
	}
	return err
}
