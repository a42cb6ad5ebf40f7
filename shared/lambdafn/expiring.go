package lambdafn

import (
	"context"
	"log"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/flagplane/flagplane/shared/app"
)

// ServeExpiringTargets runs the scheduled function that removes users from
// flags' individual targets when their scheduled removal is due.
func ServeExpiringTargets() {
	a, _, err := app.FromEnv(context.Background())
	if err != nil {
		log.Fatalf("flagplane expiring-targets: %v", err)
	}
	lambda.Start(func(ctx context.Context) error {
		res, err := a.Services.Expiring.Sweep(ctx, time.Now())
		log.Printf("flagplane expiring-targets: removed %d targets, dropped %d stale expiries", res.Removed, res.Dropped)
		return err
	})
}
