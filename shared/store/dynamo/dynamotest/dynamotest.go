// Package dynamotest gives tests of other packages a fresh DynamoDB table
// on the endpoint named by FLAGPLANE_DYNAMODB_ENDPOINT (DynamoDB Local in
// `make test`). Without it tests skip, unless FLAGPLANE_REQUIRE_DYNAMODB=1
// makes skipping a failure.
package dynamotest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/flagplane/flagplane/shared/store/dynamo"
)

// Environment variables that point tests at DynamoDB.
const (
	EnvEndpoint = "FLAGPLANE_DYNAMODB_ENDPOINT"
	EnvRequire  = "FLAGPLANE_REQUIRE_DYNAMODB"
)

// Endpoint returns the endpoint to test against, or skips (fails when required).
func Endpoint(tb testing.TB) string {
	tb.Helper()
	ep := os.Getenv(EnvEndpoint)
	if ep == "" {
		if os.Getenv(EnvRequire) == "1" {
			tb.Fatalf("%s=1 but %s is not set", EnvRequire, EnvEndpoint)
		}
		tb.Skipf("%s not set; run localstack/dynamodb-local.sh start and set it to http://127.0.0.1:<port>", EnvEndpoint)
	}
	return ep
}

// NewTable creates a fresh table, deleted when the test ends, and returns it
// with the counter of every call its client makes.
func NewTable(tb testing.TB) (*dynamo.Table, *dynamo.CallCounter) {
	tb.Helper()
	ep := Endpoint(tb)
	counter := dynamo.NewCallCounter()
	client := dynamodb.NewFromConfig(aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("flagplane", "flagplane", ""),
		BaseEndpoint: aws.String(ep),
	}, counter.Option())
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := fmt.Sprintf("flagplane-test-%s-%s", time.Now().UTC().Format("20060102T150405"), hex.EncodeToString(b[:]))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := dynamo.CreateTable(ctx, client, name); err != nil {
		tb.Fatalf("create test table: %v", err)
	}
	tb.Cleanup(func() {
		if err := dynamo.DeleteTable(context.Background(), client, name); err != nil {
			tb.Errorf("delete test table %s: %v", name, err)
		}
	})
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	t, err := dynamo.New(client, name, dynamo.Options{CursorSecret: secret})
	if err != nil {
		tb.Fatalf("open test table: %v", err)
	}
	counter.Reset()
	return t, counter
}
