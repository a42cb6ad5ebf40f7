// Command console is the Lambda function of the console group: the web
// console's page and files.
package main

import (
	"github.com/flagplane/flagplane/shared/console/consoleapi"
	"github.com/flagplane/flagplane/shared/lambdafn"
)

func main() { lambdafn.Serve(consoleapi.New) }
