// Command integrations is the Lambda function of the integrations resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/integration/integrationapi"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

func main() { lambdafn.Serve(integrationapi.New) }
