package approval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/flagplane/flagplane/shared/aiconfig"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/semanticpatch"
	"github.com/flagplane/flagplane/shared/store"
)

// Resource kinds an approval request acts on (the last part of resourceId).
const (
	KindFlag     = "flag"
	KindAIConfig = "aiconfig"
)

// UpdateAIConfigVariation is the one instruction of an AI Config approval
// request. The reference defines no instruction kinds for AI Configs, so
// this one carries exactly the body of patchAIConfigVariation beside
// variationKey: {"kind": "updateAIConfigVariation", "variationKey": "v",
// "name": "...", "messages": [...], "modelConfigKey": "...", ...}.
const UpdateAIConfigVariation = "updateAIConfigVariation"

// Target is what a resourceId names: a flag, an AI Config or a segment,
// in one environment of a project.
type Target struct {
	Kind, ProjectKey, EnvironmentKey, Key string
}

// ParseTarget reads `proj/<p>:env/<e>:flag/<f>`,
// `proj/<p>:env/<e>:aiconfig/<configKey>` or
// `proj/<p>:env/<e>:segment/<segmentKey>`; anything else is a 400.
func ParseTarget(id string) (Target, error) {
	bad := fault.New(fault.Invalid, "field \"resourceId\" must name a flag, an AI Config or a segment in an environment, as "+
		"proj/<projectKey>:env/<environmentKey>:flag/<flagKey>, proj/<projectKey>:env/<environmentKey>:aiconfig/<configKey> or "+
		"proj/<projectKey>:env/<environmentKey>:segment/<segmentKey>, not %q", id)
	parts := strings.Split(id, ":")
	if len(parts) != 3 {
		return Target{}, bad
	}
	kind, key, ok := strings.Cut(parts[2], "/")
	if !ok || (kind != KindFlag && kind != KindAIConfig && kind != KindSegment) || environment.ValidKey("resourceId", key) != nil {
		return Target{}, bad
	}
	t := Target{Kind: kind, Key: key}
	for i, want := range []string{"proj/", "env/"} {
		k, ok := strings.CutPrefix(parts[i], want)
		if !ok || environment.ValidKey("resourceId", k) != nil {
			return Target{}, bad
		}
		if i == 0 {
			t.ProjectKey = k
		} else {
			t.EnvironmentKey = k
		}
	}
	return t, nil
}

// SetAIConfigs lets requests act on AI Configs (resourceId kind aiconfig).
func (s *Service) SetAIConfigs(a *aiconfig.Service) { s.aiconfigs = a }

// aiVariationChange is an updateAIConfigVariation instruction read.
type aiVariationChange struct {
	VariationKey string
	Patch        aiconfig.VariationPatch
}

// aiChange reads the one updateAIConfigVariation instruction of an AI
// Config request; errors name the instruction and field (400).
func aiChange(ins []semanticpatch.Instruction) (aiVariationChange, error) {
	if len(ins) != 1 {
		return aiVariationChange{}, fault.New(fault.Invalid, "field \"instructions\": an approval request for an AI Config takes exactly one %s instruction, not %d instructions", UpdateAIConfigVariation, len(ins))
	}
	if ins[0].Kind != UpdateAIConfigVariation {
		return aiVariationChange{}, fault.New(fault.Invalid, "field \"instructions[0].kind\": an approval request for an AI Config takes the kind %s, not %q", UpdateAIConfigVariation, ins[0].Kind)
	}
	var body struct {
		Kind         string `json:"kind"`
		VariationKey string `json:"variationKey"`
		aiconfig.VariationPatch
	}
	dec := json.NewDecoder(bytes.NewReader(ins[0].Raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return aiVariationChange{}, fault.Wrap(err, fault.Invalid, "field \"instructions[0]\": %s takes variationKey and the fields of a variation update: %v", UpdateAIConfigVariation, err)
	}
	if body.VariationKey == "" {
		return aiVariationChange{}, fault.New(fault.Invalid, "field \"instructions[0].variationKey\" is required")
	}
	return aiVariationChange{VariationKey: body.VariationKey, Patch: body.VariationPatch}, nil
}

// checkAI validates an AI Config request's instruction against the
// variation as it is now.
func (s *Service) checkAI(ctx context.Context, projectKey, configKey string, ins []semanticpatch.Instruction) error {
	if s.aiconfigs == nil {
		return fault.New(fault.Invalid, "field \"resourceId\": approval requests for AI Configs are not available")
	}
	c, err := aiChange(ins)
	if err != nil {
		return err
	}
	if err := s.aiconfigs.CheckVariationPatch(ctx, projectKey, configKey, c.VariationKey, c.Patch); err != nil {
		return asInstruction(err)
	}
	return nil
}

// asInstruction names the instruction in a 400 or 404 from the AI Config
// service, as a 400: at creation a change that does not apply is a bad request.
func asInstruction(err error) error {
	if fault.Is(err, fault.Invalid) || fault.Is(err, fault.NotFound) {
		return fault.Wrap(err, fault.Invalid, "field \"instructions[0]\" does not apply: %s", fault.MessageOf(err))
	}
	return err
}

// aiConflicts is Conflicts for an AI Config request.
func (s *Service) aiConflicts(ctx context.Context, r *Request) ([]Conflict, error) {
	err := s.checkAI(ctx, r.ProjectKey, r.AIConfigKey, r.Instructions)
	switch {
	case err == nil:
		return []Conflict{}, nil
	case fault.Is(err, fault.Invalid):
		return []Conflict{{Instruction: r.Instructions[0], Reason: fault.MessageOf(err)}}, nil
	}
	return nil, err
}

// runAI applies an AI Config request through the AI Config service's
// audited path, skipping the review check once, in the same transaction as
// put (the request marked completed).
func (s *Service) runAI(ctx context.Context, r, next *Request, put store.Write) (*Request, error) {
	c, err := aiChange(r.Instructions)
	if err == nil && s.aiconfigs == nil {
		err = fault.New(fault.Invalid, "approval requests for AI Configs are not available")
	}
	if err == nil {
		_, err = s.aiconfigs.PatchVariationWith(aiconfig.WithoutReviewCheck(ctx), r.ProjectKey, r.AIConfigKey, c.VariationKey, c.Patch, put)
	}
	switch {
	case err == nil:
		return next, nil
	case fault.Is(err, fault.Conflict), fault.Is(err, fault.OptimisticLock):
		return nil, fault.Wrap(err, fault.Conflict, "approval request %q was applied or changed by another request", r.ID)
	case fault.Is(err, fault.Invalid), fault.Is(err, fault.NotFound):
		return s.fail(ctx, r, fault.MessageOf(err))
	}
	return nil, fmt.Errorf("apply approval request %s to AI Config %q: %w", r.ID, r.AIConfigKey, err)
}
