package apptest

import "github.com/flagplane/flagplane/shared/example"

// Release pipelines' paths and create body, which the tests of pipelines,
// release policies and projects reach.
var (
	PipelinesPath   = example.PipelinesPath
	FlagReleasePath = example.FlagReleasePath
	PipelineBody    = example.PipelineBody
)
