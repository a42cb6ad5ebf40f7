// Command big-segments-refresh is the scheduled function that rewrites the
// synchronized-on time of every big segment store integration that is on:
// LaunchDarkly's SDKs call big segment data stale when that time is older
// than two minutes, so it runs every minute.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/featurestore/featurestoreapi"
)

func main() {
	a, _, err := app.FromEnv(context.Background())
	if err != nil {
		log.Fatalf("flagplane big-segments-refresh: %v", err)
	}
	svc := featurestoreapi.Service(a)
	lambda.Start(func(ctx context.Context) error {
		// Failures are in each store's status and logged there; the error
		// makes the run's failure visible in the function's metrics.
		return svc.RefreshBigSegments(ctx)
	})
}
