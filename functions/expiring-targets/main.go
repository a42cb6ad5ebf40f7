// Command expiring-targets is the scheduled function that removes users
// from flags' individual targets when their scheduled removal is due.
package main

import "github.com/flagplane/flagplane/shared/lambdafn"

func main() { lambdafn.ServeExpiringTargets() }
