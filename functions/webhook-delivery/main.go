// Command webhook-delivery is the SQS-triggered function that fans changes
// out to webhooks and delivers them, and hands them to the outbox
// consumers of the groups it names.
package main

import (
	"github.com/flagplane/flagplane/shared/featurestore/featurestoreapi"
	"github.com/flagplane/flagplane/shared/integration/integrationapi"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

func main() {
	lambdafn.ServeWebhookDelivery(
		featurestoreapi.Consumer, // delivery configurations: flag changes written to feature stores
		integrationapi.Consumer,  // integration configurations: audit log events to their event hooks
	)
}
