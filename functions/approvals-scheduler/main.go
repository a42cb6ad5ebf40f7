// Command approvals-scheduler is the scheduled function that applies
// approved approval requests when their executionDate is due.
package main

import "github.com/flagplane/flagplane/shared/lambdafn"

func main() { lambdafn.ServeApprovalsScheduler() }
