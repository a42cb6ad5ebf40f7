// Command environments is the Lambda function of the environments resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/environment/environmentapi"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

func main() { lambdafn.Serve(environmentapi.New) }
