package evaluation_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/audit/audittest"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/evaluation"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/store"
)

// anyEnv finds every environment, for the segment service.
type anyEnv struct{}

func (anyEnv) Get(_ context.Context, projectKey, envKey string) (*environment.Environment, error) {
	return &environment.Environment{ProjectKey: projectKey, Key: envKey}, nil
}

// members is a big segment store: context keys included in and excluded
// from "<segment>.g<generation>"; the key "broken" fails to read.
type members struct {
	included, excluded map[string]bool
	asked              []string
}

func (m *members) Membership(_ context.Context, projectKey, envKey, segmentKey string, generation int, contextKey string) (bool, bool, error) {
	ref := fmt.Sprintf("%s/%s/%s.g%d/%s", projectKey, envKey, segmentKey, generation, contextKey)
	m.asked = append(m.asked, ref)
	if contextKey == "broken" {
		return false, false, errors.New("store down")
	}
	return m.included[ref], m.excluded[ref], nil
}

// segmentSetup stores project p with a list segment "listed" (u5 in) and
// a big segment "big" in production, and flags "by-list", "by-big" and
// "by-big-too" whose one rule matches one, serving true; all fall through
// to false.
func segmentSetup(tb testing.TB) store.Table {
	tb.Helper()
	now := func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }
	a := audittest.New(tb, now)
	ctx := context.Background()
	if _, _, err := project.NewService(a.Table, a.Log, now).Create(ctx, project.Input{Key: ptr("p"), Name: ptr("P")}); err != nil {
		tb.Fatal(err)
	}
	segs := segment.NewService(a.Table, a.Log, anyEnv{}, now)
	if _, err := segs.Create(ctx, "p", "production", segment.Input{Key: "listed", Name: "Listed"}); err != nil {
		tb.Fatal(err)
	}
	if _, err := segs.Create(ctx, "p", "production", segment.Input{Key: "big", Name: "Big", Unbounded: true}); err != nil {
		tb.Fatal(err)
	}
	if _, err := segs.Patch(ctx, "p", "production", "listed", mustParse(tb, `[{"op":"replace","path":"/included","value":["u5"]}]`)); err != nil {
		tb.Fatal(err)
	}
	flags := flag.NewService(a.Table, a.Log, now)
	for key, seg := range map[string]string{"by-list": "listed", "by-big": "big", "by-big-too": "big"} {
		if _, err := flags.Create(ctx, "p", flag.Input{Key: ptr(key), Name: ptr(key)}); err != nil {
			tb.Fatal(err)
		}
		ops := `[{"op":"replace","path":"/environments/production/on","value":true},
			{"op":"replace","path":"/environments/production/fallthrough","value":{"variation":1}},
			{"op":"add","path":"/environments/production/rules/-","value":{"variation":0,"clauses":[{"attribute":"","op":"segmentMatch","values":["` + seg + `"]}]}}]`
		if _, err := flags.Patch(ctx, "p", key, mustParse(tb, ops)); err != nil {
			tb.Fatalf("patch %s: %v", key, err)
		}
	}
	return a.Table
}

func mustParse(tb testing.TB, raw string) patch.Patch {
	tb.Helper()
	p, err := patch.Parse([]byte(raw))
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func TestEvaluateMatchesSegments(t *testing.T) {
	table := segmentSetup(t)
	ctx := context.Background()
	m := &members{
		included: map[string]bool{"p/production/big.g1/u1": true, "p/production/big.g2/u2": true},
		excluded: map[string]bool{"p/production/big.g1/u3": true},
	}
	withMembers := evaluation.NewService(table)
	withMembers.SetMemberships(m)
	without := evaluation.NewService(table)
	cases := []struct {
		name string
		svc  *evaluation.Service
		user string
		want string
	}{
		{"a listed key matches its list segment's rule", without, "u5", "by-big=false/FALLTHROUGH by-big-too=false/FALLTHROUGH by-list=true/RULE_MATCH"},
		{"a member of the big segment's generation matches", withMembers, "u1", "by-big=true/RULE_MATCH by-big-too=true/RULE_MATCH by-list=false/FALLTHROUGH"},
		{"a member of another generation does not", withMembers, "u2", "by-big=false/FALLTHROUGH by-big-too=false/FALLTHROUGH by-list=false/FALLTHROUGH"},
		{"an excluded member does not", withMembers, "u3", "by-big=false/FALLTHROUGH by-big-too=false/FALLTHROUGH by-list=false/FALLTHROUGH"},
		{"a failed membership read matches nothing and is no error", withMembers, "broken", "by-big=false/FALLTHROUGH by-big-too=false/FALLTHROUGH by-list=false/FALLTHROUGH"},
		{"without memberships a big segment matches nobody, as an SDK without a big segment store", without, "u1", "by-big=false/FALLTHROUGH by-big-too=false/FALLTHROUGH by-list=false/FALLTHROUGH"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := c.svc.Evaluate(ctx, "p", "production", user(c.user), evaluation.Query{Limit: -1})
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(res); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
	t.Run("memberships are read only for the big segment, in its environment and generation", func(t *testing.T) {
		for _, ref := range m.asked {
			if !strings.HasPrefix(ref, "p/production/big.g1/") {
				t.Fatalf("asked %q", ref)
			}
		}
		if len(m.asked) == 0 {
			t.Fatal("no membership was read")
		}
	})
	t.Run("a request reads a key's membership once, whatever number of flags match the big segment", func(t *testing.T) {
		m.asked = nil
		if _, err := withMembers.Evaluate(ctx, "p", "production", user("u1"), evaluation.Query{Limit: -1}); err != nil {
			t.Fatal(err)
		}
		if len(m.asked) != 1 {
			t.Fatalf("read %v, want one read", m.asked)
		}
	})
}
