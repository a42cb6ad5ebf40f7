// Command audit-stream is the function the table's DynamoDB stream feeds:
// it hands every new audit entry to the webhook queue, so commits write no
// outbox record and send nothing themselves.
package main

import "github.com/flagplane/flagplane/shared/lambdafn"

func main() { lambdafn.ServeAuditStream() }
