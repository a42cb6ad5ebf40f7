package audit

// SetStreamed says whether the table's stream carries the outbox, as in
// AWS: DynamoDB Streams hands every new audit entry to the audit-stream
// function, which sends it to the webhook queue. Commit then writes no
// outbox record and deletes none, and the publisher is only told of the
// commit (the Lambda functions wire one that sends nothing, so the SDK
// data caches of the process still follow it). The local server keeps the
// outbox record and the in-process hand-off, with Sweep behind them.
func (l *Log) SetStreamed(v bool) { l.streamed.Store(v) }

// Streamed reports whether the table's stream carries the outbox.
func (l *Log) Streamed() bool { return l.streamed.Load() }
