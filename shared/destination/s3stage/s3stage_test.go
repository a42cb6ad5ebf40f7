package s3stage_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/flagplane/flagplane/shared/destination"
	"github.com/flagplane/flagplane/shared/destination/s3stage"
	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

// fakeS3 implements PutObject (path-style) in process: objects by key,
// each request's headers kept for the checks. A put is refused when its
// checksum does not match the body, as S3 does.
type fakeS3 struct {
	mu      sync.Mutex
	objects map[string][]byte
	headers []http.Header
	fail    int // answer the next fail puts with a 503
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Method != http.MethodPut {
		http.Error(w, "only PutObject here", http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	if strings.Contains(r.Header.Get("Content-Encoding"), "aws-chunked") {
		http.Error(w, "unexpected chunked upload", http.StatusBadRequest)
		return
	}
	f.headers = append(f.headers, r.Header.Clone())
	if f.fail > 0 {
		f.fail--
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `<Error><Code>SlowDown</Code><Message>slow down</Message></Error>`)
		return
	}
	sum := sha256.Sum256(body)
	if got := r.Header.Get("X-Amz-Checksum-Sha256"); got != base64.StdEncoding.EncodeToString(sum[:]) {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `<Error><Code>BadDigest</Code><Message>checksum</Message></Error>`)
		return
	}
	if f.objects == nil {
		f.objects = map[string][]byte{}
	}
	f.objects[r.URL.Path] = body
	w.Header().Set("ETag", `"etag"`)
	w.WriteHeader(http.StatusOK)
}

func newStage(tb testing.TB, fake *fakeS3) s3stage.Stage {
	tb.Helper()
	srv := httptest.NewServer(fake)
	tb.Cleanup(srv.Close)
	client := s3.New(s3.Options{
		Region: "eu-west-1", BaseEndpoint: aws.String(srv.URL), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", ""),
		// One try: a failed put is retried by the next export run.
		RetryMaxAttempts: 1,
	})
	return s3stage.Stage{Client: client, Bucket: "flagplane-export-test"}
}

func TestS3StagePutsEachBatchWholeUnderItsName(t *testing.T) {
	var _ destination.Stage = s3stage.Stage{}
	ctx := context.Background()
	fake := &fakeS3{}
	stage := newStage(t, fake)
	name := destination.EnvPrefix("env1") + "2026-11-23/15/0001-abc.ndjson"
	body := []byte(`{"kind":"custom"}` + "\n" + `{"kind":"identify"}` + "\n")
	t.Run("the object lands in the bucket with its bytes, encrypted and checksummed", func(t *testing.T) {
		if err := stage.Put(ctx, name, body); err != nil {
			t.Fatal(err)
		}
		if got := fake.objects["/flagplane-export-test/"+name]; !bytes.Equal(got, body) {
			t.Fatalf("stored %q", got)
		}
		h := fake.headers[len(fake.headers)-1]
		if h.Get("X-Amz-Server-Side-Encryption") != "AES256" || h.Get("Content-Type") != "application/x-ndjson" || h.Get("Authorization") == "" {
			t.Errorf("headers %v", h)
		}
	})
	t.Run("writing the same batch again replaces it: one object, not two", func(t *testing.T) {
		if err := stage.Put(ctx, name, body); err != nil {
			t.Fatal(err)
		}
		if len(fake.objects) != 1 {
			t.Errorf("%d objects", len(fake.objects))
		}
	})
	t.Run("a refused put is an error naming the object, so the batch stays open", func(t *testing.T) {
		fake.fail = 1
		err := stage.Put(ctx, destination.EnvPrefix("env1")+"2026-11-23/15/0002-def.ndjson", body)
		if err == nil || !strings.Contains(err.Error(), "0002-def.ndjson") {
			t.Errorf("err %v", err)
		}
	})
}

func TestExportThroughTheS3StageLosesAndDoublesNothingWhenAPutFails(t *testing.T) {
	ctx := context.Background()
	table, err := bolt.Open(filepath.Join(t.TempDir(), "export.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { table.Close() })
	marker, _ := json.Marshal(ingest.ExportEnv{EnvID: "env1", Active: []string{"d1"}})
	mk := store.DataExportEnvKey("env1")
	if err := table.Put(ctx, store.Item{PK: mk.PK, SK: mk.SK, Version: 1, Data: marker}, store.Cond{}); err != nil {
		t.Fatal(err)
	}
	spool := ingest.NewSpool(table, nil, time.Now)
	for i := range 3 {
		body := fmt.Sprintf(`[{"kind":"custom","key":"k%d-a"},{"kind":"custom","key":"k%d-b"}]`, i, i)
		if err := spool.Export(ctx, ingest.Payload{Source: ingest.SourceServer, EnvID: "env1", PayloadID: fmt.Sprint("p", i), Body: []byte(body)}); err != nil {
			t.Fatal(err)
		}
	}
	fake := &fakeS3{fail: 1}
	x := destination.NewExporter(table, newStage(t, fake), nil, time.Now)
	if _, err := x.Run(ctx); err == nil {
		t.Fatal("the refused put was not reported")
	}
	r, err := x.Run(ctx)
	if err != nil || r.Events != 6 {
		t.Fatalf("second run: %+v %v", r, err)
	}
	lines := 0
	for key, obj := range fake.objects {
		if !strings.HasPrefix(key, "/flagplane-export-test/events/env1/") {
			t.Errorf("object %s outside the environment's prefix", key)
		}
		lines += bytes.Count(obj, []byte("\n"))
	}
	if lines != 6 || len(fake.objects) != 1 {
		t.Errorf("%d objects holding %d lines; want one batch of 6", len(fake.objects), lines)
	}
}
