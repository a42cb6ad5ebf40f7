// Command contexts is the Lambda function of the contexts resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/lambdafn"
	"github.com/flagplane/flagplane/shared/sdkcontext/contextapi"
)

func main() { lambdafn.Serve(contextapi.New) }
