// Command events is the Lambda function where SDKs post their events.
package main

import (
	"github.com/flagplane/flagplane/shared/endpoints"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

func main() { lambdafn.Serve(endpoints.Events) }
