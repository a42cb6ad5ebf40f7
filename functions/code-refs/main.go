// Command code-refs is the Lambda function of the code-refs resource group.
package main

import (
	_ "github.com/flagplane/flagplane/shared/coderefs/coderefsapi"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

func main() { lambdafn.Serve("code-refs") }
