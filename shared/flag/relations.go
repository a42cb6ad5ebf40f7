package flag

import (
	"fmt"
	"sort"
	"strings"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/store"
)

// addedPrerequisite is a prerequisite next has in an environment that old
// did not have there (a new flag, or a new variation of one).
type addedPrerequisite struct {
	env   string
	index int
	p     Prerequisite
}

func addedPrerequisites(old, next *Flag) []addedPrerequisite {
	var out []addedPrerequisite
	for _, k := range envKeysOf(old, next) {
		had := map[Prerequisite]bool{}
		for _, p := range old.Env(k).Prerequisites {
			had[p] = true
		}
		for i, p := range next.Env(k).Prerequisites {
			if !had[p] {
				out = append(out, addedPrerequisite{env: k, index: i, p: p})
			}
		}
	}
	return out
}

// prerequisitesChanged reports whether any environment's prerequisites differ.
func prerequisitesChanged(old, next *Flag) bool {
	for _, k := range envKeysOf(old, next) {
		a, b := old.Env(k).Prerequisites, next.Env(k).Prerequisites
		if len(a) != len(b) {
			return true
		}
		for i := range a {
			if a[i] != b[i] {
				return true
			}
		}
	}
	return false
}

// variationsMoved reports whether a variation of old is gone from next or
// sits at another index.
func variationsMoved(old, next *Flag) bool {
	for i, v := range old.Variations {
		if j, ok := next.VariationIndex(v.ID); !ok || j != i {
			return true
		}
	}
	return false
}

// needsOthers reports whether checking the change from old to next needs
// the project's other flags.
func needsOthers(old, next *Flag) bool {
	return prerequisitesChanged(old, next) || variationsMoved(old, next) || next.Archived && !old.Archived
}

// checkRelations verifies what a change means beyond the flag itself:
// every prerequisite next adds names another flag of the project and one
// of its variations, and makes no cycle; the variations other flags'
// prerequisites point at keep their index; a flag that live flags have as a
// prerequisite is not archived. others are the project's flags (next
// stands for its own key). The error is a 400 naming the field.
func checkRelations(old, next *Flag, others Others) error {
	for _, a := range addedPrerequisites(old, next) {
		field := fmt.Sprintf("environments.%s.prerequisites[%d]", a.env, a.index)
		o := others[a.p.Key]
		if o == nil || a.p.Key == next.Key {
			return fault.New(fault.Invalid, "field %q: flag %q does not exist in project %q", field+".key", a.p.Key, next.ProjectKey)
		}
		if a.p.Variation >= len(o.Variations) {
			return fault.New(fault.Invalid, "field %q: flag %q has no variation %d", field+".variation", a.p.Key, a.p.Variation)
		}
		if cycle := prerequisiteCycle(next, others, a.env); cycle != nil {
			return fault.New(fault.Invalid, "field %q: prerequisites would form a cycle in environment %q: %s", field+".key", a.env, strings.Join(cycle, " -> "))
		}
	}
	if variationsMoved(old, next) {
		if err := checkDependents(old, next, others); err != nil {
			return err
		}
	}
	if next.Archived && !old.Archived {
		for _, key := range sortedKeys(others) {
			g := others[key]
			if key == next.Key || g.Archived {
				continue
			}
			if env, ok := dependsOn(g, next.Key); ok {
				return fault.New(fault.Invalid, "flag %q cannot be archived: flag %q has it as a prerequisite in environment %q; remove that prerequisite first", next.Key, key, env)
			}
		}
	}
	return nil
}

// checkDependents refuses a change of variations that would remove or
// move a variation another flag's prerequisite points at (prerequisites
// name variations by index).
func checkDependents(old, next *Flag, others Others) error {
	for _, key := range sortedKeys(others) {
		g := others[key]
		if key == next.Key {
			continue
		}
		for _, env := range sortedKeys(g.Environments) {
			for _, p := range g.Environments[env].Prerequisites {
				if p.Key != next.Key || p.Variation >= len(old.Variations) {
					continue
				}
				v := old.Variations[p.Variation]
				j, ok := next.VariationIndex(v.ID)
				switch {
				case !ok:
					return fault.New(fault.Invalid, "field \"variations\": variation %q (index %d) cannot be removed: flag %q has it as its prerequisite variation in environment %q", v.ID, p.Variation, key, env)
				case j != p.Variation:
					return fault.New(fault.Invalid, "field \"variations\": variation %q cannot move from index %d to %d: flag %q has it as its prerequisite variation in environment %q", v.ID, p.Variation, j, key, env)
				}
			}
		}
	}
	return nil
}

// dependsOn returns an environment in which g has key as a prerequisite.
func dependsOn(g *Flag, key string) (string, bool) {
	for _, env := range sortedKeys(g.Environments) {
		for _, p := range g.Environments[env].Prerequisites {
			if p.Key == key {
				return env, true
			}
		}
	}
	return "", false
}

// prerequisiteCycle returns a cycle through next in env, or nil.
func prerequisiteCycle(next *Flag, others Others, env string) []string {
	edges := func(key string) []Prerequisite {
		if key == next.Key {
			return next.Env(env).Prerequisites
		}
		if g := others[key]; g != nil {
			return g.Env(env).Prerequisites
		}
		return nil
	}
	visited := map[string]bool{}
	var path []string
	var walk func(key string) []string
	walk = func(key string) []string {
		path = append(path, key)
		defer func() { path = path[:len(path)-1] }()
		for _, p := range edges(key) {
			if p.Key == next.Key {
				return append(append([]string(nil), path...), next.Key)
			}
			if visited[p.Key] {
				continue
			}
			visited[p.Key] = true
			if c := walk(p.Key); c != nil {
				return c
			}
		}
		return nil
	}
	return walk(next.Key)
}

// prerequisiteGuards are the writes that keep a change's new
// prerequisites as they were read: each prerequisite flag must still be
// at the version checked, so a concurrent change cannot close a cycle or
// remove the variation.
func prerequisiteGuards(old, next *Flag, others Others) []store.Write {
	seen := map[string]bool{}
	var out []store.Write
	for _, a := range addedPrerequisites(old, next) {
		o := others[a.p.Key]
		if seen[a.p.Key] || o == nil {
			continue
		}
		seen[a.p.Key] = true
		out = append(out, store.Check(store.FlagKey(next.ProjectKey, a.p.Key), store.IfVersion(o.ItemVersion)))
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
