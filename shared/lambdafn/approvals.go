package lambdafn

import (
	"context"
	"log"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/flagplane/flagplane/shared/app"
)

// ServeApprovalsScheduler runs the scheduled function that applies
// approved approval requests whose executionDate has come.
func ServeApprovalsScheduler() {
	a, _, err := app.FromEnv(context.Background())
	if err != nil {
		log.Fatalf("flagplane approvals-scheduler: %v", err)
	}
	lambda.Start(func(ctx context.Context) error {
		n, err := a.Services.Approvals.RunDue(ctx, time.Now())
		log.Printf("flagplane approvals-scheduler: applied %d scheduled approval requests", n)
		return err
	})
}
