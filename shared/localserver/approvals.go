package localserver

import (
	"context"
	"log/slog"
	"time"

	"github.com/flagplane/flagplane/shared/app"
)

// ApprovalsSchedulerInterval is how often the local server applies due scheduled approval requests.
const ApprovalsSchedulerInterval = 5 * time.Second

// applyDueApprovals applies, every ApprovalsSchedulerInterval, approved
// approval requests whose executionDate has come.
func applyDueApprovals(ctx context.Context, a *app.App, logger *slog.Logger) {
	tick := time.NewTicker(ApprovalsSchedulerInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			n, err := a.Services.Approvals.RunDue(ctx, now)
			if err != nil {
				logger.Warn("approvals scheduler failed", "error", err.Error())
			}
			if n > 0 {
				logger.Info("scheduled approval requests applied", "count", n)
			}
		}
	}
}
