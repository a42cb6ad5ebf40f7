package auditstream

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/flagplane/flagplane/shared/changefeed"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

// failedBatch is a dead-letter message as Lambda writes it for a stream
// batch whose records reached the stream from first to last.
func failedBatch(first, last time.Time) string {
	return `{"requestContext":{"requestId":"316aa6d0-8154-xmpl-9af7-85d5f4a6bc81","functionArn":"arn:aws:lambda:us-east-1:123456789012:function:audit-stream","condition":"RetryAttemptsExhausted","approximateInvokeCount":101},` +
		`"responseContext":{"statusCode":200,"executedVersion":"$LATEST","functionError":"Unhandled"},"version":"1.0","timestamp":"2026-11-29T12:00:00.000Z",` +
		`"DDBStreamBatchInfo":{"shardId":"shardId-00000001-abc","startSequenceNumber":"800000000003126276362","endSequenceNumber":"800000000003126276370",` +
		`"approximateArrivalOfFirstRecord":"` + first.UTC().Format(time.RFC3339Nano) + `","approximateArrivalOfLastRecord":"` + last.UTC().Format(time.RFC3339Nano) + `",` +
		`"batchSize":9,"streamArn":"arn:aws:dynamodb:us-east-1:123456789012:table/flagplane/stream/2026-11-01T00:00:00.000"}}`
}

// auditLog writes an entry key at each of times, spread over shards, and
// returns the log as Entries with the ids by time.
func auditLog(tb testing.TB, shards int, times ...time.Time) (changefeed.AuditLog, []string) {
	tb.Helper()
	table, err := bolt.Open(filepath.Join(tb.TempDir(), "audit.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { table.Close() })
	var ids []string
	for i, at := range times {
		id := entryID(at.UnixMilli(), i)
		k := store.AuditShardKey(id, shards)
		if err := table.Put(tb.Context(), store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: []byte(`{}`)}, store.IfNotExists()); err != nil {
			tb.Fatal(err)
		}
		ids = append(ids, id)
	}
	return changefeed.AuditLog{Table: table, Shards: shards}, ids
}

func sent(q *fakeQueue) []string {
	var ids []string
	for _, call := range q.calls {
		for _, m := range call {
			ids = append(ids, m.EntryID)
		}
	}
	return ids
}

func TestRedrive(t *testing.T) {
	first := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	last := first.Add(20 * time.Second)
	times := []time.Time{
		first.Add(-2 * RedriveSlack), // before the window
		first.Add(-RedriveSlack / 2), // in the slack before the batch
		first, first.Add(time.Second), first.Add(10 * time.Second), last,
		last.Add(RedriveSlack),                    // the window's last millisecond
		last.Add(RedriveSlack + time.Millisecond), // just after it
	}
	for i := range 24 { // enough for three SendMessageBatch calls
		times = append(times, first.Add(time.Duration(i)*time.Millisecond*100))
	}
	log, ids := auditLog(t, 4, times...)
	b, err := ParseFailedBatch(failedBatch(first, last))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("a dead-letter message gives the batch's shard, sequence and times", func(t *testing.T) {
		if b.Batch.ShardID != "shardId-00000001-abc" || b.Batch.StartSeq != "800000000003126276362" ||
			!b.Batch.First.Equal(first) || !b.Batch.Last.Equal(last) || b.RequestContext.Condition != "RetryAttemptsExhausted" {
			t.Fatalf("parsed %+v", b)
		}
	})
	t.Run("every entry of the window is sent again from every shard, in id order, and none outside it", func(t *testing.T) {
		q := &fakeQueue{}
		n, err := Redrive(t.Context(), log, q, b)
		if err != nil {
			t.Fatal(err)
		}
		want := append(slices.Clone(ids[1:7]), ids[8:]...)
		slices.Sort(want)
		if got := sent(q); n != len(want) || !slices.Equal(got, want) {
			t.Fatalf("sent %d: %v\nwant %v", n, got, want)
		}
		for _, call := range q.calls {
			if len(call) > MaxSendBatch {
				t.Fatalf("a call of %d messages", len(call))
			}
		}
	})
	t.Run("a queue that refuses a message fails the redrive", func(t *testing.T) {
		q := &fakeQueue{refuse: map[string]bool{ids[2]: true}}
		if _, err := Redrive(t.Context(), log, q, b); err == nil || !strings.Contains(err.Error(), "refused 1") {
			t.Fatalf("got %v, want the refusal", err)
		}
	})
}

func TestParseFailedBatchRefuses(t *testing.T) {
	for _, c := range []struct{ name, body string }{
		{"text that is no JSON", "not json"},
		{"a message of another kind", `{"EntryID":"0193"}`},
		{"a batch without arrival times", `{"DDBStreamBatchInfo":{"shardId":"s"}}`},
		{"a batch whose last record came before its first", failedBatch(time.Unix(100, 0), time.Unix(50, 0))},
	} {
		t.Run("refuses "+c.name, func(t *testing.T) {
			if _, err := ParseFailedBatch(c.body); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestRedriveHandler(t *testing.T) {
	first := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	log, ids := auditLog(t, 1, first)
	ev := events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "m1", Body: failedBatch(first, first), EventSource: "aws:sqs"},
		{MessageId: "m2", Body: "garbage", EventSource: "aws:sqs"},
	}}
	var logged []string
	logf := func(format string, args ...any) { logged = append(logged, format) }

	t.Run("while the queue is down the batch's message is reported failed, to come back later", func(t *testing.T) {
		resp, err := RedriveHandler(log, &fakeQueue{down: true}, logf)(t.Context(), ev)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "m1" {
			t.Fatalf("failures %+v, want m1 alone (m2 is dropped)", resp.BatchItemFailures)
		}
	})
	t.Run("once the queue is back the entry is sent and nothing fails", func(t *testing.T) {
		q := &fakeQueue{}
		resp, err := RedriveHandler(log, q, logf)(t.Context(), ev)
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("failures %+v, %v", resp.BatchItemFailures, err)
		}
		if got := sent(q); !slices.Equal(got, ids) {
			t.Fatalf("sent %v, want %v", got, ids)
		}
	})
}

func TestServe(t *testing.T) {
	var streamed, redriven int
	serve := Serve(
		func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			streamed++
			return events.DynamoDBEventResponse{}, nil
		},
		func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
			redriven++
			return events.SQSEventResponse{}, nil
		})
	for _, c := range []struct {
		name                       string
		event                      any
		wantStreamed, wantRedriven int
	}{
		{"records of the table's stream go to the stream handler", events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{record("INSERT", "AUDIT", entryID(1, 1), 1)}}, 1, 0},
		{"messages of the dead-letter queue go to the redrive", events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m", EventSource: "aws:sqs", Body: "{}"}}}, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			streamed, redriven = 0, 0
			raw, _ := json.Marshal(c.event)
			if _, err := serve(t.Context(), raw); err != nil {
				t.Fatal(err)
			}
			if streamed != c.wantStreamed || redriven != c.wantRedriven {
				t.Fatalf("streamed %d, redriven %d", streamed, redriven)
			}
		})
	}
	t.Run("refuses what is no event", func(t *testing.T) {
		if _, err := serve(t.Context(), json.RawMessage(`[1]`)); err == nil {
			t.Fatal("accepted")
		}
	})
}
