// Package featurestoreapi serves the delivery-configurations and
// big-segments groups over HTTP, and registers the outbox consumer that
// keeps their stores written.
package featurestoreapi

import (
	"context"
	"log/slog"
	"net/http"
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

// Service returns a feature store service over a.
func Service(a *app.App) *featurestore.Service {
	guard := a.WebhookGuard()
	guard.AllowPrivate = guard.AllowPrivate || os.Getenv(EnvAllowPrivate) == "true"
	open := func(ctx context.Context, key string, s featurestore.Settings) (featurestore.Store, error) {
		if key == featurestore.Redis {
			return redisstore.Open(ctx, s, guard.DialControl)
		}
		return dynamostore.Open(ctx, s, guard.DialControl)
	}
	return featurestore.NewService(a.Table, a.Services.Audit, a.Services.Environments, a.SDK, open, guard.CheckHost, a.Logger, a.Now)
}

// Consumer is the outbox consumer that writes flag changes to the stores:
// the delivery-configurations group's, which the webhook-delivery function
// runs without linking the group's handlers.
func Consumer(a *app.App) webhook.Consumer { return consumerOf(Service(a)) }

func consumerOf(s *featurestore.Service) webhook.Consumer {
	return webhook.Consumer{Name: "featurestores", Handle: s.Consume, Wants: featurestore.Wants}
}

// Delivery is the delivery-configurations group over a, with the outbox
// consumer that writes flag changes to the stores.
func Delivery(a *app.App) app.Group {
	s := Service(a)
	h := deliveryHandlers{s: s, envs: a.Services.Environments}
	return app.Group{
		Name: "delivery-configurations",
		Handlers: map[string]api.Handler{
			"getIntegrationDeliveryConfigurations":             h.getIntegrationDeliveryConfigurations,
			"getIntegrationDeliveryConfigurationByEnvironment": h.getIntegrationDeliveryConfigurationByEnvironment,
			"createIntegrationDeliveryConfiguration":           h.createIntegrationDeliveryConfiguration,
			"getIntegrationDeliveryConfigurationById":          h.getIntegrationDeliveryConfigurationByID,
			"patchIntegrationDeliveryConfiguration":            h.patchIntegrationDeliveryConfiguration,
			"deleteIntegrationDeliveryConfiguration":           h.deleteIntegrationDeliveryConfiguration,
			"validateIntegrationDeliveryConfiguration":         h.validateIntegrationDeliveryConfiguration,
		},
		Needs:     needs("patchIntegrationDeliveryConfiguration"),
		Examples:  deliveryExamples(),
		Answers:   deliveryAnswers,
		Consumers: []webhook.Consumer{consumerOf(s)},
	}
}

// BigSegments is the big-segments group over a, with the local stand-in
// of the big-segments-refresh function as its job.
func BigSegments(a *app.App) app.Group {
	s := Service(a)
	h := bigSegmentHandlers{s: s}
	return app.Group{
		Name: "big-segments",
		Handlers: map[string]api.Handler{
			"getBigSegmentStoreIntegrations":   h.getBigSegmentStoreIntegrations,
			"createBigSegmentStoreIntegration": h.createBigSegmentStoreIntegration,
			"getBigSegmentStoreIntegration":    h.getBigSegmentStoreIntegration,
			"patchBigSegmentStoreIntegration":  h.patchBigSegmentStoreIntegration,
			"deleteBigSegmentStoreIntegration": h.deleteBigSegmentStoreIntegration,
		},
		Needs:    needs("patchBigSegmentStoreIntegration"),
		Examples: bigSegmentExamples(),
		Answers:  bigSegmentAnswers,
		Workers: []app.Worker{{Name: "big-segments-refresh", Every: BigSegmentRefresh, Run: func(ctx context.Context, _ *slog.Logger) error {
			return s.RefreshBigSegments(ctx)
		}}},
	}
}

// The groups' success answers, for the OpenAPI document.
var (
	deliveryAnswers = map[string]api.Answer{
		"getIntegrationDeliveryConfigurations":             {Status: http.StatusOK, Rep: collectionRep{}},
		"getIntegrationDeliveryConfigurationByEnvironment": {Status: http.StatusOK, Rep: collectionRep{}},
		"createIntegrationDeliveryConfiguration":           {Status: http.StatusCreated, Rep: configRep{}},
		"getIntegrationDeliveryConfigurationById":          {Status: http.StatusOK, Rep: configRep{}},
		"patchIntegrationDeliveryConfiguration":            {Status: http.StatusOK, Rep: configRep{}},
		"deleteIntegrationDeliveryConfiguration":           {Status: http.StatusNoContent},
		"validateIntegrationDeliveryConfiguration":         {Status: http.StatusOK, Rep: featurestore.Validation{}},
	}
	bigSegmentAnswers = map[string]api.Answer{
		"getBigSegmentStoreIntegrations":   {Status: http.StatusOK, Rep: collectionRep{}},
		"createBigSegmentStoreIntegration": {Status: http.StatusCreated, Rep: configRep{}},
		"getBigSegmentStoreIntegration":    {Status: http.StatusOK, Rep: configRep{}},
		"patchBigSegmentStoreIntegration":  {Status: http.StatusOK, Rep: configRep{}},
		"deleteBigSegmentStoreIntegration": {Status: http.StatusNoContent},
	}
)

// needs reads a patch's actions from its paths.
func needs(opID string) map[string]api.Needs {
	return map[string]api.Needs{opID: api.PatchNeeds(patchSubject, featurestore.PatchActions)}
}
