// Command tokens is the Lambda function of the tokens resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/lambdafn"
	"github.com/flagplane/flagplane/shared/token/tokenapi"
)

func main() { lambdafn.Serve(tokenapi.New) }
