// Package awsenv builds the AWS SDK configuration of a Lambda function from
// its environment alone: region and credentials from the variables Lambda
// sets, endpoints from the standard AWS_ENDPOINT_URL and
// AWS_ENDPOINT_URL_<SERVICE> settings (LocalStack, DynamoDB Local). It
// leaves out the SDK's full configuration loader, whose profile, SSO and
// STS support a function never uses and which weighs megabytes in every
// bootstrap; command-line tools keep using that loader.
package awsenv

import (
	"errors"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// Config returns the configuration; it needs AWS_REGION (or
// AWS_DEFAULT_REGION) and the access key variables.
func Config() (aws.Config, error) {
	region := firstOf("AWS_REGION", "AWS_DEFAULT_REGION")
	if region == "" {
		return aws.Config{}, errors.New("AWS_REGION is not set")
	}
	id, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if id == "" || secret == "" {
		return aws.Config{}, errors.New("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set")
	}
	return aws.Config{
		Region:      region,
		Credentials: aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(id, secret, os.Getenv("AWS_SESSION_TOKEN"))),
	}, nil
}

// Endpoint returns the endpoint for service (e.g. "DYNAMODB", "SQS") from
// AWS_ENDPOINT_URL_<SERVICE>, else AWS_ENDPOINT_URL, else nil (AWS itself).
func Endpoint(service string) *string {
	if v := firstOf("AWS_ENDPOINT_URL_"+strings.ToUpper(service), "AWS_ENDPOINT_URL"); v != "" {
		return aws.String(v)
	}
	return nil
}

func firstOf(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}
