// Command outbox-sweep is the scheduled function that re-sends changes
// whose hand-off to the webhook queue never happened.
package main

import "github.com/flagplane/flagplane/shared/lambdafn"

func main() { lambdafn.ServeOutboxSweep() }
