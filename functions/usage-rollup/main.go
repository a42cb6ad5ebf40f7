// Command usage-rollup is the scheduled function that rolls the hour
// cells of SDK events up into the usage days (see package usage); run
// hourly by EventBridge, it catches up on every hour since its watermark.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/usage"
)

func main() {
	a, _, err := app.FromEnv(context.Background())
	if err != nil {
		log.Fatalf("flagplane usage-rollup: %v", err)
	}
	rollup := usage.NewRollup(a.Table, nil)
	lambda.Start(func(ctx context.Context) error {
		rep, err := rollup.Run(ctx)
		log.Printf("flagplane usage-rollup: hours %s..%s, %d days recomputed, %d items written", rep.From, rep.Through, rep.Days, rep.Written)
		return err
	})
}
