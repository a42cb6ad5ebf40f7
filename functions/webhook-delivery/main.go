// Command webhook-delivery is the SQS-triggered function that fans changes
// out to webhooks and delivers them.
package main

import "github.com/flagplane/flagplane/shared/lambdafn"

func main() { lambdafn.ServeWebhookDelivery() }
