package lambdafn

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/ingest/sqsingest"
)

// ServeIngestWorker runs the SQS-triggered function that aggregates SDK
// event payloads from the ingest queue, reporting failures per message.
func ServeIngestWorker() {
	a, _, err := app.FromEnv(context.Background())
	if err != nil {
		log.Fatalf("flagplane events-ingest: %v", err)
	}
	// Each aggregate is its own conditional put, which DynamoDB bills at half a transaction's write.
	lambda.Start(sqsingest.Handler(ingest.NewAggregator(a.Table, a.Logger, a.Now).PerItemWrites(), a.Logger))
}
