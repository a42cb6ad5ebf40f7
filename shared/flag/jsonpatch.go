package flag

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/jsondoc"
	"github.com/flagplane/flagplane/shared/patch"
)

// patchable maps each top-level field a JSON patch may touch to its action.
var patchable = map[string]string{
	"name":                   "updateName",
	"description":            "updateDescription",
	"tags":                   "updateTags",
	"temporary":              "updateTemporary",
	"maintainerId":           "updateMaintainer",
	"clientSideAvailability": "updateClientSideFlagAvailability",
	"defaults":               "updateFlagDefaultVariations",
	"variations":             "updateFlagVariations",
	"archived":               "updateGlobalArchived",
	"customProperties":       "updateFlagCustomProperties",
}

// envPatchable maps each field of /environments/<key> a JSON patch may
// touch to its action.
var envPatchable = map[string]string{
	"on":             "updateOn",
	"targets":        "updateTargets",
	"contextTargets": "updateTargets",
	"rules":          "updateRules",
	"fallthrough":    "updateFallthrough",
	"offVariation":   "updateOffVariation",
	"prerequisites":  "updatePrerequisites",
	"trackEvents":    "updateTrackEvents",
	// trackEventsFallthrough is event tracking too, for the default rule.
	"trackEventsFallthrough": "updateTrackEvents",
}

// Actions are the actions the flag's own `_access` reports: those on its
// settings, decided on proj/<p>:env/*:flag/<f>. The targeting actions are
// decided per environment and reported in each environment's `_access`
// (EnvActions).
var Actions = []string{"deleteFlag", "updateName", "updateDescription", "updateTags", "updateTemporary",
	"updateMaintainer", "updateClientSideFlagAvailability", "updateFlagVariations", "updateFlagDefaultVariations",
	"updateGlobalArchived", "updateFlagCustomProperties"}

func sortedFields(m map[string]string) string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// PatchActions returns the actions a JSON patch of a flag performs,
// refusing paths outside the editable fields: the flag's own settings, and
// in /environments/<key>/ the targeting fields.
func PatchActions(p patch.Patch) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, path := range p.Touched() {
		action, err := pathAction(path)
		if err != nil {
			return nil, err
		}
		if !seen[action] {
			seen[action] = true
			out = append(out, action)
		}
	}
	sort.Strings(out)
	return out, nil
}

// pathAction is the action of patching path, or a 400 naming what can be patched.
func pathAction(path string) (string, error) {
	seg := patch.Segments(path)
	switch {
	case seg[0] == "environments" && len(seg) >= 3:
		a, ok := envPatchable[seg[2]]
		if !ok {
			return "", fault.New(fault.Invalid, "path %q cannot be patched: of an environment's targeting only %s are editable", path, sortedFields(envPatchable))
		}
		if seg[2] == "rules" && len(seg) == 5 && seg[4] == "description" {
			a = "updateFlagRuleDescription"
		}
		return a, nil
	case seg[0] == "environments":
		return "", fault.New(fault.Invalid, "path %q cannot be patched: patch one field of one environment's targeting, /environments/<environmentKey>/<field>, with field one of %s", path, sortedFields(envPatchable))
	default:
		a, ok := patchable[seg[0]]
		if !ok {
			return "", fault.New(fault.Invalid, "path %q cannot be patched: %q is read-only or not a field of a flag; editable: %s, and environments/<environmentKey>/<field>", path, seg[0], sortedFields(patchable))
		}
		return a, nil
	}
}

// Patch applies a JSON patch to the flag as the API shows it (every
// environment of the project under environments), validates the result
// and stores it on the version it was read at (409 when another write won).
//
// A replace that changes nothing is dropped first (patch.WithoutNoOps), so
// a read-only field sent back as read is no error. Nothing is stored
// unless the whole patch applies and the result is valid.
func (s *Service) Patch(ctx context.Context, projectKey, flagKey string, p patch.Patch) (*Detail, error) {
	old, envs, err := s.load(ctx, projectKey, flagKey)
	if err != nil {
		return nil, err
	}
	keys := envKeys(envs)
	doc := old.Clone()
	for _, k := range keys {
		doc.Environments[k] = old.EnvView(k)
	}
	raw, err := patchDocument(doc)
	if err != nil {
		return nil, err
	}
	p = p.WithoutNoOps(raw)
	if _, err := PatchActions(p); err != nil {
		return nil, err
	}
	var next Flag
	out, err := p.Apply(raw)
	if err != nil {
		return nil, err
	}
	if err := jsondoc.Unmarshal(out, &next); err != nil {
		return nil, err
	}
	next.Key, next.Kind, next.CreationDate, next.ProjectKey = old.Key, old.Kind, old.CreationDate, old.ProjectKey
	next.Version, next.ItemVersion = old.Version, old.ItemVersion
	next.normalize()
	if err := remapUntouched(old, doc, &next); err != nil {
		return nil, err
	}
	if err := next.Check(); err != nil {
		return nil, err
	}
	if old.Archived && next.Archived && !sameDocument(doc, &next) {
		return nil, fault.New(fault.PatchFailed, "flag %q is archived; restore it (set /archived to false) before changing it", flagKey)
	}
	for _, k := range keys {
		// The view's version and time are not the flag's to set.
		if c := next.Environments[k]; c != nil {
			v := old.Env(k)
			c.Version, c.LastModified, c.Archived = v.Version, v.LastModified, v.Archived
		}
	}
	changed := stamp(old, &next, keys, s.now().UnixMilli())
	next.keep(keys)
	actions := patch.ChangedFields(old, &next, patchable)
	for _, k := range changed {
		actions = append(actions, patch.ChangedFields(old.Env(k), next.Env(k), envPatchable)...)
	}
	actions = unique(actions)
	if len(actions) == 0 {
		return &Detail{Flag: old, Environments: envs}, nil
	}
	var others Others
	if needsOthers(old, &next) {
		if others, err = s.Others(ctx, projectKey); err != nil {
			return nil, err
		}
		if err := checkRelations(old, &next, others); err != nil {
			return nil, err
		}
	}
	envKey := ""
	if len(changed) == 1 && len(patch.ChangedFields(old, &next, patchable)) == 0 {
		envKey = changed[0]
	}
	return s.commit(ctx, old, &next, envs, prerequisiteGuards(old, &next, others), nil, actions, envKey, p.Comment, p.Raw)
}

// patchDocument is the JSON a patch of f applies to: f as the API shows
// it, with name and description on every variation, "" when unset (the
// answers leave them out then, as the reference does). LaunchDarkly's
// Terraform provider replaces /variations/<i>/name and /description on
// every update of a flag; RFC 6902 refuses a replace of a missing member.
func patchDocument(f *Flag) ([]byte, error) {
	raw, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("encode flag %q to patch: %w", f.Key, err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("decode flag %q to patch: %w", f.Key, err)
	}
	vars := make([]map[string]any, len(f.Variations))
	for i, v := range f.Variations {
		vars[i] = map[string]any{"_id": v.ID, "value": v.Value, "name": v.Name, "description": v.Description}
	}
	if doc["variations"], err = json.Marshal(vars); err != nil {
		return nil, fmt.Errorf("encode variations of flag %q to patch: %w", f.Key, err)
	}
	return json.Marshal(doc)
}

// fallthoughAlias is the misspelled member LaunchDarkly's Terraform
// provider (v2) replaces in /environments/<key>/ when it destroys a
// launchdarkly_feature_flag_environment, meaning fallthrough. It is taken
// as fallthrough there, and only there, so the destroy succeeds; every
// other unknown path is still refused.
const fallthoughAlias = "fallthough"

// WithProviderAliases returns p with /environments/<key>/fallthough read
// as /environments/<key>/fallthrough.
func WithProviderAliases(p patch.Patch) patch.Patch {
	ops := slices.Clone(p.Ops)
	for i, op := range ops {
		seg := patch.Segments(op.Path)
		if len(seg) == 3 && seg[0] == "environments" && seg[2] == fallthoughAlias {
			ops[i].Path = strings.TrimSuffix(op.Path, fallthoughAlias) + "fallthrough"
		}
	}
	p.Ops = ops
	return p
}

func unique(actions []string) []string {
	sort.Strings(actions)
	return slices.Compact(actions)
}

// normalize gives the lists a patch may have removed their empty value,
// and ids to variations, rules and clauses a patch added without one.
func (f *Flag) normalize() {
	if f.Tags == nil {
		f.Tags = []string{}
	}
	if f.Environments == nil {
		f.Environments = map[string]*EnvConfig{}
	}
	for i := range f.Variations {
		if f.Variations[i].ID == "" {
			f.Variations[i].ID = NewID()
		}
		f.Variations[i].Value = compact(f.Variations[i].Value)
	}
	for k, c := range f.Environments {
		if c == nil {
			delete(f.Environments, k)
			continue
		}
		if c.Targets == nil {
			c.Targets = []Target{}
		}
		if c.ContextTargets == nil {
			c.ContextTargets = []Target{}
		}
		if c.Rules == nil {
			c.Rules = []Rule{}
		}
		if c.Prerequisites == nil {
			c.Prerequisites = []Prerequisite{}
		}
		for i := range c.Rules {
			if c.Rules[i].ID == "" {
				c.Rules[i].ID = NewID()
			}
			if c.Rules[i].Clauses == nil {
				c.Rules[i].Clauses = []Clause{}
			}
			for j := range c.Rules[i].Clauses {
				cl := &c.Rules[i].Clauses[j]
				if cl.ID == "" {
					cl.ID = NewID()
				}
				for k := range cl.Values {
					cl.Values[k] = compact(cl.Values[k])
				}
			}
		}
	}
}

// remapUntouched keeps what the patch did not touch pointing at the same
// variations. Variations are referenced by index, so a patch that removes
// or reorders variations would silently change what the defaults and the
// environments it left alone serve; instead their indexes follow the
// variations' ids, and one that served a removed variation is refused.
// Defaults and environments the patch did change are the client's: they
// are taken as sent (and checked for range).
func remapUntouched(old, doc, next *Flag) error {
	moved := false
	m := make([]int, len(old.Variations))
	for i, v := range old.Variations {
		j, ok := next.VariationIndex(v.ID)
		if !ok {
			j = -1
		}
		m[i] = j
		moved = moved || j != i
	}
	if !moved {
		return nil
	}
	to := func(idx int, where string) (int, error) {
		if idx < 0 || idx >= len(m) {
			return idx, nil // out of range before; Check reports it
		}
		if m[idx] < 0 {
			return 0, fault.New(fault.Invalid, "field \"variations\": variation %q (index %d) is removed but still served by %s; change that in the same patch", old.Variations[idx].ID, idx, where)
		}
		return m[idx], nil
	}
	if doc.Defaults == next.Defaults {
		var err error
		if next.Defaults.OnVariation, err = to(next.Defaults.OnVariation, "the default on variation"); err != nil {
			return err
		}
		if next.Defaults.OffVariation, err = to(next.Defaults.OffVariation, "the default off variation"); err != nil {
			return err
		}
	}
	for _, k := range sortedKeys(next.Environments) {
		c, before := next.Environments[k], doc.Environments[k]
		if before == nil || !sameTargeting(before, c) {
			continue
		}
		if err := c.remap(k, m, to); err != nil {
			return err
		}
	}
	return nil
}

// remap renumbers one environment's variation indexes through to.
func (c *EnvConfig) remap(env string, m []int, to func(int, string) (int, error)) error {
	where := func(s string) string { return fmt.Sprintf("%s in environment %q", s, env) }
	for _, list := range []*[]Target{&c.Targets, &c.ContextTargets} {
		kept := (*list)[:0]
		for _, t := range *list {
			if t.Variation >= 0 && t.Variation < len(m) && m[t.Variation] < 0 && len(t.Values) == 0 {
				continue
			}
			v, err := to(t.Variation, where("individual targets"))
			if err != nil {
				return err
			}
			t.Variation = v
			kept = append(kept, t)
		}
		*list = kept
	}
	serve := func(v *VariationOrRoll, what string) error {
		if v.Variation != nil {
			n, err := to(*v.Variation, where(what))
			if err != nil {
				return err
			}
			v.Variation = &n
		}
		if v.Rollout != nil {
			kept := v.Rollout.Variations[:0]
			for _, w := range v.Rollout.Variations {
				if w.Variation >= 0 && w.Variation < len(m) && m[w.Variation] < 0 && w.Weight == 0 {
					continue
				}
				n, err := to(w.Variation, where(what))
				if err != nil {
					return err
				}
				w.Variation = n
				kept = append(kept, w)
			}
			v.Rollout.Variations = kept
		}
		return nil
	}
	for i := range c.Rules {
		if err := serve(&c.Rules[i].VariationOrRoll, fmt.Sprintf("rule %q", c.Rules[i].ID)); err != nil {
			return err
		}
	}
	if err := serve(&c.Fallthrough, "the default rule"); err != nil {
		return err
	}
	if c.OffVariation != nil {
		n, err := to(*c.OffVariation, where("the off variation"))
		if err != nil {
			return err
		}
		c.OffVariation = &n
	}
	return nil
}
