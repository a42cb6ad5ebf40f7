package infra

import "testing"

func TestStackUsageRollup(t *testing.T) {
	// GIVEN the stack synthesized with default props
	tpl := defaultTemplate(t)
	// THEN the rollup runs hourly at five past, puts the rolled-up items,
	// and has Lambda's full budget
	id := checkScheduledWorker(t, tpl, "usage-rollup", "cron(5 * * * ? *)")
	t.Run("its timeout is fifteen minutes", func(t *testing.T) {
		if got := tpl.Resources[id].Properties["Timeout"]; got != UsageRollupTimeout.Seconds() || got != float64(900) {
			t.Errorf("timeout %v", got)
		}
	})
}
