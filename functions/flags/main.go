// Command flags is the Lambda function of the flags resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/endpoints"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

func main() { lambdafn.Serve(endpoints.Flags) }
