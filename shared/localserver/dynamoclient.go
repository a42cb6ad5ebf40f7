package localserver

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// dynamoClient returns a DynamoDB client configured the standard way
// (config.LoadDefaultConfig): credentials, region and endpoint come from the
// environment and shared config, so AWS_ENDPOINT_URL_DYNAMODB or
// AWS_ENDPOINT_URL point it at DynamoDB Local. It lives here, not in the
// store, because only the local commands read shared config: Lambda
// bootstraps build their clients from the environment (package awsenv) and
// so do not link the shared-config loader and its SSO clients.
func dynamoClient(ctx context.Context) (*dynamodb.Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load AWS config: %w", err)
	}
	return dynamodb.NewFromConfig(cfg), nil
}
