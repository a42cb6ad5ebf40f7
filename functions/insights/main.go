// Command insights is the Lambda function of the insights resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/insight/insightapi"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

func main() { lambdafn.Serve(insightapi.New) }
