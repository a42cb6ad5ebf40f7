// Command projects is the Lambda function of the projects resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/lambdafn"
	"github.com/flagplane/flagplane/shared/project/projectapi"
)

func main() { lambdafn.Serve(projectapi.New) }
