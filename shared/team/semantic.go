package team

// The semantic patch engine for teams: the reference's team instructions
// (updateName, updateDescription, add/remove/replace Members and
// CustomRoles), applied all or nothing through the one audited commit.
// Every error is a *semanticpatch.Error naming the index and kind of the
// instruction: 400 invalid_request for a malformed instruction (unknown
// kind, missing or ill-typed parameter, one flagplane does not model),
// 422 patch_failed for one that does not apply (a member or custom role
// that does not exist, a team that would break its limits).

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/resource"
	"github.com/flagplane/flagplane/shared/semanticpatch"
)

// instruction is how the engine runs one kind.
type instruction struct {
	action string
	run    func(r *runner, p *params) error
}

// instructions are the kinds the engine runs, with the reference's names
// and the policy action each performs.
var instructions = map[string]instruction{
	"updateName":         {action: "updateTeamName", run: (*runner).updateName},
	"updateDescription":  {action: "updateTeamDescription", run: (*runner).updateDescription},
	"addMembers":         {action: "updateTeamMembers", run: (*runner).addMembers},
	"removeMembers":      {action: "updateTeamMembers", run: (*runner).removeMembers},
	"replaceMembers":     {action: "updateTeamMembers", run: (*runner).replaceMembers},
	"addCustomRoles":     {action: "updateTeamCustomRoles", run: (*runner).addCustomRoles},
	"removeCustomRoles":  {action: "updateTeamCustomRoles", run: (*runner).removeCustomRoles},
	"replaceCustomRoles": {action: "updateTeamCustomRoles", run: (*runner).replaceCustomRoles},
}

// notModelled are the reference's other team instructions, refused with a
// 400 that says why rather than as unknown kinds.
var notModelled = map[string]string{
	"addPermissionGrants":    "permission grants (such as team maintainers) are not modelled by flagplane; give members rights through the team's custom roles",
	"removePermissionGrants": "permission grants (such as team maintainers) are not modelled by flagplane, so there are none to remove",
	"addRoleAttribute":       "role attributes are not modelled by flagplane",
	"updateRoleAttribute":    "role attributes are not modelled by flagplane",
	"removeRoleAttribute":    "role attributes are not modelled by flagplane",
	"replaceRoleAttributes":  "role attributes are not modelled by flagplane",
}

// Kinds returns the instruction kinds the engine runs, sorted.
func Kinds() []string {
	out := make([]string, 0, len(instructions))
	for k := range instructions {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// InstructionActions returns the policy actions the instructions perform,
// sorted and each once, for the authorization check. A kind the engine
// does not run is a 400 naming the instruction's index.
func InstructionActions(ins []semanticpatch.Instruction) ([]string, error) {
	var out []string
	for i, in := range ins {
		h, ok := instructions[in.Kind]
		if !ok {
			if why, known := notModelled[in.Kind]; known {
				return nil, semanticpatch.Invalid(i, in.Kind, "%s", why)
			}
			return nil, semanticpatch.Invalid(i, in.Kind, "kind %q is not a team instruction; supported kinds: %s", in.Kind, strings.Join(Kinds(), ", "))
		}
		if !slices.Contains(out, h.action) {
			out = append(out, h.action)
		}
	}
	sort.Strings(out)
	return out, nil
}

// params are the parameters of every team instruction kind; nil is absent.
type params struct {
	Value  *string   `json:"value"`
	Values *[]string `json:"values"`
}

// runner runs instructions on a working copy of a team.
type runner struct {
	t    *Team
	dir  directory
	i    int
	kind string
}

func (r *runner) invalid(format string, args ...any) error {
	return semanticpatch.Invalid(r.i, r.kind, format, args...)
}

func (r *runner) failed(format string, args ...any) error {
	return semanticpatch.Failed(r.i, r.kind, format, args...)
}

func (r *runner) value(p *params) (string, error) {
	if p.Value == nil {
		return "", r.invalid("field %q is required", semanticpatch.Field(r.i, "value"))
	}
	return *p.Value, nil
}

// values reads "values": required, at least one unless empty is allowed
// (a replace), each a well-formed key or id.
func (r *runner) values(p *params, emptyOK bool) ([]string, error) {
	if p.Values == nil {
		return nil, r.invalid("field %q is required", semanticpatch.Field(r.i, "values"))
	}
	values := *p.Values
	if len(values) == 0 && !emptyOK {
		return nil, r.invalid("field %q must hold at least one value", semanticpatch.Field(r.i, "values"))
	}
	for j, v := range values {
		if err := environment.ValidKey(semanticpatch.Field(r.i, fmt.Sprintf("values[%d]", j)), v); err != nil {
			return nil, err
		}
	}
	return values, nil
}

func (r *runner) updateName(p *params) error {
	v, err := r.value(p)
	if err != nil {
		return err
	}
	if err := environment.ValidName(semanticpatch.Field(r.i, "value"), v); err != nil {
		return err
	}
	r.t.Name = v
	return nil
}

func (r *runner) updateDescription(p *params) error {
	v, err := r.value(p)
	if err != nil {
		return err
	}
	if len(v) > 1024 {
		return r.invalid("field %q must be at most 1024 characters", semanticpatch.Field(r.i, "value"))
	}
	r.t.Description = v
	return nil
}

// members checks that every id names a member.
func (r *runner) members(ids []string) error {
	for j, id := range ids {
		if !r.dir.member[id] {
			return r.failed("member %q (%s) does not exist", id, semanticpatch.Field(r.i, fmt.Sprintf("values[%d]", j)))
		}
	}
	return nil
}

func (r *runner) addMembers(p *params) error {
	ids, err := r.values(p, false)
	if err != nil {
		return err
	}
	if err := r.members(ids); err != nil {
		return err
	}
	r.t.MemberIDs = unique(append(r.t.MemberIDs, ids...))
	return nil
}

func (r *runner) removeMembers(p *params) error {
	ids, err := r.values(p, false)
	if err != nil {
		return err
	}
	r.t.MemberIDs = slices.DeleteFunc(r.t.MemberIDs, func(id string) bool { return slices.Contains(ids, id) })
	return nil
}

func (r *runner) replaceMembers(p *params) error {
	ids, err := r.values(p, true)
	if err != nil {
		return err
	}
	if err := r.members(ids); err != nil {
		return err
	}
	r.t.MemberIDs = unique(ids)
	return nil
}

// roleKeys resolves custom role references (keys or _ids) to keys; one
// that names no role fails.
func (r *runner) roleKeys(refs []string) ([]string, error) {
	keys := make([]string, len(refs))
	for j, ref := range refs {
		key, ok := r.dir.roleKey[ref]
		if !ok {
			return nil, r.failed("custom role %q (%s) does not exist", ref, semanticpatch.Field(r.i, fmt.Sprintf("values[%d]", j)))
		}
		keys[j] = key
	}
	return keys, nil
}

func (r *runner) addCustomRoles(p *params) error {
	refs, err := r.values(p, false)
	if err != nil {
		return err
	}
	keys, err := r.roleKeys(refs)
	if err != nil {
		return err
	}
	r.t.CustomRoleKeys = unique(append(r.t.CustomRoleKeys, keys...))
	return nil
}

// removeCustomRoles removes the roles named by key or _id; a key the team
// holds is removed even when its role has since been deleted.
func (r *runner) removeCustomRoles(p *params) error {
	refs, err := r.values(p, false)
	if err != nil {
		return err
	}
	gone := slices.Clone(refs)
	for _, ref := range refs {
		if key, ok := r.dir.roleKey[ref]; ok {
			gone = append(gone, key)
		}
	}
	r.t.CustomRoleKeys = slices.DeleteFunc(r.t.CustomRoleKeys, func(k string) bool { return slices.Contains(gone, k) })
	return nil
}

func (r *runner) replaceCustomRoles(p *params) error {
	refs, err := r.values(p, true)
	if err != nil {
		return err
	}
	keys, err := r.roleKeys(refs)
	if err != nil {
		return err
	}
	r.t.CustomRoleKeys = unique(keys)
	return nil
}

// references returns the custom role references the instructions name
// and the member ids they add, to be resolved before they run (a removed
// member need not exist). A patch naming more than a team may hold is a
// 400, before anything is read.
func references(ins []semanticpatch.Instruction) (roleRefs, memberIDs []string, err error) {
	for i, in := range ins {
		var p params
		if err := semanticpatch.Decode(in, i, &p); err != nil {
			return nil, nil, err
		}
		if p.Values == nil {
			continue
		}
		switch {
		case in.Kind == "addMembers" || in.Kind == "replaceMembers":
			memberIDs = append(memberIDs, *p.Values...)
		case instructions[in.Kind].action == "updateTeamCustomRoles":
			roleRefs = append(roleRefs, *p.Values...)
		}
	}
	roleRefs, memberIDs = unique(roleRefs), unique(memberIDs)
	if len(memberIDs) > MaxMembers {
		return nil, nil, fault.New(fault.Invalid, "the instructions name %d members; a team holds at most %d", len(memberIDs), MaxMembers)
	}
	if len(roleRefs) > MaxCustomRoles {
		return nil, nil, fault.New(fault.Invalid, "the instructions name %d custom roles; a team holds at most %d", len(roleRefs), MaxCustomRoles)
	}
	return roleRefs, memberIDs, nil
}

// apply runs the instructions in order on a copy of t, checking the team
// after each. Either all apply and the result is returned with the
// actions performed, or the error names the failing instruction.
func apply(t *Team, ins []semanticpatch.Instruction, dir directory) (*Team, []string, error) {
	actions, err := InstructionActions(ins)
	if err != nil {
		return nil, nil, err
	}
	work := *t
	work.CustomRoleKeys, work.MemberIDs = slices.Clone(t.CustomRoleKeys), slices.Clone(t.MemberIDs)
	r := &runner{t: &work, dir: dir}
	for i, in := range ins {
		r.i, r.kind = i, in.Kind
		var p params
		if err := semanticpatch.Decode(in, i, &p); err != nil {
			return nil, nil, err
		}
		if err := instructions[in.Kind].run(r, &p); err != nil {
			return nil, nil, semanticpatch.At(err, i, in.Kind, false)
		}
		if err := work.validate(); err != nil {
			return nil, nil, semanticpatch.At(err, i, in.Kind, true)
		}
	}
	work.CustomRoleKeys, work.MemberIDs = nonNil(work.CustomRoleKeys), nonNil(work.MemberIDs)
	return &work, actions, nil
}

// semanticRetries is how often a semantic patch that lost a race is run
// again on the team as it now is: its instructions are relative, so a
// rerun means the same as the first run.
const semanticRetries = 3

// SemanticPatch applies a semantic patch to a team, all or nothing, on
// the version it read; the audit entry carries the comment and no delta.
func (s *Service) SemanticPatch(ctx context.Context, key string, sp semanticpatch.Patch) (*Team, error) {
	if _, err := InstructionActions(sp.Instructions); err != nil {
		return nil, err
	}
	roleRefs, memberIDs, err := references(sp.Instructions)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		t, err := s.semanticOnce(ctx, key, sp, roleRefs, memberIDs)
		if err == nil || !fault.Is(err, fault.OptimisticLock) || attempt == semanticRetries {
			return t, err
		}
		time.Sleep(time.Duration(rand.IntN(5*(attempt+1))) * time.Millisecond)
	}
}

func (s *Service) semanticOnce(ctx context.Context, key string, sp semanticpatch.Patch, roleRefs, memberIDs []string) (*Team, error) {
	old, err := s.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	dir, err := s.lookup(ctx, roleRefs, memberIDs)
	if err != nil {
		return nil, err
	}
	next, actions, err := apply(old, sp.Instructions, dir)
	if err != nil {
		return nil, err
	}
	if len(patch.ChangedFields(old, next, patchable)) == 0 {
		return old, nil
	}
	return s.update(ctx, old, next, resource.Change{Actions: actions, Comment: sp.Comment})
}
