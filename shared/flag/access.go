package flag

import (
	"cmp"
	"sort"

	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/semanticpatch"
)

// EnvAction is a policy action and the environment it acts in. Env is ""
// for a change to the flag's settings (name, tags, variations, ...), which
// act in every environment and are authorized on env/*, as the reference does.
type EnvAction struct {
	Env    string
	Action string
}

// EnvActions are the actions `_access` reports on a flag's targeting in
// one environment: those a change to that environment alone performs.
var EnvActions = []string{"updateOn", "updateTargets", "updateRules", "updateFlagRuleDescription",
	"updateFallthrough", "updateOffVariation", "updatePrerequisites", "updateTrackEvents", "updateExpiringTargets",
	"createApprovalRequest", "reviewApprovalRequest", "applyApprovalRequest", "deleteApprovalRequest"}

// PatchEnvActions returns what a JSON patch of a flag performs, each
// action with the environment its path names, once each and sorted. It is
// the rights check made before the flag is read, so a replace of a path
// that cannot be patched is left out: Patch takes it only when it changes
// nothing (patch.WithoutNoOps) and refuses it otherwise. A patch of
// nothing else is refused here.
func PatchEnvActions(p patch.Patch) ([]EnvAction, error) {
	var out []EnvAction
	var refused error
	for _, op := range p.Ops {
		acts, err := opEnvActions(op)
		switch {
		case err != nil && op.Op == "replace":
			refused = cmp.Or(refused, err)
		case err != nil:
			return nil, err
		default:
			out = append(out, acts...)
		}
	}
	if len(out) == 0 && refused != nil {
		return nil, refused
	}
	return uniqueSorted(out), nil
}

// opEnvActions returns what one patch operation performs.
func opEnvActions(op patch.Op) ([]EnvAction, error) {
	var out []EnvAction
	for _, path := range (patch.Patch{Ops: []patch.Op{op}}).Touched() {
		action, err := pathAction(path)
		if err != nil {
			return nil, err
		}
		env := ""
		if seg := patch.Segments(path); seg[0] == "environments" {
			env = seg[1]
		}
		out = append(out, EnvAction{Env: env, Action: action})
	}
	return out, nil
}

// InstructionEnvActions returns what the instructions perform: the
// environment-scoped ones in envKey, the others on the flag's settings.
func InstructionEnvActions(envKey string, ins []semanticpatch.Instruction) ([]EnvAction, error) {
	if _, err := InstructionActions(envKey, ins); err != nil {
		return nil, err
	}
	out := make([]EnvAction, 0, len(ins))
	for _, in := range ins {
		h := instructions[in.Kind]
		ea := EnvAction{Action: h.action}
		if h.env {
			ea.Env = envKey
		}
		out = append(out, ea)
	}
	return uniqueSorted(out), nil
}

func uniqueSorted(in []EnvAction) []EnvAction {
	sort.Slice(in, func(i, j int) bool {
		if in[i].Env != in[j].Env {
			return in[i].Env < in[j].Env
		}
		return in[i].Action < in[j].Action
	})
	out := in[:0]
	for i, ea := range in {
		if i == 0 || ea != in[i-1] {
			out = append(out, ea)
		}
	}
	return out
}
