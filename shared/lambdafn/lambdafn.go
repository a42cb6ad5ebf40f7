// Package lambdafn starts one resource group as an AWS Lambda function
// behind an API Gateway HTTP API (payload format 2.0).
package lambdafn

import (
	"context"
	"log"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/webhook"
)

// Serve wires group's routes over the DynamoDB table and hands them to the
// Lambda runtime. It does not return.
func Serve(group app.NewGroup) {
	h, err := app.LambdaHandler(context.Background(), group)
	if err != nil {
		log.Fatalf("flagplane: %v", err)
	}
	lambda.Start(Adapt(h))
}

// ServeWebhookDelivery runs the SQS-triggered webhook delivery function,
// with the outbox consumers it names (each group's Consumer: the
// consumer alone, without the group's handlers).
func ServeWebhookDelivery(consumers ...func(*app.App) webhook.Consumer) {
	a, queue, err := app.FromEnv(context.Background())
	if err != nil {
		log.Fatalf("flagplane webhook-delivery: %v", err)
	}
	if queue == nil {
		log.Fatalf("flagplane webhook-delivery: %s is not set", app.EnvWebhookQueueURL)
	}
	s, _ := app.SettingsFromEnv()
	d := a.Dispatcher(queue, s.AllowPrivateWebhooks)
	for _, c := range consumers {
		d.AddConsumer(c(a))
	}
	lambda.Start(queue.Handler(d))
}

// Adapt turns an http.Handler into the function API Gateway HTTP API invokes.
func Adapt(h http.Handler) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return httpadapter.NewV2(withGatewayRequestID(h)).ProxyWithContext
}

// withGatewayRequestID makes API Gateway's request id the request's id, so
// the X-Request-Id a client sees, the error body's id, the function's log
// lines and the gateway's access log all name the request alike.
func withGatewayRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context()); ok && rc.RequestID != "" {
			r = r.WithContext(api.WithRequestID(r.Context(), rc.RequestID))
		}
		next.ServeHTTP(w, r)
	})
}
