// Command webhooks is the Lambda function of the webhooks resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/lambdafn"
	"github.com/flagplane/flagplane/shared/webhook/webhookapi"
)

func main() { lambdafn.Serve(webhookapi.New) }
