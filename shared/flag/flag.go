package flag

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/google/uuid"

	"github.com/flagplane/flagplane/shared/store"
)

// Others are the flags of a project by key, for the checks that involve
// more than one flag: prerequisites (they must exist, and form no cycle),
// variations other flags' prerequisites point at, archiving a flag that is
// a prerequisite. The flag being changed may be in it; it is skipped.
type Others map[string]*Flag

// Href is the API path of a flag.
func Href(projectKey, flagKey string) string { return CollectionHref(projectKey) + "/" + flagKey }

// CollectionHref is the API path of a project's flags.
func CollectionHref(projectKey string) string { return "/api/v2/flags/" + projectKey }

// Href is the flag's API path.
func (f *Flag) Href() string { return Href(f.ProjectKey, f.Key) }

// Resource is the flag's resource specifier in envKey ("*" for a change
// that is not about one environment).
func (f *Flag) Resource(envKey string) string {
	if envKey == "" {
		envKey = "*"
	}
	return "proj/" + f.ProjectKey + ":env/" + envKey + ":flag/" + f.Key
}

// NewID returns the id of a new variation, rule or clause.
func NewID() string { return uuid.NewString() }

// Clone returns a deep copy of f.
func (f *Flag) Clone() *Flag {
	data, err := json.Marshal(f)
	if err != nil {
		// Every field of a flag encodes; a failure here is a broken invariant.
		panic(fmt.Sprintf("flag: encode %q: %v", f.Key, err))
	}
	var c Flag
	if err := json.Unmarshal(data, &c); err != nil {
		panic(fmt.Sprintf("flag: decode %q: %v", f.Key, err))
	}
	c.ItemVersion = f.ItemVersion
	if c.Environments == nil {
		c.Environments = map[string]*EnvConfig{}
	}
	return &c
}

// VariationIndex returns the index of the variation with id.
func (f *Flag) VariationIndex(id string) (int, bool) {
	for i, v := range f.Variations {
		if v.ID == id {
			return i, true
		}
	}
	return 0, false
}

// variationByValue returns the index of the variation whose value equals raw as JSON.
func (f *Flag) variationByValue(raw json.RawMessage) (int, bool) {
	want, err := canonical(raw)
	if err != nil {
		return 0, false
	}
	for i, v := range f.Variations {
		if got, err := canonical(v.Value); err == nil && got == want {
			return i, true
		}
	}
	return 0, false
}

// UserKind is the context kind of user targets and of clauses without one.
const UserKind = "user"

func normalKind(kind string) string {
	if kind == "" {
		return UserKind
	}
	return kind
}

// targetList returns the list that holds targets of kind: user targets
// live in Targets, every other kind in ContextTargets.
func (c *EnvConfig) targetList(kind string) *[]Target {
	if normalKind(kind) == UserKind {
		return &c.Targets
	}
	return &c.ContextTargets
}

// TargetOf returns the variation that individually targets the context key
// of kind (empty for user) in this environment.
func (c *EnvConfig) TargetOf(kind, key string) (variation int, ok bool) {
	kind = normalKind(kind)
	for _, t := range *c.targetList(kind) {
		if normalKind(t.ContextKind) == kind && slices.Contains(t.Values, key) {
			return t.Variation, true
		}
	}
	return 0, false
}

// addTargets targets keys of kind with variation. A key already targeted
// with another variation is refused (returned as conflict); one already
// targeted with this variation is left as is.
func (c *EnvConfig) addTargets(kind string, variation int, keys []string) (conflict string, other int, ok bool) {
	kind = normalKind(kind)
	for _, k := range keys {
		if v, found := c.TargetOf(kind, k); found && v != variation {
			return k, v, false
		}
	}
	list := c.targetList(kind)
	at := -1
	for i, t := range *list {
		if normalKind(t.ContextKind) == kind && t.Variation == variation {
			at = i
			break
		}
	}
	if at < 0 {
		t := Target{Values: []string{}, Variation: variation}
		if kind != UserKind {
			t.ContextKind = kind
		}
		*list = append(*list, t)
		at = len(*list) - 1
	}
	for _, k := range keys {
		if !slices.Contains((*list)[at].Values, k) {
			(*list)[at].Values = append((*list)[at].Values, k)
		}
	}
	return "", 0, true
}

// removeTargets stops targeting keys of kind with variation; keys not
// targeted are ignored, and a target left without keys goes away.
func (c *EnvConfig) removeTargets(kind string, variation int, keys []string) {
	kind = normalKind(kind)
	list := c.targetList(kind)
	out := (*list)[:0]
	for _, t := range *list {
		if normalKind(t.ContextKind) == kind && t.Variation == variation {
			t.Values = slices.DeleteFunc(t.Values, func(v string) bool { return slices.Contains(keys, v) })
			if len(t.Values) == 0 {
				continue
			}
		}
		out = append(out, t)
	}
	*list = out
}

// clearTargets removes every target of variation, of the user kind only or of every kind.
func (c *EnvConfig) clearTargets(variation int, userOnly bool) {
	c.Targets = slices.DeleteFunc(c.Targets, func(t Target) bool { return t.Variation == variation })
	if !userOnly {
		c.ContextTargets = slices.DeleteFunc(c.ContextTargets, func(t Target) bool { return t.Variation == variation })
	}
}

// ruleIndex returns the index of the rule with id.
func (c *EnvConfig) ruleIndex(id string) (int, bool) {
	for i, r := range c.Rules {
		if r.ID == id {
			return i, true
		}
	}
	return 0, false
}

// sameTargeting reports whether two environment configurations target the
// same way, ignoring their version and modification time.
func sameTargeting(a, b *EnvConfig) bool {
	ca, cb := *a, *b
	ca.Version, cb.Version, ca.LastModified, cb.LastModified = 0, 0, 0, 0
	ja, _ := json.Marshal(ca)
	jb, _ := json.Marshal(cb)
	return string(ja) == string(jb)
}

// stamp compares next with old in each of envKeys: an environment whose
// targeting changed is stored in next with its version bumped and now as
// its modification time; one that did not change is stored only if it was
// before (a flag keeps only the environments ever changed). It returns
// the changed environments' keys, sorted.
func stamp(old, next *Flag, envKeys []string, nowMillis int64) []string {
	if next.Environments == nil {
		next.Environments = map[string]*EnvConfig{}
	}
	var changed []string
	for _, k := range envKeys {
		before, after := old.Env(k), next.Env(k)
		if sameTargeting(before, after) {
			if prev, ok := old.Environments[k]; ok && prev != nil {
				next.Environments[k] = prev
			} else {
				delete(next.Environments, k)
			}
			continue
		}
		c := *after
		c.Version = max(before.Version, 1) + 1
		c.LastModified = nowMillis
		next.Environments[k] = &c
		changed = append(changed, k)
	}
	sort.Strings(changed)
	return changed
}

// envKeysOf returns the keys of the environments either flag stores.
func envKeysOf(a, b *Flag) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range []*Flag{a, b} {
		for k := range f.Environments {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// keep drops the stored targeting of environments not in envKeys (an
// environment deleted since), so a write never carries it forward.
func (f *Flag) keep(envKeys []string) {
	for k := range f.Environments {
		if !slices.Contains(envKeys, k) {
			delete(f.Environments, k)
		}
	}
}

// put returns the write that stores f under condition c.
func (f *Flag) put(c store.Cond) (store.Write, error) {
	data, err := json.Marshal(f)
	if err != nil {
		return store.Write{}, fmt.Errorf("encode flag %q: %w", f.Key, err)
	}
	if len(data) > MaxItemBytes {
		return store.Write{}, tooLarge(f.Key, len(data))
	}
	k := store.FlagKey(f.ProjectKey, f.Key)
	return store.Put(store.Item{PK: k.PK, SK: k.SK, Version: f.ItemVersion, Data: data}, c), nil
}

func decode(it store.Item) (*Flag, error) {
	var f Flag
	if err := json.Unmarshal(it.Data, &f); err != nil {
		return nil, fmt.Errorf("decode flag %s/%s: %w", it.PK, it.SK, err)
	}
	f.ItemVersion = it.Version
	if f.Key == "" {
		f.Key = strings.TrimPrefix(it.SK, store.FlagSKPrefix)
	}
	if f.Environments == nil {
		f.Environments = map[string]*EnvConfig{}
	}
	return &f, nil
}
