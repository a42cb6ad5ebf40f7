package infra

import (
	"strings"
	"testing"
)

// ingestQueue is the logical id of the SDK event ingest queue (the one
// with a redrive policy whose id says so).
func ingestQueue(tb testing.TB, tpl *template) string {
	tb.Helper()
	var ids []string
	for _, id := range tpl.ofType("AWS::SQS::Queue") {
		if tpl.Resources[id].Properties["RedrivePolicy"] != nil && strings.HasPrefix(id, "IngestQueue") {
			ids = append(ids, id)
		}
	}
	if len(ids) != 1 {
		tb.Fatalf("want one ingest queue with a redrive policy, found %v", ids)
	}
	return ids[0]
}

func TestStackIngest(t *testing.T) {
	// GIVEN the default stack
	tpl := defaultTemplate(t)
	queue := ingestQueue(t, tpl)
	fns := tpl.functions(t)
	tests := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"the ingest queue sends exhausted payloads to a dead-letter queue of its own, encrypted and TLS only", func(t *testing.T) {
			p := tpl.Resources[queue].Properties
			dlq := render(prop(p, "RedrivePolicy", "deadLetterTargetArn"))
			if !strings.HasPrefix(dlq, "IngestDeadLetterQueue") {
				t.Errorf("dead-letter target %s, want the ingest dead-letter queue", dlq)
			}
			if p["SqsManagedSseEnabled"] != true {
				t.Errorf("ingest queue not encrypted: %v", p)
			}
		}},
		{"the events-ingest worker consumes the ingest queue with partial batch responses", func(t *testing.T) {
			found := false
			for _, id := range tpl.ofType("AWS::Lambda::EventSourceMapping") {
				p := tpl.Resources[id].Properties
				if !strings.HasPrefix(render(p["EventSourceArn"]), queue) {
					continue
				}
				found = true
				if render(p["FunctionName"]) != fns["events-ingest"] {
					t.Errorf("ingest queue feeds %s, want the events-ingest function", render(p["FunctionName"]))
				}
				if !strings.Contains(render(p["FunctionResponseTypes"]), "ReportBatchItemFailures") {
					t.Errorf("no partial batch responses: %v", p)
				}
			}
			if !found {
				t.Error("nothing consumes the ingest queue")
			}
		}},
		{"the events function gets the ingest queue's URL and no other function does", func(t *testing.T) {
			for name, fn := range fns {
				env := envOf(tpl.Resources[fn].Properties)
				_, has := env["FLAGPLANE_INGEST_QUEUE_URL"]
				if has != (name == IngestGroup) {
					t.Errorf("function %s: ingest queue URL present %v", name, has)
				}
			}
		}},
		{"the ingest queue and its dead-letter queue are outputs", func(t *testing.T) {
			for _, o := range []string{OutputIngestQueueURL, OutputIngestDLQueueURL} {
				if _, ok := tpl.Outputs[o]; !ok {
					t.Errorf("no output %s", o)
				}
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.check)
	}
}

func TestEventsFunctionOnlyQueues(t *testing.T) {
	// GIVEN the catalog's events group, where SDKs post their events
	// WHEN its function's spec is derived
	spec, ok := SpecOf(IngestGroup)
	// THEN it reads the table (credentials), sends to the ingest queue and publishes no webhooks
	if !ok || !spec.API || spec.Access != ReadOnly || spec.PublishesWebhooks || !spec.PublishesIngest {
		t.Fatalf("events function spec %+v (found %v), want a read-only API function that queues payloads", spec, ok)
	}
	worker, ok := SpecOf("events-ingest")
	if !ok || worker.Access != ReadWrite || !worker.ConsumesIngestQueue || worker.PublishesWebhooks {
		t.Fatalf("events-ingest spec %+v (found %v), want a read-write consumer of the ingest queue", worker, ok)
	}
}
