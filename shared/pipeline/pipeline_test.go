package pipeline

import "testing"

func TestReleaseProgress(t *testing.T) {
	phase := func(id string, done bool, at int64) ReleasePhase {
		return ReleasePhase{ID: id, Complete: done, CompletionDate: at}
	}
	for _, c := range []struct {
		name        string
		phases      []ReleasePhase
		active      string
		completedAt int64
	}{
		{"a new release is active on its first phase", []ReleasePhase{phase("a", false, 0), phase("b", false, 0)}, "a", 0},
		{"a release moves to the first phase not complete", []ReleasePhase{phase("a", true, 5), phase("b", false, 0)}, "b", 0},
		{"a release with every phase complete is completed when its last phase was", []ReleasePhase{phase("a", true, 5), phase("b", true, 9)}, "", 9},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &Release{Phases: c.phases}
			if got := r.ActivePhase(); got != c.active {
				t.Errorf("ActivePhase %q, want %q", got, c.active)
			}
			if got := r.CompletedAt(); got != c.completedAt {
				t.Errorf("CompletedAt %d, want %d", got, c.completedAt)
			}
		})
	}
}

func TestListQueryMatches(t *testing.T) {
	p := &Pipeline{Key: "standard", Name: "Standard rollout", Description: "Test then Production",
		Phases: []Phase{{Audiences: []Audience{{EnvironmentKey: "test"}}}, {Audiences: []Audience{{EnvironmentKey: "production"}}}}}
	for _, c := range []struct {
		name string
		q    ListQuery
		want bool
	}{
		{"no filter keeps every pipeline", ListQuery{}, true},
		{"query matches the name ignoring case", ListQuery{Query: "ROLLOUT"}, true},
		{"query matches the description", ListQuery{Query: "then prod"}, true},
		{"query that matches nothing drops the pipeline", ListQuery{Query: "canary"}, false},
		{"env keeps a pipeline with an audience there", ListQuery{Env: "production"}, true},
		{"env drops a pipeline without one", ListQuery{Env: "staging"}, false},
		{"both must match", ListQuery{Query: "standard", Env: "staging"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.q.matches(p); got != c.want {
				t.Errorf("matches %v, want %v", got, c.want)
			}
		})
	}
}
