// Package featurestoreapi serves the delivery-configurations and
// big-segments groups over HTTP, and registers the outbox consumer that
// keeps their stores written.
package featurestoreapi

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/featurestore"
	"github.com/flagplane/flagplane/shared/featurestore/dynamostore"
	"github.com/flagplane/flagplane/shared/featurestore/redisstore"
	"github.com/flagplane/flagplane/shared/webhook"
)

// EnvAllowPrivate lets stores be reached at private addresses (a Redis in
// the deployment's VPC) even where webhooks may not reach them.
const EnvAllowPrivate = "FLAGPLANE_FEATURESTORES_ALLOW_PRIVATE"

// BigSegmentRefresh is how often the local server rewrites big segment
// stores' synchronized-on time, well within featurestore.StaleAfter.
const BigSegmentRefresh = 30 * time.Second

type serviceKey struct{}

// Service returns the app's feature store service, built once.
func Service(a *app.App) *featurestore.Service {
	return a.Shared(serviceKey{}, func() any {
		guard := a.WebhookGuard()
		guard.AllowPrivate = guard.AllowPrivate || os.Getenv(EnvAllowPrivate) == "true"
		open := func(ctx context.Context, key string, s featurestore.Settings) (featurestore.Store, error) {
			if key == featurestore.Redis {
				return redisstore.Open(ctx, s, guard.DialControl)
			}
			return dynamostore.Open(ctx, s, guard.DialControl)
		}
		return featurestore.NewService(a.Table, a.Services.Audit, a.Services.Environments, a.SDK, open, guard.CheckHost, a.Logger)
	}).(*featurestore.Service)
}

func init() {
	app.Register(app.Group{Name: "delivery-configurations", Handlers: deliveryHandlers, Needs: needs("patchIntegrationDeliveryConfiguration"),
		Consumers: func(a *app.App) []webhook.Consumer {
			return []webhook.Consumer{{Name: "featurestores", Handle: Service(a).Consume, Wants: featurestore.Wants}}
		}})
	app.Register(app.Group{Name: "big-segments", Handlers: bigSegmentHandlers, Needs: needs("patchBigSegmentStoreIntegration"),
		Jobs: refreshJob})
}

// needs reads a patch's actions from its paths.
func needs(opID string) func(a *app.App) map[string]api.Needs {
	return func(*app.App) map[string]api.Needs {
		return map[string]api.Needs{opID: api.PatchNeeds(patchSubject, featurestore.PatchActions)}
	}
}

// refreshJob stands in locally for the big-segments-refresh function.
func refreshJob(ctx context.Context, a *app.App, logger *slog.Logger) {
	t := time.NewTicker(BigSegmentRefresh)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := Service(a).RefreshBigSegments(ctx); err != nil && logger != nil {
				logger.Warn("big segment stores refresh", "err", err)
			}
		}
	}
}
