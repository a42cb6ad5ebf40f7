// Package usageapi serves the usage group over HTTP: the series computed
// by package usage from the rolled-up days, the SDK version lists, and
// the reference's shape with a "not collected" metadata entry for the
// sources flagplane does not have.
package usageapi

import (
	"context"
	"log/slog"
	"time"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/sdkdata"
	"github.com/flagplane/flagplane/shared/usage"
)

type serviceKey struct{}

// Service is the app's usage service (built once per app): tests set its
// clock and run its rollup on demand.
func Service(a *app.App) *usage.Service {
	return a.Shared(serviceKey{}, func() any {
		s := usage.NewService(a.Table)
		// Streams are served by the local server only; each one opened is counted.
		if a.SDK != nil {
			a.SDK.Streams().OnOpen(func(ctx context.Context, o sdkdata.StreamOpened) {
				if err := s.RecordStream(ctx, o.Env.ProjectKey, o.Env.EnvKey, o.UserAgent); err != nil && a.Logger != nil {
					a.Logger.Warn("count an SDK stream", "project", o.Env.ProjectKey, "environment", o.Env.EnvKey, "err", err)
				}
			})
		}
		return s
	}).(*usage.Service)
}

// RollupEvery is how often the local server rolls up (the usage-rollup
// function runs hourly in AWS); a run with nothing due reads one item.
const RollupEvery = time.Minute

func init() {
	app.Register(app.Group{
		Name:     "usage",
		Handlers: func(a *app.App) map[string]api.Handler { return handlers(a, Service(a)) },
		Jobs: func(ctx context.Context, a *app.App, logger *slog.Logger) {
			s := Service(a)
			tick := time.NewTicker(RollupEvery)
			defer tick.Stop()
			for {
				if rep, err := s.Rollup.Run(ctx); err != nil {
					logger.Error("usage rollup", "err", err, "through", rep.Through)
				}
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		},
	})
}
