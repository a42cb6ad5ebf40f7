// Command usage is the Lambda function of the usage resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/lambdafn"
	"github.com/flagplane/flagplane/shared/usage/usageapi"
)

func main() { lambdafn.Serve(usageapi.New) }
