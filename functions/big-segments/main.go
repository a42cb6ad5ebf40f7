// Command big-segments is the Lambda function of the big-segments resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/featurestore/featurestoreapi"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

func main() { lambdafn.Serve(featurestoreapi.BigSegments) }
