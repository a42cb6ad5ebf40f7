// Command roles is the Lambda function of the roles resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/lambdafn"
	"github.com/flagplane/flagplane/shared/role/roleapi"
)

func main() { lambdafn.Serve(roleapi.New) }
