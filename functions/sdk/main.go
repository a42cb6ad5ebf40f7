// Command sdk is the Lambda function of the sdk resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/lambdafn"
	"github.com/flagplane/flagplane/shared/sdkapi"
)

func main() { lambdafn.Serve(sdkapi.New) }
