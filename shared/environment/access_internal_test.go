package environment

import (
	"slices"
	"testing"
)

// An environment's `_access` reports every action a patch of it can need.
func TestAccessReportsEveryPatchAction(t *testing.T) {
	for field, a := range patchable {
		if !slices.Contains(Actions, a) {
			t.Errorf("a patch of /%s needs %s, which Actions does not report", field, a)
		}
	}
}
