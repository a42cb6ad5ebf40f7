package destination

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Where the stage is, from the environment (the stack sets the bucket;
// locally the folder defaults to flagplane-export beside the data file).
const (
	EnvExportBucket  = "FLAGPLANE_EXPORT_BUCKET"
	EnvExportAccount = "FLAGPLANE_EXPORT_ACCOUNT_ID"
	EnvExportDir     = "FLAGPLANE_EXPORT_DIR"
)

// Stage kinds.
const (
	StageS3     = "s3"
	StageFolder = "folder"
)

// StageInfo says where exported batches land, for setup scripts and answers.
type StageInfo struct {
	Kind string // StageS3 or StageFolder
	// Bucket is the S3 bucket (StageS3).
	Bucket string
	// Region is the bucket's AWS region (StageS3), when known.
	Region string
	// AccountID is the AWS account holding the bucket (StageS3), for role ARNs.
	AccountID string
	// Dir is the absolute folder (StageFolder).
	Dir string
}

// EventsPrefix starts every exported object's name.
const EventsPrefix = "events/"

// EnvPrefix is the part of the stage holding one environment's batches.
func EnvPrefix(envID string) string { return EventsPrefix + envID + "/" }

// Location is the URL of one environment's batches, as warehouses name it.
func (si StageInfo) Location(envID string) string {
	if si.Kind == StageS3 {
		return "s3://" + si.Bucket + "/" + EnvPrefix(envID)
	}
	return filepath.ToSlash(filepath.Join(si.Dir, EnvPrefix(envID))) + "/"
}

// Name is what completedArtifacts.s3BucketName shows: the bucket, or the folder locally.
func (si StageInfo) Name() string {
	if si.Kind == StageS3 {
		return si.Bucket
	}
	return si.Dir
}

// Stage stores exported batches. Put must replace an object of the same
// name whole (never append), so writing a batch again leaves one copy.
type Stage interface {
	Put(ctx context.Context, name string, body []byte) error
}

// Folder is the local stage: a folder of NDJSON files, written to a
// temporary file and renamed, so a reader never sees half a batch and a
// batch written again replaces itself.
type Folder struct{ Dir string }

// Put writes name under the folder.
func (f Folder) Put(ctx context.Context, name string, body []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if strings.Contains(name, "..") || filepath.IsAbs(name) {
		return fmt.Errorf("object name %q leaves the stage folder", name)
	}
	path := filepath.Join(f.Dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("create stage folder: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".batch-*")
	if err != nil {
		return fmt.Errorf("create batch file: %w", err)
	}
	defer os.Remove(tmp.Name()) // gone after the rename; cleans up after a failure
	if _, err := tmp.Write(body); err != nil {
		tmp.Close()
		return fmt.Errorf("write batch %s: %w", name, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("sync batch %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close batch %s: %w", name, err)
	}
	if err := os.Chmod(tmp.Name(), 0o640); err != nil {
		return fmt.Errorf("batch %s: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("place batch %s: %w", name, err)
	}
	return nil
}
