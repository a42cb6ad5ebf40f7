// Command events is the Lambda function where SDKs post their events.
package main

import (
	"github.com/flagplane/flagplane/shared/ingest/eventapi"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

func main() { lambdafn.Serve(eventapi.New) }
