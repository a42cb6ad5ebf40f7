package infra

import (
	"strings"
	"testing"
)

// checkScheduledWorker asserts the stack of a scheduled worker that keeps
// state in the table: one enabled EventBridge rule runs it on schedule,
// and it may read and write the table and write logs, nothing else (no
// queue, no bucket, no other service). It returns the function's logical id.
func checkScheduledWorker(t *testing.T, tpl *template, name, schedule string) string {
	t.Helper()
	id, ok := tpl.functions(t)[name]
	if !ok {
		t.Fatalf("no %s function", name)
	}
	t.Run("an EventBridge rule runs it on "+schedule, func(t *testing.T) {
		found := 0
		for _, rule := range tpl.ofType("AWS::Events::Rule") {
			p := tpl.Resources[rule].Properties
			for _, target := range list(p["Targets"]) {
				if arn, _ := strings.CutSuffix(render(prop(target.(map[string]any), "Arn")), ".Arn"); arn == id {
					found++
					if p["ScheduleExpression"] != schedule || p["State"] != "ENABLED" {
						t.Errorf("rule %s: %v %v", rule, p["ScheduleExpression"], p["State"])
					}
				}
			}
		}
		if found != 1 {
			t.Errorf("%d rules target %s, want 1", found, name)
		}
	})
	t.Run("it may read and write the table and nothing else: no queue, no bucket, no other service", func(t *testing.T) {
		grants := grantsOf(t, tpl)[name]
		if len(grants) == 0 {
			t.Fatalf("no grants found for %s", name)
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
			t.Error("may not put items")
		}
	})
	return id
}
