// Command webhook-delivery is the SQS-triggered function that fans changes
// out to webhooks and delivers them.
package main

import (
	// Groups whose outbox consumers run here (app.Group.Consumers), one import each.
	_ "github.com/flagplane/flagplane/shared/integration/integrationapi"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

func main() { lambdafn.ServeWebhookDelivery() }
