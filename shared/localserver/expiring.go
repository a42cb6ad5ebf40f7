package localserver

import (
	"context"
	"log/slog"
	"time"

	"github.com/flagplane/flagplane/shared/app"
)

// ExpiringTargetsInterval is how often the local server removes due expiring targets.
const ExpiringTargetsInterval = 15 * time.Second

// expireTargets removes, every ExpiringTargetsInterval, users whose
// scheduled removal from a flag's individual targets is due.
func expireTargets(ctx context.Context, a *app.App, logger *slog.Logger) {
	tick := time.NewTicker(ExpiringTargetsInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			res, err := a.Services.Expiring.Sweep(ctx, now)
			if err != nil {
				logger.Warn("expiring targets sweep failed", "error", err.Error())
			}
			if res.Removed+res.Dropped > 0 {
				logger.Info("expiring targets removed", "removed", res.Removed, "dropped", res.Dropped)
			}
		}
	}
}
