// Command segments is the Lambda function of the segments resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/lambdafn"
	"github.com/flagplane/flagplane/shared/segment/segmentapi"
)

func main() { lambdafn.Serve(segmentapi.New) }
