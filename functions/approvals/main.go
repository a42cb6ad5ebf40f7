// Command approvals is the Lambda function of the approvals resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/approval/approvalapi"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

func main() { lambdafn.Serve(approvalapi.New) }
