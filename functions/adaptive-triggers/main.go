// Command adaptive-triggers is the Lambda function of the adaptive-triggers resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/lambdafn"
	"github.com/flagplane/flagplane/shared/trigger/triggerapi"
)

func main() { lambdafn.Serve(triggerapi.New) }
