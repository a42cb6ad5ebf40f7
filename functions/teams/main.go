// Command teams is the Lambda function of the teams resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/lambdafn"
	"github.com/flagplane/flagplane/shared/team/teamapi"
)

func main() { lambdafn.Serve(teamapi.New) }
