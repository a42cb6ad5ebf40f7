// Command members is the Lambda function of the members resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/lambdafn"
	"github.com/flagplane/flagplane/shared/member/memberapi"
)

func main() { lambdafn.Serve(memberapi.New) }
