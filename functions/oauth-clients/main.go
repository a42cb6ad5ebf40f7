// Command oauth-clients is the Lambda function of the oauth-clients resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/lambdafn"
	"github.com/flagplane/flagplane/shared/oauth/oauthapi"
)

func main() { lambdafn.Serve(oauthapi.New) }
