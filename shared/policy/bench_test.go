package policy

import (
	"fmt"
	"testing"
)

// twentyStatements is a realistic large role: 19 statements that do not
// apply to the benchmark's flag (other projects, other kinds, other actions)
// and, last, one that does, so every statement is examined.
func twentyStatements() []Grant {
	var stmts []Statement
	for i := range 9 {
		stmts = append(stmts, Statement{Resources: []string{fmt.Sprintf("proj/team-%d-*:env/*:flag/*", i), fmt.Sprintf("proj/team-%d-*:env/*:segment/*", i)}, Actions: []string{"*"}, Effect: Allow})
	}
	for i := range 5 {
		stmts = append(stmts, Statement{Resources: []string{"proj/*:env/*;critical:flag/*"}, Actions: []string{fmt.Sprintf("delete%d*", i)}, Effect: Deny})
	}
	for range 5 {
		stmts = append(stmts, Statement{Resources: []string{"webhook/*", "proj/*:release-pipeline/*"}, Actions: []string{"update*"}, Effect: Allow})
	}
	stmts = append(stmts, Statement{Resources: []string{"proj/shop:env/*;critical,production:flag/new-*"}, Actions: []string{"update*", "createFlag"}, Effect: Allow})
	return []Grant{{RoleName: "big", Statements: stmts}}
}

func BenchmarkEvaluate(b *testing.B) {
	grants := twentyStatements()
	if n := len(grants[0].Statements); n != 20 {
		b.Fatalf("%d statements, want 20", n)
	}
	p, err := Compile(grants)
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name    string
		action  string
		allowed bool
	}{
		{"compiled/allowed by the last statement", "updateOn", true},
		{"compiled/implicitly denied", "archiveFlag", false},
		{"compiled/explicitly denied", "delete3Flag", false},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if p.Evaluate(shopFlag, c.action).Allowed != c.allowed {
					b.Fatal("wrong decision")
				}
			}
		})
	}
	b.Run("compiled/access for 10 actions", func(b *testing.B) {
		actions := []string{"updateOn", "updateName", "updateTags", "updateTargets", "updateRules", "deleteFlag", "createFlag", "archiveFlag", "cloneFlag", "updateFallthrough"}
		b.ReportAllocs()
		for b.Loop() {
			_ = p.Access(shopFlag, actions)
		}
	})
	b.Run("uncompiled/allowed by the last statement", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = Evaluate(grants, shopFlag, "updateOn")
		}
	})
}
