package flag

import (
	"slices"
	"testing"
)

// `_access` must report every action a change of a flag can need, each at
// the level it is decided on, or the console would offer what the API
// refuses, or the reverse.
func TestAccessReportsEveryActionAChangeNeeds(t *testing.T) {
	type need struct{ from, action string }
	var settings, targeting []need
	for field, a := range patchable {
		settings = append(settings, need{"JSON patch of /" + field, a})
	}
	for field, a := range envPatchable {
		targeting = append(targeting, need{"JSON patch of /environments/<env>/" + field, a})
	}
	targeting = append(targeting, need{"JSON patch of a rule's description", "updateFlagRuleDescription"})
	for kind, in := range instructions {
		n := need{"instruction " + kind, in.action}
		if in.env {
			targeting = append(targeting, n)
		} else {
			settings = append(settings, n)
		}
	}
	for _, c := range []struct {
		name     string
		needs    []need
		reported []string
	}{
		{"the flag's _access reports every action on its settings", settings, Actions},
		{"each environment's _access reports every targeting action", targeting, EnvActions},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, n := range c.needs {
				if !slices.Contains(c.reported, n.action) {
					t.Errorf("%s needs %s, which is not reported", n.from, n.action)
				}
			}
		})
	}
}
