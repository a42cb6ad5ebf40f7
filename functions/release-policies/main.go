// Command release-policies is the Lambda function of the release-policies resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/lambdafn"
	"github.com/flagplane/flagplane/shared/releasepolicy/releasepolicyapi"
)

func main() { lambdafn.Serve(releasepolicyapi.New) }
