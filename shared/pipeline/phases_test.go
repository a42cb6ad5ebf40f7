package pipeline

import (
	"strings"
	"testing"
)

func TestPhaseOrder(t *testing.T) {
	// state builds a three-phase release from one letter per phase:
	// n not started, a active (started), c complete.
	state := func(s string) *Release {
		r := &Release{}
		for i, ch := range s {
			r.Phases = append(r.Phases, ReleasePhase{ID: string(rune('x' + i)), Name: "P" + string(rune('1'+i)),
				Started: ch != 'n', Complete: ch == 'c'})
		}
		return r
	}
	render := func(r *Release) string {
		var b strings.Builder
		for _, p := range r.Phases {
			b.WriteByte(map[string]byte{StatusNotStarted: 'n', StatusActive: 'a', StatusCompleted: 'c'}[p.Status()])
		}
		return b.String()
	}
	for _, c := range []struct {
		name, from string
		change     func(r *Release) error
		want       string // the state after, or the error's words
	}{
		{"the first phase completes without a start, and is started with it", "nnn", func(r *Release) error { return r.complete(0, 7) }, "cnn"},
		{"a second phase completes once the first is complete", "can", func(r *Release) error { return r.complete(1, 7) }, "ccn"},
		{"a third phase cannot complete while the second is not", "can", func(r *Release) error { return r.complete(2, 7) }, `"P2" (y) is complete`},
		{"completing a complete phase changes nothing", "ccn", func(r *Release) error { return r.complete(0, 7) }, "ccn"},
		{"a phase cannot reopen while a later one has started", "cca", func(r *Release) error { return r.reopen(1) }, `later phase "P3"`},
		{"a phase reopens when no later phase has started", "ccn", func(r *Release) error { return r.reopen(1) }, "can"},
		{"reopening an open phase changes nothing", "ann", func(r *Release) error { return r.reopen(0) }, "ann"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := state(c.from)
			err := c.change(r)
			wantErr := len(c.want) != len(c.from) // a state has one letter per phase
			switch {
			case wantErr && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("from %s: error %v, want one saying %s", c.from, err, c.want)
			case wantErr && render(r) != c.from:
				t.Errorf("from %s: a refused change left %s", c.from, render(r))
			case !wantErr && (err != nil || render(r) != c.want):
				t.Errorf("from %s: got %s (error %v), want %s", c.from, render(r), err, c.want)
			}
		})
	}
	t.Run("a completion records both dates once", func(t *testing.T) {
		r := state("nnn")
		_ = r.complete(0, 7)
		if p := r.Phases[0]; p.StartedDate != 7 || p.CompletionDate != 7 {
			t.Errorf("phase %+v", p)
		}
	})
}
