package lambdafn

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/auditstream"
	"github.com/flagplane/flagplane/shared/changefeed"
)

// ServeAuditStream runs the function the table's stream feeds: it hands
// every new audit entry to the webhook queue, and redrives what the
// stream's dead-letter queue holds (see package auditstream).
func ServeAuditStream() {
	a, queue, err := app.FromEnv(context.Background())
	if err != nil {
		log.Fatalf("flagplane audit-stream: %v", err)
	}
	if queue == nil {
		log.Fatalf("flagplane audit-stream: %s is not set", app.EnvWebhookQueueURL)
	}
	// The stream's dead-letter queue feeds the function too: it sends again
	// the entries of a batch that failed every retry (auditstream.Redrive).
	entries := changefeed.AuditLog{Table: a.Table, Shards: a.Services.Audit.Shards()}
	lambda.Start(auditstream.Serve(auditstream.Handler(queue, log.Printf), auditstream.RedriveHandler(entries, queue, log.Printf)))
}
