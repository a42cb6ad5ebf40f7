// Package s3stage is the data export's stage in AWS: batches are objects
// of one S3 bucket, written whole with PutObject (which replaces an
// object of the same name, so a batch written again is one copy). Only
// the destinations-export worker links it, keeping the S3 client out of
// the API functions.
package s3stage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Putter is the one S3 call the stage makes.
type Putter interface {
	PutObject(ctx context.Context, in *s3.PutObjectInput, opts ...func(*s3.Options)) (*s3.PutObjectOutput, error)
}

// Stage writes batches to Bucket.
type Stage struct {
	Client Putter
	Bucket string
}

// Put writes one batch as an NDJSON object, encrypted at rest with S3's
// own keys (warehouses reading the stage need no KMS grant) and checked
// end to end by its SHA-256.
func (s Stage) Put(ctx context.Context, name string, body []byte) error {
	sum := sha256.Sum256(body)
	_, err := s.Client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:               aws.String(s.Bucket),
		Key:                  aws.String(name),
		Body:                 bytes.NewReader(body),
		ContentLength:        aws.Int64(int64(len(body))),
		ContentType:          aws.String("application/x-ndjson"),
		ChecksumSHA256:       aws.String(base64.StdEncoding.EncodeToString(sum[:])),
		ServerSideEncryption: types.ServerSideEncryptionAes256,
	})
	if err != nil {
		return fmt.Errorf("put s3://%s/%s: %w", s.Bucket, name, err)
	}
	return nil
}
