package infra

import "testing"

func TestStackBigSegmentsRefresh(t *testing.T) {
	// GIVEN the stack synthesized with default props
	tpl := defaultTemplate(t)
	// THEN the refresh runs every minute, inside the SDKs' two-minute
	// staleness window, and puts items (the status and the sync lease)
	checkScheduledWorker(t, tpl, "big-segments-refresh", "rate(1 minute)")
}
