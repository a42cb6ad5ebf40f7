// Command ai-configs is the Lambda function of the ai-configs resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/aiconfig/aiconfigapi"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

func main() { lambdafn.Serve(aiconfigapi.New) }
