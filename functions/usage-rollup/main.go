// Command usage-rollup is the scheduled function that rolls the hour
// cells of SDK events up into the usage days (see package usage); run
// hourly by EventBridge, it catches up on every hour since its watermark.
package main

import (
	"github.com/flagplane/flagplane/shared/lambdafn"
	"github.com/flagplane/flagplane/shared/usage/usageapi"
)

func main() { lambdafn.ServeWorker(usageapi.New, "usage-rollup") }
