// Command big-segment-jobs is the scheduled function that runs big segment
// imports and exports: it takes up every unfinished one, resuming where the
// last run stopped, for up to twelve minutes of its fifteen.
package main

import (
	"github.com/flagplane/flagplane/shared/lambdafn"
	"github.com/flagplane/flagplane/shared/segment/segmentapi"
)

func main() { lambdafn.ServeWorker(segmentapi.New, segmentapi.JobsWorker) }
