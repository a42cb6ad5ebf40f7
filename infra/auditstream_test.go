package infra

import (
	"testing"

	"github.com/flagplane/flagplane/shared/auditstream"
)

func TestStackAuditStream(t *testing.T) {
	// GIVEN the stack synthesized with default props
	tpl := defaultTemplate(t)
	fns := tpl.functions(t)
	table, _ := tpl.only(t, "AWS::DynamoDB::Table")

	// WHEN the table stream's event source mapping is read
	mappings := mappingsReading(tpl, table+".StreamArn")
	if len(mappings) != 1 {
		t.Fatalf("%d mappings read the table's stream, want 1", len(mappings))
	}
	m := mappings[0]
	var dlq string
	for _, id := range tpl.ofType("AWS::SQS::Queue") {
		if len(id) > len("AuditStreamDeadLetterQueue") && id[:len("AuditStreamDeadLetterQueue")] == "AuditStreamDeadLetterQueue" {
			dlq = id
		}
	}

	// THEN the audit-stream function alone gets new audit entries, 100 at
	// a time from the oldest record kept, and a failing batch is bisected,
	// retried a bounded number of times and then set aside, so it never
	// blocks the shard
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"the function", render(m["FunctionName"]), fns["audit-stream"]},
		{"the filter: INSERTs of keys whose partition begins with AUDIT", m["FilterCriteria"], map[string]any{"Filters": []any{map[string]any{"Pattern": auditstream.Filter()}}}},
		{"the batch size", m["BatchSize"], float64(100)},
		{"the starting position", m["StartingPosition"], "TRIM_HORIZON"},
		{"bisecting a failing batch", m["BisectBatchOnFunctionError"], true},
		{"partial batch responses", strs(m["FunctionResponseTypes"]), []string{"ReportBatchItemFailures"}},
		{"the retries", m["MaximumRetryAttempts"], float64(AuditStreamRetries)},
		{"the failure destination", render(prop(m, "DestinationConfig", "OnFailure", "Destination")), dlq + ".Arn"},
		{"the stream's view", prop(tpl.Resources[table].Properties, "StreamSpecification", "StreamViewType"), "KEYS_ONLY"},
	} {
		if !jsonEqual(c.got, c.want) {
			t.Errorf("%s: got %v, want %v", c.what, c.got, c.want)
		}
	}
	t.Run("the audit-stream function also reads the stream's dead-letter queue, one message at a time, to redrive it", func(t *testing.T) {
		redrives := mappingsReading(tpl, dlq+".Arn")
		if len(redrives) != 1 {
			t.Fatalf("%d mappings read the stream's dead-letter queue, want 1", len(redrives))
		}
		r := redrives[0]
		if render(r["FunctionName"]) != fns["audit-stream"] || r["BatchSize"] != float64(1) ||
			!jsonEqual(strs(r["FunctionResponseTypes"]), []string{"ReportBatchItemFailures"}) {
			t.Errorf("redrive mapping: %v", r)
		}
		// Lambda wants a queue's visibility timeout at least its function's timeout.
		if v, _ := tpl.Resources[dlq].Properties["VisibilityTimeout"].(float64); v < WorkerTimeout.Seconds() {
			t.Errorf("the dead-letter queue's visibility timeout is %v s, under the function's %v", v, WorkerTimeout.Seconds())
		}
	})
	t.Run("the stream's dead-letter queue is encrypted and kept 14 days", func(t *testing.T) {
		p := tpl.Resources[dlq].Properties
		if p["SqsManagedSseEnabled"] != true || p["MessageRetentionPeriod"] != float64(14*24*3600) {
			t.Errorf("dead-letter queue %s: %v", dlq, p)
		}
	})
	t.Run("exactly one worker consumes the stream, and no function sweeps an outbox", func(t *testing.T) {
		n := 0
		for _, w := range Workers() {
			if w.ConsumesAuditStream {
				n++
			}
			if w.Name == "outbox-sweep" {
				t.Error("outbox-sweep is still listed: the stream carries the outbox")
			}
		}
		if n != 1 {
			t.Errorf("%d workers consume the audit stream, want 1", n)
		}
	})
	t.Run("no API function may send to the webhook queue", func(t *testing.T) {
		for _, s := range Specs() {
			if s.API && s.PublishesWebhooks {
				t.Errorf("%s publishes webhooks", s.Name)
			}
		}
	})
}

// mappingsReading returns the properties of the event source mappings
// whose source renders as arn.
func mappingsReading(tpl *template, arn string) []map[string]any {
	var out []map[string]any
	for _, id := range tpl.ofType("AWS::Lambda::EventSourceMapping") {
		if p := tpl.Resources[id].Properties; render(p["EventSourceArn"]) == arn {
			out = append(out, p)
		}
	}
	return out
}

func TestValidateAuditStreamWorkers(t *testing.T) {
	for _, c := range []struct {
		name string
		ws   []Worker
	}{
		{"two stream consumers", []Worker{
			{Name: "a", ConsumesAuditStream: true, Access: ReadOnly, PublishesWebhooks: true},
			{Name: "b", ConsumesAuditStream: true, Access: ReadOnly, PublishesWebhooks: true}}},
		{"a stream consumer that cannot publish", []Worker{{Name: "a", ConsumesAuditStream: true, Access: ReadOnly}}},
		{"a stream consumer on a schedule too", []Worker{{Name: "a", ConsumesAuditStream: true, Access: ReadOnly, PublishesWebhooks: true, Schedule: "rate(1 minute)"}}},
	} {
		t.Run(c.name+" is refused", func(t *testing.T) {
			if err := validateWorkers(c.ws); err == nil {
				t.Fatal("accepted")
			}
		})
	}
	if err := validateWorkers([]Worker{{Name: "a", ConsumesAuditStream: true, Access: ReadOnly, PublishesWebhooks: true}}); err != nil {
		t.Fatalf("one stream consumer refused: %v", err)
	}
}
