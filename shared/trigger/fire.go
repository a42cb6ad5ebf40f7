package trigger

import (
	"context"
	"errors"
	"fmt"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/semanticpatch"
	"github.com/flagplane/flagplane/shared/store"
)

// Outcomes of a firing.
const (
	StatusApplied   = "applied"
	StatusFailed    = "failed"
	StatusDuplicate = "duplicate"
)

// MaxEventIDLength bounds an alert event id.
const MaxEventIDLength = 256

const fireRetries = 3

// Fire runs the trigger's instructions on its flag for one alert event:
// through the flag service's semantic patch (its approval check, its
// audit entry, whose comment names the trigger and the event), only when
// the trigger is enabled, and once per event id: the event's item is
// written in the same transaction as the flag, on condition it does not
// exist, so a repeated or concurrent delivery of the same event runs the
// instructions once. A refused change (e.g. 405 when the environment
// requires approval) is recorded on the trigger as its last firing and
// returned as the flag service gave it.
func (s *Service) Fire(ctx context.Context, t *Trigger, eventID string) (Firing, error) {
	if eventID == "" {
		return Firing{}, fault.New(fault.Invalid, "field \"eventId\" is required: the alert event's id, so that a repeated delivery runs once")
	}
	if len(eventID) > MaxEventIDLength {
		return Firing{}, fault.New(fault.Invalid, "field \"eventId\" must be at most %d characters", MaxEventIDLength)
	}
	if !t.Enabled {
		return Firing{}, fault.New(fault.Conflict, "adaptive trigger %q is disabled; enable it to fire", t.ID)
	}
	for attempt := 0; ; attempt++ {
		f, err := s.fireOnce(ctx, t, eventID)
		if err == nil || !raced(err) || attempt == fireRetries {
			return f, err
		}
		// A lost race: the event may have been fired meanwhile, or the trigger changed.
		if t, err = s.loadID(ctx, t.ID); err != nil {
			return Firing{}, err
		}
		if !t.Enabled {
			return Firing{}, fault.New(fault.Conflict, "adaptive trigger %q is disabled; enable it to fire", t.ID)
		}
	}
}

func (s *Service) fired(ctx context.Context, id, eventID string) (bool, error) {
	_, err := s.table.Get(ctx, store.AdaptiveTriggerEventKey(id, eventID))
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

func (s *Service) fireOnce(ctx context.Context, t *Trigger, eventID string) (Firing, error) {
	if done, err := s.fired(ctx, t.ID, eventID); err != nil || done {
		if err != nil {
			return Firing{}, fmt.Errorf("read event %q of adaptive trigger %q: %w", eventID, t.ID, err)
		}
		return Firing{EventID: eventID, Status: StatusDuplicate}, nil
	}
	now := s.now()
	k := store.AdaptiveTriggerEventKey(t.ID, eventID)
	event := store.Put(store.Item{PK: k.PK, SK: k.SK, TTL: now.Add(EventTTL).Unix(), Data: []byte(`{}`)}, store.IfNotExists())
	firing := Firing{EventID: eventID, At: now.UnixMilli(), Status: StatusApplied}
	next := *t
	next.LastFiring = &firing
	next.Version = t.Version + 1
	put, err := next.put(store.IfVersion(t.Version))
	if err != nil {
		return Firing{}, err
	}
	sp := semanticpatch.Patch{
		EnvironmentKey: t.EnvironmentKey, Instructions: t.Task.Instructions,
		Comment: fmt.Sprintf("adaptive trigger %q (%s) fired by alert event %q", t.Name, t.ID, eventID),
	}
	_, ferr := s.flags.SemanticPatchWith(ctx, t.ProjectKey, t.ResourceKey, sp, event, put)
	if ferr == nil {
		return firing, nil
	}
	if raced(ferr) {
		return Firing{}, ferr
	}
	code := fault.CodeOf(ferr)
	if code == "" || code == fault.Internal {
		return Firing{}, ferr
	}
	// The flag service refused the change: record it, once for this event.
	firing.Status, firing.Error, firing.Code = StatusFailed, fault.MessageOf(ferr), string(code)
	put, err = next.put(store.IfVersion(t.Version))
	if err != nil {
		return Firing{}, err
	}
	if _, err := s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{event, put}, Kind: "adaptiveTrigger", Resource: specifier(&next), Actions: []string{"fireAdaptiveTrigger"},
		Name: t.Name, Href: Href(t.ProjectKey, t.EnvironmentKey, t.ID), TitleVerb: "recorded a failed firing of the adaptive trigger",
		Comment: fmt.Sprintf("alert event %q: %s", eventID, firing.Error), Previous: t.shown(), Current: next.shown(),
		Conflict: fmt.Sprintf("adaptive trigger %q was changed by another request; retry", t.ID),
	}); err != nil {
		return Firing{}, err
	}
	return firing, ferr
}

// raced reports a lost race with a concurrent writer, worth a retry.
func raced(err error) bool {
	return fault.Is(err, fault.Conflict) || fault.Is(err, fault.OptimisticLock)
}
