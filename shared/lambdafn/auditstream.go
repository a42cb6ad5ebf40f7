package lambdafn

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/auditstream"
)

// ServeAuditStream runs the function the table's stream feeds: it hands
// every new audit entry to the webhook queue (see package auditstream).
func ServeAuditStream() {
	_, queue, err := app.FromEnv(context.Background())
	if err != nil {
		log.Fatalf("flagplane audit-stream: %v", err)
	}
	if queue == nil {
		log.Fatalf("flagplane audit-stream: %s is not set", app.EnvWebhookQueueURL)
	}
	lambda.Start(auditstream.Handler(queue, log.Printf))
}
