// Command flag-imports is the Lambda function of the flag-imports resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/flagimport/flagimportapi"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

func main() { lambdafn.Serve(flagimportapi.New) }
