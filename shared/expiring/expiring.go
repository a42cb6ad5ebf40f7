// Package expiring schedules the removal of users from flags' individual
// targets ("expiring user targets"), and of contexts from segments'
// included or excluded targets (segments.go), and runs the job that
// removes them when due.
//
// Each scheduled removal is one item (store.ExpiringKey) placed in the
// due-time index (store.ExpiringIndexKeys), so the job reads only what is
// due. Changes are semantic patches (addExpireUserTargetDate,
// updateExpireUserTargetDate, removeExpireUserTargetDate): every
// instruction applies or none does, and the change is one audit entry.
package expiring

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/jsondoc"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/semanticpatch"
	"github.com/flagplane/flagplane/shared/store"
)

// Instruction kinds.
const (
	KindAdd    = "addExpireUserTargetDate"
	KindUpdate = "updateExpireUserTargetDate"
	KindRemove = "removeExpireUserTargetDate"
)

// Action is the action of every change to expiring targets.
const Action = "updateExpiringTargets"

// MaxUserKey is the longest user key accepted (it is part of a store key).
const MaxUserKey = 512

// ResourceID names the flag in an environment a target expires on.
type ResourceID struct {
	Kind           string `json:"kind"`
	ProjectKey     string `json:"projectKey"`
	EnvironmentKey string `json:"environmentKey"`
	FlagKey        string `json:"flagKey"`
	Key            string `json:"key"`
}

// Target is one scheduled removal, stored and shown as is.
type Target struct {
	ID             string     `json:"_id"`
	Version        int64      `json:"_version"`
	ExpirationDate int64      `json:"expirationDate"`
	ContextKind    string     `json:"contextKind"`
	UserKey        string     `json:"userKey"`
	VariationID    string     `json:"variationId"`
	ResourceID     ResourceID `json:"_resourceId"`
}

func (t *Target) key() store.Key {
	r := t.ResourceID
	return store.ExpiringKey(r.ProjectKey, r.EnvironmentKey, r.FlagKey, t.ContextKind, t.UserKey)
}

func (t *Target) item() store.Item {
	data, _ := json.Marshal(t) // plain fields always encode
	k := t.key()
	r := t.ResourceID
	g1, g2 := store.ExpiringIndexKeys(t.ExpirationDate, r.ProjectKey, r.EnvironmentKey, r.FlagKey, t.ContextKind, t.UserKey)
	return store.Item{PK: k.PK, SK: k.SK, GSI1PK: g1, GSI1SK: g2, Version: t.Version, Data: data}
}

func decode(it store.Item) (*Target, error) {
	var t Target
	if err := json.Unmarshal(it.Data, &t); err != nil {
		return nil, fmt.Errorf("decode expiring target %s/%s: %w", it.PK, it.SK, err)
	}
	t.Version = it.Version
	return &t, nil
}

// Service manages expiring user targets.
type Service struct {
	table store.Table
	log   *audit.Log
	flags *flag.Service
	envs  *environment.Service
	now   func() time.Time
	// segments, when set, lets removals act on segments (SetSegments).
	segments *segment.Service
}

// NewService returns the expiring-targets service.
func NewService(table store.Table, log *audit.Log, flags *flag.Service, envs *environment.Service, now func() time.Time) *Service {
	return &Service{table: table, log: log, flags: flags, envs: envs, now: now}
}

func (s *Service) environment(ctx context.Context, projectKey, envKey string) error {
	_, err := s.envs.Get(ctx, projectKey, envKey)
	return err
}

// ForUser lists the user's scheduled removals in an environment, by flag key.
func (s *Service) ForUser(ctx context.Context, projectKey, envKey, userKey string) ([]*Target, error) {
	if err := s.environment(ctx, projectKey, envKey); err != nil {
		return nil, err
	}
	all, err := record.All(ctx, s.table, store.Query{PK: store.ProjectPartition(projectKey), SKPrefix: store.ExpiringEnvPrefix(envKey)},
		fmt.Sprintf("expiring targets of environment %q", envKey), decode)
	if err != nil {
		return nil, err
	}
	out := []*Target{}
	for _, t := range all {
		if t.ContextKind == flag.UserKind && t.UserKey == userKey {
			out = append(out, t)
		}
	}
	return out, nil
}

// ForFlag lists a flag's scheduled removals in an environment, by user key.
func (s *Service) ForFlag(ctx context.Context, projectKey, envKey, flagKey string) ([]*Target, error) {
	if err := s.environment(ctx, projectKey, envKey); err != nil {
		return nil, err
	}
	if _, err := s.flags.Load(ctx, projectKey, flagKey); err != nil {
		return nil, err
	}
	out, err := record.All(ctx, s.table, store.Query{PK: store.ProjectPartition(projectKey), SKPrefix: store.ExpiringFlagPrefix(envKey, flagKey)},
		fmt.Sprintf("expiring targets of flag %q", flagKey), decode)
	if out == nil {
		out = []*Target{}
	}
	return out, err
}

// params are the parameters of every expiring-target instruction.
type params struct {
	FlagKey     *string         `json:"flagKey"`
	UserKey     *string         `json:"userKey"`
	VariationID *string         `json:"variationId"`
	Value       *jsondoc.Millis `json:"value"` // Unix ms, an integer or a string of digits
	Version     *int64          `json:"version"`
}

// scope is what the path fixes: the user (per-user route) or the flag (per-flag route).
type scope struct {
	projectKey, envKey string
	flagKey, userKey   string
}

type change struct {
	orig, cur *Target
}

// PatchForUser applies instructions naming flagKey to the user of the path.
func (s *Service) PatchForUser(ctx context.Context, projectKey, envKey, userKey string, sp semanticpatch.Patch) ([]*Target, error) {
	if err := s.patch(ctx, scope{projectKey: projectKey, envKey: envKey, userKey: userKey}, sp); err != nil {
		return nil, err
	}
	return s.ForUser(ctx, projectKey, envKey, userKey)
}

// PatchForFlag applies instructions naming userKey to the flag of the path.
func (s *Service) PatchForFlag(ctx context.Context, projectKey, envKey, flagKey string, sp semanticpatch.Patch) ([]*Target, error) {
	if err := s.patch(ctx, scope{projectKey: projectKey, envKey: envKey, flagKey: flagKey}, sp); err != nil {
		return nil, err
	}
	return s.ForFlag(ctx, projectKey, envKey, flagKey)
}

// CheckInstructions refuses a patch holding an instruction that is not an
// expiring-target one (400 naming the index), before authorization.
func CheckInstructions(sp semanticpatch.Patch) error {
	for i, in := range sp.Instructions {
		if !slices.Contains([]string{KindAdd, KindUpdate, KindRemove}, in.Kind) {
			return semanticpatch.Invalid(i, in.Kind, "unknown instruction kind; expiring targets take %s, %s or %s", KindAdd, KindUpdate, KindRemove)
		}
	}
	return nil
}

func (s *Service) patch(ctx context.Context, sc scope, sp semanticpatch.Patch) error {
	if err := CheckInstructions(sp); err != nil {
		return err
	}
	if err := s.environment(ctx, sc.projectKey, sc.envKey); err != nil {
		return err
	}
	if sc.flagKey != "" {
		if _, err := s.flags.Load(ctx, sc.projectKey, sc.flagKey); err != nil {
			return err
		}
	}
	if sc.userKey != "" && len(sc.userKey) > MaxUserKey {
		return fault.New(fault.Invalid, "user key is longer than %d bytes", MaxUserKey)
	}
	now := s.now().UnixMilli()
	flags := map[string]*flag.Flag{}
	changes := map[store.Key]*change{}
	var order []store.Key
	for i, in := range sp.Instructions {
		var p params
		if err := semanticpatch.Decode(in, i, &p); err != nil {
			return err
		}
		flagKey, userKey := sc.flagKey, sc.userKey
		if flagKey == "" {
			if p.FlagKey == nil || *p.FlagKey == "" {
				return semanticpatch.Invalid(i, in.Kind, "parameter \"flagKey\" is required")
			}
			flagKey = *p.FlagKey
		} else if p.FlagKey != nil && *p.FlagKey != flagKey {
			return semanticpatch.Invalid(i, in.Kind, "parameter \"flagKey\" %q differs from the flag of the path %q", *p.FlagKey, flagKey)
		}
		if userKey == "" {
			if p.UserKey == nil || *p.UserKey == "" {
				return semanticpatch.Invalid(i, in.Kind, "parameter \"userKey\" is required")
			}
			if len(*p.UserKey) > MaxUserKey {
				return semanticpatch.Invalid(i, in.Kind, "parameter \"userKey\" is longer than %d bytes", MaxUserKey)
			}
			userKey = *p.UserKey
		} else if p.UserKey != nil && *p.UserKey != userKey {
			return semanticpatch.Invalid(i, in.Kind, "parameter \"userKey\" %q differs from the user of the path %q", *p.UserKey, userKey)
		}
		if p.VariationID == nil || *p.VariationID == "" {
			return semanticpatch.Invalid(i, in.Kind, "parameter \"variationId\" is required")
		}
		if in.Kind != KindRemove {
			if p.Value == nil {
				return semanticpatch.Invalid(i, in.Kind, "parameter \"value\" (the removal time, Unix ms) is required")
			}
			if int64(*p.Value) <= now {
				return semanticpatch.Invalid(i, in.Kind, "parameter \"value\" %d is not in the future (now %d)", *p.Value, now)
			}
		}
		f, ok := flags[flagKey]
		if !ok {
			var err error
			if f, err = s.flags.Load(ctx, sc.projectKey, flagKey); err != nil {
				if fault.Is(err, fault.NotFound) {
					return semanticpatch.Failed(i, in.Kind, "flag %q not found in project %q", flagKey, sc.projectKey)
				}
				return err
			}
			flags[flagKey] = f
		}
		vIdx := slices.IndexFunc(f.Variations, func(v flag.Variation) bool { return v.ID == *p.VariationID })
		if vIdx < 0 {
			return semanticpatch.Failed(i, in.Kind, "flag %q has no variation %q", flagKey, *p.VariationID)
		}
		k := store.ExpiringKey(sc.projectKey, sc.envKey, flagKey, flag.UserKind, userKey)
		c, ok := changes[k]
		if !ok {
			it, err := s.table.Get(ctx, k)
			c = &change{}
			switch {
			case err == nil:
				if c.orig, err = decode(it); err != nil {
					return err
				}
				cur := *c.orig
				c.cur = &cur
			case !errors.Is(err, store.ErrNotFound):
				return fmt.Errorf("load expiring target: %w", err)
			}
			changes[k] = c
			order = append(order, k)
		}
		switch in.Kind {
		case KindAdd, KindUpdate:
			if v, ok := f.EnvView(sc.envKey).TargetOf(flag.UserKind, userKey); !ok || v != vIdx {
				return semanticpatch.Failed(i, in.Kind, "user %q is not individually targeted with variation %q on flag %q in environment %q", userKey, *p.VariationID, flagKey, sc.envKey)
			}
			if in.Kind == KindAdd {
				if c.cur != nil {
					return semanticpatch.Failed(i, in.Kind, "user %q already has a removal scheduled on flag %q in environment %q; use %s", userKey, flagKey, sc.envKey, KindUpdate)
				}
				c.cur = &Target{ID: strings.ReplaceAll(flag.NewID(), "-", ""), ContextKind: flag.UserKind, UserKey: userKey,
					ResourceID: ResourceID{Kind: "flag", ProjectKey: sc.projectKey, EnvironmentKey: sc.envKey, FlagKey: flagKey, Key: flagKey}}
			} else {
				if c.cur == nil {
					return semanticpatch.Failed(i, in.Kind, "user %q has no removal scheduled on flag %q in environment %q; use %s", userKey, flagKey, sc.envKey, KindAdd)
				}
				if p.Version != nil && *p.Version != c.cur.Version {
					return semanticpatch.Failed(i, in.Kind, "version %d is not the current version %d of the scheduled removal", *p.Version, c.cur.Version)
				}
			}
			c.cur.ExpirationDate, c.cur.VariationID = int64(*p.Value), *p.VariationID
		case KindRemove:
			if c.cur == nil {
				// Nothing scheduled: what was asked already holds, as for removeUserTargets.
				continue
			}
			if c.cur.VariationID != *p.VariationID {
				return semanticpatch.Failed(i, in.Kind, "the removal scheduled for user %q on flag %q is for variation %q, not %q", userKey, flagKey, c.cur.VariationID, *p.VariationID)
			}
			c.cur = nil
		}
	}
	return s.commit(ctx, sc, sp.Comment, flags, changes, order)
}

func same(a, b *Target) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// commit writes the changed removals, on the condition that each flag
// read is still at the version its targeting was checked against, with
// one audit entry.
func (s *Service) commit(ctx context.Context, sc scope, comment string, flags map[string]*flag.Flag, changes map[store.Key]*change, order []store.Key) error {
	var writes []store.Write
	var before, after []*Target
	touched := map[string]bool{}
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
			if same(c.orig, c.cur) {
				continue
			}
			c.cur.Version = c.orig.Version + 1
			writes = append(writes, store.Put(c.cur.item(), store.IfVersion(c.orig.Version)))
		}
		if c.orig != nil {
			before = append(before, c.orig)
			touched[c.orig.ResourceID.FlagKey] = true
		}
		if c.cur != nil {
			after = append(after, c.cur)
			touched[c.cur.ResourceID.FlagKey] = true
		}
	}
	if len(writes) == 0 {
		return nil
	}
	keys := make([]string, 0, len(touched))
	for fk := range touched {
		keys = append(keys, fk)
		f := flags[fk]
		writes = append(writes, store.Check(store.FlagKey(sc.projectKey, fk), store.IfVersion(f.ItemVersion)))
	}
	if len(writes)+2 > store.MaxWrites {
		return fault.New(fault.Invalid, "the patch changes too many expiring targets at once (%d writes, at most %d); split it", len(writes), store.MaxWrites-2)
	}
	slices.Sort(keys)
	flagRes := "*"
	if len(keys) == 1 {
		flagRes = keys[0]
	}
	name, href := "", ""
	if sc.flagKey != "" {
		name = fmt.Sprintf("expiring targets of flag %s in %s", sc.flagKey, sc.envKey)
		href = flag.Href(sc.projectKey, sc.flagKey) + "/expiring-user-targets/" + sc.envKey
	} else {
		name = fmt.Sprintf("expiring targets of user %s in %s", sc.userKey, sc.envKey)
		href = "/api/v2/users/" + sc.projectKey + "/" + sc.userKey + "/expiring-user-targets/" + sc.envKey
	}
	_, err := s.log.Commit(ctx, audit.Change{
		Writes: writes, Kind: "flag", Resource: "proj/" + sc.projectKey + ":env/" + sc.envKey + ":flag/" + flagRes,
		Actions: []string{Action}, Name: name, Href: href, TitleVerb: "updated the", Comment: comment,
		Parent:   &audit.Parent{Name: sc.projectKey, Resource: "proj/" + sc.projectKey, Href: project.Href(sc.projectKey)},
		Previous: orEmpty(before), Current: orEmpty(after),
	})
	if errors.Is(err, store.ErrConditionFailed) {
		return fault.Wrap(err, fault.Conflict, "a flag or expiring target was changed by another request while this patch was applied; read again and retry")
	}
	return err
}

func orEmpty(ts []*Target) []*Target {
	if ts == nil {
		return []*Target{}
	}
	return ts
}
