package infra

import (
	"strings"
	"testing"
)

func TestStackUsageRollup(t *testing.T) {
	// GIVEN the stack synthesized with default props
	tpl := defaultTemplate(t)
	fns := tpl.functions(t)
	id, ok := fns["usage-rollup"]
	if !ok {
		t.Fatal("no usage-rollup function")
	}
	// THEN the rollup runs hourly at :05 with Lambda's full budget
	t.Run("an EventBridge rule runs it hourly at five past", func(t *testing.T) {
		found := 0
		for _, rule := range tpl.ofType("AWS::Events::Rule") {
			p := tpl.Resources[rule].Properties
			for _, target := range list(p["Targets"]) {
				if arn, _ := strings.CutSuffix(render(prop(target.(map[string]any), "Arn")), ".Arn"); arn == id {
					found++
					if p["ScheduleExpression"] != "cron(5 * * * ? *)" || p["State"] != "ENABLED" {
						t.Errorf("rule %s: %v %v", rule, p["ScheduleExpression"], p["State"])
					}
				}
			}
		}
		if found != 1 {
			t.Errorf("%d rules target the rollup, want 1", found)
		}
	})
	t.Run("its timeout is fifteen minutes", func(t *testing.T) {
		if got := tpl.Resources[id].Properties["Timeout"]; got != UsageRollupTimeout.Seconds() || got != float64(900) {
			t.Errorf("timeout %v", got)
		}
	})
	t.Run("it may read and write the table and nothing else: no queue, no other service", func(t *testing.T) {
		grants := grantsOf(t, tpl)["usage-rollup"]
		if len(grants) == 0 {
			t.Fatal("no grants found for usage-rollup")
		}
		writes := false
		for g := range grants {
			switch {
			case strings.HasPrefix(g.Action, "dynamodb:"):
				writes = writes || g.Action == "dynamodb:PutItem"
			case strings.HasPrefix(g.Action, "logs:"):
			default:
				t.Errorf("may %s", g)
			}
		}
		if !writes {
			t.Error("may not put items, which the rollup needs")
		}
	})
}
