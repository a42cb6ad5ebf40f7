// Command destinations is the Lambda function of the destinations resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/destination/destinationapi"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

func main() { lambdafn.Serve(destinationapi.New) }
