// Command members is the Lambda function of the members resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/endpoints"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

func main() { lambdafn.Serve(endpoints.Members) }
