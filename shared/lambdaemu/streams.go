package lambdaemu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// StreamSourceConfig is a DynamoDB stream event source mapping.
type StreamSourceConfig struct {
	// Client reads the stream (DynamoDB Local serves the streams API on
	// its own endpoint).
	Client *dynamodbstreams.Client
	// StreamARN is the table's latest stream.
	StreamARN string
	// Function is invoked with events.DynamoDBEvent batches.
	Function Invoker
	// Filter lets a record through to the function, as the mapping's
	// filter criteria do; nil lets every record through. Records it
	// drops are passed over, never sent.
	Filter func(events.DynamoDBEventRecord) bool
	// BatchSize is the most records per invocation (default 100).
	BatchSize int
	// Poll is the wait between two reads of the shards (default 100 ms);
	// Retry the wait after a failed invocation (default 200 ms).
	Poll, Retry time.Duration
	// Region and the stream ARN are stamped on the records.
	Region string
	// Logf, when set, tells of failed invocations.
	Logf func(format string, args ...any)
}

// StreamStats counts what a stream source did.
type StreamStats struct {
	// Invocations counts every invoke, Failed those that failed (the
	// function crashed, timed out or returned an error) and Partial those
	// that reported batch item failures.
	Invocations, Failed, Partial int
	// Records counts records the function took (acknowledged).
	Records int
}

// StreamSource plays Lambda's event source mapping for a DynamoDB stream:
// it reads every shard from its oldest record, applies the filter, invokes
// the function with batches in stream order, and moves a shard's
// checkpoint only past records the function took. A failed invocation is
// retried from the same checkpoint; with batch item failures, the
// checkpoint moves to just before the first failed record and the batch
// is read again from there. So a record is never skipped, and after a
// crash some are sent twice, as with Lambda.
type StreamSource struct {
	cfg    StreamSourceConfig
	cancel context.CancelFunc
	done   chan struct{}

	passing sync.Mutex // held while a pass runs
	mu      sync.Mutex
	paused  bool
	stats   StreamStats
	shards  map[string]*shardState
	idle    chan struct{} // closed and replaced after each pass over the shards
}

type shardState struct {
	after  string // the checkpoint: the last record taken; empty at the start
	closed bool   // read to its end
}

// StartStreamSource starts polling; Close stops it.
func StartStreamSource(cfg StreamSourceConfig) (*StreamSource, error) {
	if cfg.Client == nil || cfg.StreamARN == "" || cfg.Function == nil {
		return nil, errors.New("lambdaemu: a stream source needs a client, a stream ARN and a function")
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 100
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 100 * time.Millisecond
	}
	if cfg.Retry <= 0 {
		cfg.Retry = 200 * time.Millisecond
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &StreamSource{cfg: cfg, cancel: cancel, done: make(chan struct{}), shards: map[string]*shardState{}, idle: make(chan struct{})}
	go s.run(ctx)
	return s, nil
}

// Close stops polling and waits for the invocation in flight.
func (s *StreamSource) Close() {
	s.cancel()
	<-s.done
}

// Pause stops invoking (records wait in the stream) until Resume; it
// returns once the pass in flight, if any, has ended.
func (s *StreamSource) Pause() {
	s.mu.Lock()
	s.paused = true
	s.mu.Unlock()
	s.passing.Lock()
	s.passing.Unlock() //nolint:staticcheck // waits for the pass in flight
}

// Resume undoes Pause.
func (s *StreamSource) Resume() { s.mu.Lock(); s.paused = false; s.mu.Unlock() }

// Stats returns the counts so far.
func (s *StreamSource) Stats() StreamStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// ResetStats zeroes the counts.
func (s *StreamSource) ResetStats() {
	s.mu.Lock()
	s.stats = StreamStats{}
	s.mu.Unlock()
}

// Sync waits until two whole passes over the shards have ended, so every
// record written before the call has been offered to the function.
func (s *StreamSource) Sync(ctx context.Context) error {
	for range 2 {
		s.mu.Lock()
		ch := s.idle
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.done:
			return ErrClosed
		}
	}
	return nil
}

func (s *StreamSource) run(ctx context.Context) {
	defer close(s.done)
	for ctx.Err() == nil {
		s.passing.Lock()
		s.mu.Lock()
		paused := s.paused
		s.mu.Unlock()
		if !paused {
			if err := s.pass(ctx); err != nil && ctx.Err() == nil {
				s.cfg.Logf("lambdaemu: stream source: %v", err)
			}
			s.mu.Lock()
			close(s.idle)
			s.idle = make(chan struct{})
			s.mu.Unlock()
		}
		s.passing.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(s.cfg.Poll):
		}
	}
}

// pass reads every shard once from its checkpoint to its present end.
func (s *StreamSource) pass(ctx context.Context) error {
	var shards []types.Shard
	var start *string
	for {
		out, err := s.cfg.Client.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(s.cfg.StreamARN), ExclusiveStartShardId: start})
		if err != nil {
			return fmt.Errorf("describe stream: %w", err)
		}
		shards = append(shards, out.StreamDescription.Shards...)
		if out.StreamDescription.LastEvaluatedShardId == nil {
			break
		}
		start = out.StreamDescription.LastEvaluatedShardId
	}
	for _, sh := range shards {
		id := aws.ToString(sh.ShardId)
		st := s.shards[id]
		if st == nil {
			st = &shardState{}
			s.shards[id] = st
		}
		if st.closed {
			continue
		}
		if err := s.readShard(ctx, id, st); err != nil {
			return err
		}
	}
	return nil
}

func (s *StreamSource) readShard(ctx context.Context, id string, st *shardState) error {
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(s.cfg.StreamARN), ShardId: aws.String(id), ShardIteratorType: types.ShardIteratorTypeTrimHorizon}
	if st.after != "" {
		in.ShardIteratorType, in.SequenceNumber = types.ShardIteratorTypeAfterSequenceNumber, aws.String(st.after)
	}
	it, err := s.cfg.Client.GetShardIterator(ctx, in)
	if err != nil {
		return fmt.Errorf("shard %s: iterator: %w", id, err)
	}
	iter := it.ShardIterator
	for iter != nil && ctx.Err() == nil {
		out, err := s.cfg.Client.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter, Limit: aws.Int32(1000)})
		if err != nil {
			return fmt.Errorf("shard %s: records: %w", id, err)
		}
		if ok := s.deliver(ctx, st, out.Records); !ok {
			return nil // retried from the checkpoint at the next pass
		}
		if out.NextShardIterator == nil {
			st.closed = true
			return nil
		}
		if len(out.Records) == 0 {
			return nil // the shard's present end
		}
		iter = out.NextShardIterator
	}
	return nil
}

// deliver hands recs (one read, in stream order) to the function in
// batches, moving the checkpoint past what was taken; false when a batch
// failed, after the wait before its retry.
func (s *StreamSource) deliver(ctx context.Context, st *shardState, recs []types.Record) bool {
	var batch []events.DynamoDBEventRecord
	flush := func(through string) bool {
		if len(batch) == 0 {
			st.after = through
			return true
		}
		failedAt, err := s.invoke(ctx, batch)
		switch {
		case err != nil:
			s.cfg.Logf("lambdaemu: stream source: invoke with %d records: %v; retrying", len(batch), err)
		case failedAt >= 0:
			// Taken up to the first failure: the checkpoint moves to just before it.
			if failedAt > 0 {
				st.after = batch[failedAt-1].Change.SequenceNumber
			}
			s.mu.Lock()
			s.stats.Records += failedAt
			s.mu.Unlock()
		default:
			st.after = through
			s.mu.Lock()
			s.stats.Records += len(batch)
			s.mu.Unlock()
			batch = batch[:0]
			return true
		}
		select {
		case <-ctx.Done():
		case <-time.After(s.cfg.Retry):
		}
		return false
	}
	for _, r := range recs {
		ev := eventRecord(r, s.cfg.Region, s.cfg.StreamARN)
		if s.cfg.Filter == nil || s.cfg.Filter(ev) {
			batch = append(batch, ev)
		}
		if len(batch) == s.cfg.BatchSize {
			if !flush(ev.Change.SequenceNumber) {
				return false
			}
		}
	}
	if len(recs) > 0 {
		return flush(aws.ToString(recs[len(recs)-1].Dynamodb.SequenceNumber))
	}
	return true
}

// invoke runs one batch; failedAt is the index of the first record the
// function reported failed, -1 when none.
func (s *StreamSource) invoke(ctx context.Context, batch []events.DynamoDBEventRecord) (failedAt int, err error) {
	payload, err := json.Marshal(events.DynamoDBEvent{Records: batch})
	if err != nil {
		return -1, err
	}
	s.mu.Lock()
	s.stats.Invocations++
	s.mu.Unlock()
	raw, err := s.cfg.Function.Invoke(ctx, payload)
	if err == nil {
		var resp events.DynamoDBEventResponse
		if len(raw) > 0 && string(raw) != "null" {
			if jerr := json.Unmarshal(raw, &resp); jerr != nil {
				err = fmt.Errorf("batch response %s: %w", raw, jerr)
			}
		}
		if err == nil {
			failedAt = -1
			for _, f := range resp.BatchItemFailures {
				for i, r := range batch {
					if r.Change.SequenceNumber == f.ItemIdentifier && (failedAt < 0 || i < failedAt) {
						failedAt = i
					}
				}
			}
			if failedAt >= 0 {
				s.mu.Lock()
				s.stats.Partial++
				s.mu.Unlock()
			}
			return failedAt, nil
		}
	}
	s.mu.Lock()
	s.stats.Failed++
	s.mu.Unlock()
	return -1, err
}

// eventRecord is r as Lambda hands it to the function.
func eventRecord(r types.Record, region, arn string) events.DynamoDBEventRecord {
	ev := events.DynamoDBEventRecord{
		AWSRegion: region, EventID: aws.ToString(r.EventID), EventName: string(r.EventName),
		EventSource: "aws:dynamodb", EventVersion: aws.ToString(r.EventVersion), EventSourceArn: arn,
	}
	if d := r.Dynamodb; d != nil {
		ev.Change = events.DynamoDBStreamRecord{
			Keys: attributes(d.Keys), NewImage: attributes(d.NewImage), OldImage: attributes(d.OldImage),
			SequenceNumber: aws.ToString(d.SequenceNumber), SizeBytes: aws.ToInt64(d.SizeBytes), StreamViewType: string(d.StreamViewType),
		}
		if d.ApproximateCreationDateTime != nil {
			ev.Change.ApproximateCreationDateTime = events.SecondsEpochTime{Time: *d.ApproximateCreationDateTime}
		}
	}
	return ev
}

// attributes converts the scalar attributes a key or image holds (string,
// number, binary, boolean); others are left out.
func attributes(in map[string]types.AttributeValue) map[string]events.DynamoDBAttributeValue {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]events.DynamoDBAttributeValue, len(in))
	for k, v := range in {
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			out[k] = events.NewStringAttribute(v.Value)
		case *types.AttributeValueMemberN:
			out[k] = events.NewNumberAttribute(v.Value)
		case *types.AttributeValueMemberB:
			out[k] = events.NewBinaryAttribute(v.Value)
		case *types.AttributeValueMemberBOOL:
			out[k] = events.NewBooleanAttribute(v.Value)
		}
	}
	return out
}
