// Command applications is the Lambda function of the applications resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/application/applicationapi"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

func main() { lambdafn.Serve(applicationapi.New) }
