// Command big-segments-refresh is the scheduled function that rewrites the
// synchronized-on time of every big segment store integration that is on:
// LaunchDarkly's SDKs call big segment data stale when that time is older
// than two minutes, so it runs every minute.
package main

import (
	"github.com/flagplane/flagplane/shared/featurestore/featurestoreapi"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

func main() { lambdafn.ServeWorker(featurestoreapi.BigSegments, "big-segments-refresh") }
