package auditstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/webhook"
)

func record(event, pk, sk string, seq int) events.DynamoDBEventRecord {
	return events.DynamoDBEventRecord{EventName: event, EventSource: "aws:dynamodb", Change: events.DynamoDBStreamRecord{
		Keys: map[string]events.DynamoDBAttributeValue{
			store.AttrPK: events.NewStringAttribute(pk), store.AttrSK: events.NewStringAttribute(sk),
		},
		SequenceNumber: fmt.Sprintf("%021d", seq), StreamViewType: "KEYS_ONLY",
	}}
}

func entryID(ms int64, n int) string { return fmt.Sprintf("%012x%012x", ms, n) }

func TestFilter(t *testing.T) {
	t.Run("the mapping's filter is INSERTs of keys whose partition begins with AUDIT", func(t *testing.T) {
		want := `{"dynamodb":{"Keys":{"PK":{"S":[{"prefix":"AUDIT"}]}}},"eventName":["INSERT"]}`
		if got := Filter(); got != want {
			t.Errorf("Filter() = %s, want %s", got, want)
		}
	})
	id := entryID(1_795_219_200_000, 1)
	for _, c := range []struct {
		name string
		rec  events.DynamoDBEventRecord
		want bool
	}{
		{"a new entry of the unsharded log", record("INSERT", "AUDIT", id, 1), true},
		{"a new entry of a shard", record("INSERT", "AUDIT#5", id, 1), true},
		{"a resource write", record("INSERT", "PROJ#shop", "FLAG#new-checkout", 1), false},
		{"an outbox record of the local layout", record("INSERT", store.OutboxPK, id, 1), false},
		{"an entry rewritten", record("MODIFY", "AUDIT", id, 1), false},
		{"an entry expired", record("REMOVE", "AUDIT", id, 1), false},
		{"a numeric partition key", func() events.DynamoDBEventRecord {
			r := record("INSERT", "AUDIT", id, 1)
			r.Change.Keys[store.AttrPK] = events.NewNumberAttribute("1")
			return r
		}(), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Match(c.rec); got != c.want {
				t.Errorf("Match = %v, want %v", got, c.want)
			}
		})
	}
	t.Run("the record's entry id and date come from the sort key", func(t *testing.T) {
		rec, err := Outbox(record("INSERT", "AUDIT", id, 1))
		if err != nil || rec.EntryID != id || rec.Date != 1_795_219_200_000 {
			t.Errorf("Outbox = %+v, %v", rec, err)
		}
		if _, err := Outbox(record("INSERT", "AUDIT", "not-an-id", 1)); err == nil {
			t.Error("a sort key that is no entry id was taken")
		}
	})
}

func TestBatches(t *testing.T) {
	for _, c := range []struct{ n, size, want int }{{0, 10, 0}, {1, 10, 1}, {10, 10, 1}, {11, 10, 2}, {100, 10, 10}, {101, 10, 11}} {
		in := make([]int, c.n)
		for i := range in {
			in[i] = i
		}
		got := Batches(in, c.size)
		if len(got) != c.want {
			t.Fatalf("%d in batches of %d: %d batches, want %d", c.n, c.size, len(got), c.want)
		}
		var flat []int
		for _, b := range got {
			if len(b) == 0 || len(b) > c.size {
				t.Fatalf("%d in batches of %d: a batch of %d", c.n, c.size, len(b))
			}
			flat = append(flat, b...)
		}
		if c.n > 0 && !reflect.DeepEqual(flat, in) {
			t.Fatalf("%d in batches of %d: order lost: %v", c.n, c.size, flat)
		}
	}
}

// fakeQueue records batches; it refuses the entries listed in refuse (by
// entry id) and fails whole calls while down.
type fakeQueue struct {
	calls  [][]webhook.Message
	refuse map[string]bool
	down   bool
}

func (q *fakeQueue) SendBatch(_ context.Context, msgs []webhook.Message) ([]int, error) {
	if len(msgs) > MaxSendBatch {
		return nil, fmt.Errorf("%d messages in one call", len(msgs))
	}
	if q.down {
		return nil, errors.New("queue unreachable")
	}
	q.calls = append(q.calls, msgs)
	var failed []int
	for i, m := range msgs {
		if q.refuse[m.EntryID] {
			failed = append(failed, i)
		}
	}
	return failed, nil
}

func TestHandler(t *testing.T) {
	var ev events.DynamoDBEvent
	var ids []string
	for i := range 25 {
		id := entryID(1_795_219_200_000+int64(i), i)
		ids = append(ids, id)
		ev.Records = append(ev.Records, record("INSERT", "AUDIT", id, 2*i+1))
		// Resource writes of the same transactions come through when unfiltered; they are skipped.
		ev.Records = append(ev.Records, record("INSERT", "PROJ#p", fmt.Sprintf("FLAG#f%d", i), 2*i+2))
	}
	quiet := func(string, ...any) {}

	t.Run("every entry is sent once, in order, in calls of at most 10", func(t *testing.T) {
		q := &fakeQueue{}
		resp, err := Handler(q, quiet)(t.Context(), ev)
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("resp %+v, %v", resp, err)
		}
		if len(q.calls) != 3 || len(q.calls[0]) != 10 || len(q.calls[2]) != 5 {
			t.Fatalf("calls of %v messages, want 10, 10, 5", lens(q.calls))
		}
		var sent []string
		for _, c := range q.calls {
			for _, m := range c {
				sent = append(sent, m.EntryID)
			}
		}
		if !reflect.DeepEqual(sent, ids) {
			t.Fatalf("sent %v, want %v", sent, ids)
		}
		body, _ := json.Marshal(q.calls[0][0])
		if string(body) != `{"entryId":"`+ids[0]+`"}` {
			t.Errorf("message %s is not the hand-off's", body)
		}
	})
	t.Run("entries SQS refused are reported by their sequence numbers", func(t *testing.T) {
		q := &fakeQueue{refuse: map[string]bool{ids[3]: true, ids[17]: true}}
		resp, _ := Handler(q, quiet)(t.Context(), ev)
		got := []string{}
		for _, f := range resp.BatchItemFailures {
			got = append(got, f.ItemIdentifier)
		}
		want := []string{ev.Records[6].Change.SequenceNumber, ev.Records[34].Change.SequenceNumber}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("failures %v, want %v", got, want)
		}
	})
	t.Run("a queue that cannot be reached fails every entry", func(t *testing.T) {
		q := &fakeQueue{down: true}
		resp, _ := Handler(q, quiet)(t.Context(), ev)
		if len(resp.BatchItemFailures) != 25 {
			t.Errorf("%d failures, want 25", len(resp.BatchItemFailures))
		}
	})
}

func lens(calls [][]webhook.Message) []int {
	var out []int
	for _, c := range calls {
		out = append(out, len(c))
	}
	return out
}
