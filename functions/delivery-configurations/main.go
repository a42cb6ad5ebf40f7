// Command delivery-configurations is the Lambda function of the delivery-configurations resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/featurestore/featurestoreapi"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

func main() { lambdafn.Serve(featurestoreapi.Delivery) }
