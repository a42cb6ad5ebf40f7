package segment

import (
	"context"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/semanticpatch"
)

// InstructionActions returns the actions the segment instructions perform,
// each once, or a 400 naming the first instruction that is not one.
func InstructionActions(ins []semanticpatch.Instruction) ([]string, error) {
	return nil, fault.New(fault.NotImplemented, "segment semantic patch is not built yet")
}

// SemanticPatch applies a semantic patch to a segment: every instruction
// or none, through the segment's audited update.
func (s *Service) SemanticPatch(ctx context.Context, projectKey, envKey, key string, sp semanticpatch.Patch) (*Segment, error) {
	return nil, fault.New(fault.NotImplemented, "segment semantic patch is not built yet")
}
