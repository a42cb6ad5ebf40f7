package aiconfig

import (
	"testing"

	"github.com/flagplane/flagplane/shared/fault"
)

func TestLatestKeepsTheHighestVersionOfEachVariation(t *testing.T) {
	got := latest([]*Variation{
		{Key: "b", Version: 1}, {Key: "a", Version: 1}, {Key: "b", Version: 3}, {Key: "a", Version: 2}, {Key: "b", Version: 2},
	})
	if len(got) != 2 || got[0].Key != "a" || got[0].Version != 2 || got[1].Key != "b" || got[1].Version != 3 {
		t.Errorf("want a@2 then b@3, got %+v %+v", got[0], got[len(got)-1])
	}
	if got := latest(nil); got == nil || len(got) != 0 {
		t.Errorf("no versions should give an empty list, got %v", got)
	}
}

func TestApplyState(t *testing.T) {
	yes, no := true, false
	str := func(s string) *string { return &s }
	cases := []struct {
		name    string
		from    string
		patch   VariationPatch
		want    string
		invalid bool
	}{
		{name: "archiving records when", from: StatePublished, patch: VariationPatch{State: str(StateArchived)}, want: StateArchived},
		{name: "published true publishes", from: StateArchived, patch: VariationPatch{Published: &yes}, want: StatePublished},
		{name: "published false archives", from: StatePublished, patch: VariationPatch{Published: &no}, want: StateArchived},
		{name: "state and published agreeing are taken", from: StateArchived, patch: VariationPatch{State: str(StatePublished), Published: &yes}, want: StatePublished},
		{name: "state and published disagreeing are refused", from: StatePublished, patch: VariationPatch{State: str(StateArchived), Published: &yes}, invalid: true},
		{name: "an unknown state is refused", from: StatePublished, patch: VariationPatch{State: str("draft")}, invalid: true},
		{name: "no state keeps the state", from: StateArchived, patch: VariationPatch{}, want: StateArchived},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := &Variation{State: c.from, CreatedAt: 42}
			err := (&Service{}).applyState(v, c.patch)
			if c.invalid {
				if !fault.Is(err, fault.Invalid) {
					t.Fatalf("want invalid_request, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v.State != c.want {
				t.Errorf("state %q, want %q", v.State, c.want)
			}
			if c.want != c.from {
				at := v.PublishedAt
				if c.want == StateArchived {
					at = v.ArchivedAt
				}
				if at == nil || *at != 42 {
					t.Errorf("the time of the change is not the version's createdAt: %v", at)
				}
			}
		})
	}
}
