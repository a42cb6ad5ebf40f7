// Command sdk is the Lambda function of the sdk resource group.
package main

import "github.com/flagplane/flagplane/shared/lambdafn"

func main() { lambdafn.Serve("sdk") }
