// Command webhook-delivery is the SQS-triggered function that fans changes
// out to webhooks and delivers them, and hands them to the outbox
// consumers of the groups it links.
package main

import (
	// Delivery configurations: flag changes written to feature stores.
	_ "github.com/flagplane/flagplane/shared/featurestore/featurestoreapi"
	// Integration configurations: audit log events to their event hooks.
	_ "github.com/flagplane/flagplane/shared/integration/integrationapi"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

func main() { lambdafn.ServeWebhookDelivery() }
