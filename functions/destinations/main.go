// Command destinations is the Lambda function of the destinations resource group.
package main

import (
	_ "github.com/flagplane/flagplane/shared/destination/destinationapi"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

func main() { lambdafn.Serve("destinations") }
