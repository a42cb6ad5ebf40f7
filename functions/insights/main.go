// Command insights is the Lambda function of the insights resource group.
package main

import "github.com/flagplane/flagplane/shared/lambdafn"

func main() { lambdafn.Serve("insights") }
