// Command auditlog is the Lambda function of the auditlog resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/audit/auditapi"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

func main() { lambdafn.Serve(auditapi.New) }
