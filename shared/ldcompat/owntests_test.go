package ldcompat_test

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flagplane/flagplane/shared/catalog"
)

// Some groups (code-refs, usage, insights) are driven by a test of their
// own, on a server of their own, which keeps its own coverage list.

// groupOps are the ids of a catalog group's operations, sorted.
func groupOps(group string) []string {
	var ids []string
	for _, op := range catalog.All() {
		if op.Group == group {
			ids = append(ids, op.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// leaveToOwnTest names every operation of group in notInClient with why,
// so the main test neither drives nor counts them.
func leaveToOwnTest(group, why string) {
	for _, id := range groupOps(group) {
		notInClient[id] = why
	}
}

// ownCheck fails a test of its own with every call's failures, the other
// problems it found (deviations), and each of ops no call drove, a line
// each by operation; width aligns the operation column.
func (tr *tier) ownCheck(width int, ops []string, other ...string) {
	tr.t.Helper()
	var problems []string
	for _, c := range tr.calls {
		for _, f := range c.failures {
			problems = append(problems, fmt.Sprintf("  %-*s %s: %s", width, c.op, c.what, f))
		}
	}
	problems = append(problems, other...)
	for _, id := range ops {
		if !tr.driven[id] {
			problems = append(problems, fmt.Sprintf("  %-*s coverage: no call drives it", width, id))
		}
	}
	if len(problems) > 0 {
		tr.t.Errorf("%d failures, by operation:\n%s", len(problems), strings.Join(problems, "\n"))
	}
}
