package infra

import (
	"strings"
	"testing"
)

func TestStackBigSegmentsRefresh(t *testing.T) {
	// GIVEN the stack synthesized with default props
	tpl := defaultTemplate(t)
	fns := tpl.functions(t)
	id, ok := fns["big-segments-refresh"]
	if !ok {
		t.Fatal("no big-segments-refresh function")
	}
	// THEN the refresh runs every minute, inside the SDKs' two-minute staleness window
	t.Run("an EventBridge rule runs it every minute", func(t *testing.T) {
		found := 0
		for _, rule := range tpl.ofType("AWS::Events::Rule") {
			p := tpl.Resources[rule].Properties
			for _, target := range list(p["Targets"]) {
				if arn, _ := strings.CutSuffix(render(prop(target.(map[string]any), "Arn")), ".Arn"); arn == id {
					found++
					if p["ScheduleExpression"] != "rate(1 minute)" || p["State"] != "ENABLED" {
						t.Errorf("rule %s: %v %v", rule, p["ScheduleExpression"], p["State"])
					}
				}
			}
		}
		if found != 1 {
			t.Errorf("%d rules target the refresh, want 1", found)
		}
	})
	t.Run("it may read and write the table and nothing else: no queue, no bucket, no other service", func(t *testing.T) {
		grants := grantsOf(t, tpl)["big-segments-refresh"]
		if len(grants) == 0 {
			t.Fatal("no grants found for big-segments-refresh")
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
			t.Error("may not put items, which the status and the sync lease need")
		}
	})
}
