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
// Segments' removals (segments.go) are swept the same way.
func (s *Service) Sweep(ctx context.Context, now time.Time) (Result, error) {
	var res Result
	err := sweepDue(ctx, s.table, store.ExpiringIndexPK, now.UnixMilli(), "due expiring targets", decode, &res,
		func(t *Target) (bool, bool, error) { return s.expire(ctx, t, now) },
		func(t *Target) string {
			return fmt.Sprintf("expire user %q on flag %q in %s/%s", t.UserKey, t.ResourceID.FlagKey, t.ResourceID.ProjectKey, t.ResourceID.EnvironmentKey)
		})
	return res, errors.Join(err, s.sweepSegments(ctx, now.UnixMilli(), &res))
}

// sweepDue runs expire on every removal of the due-time index partition
// pk due at or before nowMs, counting what it did in res; a failure,
// which what names, leaves that removal to the next run.
func sweepDue[T any](ctx context.Context, table store.Table, pk string, nowMs int64, what string, decode func(store.Item) (T, error), res *Result,
	expire func(T) (removed, dropped bool, err error), describe func(T) string) error {
	due, err := record.All(ctx, table, store.Query{Index: store.IndexGSI1, PK: pk, SKTo: store.ExpiringDueTo(nowMs)}, what, decode)
	if err != nil {
		return err
	}
	var errs []error
	for _, t := range due {
		removed, dropped, err := expire(t)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", describe(t), err))
			continue
		}
		if removed {
			res.Removed++
		}
		if dropped {
			res.Dropped++
		}
	}
	return errors.Join(errs...)
}

// reread reads a removal the index listed from its item: the index may
// lag (DynamoDB's is eventually consistent). Gone (false) when another
// run deleted it.
func reread[T any](ctx context.Context, table store.Table, k store.Key, decode func(store.Item) (T, error)) (T, bool, error) {
	var zero T
	it, err := table.Get(ctx, k)
	if errors.Is(err, store.ErrNotFound) {
		return zero, false, nil
	}
	if err != nil {
		return zero, false, err
	}
	t, err := decode(it)
	return t, err == nil, err
}

func (s *Service) expire(ctx context.Context, seen *Target, now time.Time) (removed, dropped bool, err error) {
	t, ok, err := reread(ctx, s.table, seen.key(), decode)
	if !ok || t.ExpirationDate > now.UnixMilli() {
		return false, false, err // gone, or rescheduled later
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
