// Command destinations-export is the scheduled function that moves the SDK
// events ingest spooled for warehouse destinations to the S3 stage, one
// NDJSON object per batch (see package destination). It links the table,
// the stage and nothing of the API, which keeps its bootstrap small.
package main

import (
	"context"
	"log"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/flagplane/flagplane/shared/awsenv"
	"github.com/flagplane/flagplane/shared/destination"
	"github.com/flagplane/flagplane/shared/destination/s3stage"
	"github.com/flagplane/flagplane/shared/store/dynamo"
)

func main() {
	table, bucket := os.Getenv("FLAGPLANE_TABLE"), os.Getenv(destination.EnvExportBucket)
	if table == "" || bucket == "" {
		log.Fatal("flagplane destinations-export: FLAGPLANE_TABLE and FLAGPLANE_EXPORT_BUCKET must name the table and the stage bucket")
	}
	cfg, err := awsenv.Config()
	if err != nil {
		log.Fatalf("flagplane destinations-export: aws config: %v", err)
	}
	db, err := dynamo.New(dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = awsenv.Endpoint("DYNAMODB") }), table, dynamo.Options{})
	if err != nil {
		log.Fatalf("flagplane destinations-export: %v", err)
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint = awsenv.Endpoint("S3")
		o.UsePathStyle = o.BaseEndpoint != nil // emulators serve buckets by path
	})
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	x := destination.NewExporter(db, s3stage.Stage{Client: client, Bucket: bucket}, logger, time.Now)
	lambda.Start(func(ctx context.Context) error {
		r, err := x.Run(ctx)
		logger.Info("data export run", "batches", r.Batches, "events", r.Events, "failed", err != nil)
		return err
	})
}
