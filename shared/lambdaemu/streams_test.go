package lambdaemu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// batchInvoker records the sequence numbers of each batch and answers
// with answer(batch index, records).
type batchInvoker struct {
	batches [][]string
	answer  func(n int, seqs []string) ([]byte, error)
}

func (b *batchInvoker) Invoke(_ context.Context, payload []byte) ([]byte, error) {
	var ev events.DynamoDBEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, err
	}
	var seqs []string
	for _, r := range ev.Records {
		seqs = append(seqs, r.Change.SequenceNumber)
	}
	b.batches = append(b.batches, seqs)
	return b.answer(len(b.batches)-1, seqs)
}

func streamRecords(n int, pk func(i int) string) []types.Record {
	var out []types.Record
	for i := range n {
		out = append(out, types.Record{EventName: types.OperationTypeInsert, Dynamodb: &types.StreamRecord{
			SequenceNumber: aws.String(fmt.Sprintf("%05d", i+1)),
			Keys:           map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk(i)}, "SK": &types.AttributeValueMemberS{Value: "x"}},
		}})
	}
	return out
}

func TestStreamSourceCheckpoints(t *testing.T) {
	audit := func(r events.DynamoDBEventRecord) bool { return r.Change.Keys["PK"].String() == "AUDIT" }
	// Every other record is an audit entry: records 1, 3, 5, ...
	recs := streamRecords(10, func(i int) string {
		if i%2 == 0 {
			return "AUDIT"
		}
		return "PROJ"
	})
	source := func(inv Invoker) *StreamSource {
		return &StreamSource{cfg: StreamSourceConfig{Function: inv, Filter: audit, BatchSize: 2, Retry: 1, Logf: func(string, ...any) {}}}
	}

	t.Run("taken batches move the checkpoint past the records the filter dropped", func(t *testing.T) {
		inv := &batchInvoker{answer: func(int, []string) ([]byte, error) { return []byte(`{"batchItemFailures":[]}`), nil }}
		s, st := source(inv), &shardState{}
		if !s.deliver(t.Context(), st, recs) {
			t.Fatal("delivery failed")
		}
		if fmt.Sprint(inv.batches) != "[[00001 00003] [00005 00007] [00009]]" || st.after != "00010" {
			t.Fatalf("batches %v, checkpoint %s", inv.batches, st.after)
		}
	})
	t.Run("a failed invocation leaves the checkpoint after the last batch taken", func(t *testing.T) {
		inv := &batchInvoker{answer: func(n int, _ []string) ([]byte, error) {
			if n == 1 {
				return nil, errors.New("crashed")
			}
			return nil, nil
		}}
		s, st := source(inv), &shardState{}
		if s.deliver(t.Context(), st, recs) {
			t.Fatal("a crash counted as delivered")
		}
		if st.after != "00003" || s.Stats().Failed != 1 {
			t.Fatalf("checkpoint %s, stats %+v", st.after, s.Stats())
		}
	})
	t.Run("a batch item failure moves the checkpoint to just before the first failed record", func(t *testing.T) {
		inv := &batchInvoker{answer: func(n int, seqs []string) ([]byte, error) {
			if n == 1 {
				return []byte(`{"batchItemFailures":[{"itemIdentifier":"` + seqs[1] + `"}]}`), nil
			}
			return nil, nil
		}}
		s, st := source(inv), &shardState{}
		if s.deliver(t.Context(), st, recs) {
			t.Fatal("a partial failure counted as delivered")
		}
		if st.after != "00005" || s.Stats().Partial != 1 || s.Stats().Records != 3 {
			t.Fatalf("checkpoint %s, stats %+v", st.after, s.Stats())
		}
	})
}
