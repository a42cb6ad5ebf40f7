package sqsingest_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/ingest/sqsingest"
	"github.com/flagplane/flagplane/shared/sdkcontext"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

// failing is a table whose writes fail, as a throttled DynamoDB would.
type failing struct{ store.Table }

func (failing) Put(context.Context, store.Item, store.Cond) error { return store.ErrConflict }

func TestHandler(t *testing.T) {
	table, err := bolt.Open(filepath.Join(t.TempDir(), "q.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer table.Close()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	msg := func(id, key string) events.SQSMessage {
		body, _ := json.Marshal(ingest.Payload{Source: ingest.SourceServer, ProjectKey: "p", EnvKey: "e", EnvID: "env", PayloadID: id,
			ReceivedAt: time.Now().UnixMilli(), Body: json.RawMessage(`[{"kind":"identify","creationDate":1,"context":{"kind":"user","key":"` + key + `"}}]`)})
		return events.SQSMessage{MessageId: id, Body: string(body)}
	}
	tests := []struct {
		name   string
		table  store.Table
		batch  []events.SQSMessage
		failed []string
	}{
		{"every payload of a batch is aggregated", table, []events.SQSMessage{msg("m1", "a"), msg("m2", "b")}, nil},
		{"a message that is not a payload is dropped, not retried", table, []events.SQSMessage{{MessageId: "junk", Body: "{"}}, nil},
		{"a payload that cannot be written comes back alone", failing{table}, []events.SQSMessage{msg("m3", "c")}, []string{"m3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := sqsingest.Handler(ingest.NewAggregator(tc.table, logger, time.Now), logger)(context.Background(), events.SQSEvent{Records: tc.batch})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range resp.BatchItemFailures {
				got = append(got, f.ItemIdentifier)
			}
			if len(got) != len(tc.failed) || (len(got) > 0 && got[0] != tc.failed[0]) {
				t.Errorf("failures %v, want %v", got, tc.failed)
			}
		})
	}
	if _, err := table.Get(context.Background(), store.ContextInstanceKey("env", sdkcontext.InstanceID("b"))); err != nil {
		t.Errorf("context b was not aggregated: %v", err)
	}
}
