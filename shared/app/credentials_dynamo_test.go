package app_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/flagplane/flagplane/shared/account"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/app/allgroups"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/environment/credtest"
	"github.com/flagplane/flagplane/shared/localserver"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/dynamo"
	"github.com/flagplane/flagplane/shared/store/dynamo/dynamotest"
)

// resetAfterList resets one environment's SDK key right after the
// backfill's first Query of a project's environments.
type resetAfterList struct {
	store.Table
	once  sync.Once
	reset func()
}

func (r *resetAfterList) Query(ctx context.Context, q store.Query) (store.Page, error) {
	page, err := r.Table.Query(ctx, q)
	if err == nil && q.Index == "" && q.SKPrefix == store.EnvironmentSKPrefix && r.reset != nil {
		r.once.Do(r.reset)
	}
	return page, err
}

// TestCredentialBackfillOnDynamoDB runs the backfill on DynamoDB: through
// the command as an operator runs it after upgrading a deployment, and
// beside a key reset on real transactions.
func TestCredentialBackfillOnDynamoDB(t *testing.T) {
	endpoint := dynamotest.Endpoint(t)
	// The command reads the SDK's standard settings, as it does in AWS.
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", endpoint)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "flagplane")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "flagplane")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_PROFILE", "")

	// old makes a table holding a project whose environments lack their
	// credential items, and returns its name, the table (its calls counted)
	// and the API's handler and admin token.
	old := func(tb testing.TB) (string, *dynamo.Table, *dynamo.CallCounter, http.Handler, string, []credtest.Env) {
		tb.Helper()
		var b [4]byte
		_, _ = rand.Read(b[:])
		name := "flagplane-backfill-" + hex.EncodeToString(b[:])
		if err := localserver.CreateTable(context.Background(), name, io.Discard); err != nil {
			tb.Fatalf("table create: %v", err)
		}
		counter := dynamo.NewCallCounter()
		client := dynamodb.NewFromConfig(aws.Config{
			Region:       "us-east-1",
			Credentials:  credentials.NewStaticCredentialsProvider("flagplane", "flagplane", ""),
			BaseEndpoint: aws.String(endpoint),
		}, counter.Option())
		tb.Cleanup(func() {
			if err := dynamo.DeleteTable(context.Background(), client, name); err != nil {
				tb.Errorf("delete table %s: %v", name, err)
			}
		})
		table, err := dynamo.New(client, name, dynamo.Options{})
		if err != nil {
			tb.Fatal(err)
		}
		logger := slog.New(slog.NewTextHandler(io.Discard, nil))
		acct, adminToken, err := account.Bootstrap(context.Background(), table, audit.Discard{}, logger)
		if err != nil {
			tb.Fatal(err)
		}
		h, err := app.New(table, audit.Discard{}, app.Settings{Approvals: true, AccountID: acct.ID}, logger, allgroups.List()...).Handler("")
		if err != nil {
			tb.Fatal(err)
		}
		if got := serveStatus(h, adminToken, "POST", "/api/v2/projects", `{"key":"old","name":"Old"}`); got != http.StatusCreated {
			tb.Fatalf("create project: status %d", got)
		}
		envs := credtest.Drop(tb, table)
		for _, e := range envs {
			if got := serveStatus(h, e.SDKKey, "GET", "/sdk/latest-all", ""); got != http.StatusUnauthorized {
				tb.Fatalf("before the backfill, %s/%s: status %d, want 401", e.ProjectKey, e.Key, got)
			}
		}
		counter.Reset()
		return name, table, counter, h, adminToken, envs
	}

	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"the command writes the missing items of a table, then nothing on a second run", func(t *testing.T) {
			name, _, _, h, _, envs := old(t)
			for i, want := range []string{"wrote 6 missing credential items\n", "wrote 0 missing credential items\n"} {
				var out bytes.Buffer
				if err := localserver.BackfillCredentials(t.Context(), localserver.BackfillConfig{Dynamo: true, Table: name}, &out); err != nil {
					t.Fatalf("run %d: %v", i+1, err)
				}
				if out.String() != want {
					t.Errorf("run %d printed %q, want %q", i+1, out.String(), want)
				}
			}
			for _, e := range envs {
				if got := serveStatus(h, e.SDKKey, "GET", "/sdk/latest-all", ""); got != http.StatusOK {
					t.Errorf("after the backfill, %s/%s: status %d, want 200", e.ProjectKey, e.Key, got)
				}
			}
		}},
		{"a key reset during the backfill is kept, and the backfill makes no Scan", func(t *testing.T) {
			_, table, counter, h, adminToken, envs := old(t)
			first := envs[0]
			wrapped := &resetAfterList{Table: table, reset: func() {
				if got := serveStatus(h, adminToken, "POST", "/api/v2/projects/"+first.ProjectKey+"/environments/"+first.Key+"/apiKey", ""); got != http.StatusOK {
					t.Errorf("reset the SDK key: status %d", got)
				}
			}}
			n, err := environment.BackfillCredentials(t.Context(), wrapped)
			if err != nil {
				t.Fatal(err)
			}
			if n != 5 {
				t.Errorf("wrote %d items, want 5 (the reset wrote the new key's)", n)
			}
			if scans := counter.Counts()["Scan"]; scans != 0 {
				t.Errorf("%d Scan calls, want none", scans)
			}
			if _, err := table.Get(t.Context(), credtest.Key("sdk", first.SDKKey)); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("the reset key has a credential item (%v), want none", err)
			}
			if got := serveStatus(h, first.SDKKey, "GET", "/sdk/latest-all", ""); got != http.StatusUnauthorized {
				t.Errorf("the reset key: status %d, want 401", got)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}

// serveStatus sends one request to h and returns the status.
func serveStatus(h http.Handler, auth, method, path, body string) int {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", auth)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}
