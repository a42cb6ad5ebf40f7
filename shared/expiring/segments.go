package expiring

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/jsondoc"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/resource"
	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/semanticpatch"
	"github.com/flagplane/flagplane/shared/store"
)

// Segments' expiring targets: the removal of a context from a segment's
// included or excluded targets at a date, scheduled by the reference's
// context instructions (addExpiringTarget, updateExpiringTarget,
// removeExpiringTarget) or its user ones (the flags' kinds with
// targetType), stored and swept as flags' are.

// Instruction kinds of the context form; the user form takes KindAdd,
// KindUpdate and KindRemove.
const (
	KindAddTarget    = "addExpiringTarget"
	KindUpdateTarget = "updateExpiringTarget"
	KindRemoveTarget = "removeExpiringTarget"
)

// Segment target types.
const (
	TargetIncluded = "included"
	TargetExcluded = "excluded"
)

// SegmentTarget is one scheduled removal from a segment, as stored.
type SegmentTarget struct {
	ID             string     `json:"_id"`
	Version        int64      `json:"_version"`
	ExpirationDate int64      `json:"expirationDate"`
	ContextKind    string     `json:"contextKind"`
	ContextKey     string     `json:"contextKey"`
	TargetType     string     `json:"targetType"`
	ResourceID     ResourceID `json:"_resourceId"`
	// SegmentGeneration and SegmentCreated name the segment the removal
	// was scheduled on: a segment deleted and created again under its key
	// is another one, whose targets the removal never touches.
	SegmentGeneration int   `json:"segmentGeneration"`
	SegmentCreated    int64 `json:"segmentCreationDate"`
}

func (t *SegmentTarget) key() store.Key {
	r := t.ResourceID
	return store.ExpiringSegmentKey(r.ProjectKey, r.EnvironmentKey, r.Key, t.TargetType, t.ContextKind, t.ContextKey)
}

func (t *SegmentTarget) item() store.Item {
	data, _ := json.Marshal(t) // plain fields always encode
	k := t.key()
	r := t.ResourceID
	g1, g2 := store.ExpiringSegmentIndexKeys(t.ExpirationDate, r.ProjectKey, r.EnvironmentKey, r.Key, t.TargetType, t.ContextKind, t.ContextKey)
	return store.Item{PK: k.PK, SK: k.SK, GSI1PK: g1, GSI1SK: g2, Version: t.Version, Data: data}
}

// of reports whether the removal was scheduled on seg as it now is (not
// on a segment of the same key deleted since).
func (t *SegmentTarget) of(seg *segment.Segment) bool {
	return t.SegmentGeneration == seg.Generation && t.SegmentCreated == seg.CreationDate
}

func decodeSegmentTarget(it store.Item) (*SegmentTarget, error) {
	var t SegmentTarget
	if err := json.Unmarshal(it.Data, &t); err != nil {
		return nil, fmt.Errorf("decode segment expiring target %s/%s: %w", it.PK, it.SK, err)
	}
	t.Version = it.Version
	return &t, nil
}

// SegmentHref is the API path of a segment's expiring targets.
func SegmentHref(projectKey, envKey, segmentKey string) string {
	return "/api/v2/segments/" + projectKey + "/" + segmentKey + "/expiring-targets/" + envKey
}

// SetSegments lets the service schedule and sweep removals from segments.
// Call it while wiring.
func (s *Service) SetSegments(segments *segment.Service) { s.segments = segments }

// ForSegment lists the scheduled removals of a segment, by target type,
// context kind and key: 404 when the environment or segment is missing.
func (s *Service) ForSegment(ctx context.Context, projectKey, envKey, segmentKey string) ([]*SegmentTarget, error) {
	seg, err := s.segment(ctx, projectKey, envKey, segmentKey)
	if err != nil {
		return nil, err
	}
	return s.segmentTargets(ctx, seg)
}

func (s *Service) segment(ctx context.Context, projectKey, envKey, segmentKey string) (*segment.Segment, error) {
	if s.segments == nil {
		return nil, fault.New(fault.NotImplemented, "expiring targets of segments are not available")
	}
	if err := s.environment(ctx, projectKey, envKey); err != nil {
		return nil, err
	}
	return s.segments.Get(ctx, projectKey, envKey, segmentKey)
}

// segmentTargets are seg's scheduled removals; those left by a deleted
// segment of the same key are not its, and the sweep drops them.
func (s *Service) segmentTargets(ctx context.Context, seg *segment.Segment) ([]*SegmentTarget, error) {
	all, err := record.All(ctx, s.table, store.Query{PK: store.ProjectPartition(seg.ProjectKey), SKPrefix: store.ExpiringSegmentPrefix(seg.EnvironmentKey, seg.Key)},
		fmt.Sprintf("expiring targets of segment %q", seg.Key), decodeSegmentTarget)
	if err != nil {
		return nil, err
	}
	out := []*SegmentTarget{}
	for _, t := range all {
		if t.of(seg) {
			out = append(out, t)
		}
	}
	return out, nil
}

// SegmentKinds are the instruction kinds of a segment's expiring targets:
// the user form's (users) or the context form's.
func SegmentKinds(users bool) []string {
	if users {
		return []string{KindAdd, KindUpdate, KindRemove}
	}
	return []string{KindAddTarget, KindUpdateTarget, KindRemoveTarget}
}

// CheckSegmentInstructions refuses a patch holding an instruction of
// another kind than SegmentKinds(users) (400 naming the index), before
// authorization.
func CheckSegmentInstructions(sp semanticpatch.Patch, users bool) error {
	kinds := SegmentKinds(users)
	for i, in := range sp.Instructions {
		if !slices.Contains(kinds, in.Kind) {
			return semanticpatch.Invalid(i, in.Kind, "unknown instruction kind; expiring targets of segments take %s", strings.Join(kinds, ", "))
		}
	}
	return nil
}

// segmentParams are the parameters of both forms.
type segmentParams struct {
	TargetType  *string         `json:"targetType"`
	ContextKey  *string         `json:"contextKey"`
	ContextKind *string         `json:"contextKind"`
	UserKey     *string         `json:"userKey"`
	Value       *jsondoc.Millis `json:"value"` // Unix ms, an integer or a string of digits
	Version     *int64          `json:"version"`
}

// segmentChange is one scheduled removal before (orig) and after (cur) a patch.
type segmentChange struct {
	orig, cur *SegmentTarget
}

// PatchSegment applies the instructions of one form (users: the user
// form) to a segment's scheduled removals: every one or none, in one
// transaction conditional on the segment's version, with one audit entry
// on the segment. It returns the segment's scheduled removals after.
func (s *Service) PatchSegment(ctx context.Context, projectKey, envKey, segmentKey string, sp semanticpatch.Patch, users bool) ([]*SegmentTarget, error) {
	if err := CheckSegmentInstructions(sp, users); err != nil {
		return nil, err
	}
	seg, err := s.segment(ctx, projectKey, envKey, segmentKey)
	if err != nil {
		return nil, err
	}
	if seg.Unbounded {
		return nil, fault.New(fault.Invalid, "segment %q is a big segment: its targets are kept apart and cannot be scheduled for removal", segmentKey)
	}
	current, err := s.segmentTargets(ctx, seg)
	if err != nil {
		return nil, err
	}
	now := s.now().UnixMilli()
	changes := map[store.Key]*segmentChange{}
	var order []store.Key
	for i, in := range sp.Instructions {
		var p segmentParams
		if err := semanticpatch.Decode(in, i, &p); err != nil {
			return nil, err
		}
		targetType, kind, key, err := segmentTargetOf(i, in.Kind, p, users)
		if err != nil {
			return nil, err
		}
		add := in.Kind == KindAdd || in.Kind == KindAddTarget
		remove := in.Kind == KindRemove || in.Kind == KindRemoveTarget
		if !remove {
			if p.Value == nil {
				return nil, semanticpatch.Invalid(i, in.Kind, "parameter \"value\" (the removal time, Unix ms) is required")
			}
			if int64(*p.Value) <= now {
				return nil, semanticpatch.Invalid(i, in.Kind, "parameter \"value\" %d is not in the future (now %d)", *p.Value, now)
			}
		}
		k := store.ExpiringSegmentKey(projectKey, envKey, segmentKey, targetType, kind, key)
		c, ok := changes[k]
		if !ok {
			c = &segmentChange{}
			if i := slices.IndexFunc(current, func(t *SegmentTarget) bool { return t.key() == k }); i >= 0 {
				c.orig = current[i]
				cur := *c.orig
				c.cur = &cur
			}
			changes[k] = c
			order = append(order, k)
		}
		what := fmt.Sprintf("%s %q", kind, key)
		switch {
		case remove:
			// Nothing scheduled: what was asked already holds.
			c.cur = nil
			continue
		case !listed(seg, targetType, kind, key):
			return nil, semanticpatch.Failed(i, in.Kind, "%s is not in the %s targets of segment %q in environment %q", what, targetType, segmentKey, envKey)
		case add && c.cur != nil:
			return nil, semanticpatch.Failed(i, in.Kind, "%s already has a removal scheduled from the %s targets of segment %q; use %s", what, targetType, segmentKey, updateKind(users))
		case !add && c.cur == nil:
			return nil, semanticpatch.Failed(i, in.Kind, "%s has no removal scheduled from the %s targets of segment %q; use %s", what, targetType, segmentKey, addKind(users))
		case !add && p.Version != nil && *p.Version != c.cur.Version:
			return nil, semanticpatch.Failed(i, in.Kind, "version %d is not the current version %d of the scheduled removal", *p.Version, c.cur.Version)
		case add:
			c.cur = &SegmentTarget{ID: strings.ReplaceAll(flag.NewID(), "-", ""), ContextKind: kind, ContextKey: key, TargetType: targetType,
				ResourceID:        ResourceID{Kind: "segment", ProjectKey: projectKey, EnvironmentKey: envKey, Key: segmentKey},
				SegmentGeneration: seg.Generation, SegmentCreated: seg.CreationDate}
		}
		c.cur.ExpirationDate = int64(*p.Value)
	}
	if err := s.commitSegment(ctx, seg, sp.Comment, changes, order); err != nil {
		return nil, err
	}
	return s.segmentTargets(ctx, seg)
}

func addKind(users bool) string    { return SegmentKinds(users)[0] }
func updateKind(users bool) string { return SegmentKinds(users)[1] }

// segmentTargetOf reads which target an instruction names: its target
// type, context kind and key (userKey, of kind user, in the user form).
func segmentTargetOf(i int, kind string, p segmentParams, users bool) (targetType, contextKind, key string, err error) {
	if p.TargetType == nil || (*p.TargetType != TargetIncluded && *p.TargetType != TargetExcluded) {
		return "", "", "", semanticpatch.Invalid(i, kind, "parameter \"targetType\" must be %q or %q", TargetIncluded, TargetExcluded)
	}
	keyParam, k := "contextKey", p.ContextKey
	contextKind = segment.UserKind
	if users {
		keyParam, k = "userKey", p.UserKey
	} else {
		if p.ContextKind == nil || *p.ContextKind == "" {
			return "", "", "", semanticpatch.Invalid(i, kind, "parameter \"contextKind\" is required")
		}
		if err := flag.ValidContextKind(semanticpatch.Field(i, "contextKind"), *p.ContextKind); err != nil {
			return "", "", "", err
		}
		contextKind = *p.ContextKind
	}
	if k == nil || *k == "" {
		return "", "", "", semanticpatch.Invalid(i, kind, "parameter %q is required", keyParam)
	}
	if len(*k) > MaxUserKey {
		return "", "", "", semanticpatch.Invalid(i, kind, "parameter %q is longer than %d bytes", keyParam, MaxUserKey)
	}
	return *p.TargetType, contextKind, *k, nil
}

// listed reports whether seg lists the context key of kind among its
// included or excluded targets (targetType); user keys may sit in either
// list of user keys or in the contexts of kind user.
func listed(seg *segment.Segment, targetType, kind, key string) bool {
	users, contexts := seg.Included, seg.IncludedContexts
	if targetType == TargetExcluded {
		users, contexts = seg.Excluded, seg.ExcludedContexts
	}
	if kind == segment.UserKind && slices.Contains(users, key) {
		return true
	}
	return slices.ContainsFunc(contexts, func(t segment.Target) bool { return t.ContextKind == kind && slices.Contains(t.Values, key) })
}

// untarget removes the context key of kind from seg's targets of targetType.
func untarget(seg *segment.Segment, targetType, kind, key string) {
	users, contexts := &seg.Included, &seg.IncludedContexts
	if targetType == TargetExcluded {
		users, contexts = &seg.Excluded, &seg.ExcludedContexts
	}
	if kind == segment.UserKind {
		*users = slices.DeleteFunc(*users, func(k string) bool { return k == key })
	}
	for i := range *contexts {
		if t := &(*contexts)[i]; t.ContextKind == kind {
			t.Values = slices.DeleteFunc(t.Values, func(k string) bool { return k == key })
		}
	}
	*contexts = slices.DeleteFunc(*contexts, func(t segment.Target) bool { return len(t.Values) == 0 })
}

// commitSegment writes the changed removals on the condition that the
// segment is still at the version its targets were checked against, with
// one audit entry on the segment.
func (s *Service) commitSegment(ctx context.Context, seg *segment.Segment, comment string, changes map[store.Key]*segmentChange, order []store.Key) error {
	var writes []store.Write
	before, after := []*SegmentTarget{}, []*SegmentTarget{}
	for _, k := range order {
		c := changes[k]
		switch {
		case c.orig == nil && c.cur == nil:
			continue
		case c.orig == nil:
			c.cur.Version = 1
			writes = append(writes, store.Put(c.cur.item(), store.IfNotExists()))
		case c.cur == nil:
			writes = append(writes, store.Delete(k, store.IfVersion(c.orig.Version)))
		default:
			if *c.orig == *c.cur {
				continue
			}
			c.cur.Version = c.orig.Version + 1
			writes = append(writes, store.Put(c.cur.item(), store.IfVersion(c.orig.Version)))
		}
		if c.orig != nil {
			before = append(before, c.orig)
		}
		if c.cur != nil {
			after = append(after, c.cur)
		}
	}
	if len(writes) == 0 {
		return nil
	}
	writes = append(writes, store.Check(store.SegmentKey(seg.ProjectKey, seg.EnvironmentKey, seg.Key), store.IfVersion(seg.ItemVersion)))
	if len(writes)+2 > store.MaxWrites {
		return fault.New(fault.Invalid, "the patch changes too many expiring targets at once (%d writes, at most %d); split it", len(writes), store.MaxWrites-2)
	}
	_, err := s.log.Commit(ctx, audit.Change{
		Writes: writes, Kind: "segment", Resource: segment.Specifier(seg.ProjectKey, seg.EnvironmentKey, seg.Key),
		Actions: []string{Action}, Name: fmt.Sprintf("expiring targets of segment %s in %s", seg.Key, seg.EnvironmentKey),
		Href: SegmentHref(seg.ProjectKey, seg.EnvironmentKey, seg.Key), TitleVerb: "updated the", Comment: comment,
		Parent:   segmentParent(seg.ProjectKey, seg.EnvironmentKey),
		Previous: before, Current: after,
	})
	if errors.Is(err, store.ErrConditionFailed) {
		return fault.Wrap(err, fault.Conflict, "segment %q or its expiring targets were changed by another request while this patch was applied; read again and retry", seg.Key)
	}
	return err
}

// segmentParent is the environment, parent of a segment in audit entries.
func segmentParent(projectKey, envKey string) *audit.Parent {
	return &audit.Parent{Name: envKey, Resource: fmt.Sprintf("proj/%s:env/%s", projectKey, envKey),
		Href: "/api/v2/projects/" + projectKey + "/environments/" + envKey}
}

// errUntargeted stops a removal whose context is no longer in the segment.
var errUntargeted = errors.New("no longer targeted")

// sweepSegments is Sweep for segments' scheduled removals: each due one
// takes its context out of the segment through the segment's audited
// update, which deletes the removal in the same transaction on its
// version, so a removal runs at most once and a rescheduled one waits.
func (s *Service) sweepSegments(ctx context.Context, nowMs int64, res *Result) error {
	if s.segments == nil {
		return nil
	}
	return sweepDue(ctx, s.table, store.ExpiringSegmentIndexPK, nowMs, "due expiring targets of segments", decodeSegmentTarget, res,
		func(t *SegmentTarget) (bool, bool, error) { return s.expireSegment(ctx, t, nowMs) },
		func(t *SegmentTarget) string {
			r := t.ResourceID
			return fmt.Sprintf("expire %s %q on segment %q in %s/%s", t.ContextKind, t.ContextKey, r.Key, r.ProjectKey, r.EnvironmentKey)
		})
}

func (s *Service) expireSegment(ctx context.Context, seen *SegmentTarget, nowMs int64) (removed, dropped bool, err error) {
	t, ok, err := reread(ctx, s.table, seen.key(), decodeSegmentTarget)
	if !ok || t.ExpirationDate > nowMs {
		return false, false, err // gone, or rescheduled later
	}
	r := t.ResourceID
	del := store.Delete(t.key(), store.IfVersion(t.Version))
	_, err = s.segments.Change(segment.WithoutApprovalCheck(ctx), r.ProjectKey, r.EnvironmentKey, r.Key, func(next *segment.Segment) error {
		if !t.of(next) || !listed(next, t.TargetType, t.ContextKind, t.ContextKey) {
			return errUntargeted
		}
		untarget(next, t.TargetType, t.ContextKind, t.ContextKey)
		return nil
	}, resource.Change{Also: []store.Write{del},
		Comment: fmt.Sprintf("scheduled removal of %s %q from the segment's %s targets", t.ContextKind, t.ContextKey, t.TargetType)})
	switch {
	case err == nil:
		return true, false, nil
	case errors.Is(err, errUntargeted), fault.Is(err, fault.NotFound):
		return false, true, s.dropSegment(ctx, t, del)
	case fault.Is(err, fault.Conflict), fault.Is(err, fault.OptimisticLock):
		return false, false, nil // another run removed or rescheduled it, or the segment changed: the next run sees
	}
	return false, false, err
}

// dropSegment deletes a due removal that has nothing left to remove (the
// context left the segment, or the segment is gone), with an audit entry.
func (s *Service) dropSegment(ctx context.Context, t *SegmentTarget, del store.Write) error {
	r := t.ResourceID
	_, err := s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{del}, Kind: "segment", Resource: segment.Specifier(r.ProjectKey, r.EnvironmentKey, r.Key),
		Actions: []string{Action}, Name: fmt.Sprintf("expiring target of %s %s on segment %s in %s", t.ContextKind, t.ContextKey, r.Key, r.EnvironmentKey),
		Href:      SegmentHref(r.ProjectKey, r.EnvironmentKey, r.Key),
		TitleVerb: "dropped (no longer targeted) the", Comment: "scheduled removal found nothing to remove",
		Parent:   segmentParent(r.ProjectKey, r.EnvironmentKey),
		Previous: t,
	})
	if errors.Is(err, store.ErrConditionFailed) || fault.Is(err, fault.OptimisticLock) {
		return nil // another run got there first
	}
	return err
}
