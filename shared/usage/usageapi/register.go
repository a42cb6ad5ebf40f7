// Package usageapi serves the usage group over HTTP: the series computed
// by package usage from the rolled-up days, the SDK version lists, and
// the reference's shape with a "not collected" metadata entry for the
// sources flagplane does not have.
package usageapi

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/sdkdata"
	"github.com/flagplane/flagplane/shared/usage"
)

// Service is a usage service over a, on the app's clock: the group's, and
// the rollup's of the usage-rollup function and of tests.
func Service(a *app.App) *usage.Service {
	return usage.NewService(a.Table, a.Now)
}

// RollupEvery is how often the local server rolls up (the usage-rollup
// function runs hourly in AWS); a run with nothing due reads one item.
const RollupEvery = time.Minute

// New is the usage group over a; its job is the local stand-in of the
// usage-rollup function.
func New(a *app.App) app.Group {
	s := Service(a)
	// Streams are served by the local server only; each one opened is counted.
	if a.SDK != nil {
		a.SDK.Streams().OnOpen(func(ctx context.Context, o sdkdata.StreamOpened) {
			if err := s.RecordStream(ctx, o.Env.ProjectKey, o.Env.EnvKey, o.UserAgent); err != nil && a.Logger != nil {
				a.Logger.Warn("count an SDK stream", "project", o.Env.ProjectKey, "environment", o.Env.EnvKey, "err", err)
			}
		})
	}
	h := handlers{s: s, table: a.Table, projects: a.Services.Projects, envs: a.Services.Environments, flags: a.Services.Flags}
	ops := map[string]api.Handler{
		"getEventsUsage":             h.getEventsUsage,
		"getEvaluationsUsage":        h.getEvaluationsUsage,
		"getStreamUsage":             h.getStreamUsage,
		"getStreamUsageBySdkVersion": h.getStreamUsageBySdkVersion,
		"getStreamUsageSdkversion":   h.getStreamUsageSdkversion,
		"getMauSdksByType":           h.getMauSdksByType,
		"getSdkAllVersions":          h.getSdkAllVersions,
		"getSdkVersionsDetails":      h.getSdkVersionsDetails,
	}
	for id, op := range seriesOps {
		ops[id] = seriesHandler{h: h, op: op}.serve
	}
	return app.Group{
		Name:     "usage",
		Handlers: ops,
		Answers:  answers(),
		Examples: examples(),
		Workers: []app.Worker{{Name: "usage-rollup", Every: RollupEvery, Run: func(ctx context.Context, logger *slog.Logger) error {
			rep, err := s.Rollup.Run(ctx)
			if err != nil {
				return fmt.Errorf("usage rollup through %s: %w", rep.Through, err)
			}
			return nil
		}}},
	}
}
