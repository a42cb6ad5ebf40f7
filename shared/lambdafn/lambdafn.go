// Package lambdafn starts one resource group as an AWS Lambda function
// behind an API Gateway HTTP API (payload format 2.0).
package lambdafn

import (
	"context"
	"log"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/flagplane/flagplane/shared/app"
)

// Serve wires group's routes over the DynamoDB table and hands them to the
// Lambda runtime. It does not return.
func Serve(group string) {
	h, err := app.LambdaHandler(context.Background(), group)
	if err != nil {
		log.Fatalf("flagplane %s: %v", group, err)
	}
	lambda.Start(Adapt(h))
}

// Adapt turns an http.Handler into the function API Gateway HTTP API invokes.
func Adapt(h http.Handler) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return httpadapter.NewV2(h).ProxyWithContext
}
