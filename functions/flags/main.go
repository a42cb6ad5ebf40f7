// Command flags is the Lambda function of the flags resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/flag/flagapi"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

func main() { lambdafn.Serve(flagapi.New) }
