// Command code-refs is the Lambda function of the code-refs resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/coderefs/coderefsapi"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

func main() { lambdafn.Serve(coderefsapi.New) }
