// Command release-pipelines is the Lambda function of the release-pipelines resource group.
package main

import (
	"github.com/flagplane/flagplane/shared/lambdafn"
	"github.com/flagplane/flagplane/shared/pipeline/pipelineapi"
)

func main() { lambdafn.Serve(pipelineapi.New) }
