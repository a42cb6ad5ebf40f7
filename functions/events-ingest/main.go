// Command events-ingest is the SQS-triggered function that aggregates the
// SDK event payloads the events function queues.
package main

import "github.com/flagplane/flagplane/shared/lambdafn"

func main() { lambdafn.ServeIngestWorker() }
