package infra

import (
	"fmt"
	"regexp"
	"time"

	"github.com/flagplane/flagplane/shared/catalog"
)

// Access is what a function may do to the table.
type Access int

const (
	// ReadOnly functions get and query items. The one write they make is the
	// lazy creation of the cursor-signing secret, a conditional PutItem in the
	// META partition, so that is all they may write.
	ReadOnly Access = iota + 1
	// ReadWrite functions also put, delete and condition-check items: every
	// element kind the store puts in a TransactWriteItems call (Put, Delete,
	// ConditionCheck) is authorized by exactly those actions.
	ReadWrite
)

func (a Access) String() string {
	switch a {
	case ReadOnly:
		return "read-only"
	case ReadWrite:
		return "read-write"
	}
	return fmt.Sprintf("Access(%d)", int(a))
}

// Worker is a function outside the HTTP API: fed by the webhook queue, run
// on a schedule, or both.
type Worker struct {
	// Name is the function's folder under functions/, and so its asset folder.
	Name string
	// Schedule is an EventBridge schedule expression such as
	// "rate(5 minutes)" or "cron(0 3 * * ? *)"; empty when not periodic.
	Schedule string
	// ConsumesWebhookQueue subscribes the function to the webhook dispatch
	// queue, reporting failures per message (partial batch responses).
	ConsumesWebhookQueue bool
	// Access is what the function does to the table.
	Access Access
	// PublishesWebhooks lets the function send to the webhook dispatch queue
	// (the audit stream hands changes to it, webhook delivery its follow-ups).
	PublishesWebhooks bool
	// ConsumesAuditStream subscribes the function to the table's stream,
	// filtered to new audit entries (see auditstream.Filter).
	ConsumesAuditStream bool
	// ConsumesIngestQueue subscribes the function to the SDK event ingest
	// queue, reporting failures per message (partial batch responses).
	ConsumesIngestQueue bool
	// Timeout, when set, replaces WorkerTimeout: a batch job with a budget
	// of its own (the usage rollup), never a queue consumer.
	Timeout time.Duration
	// WritesExportStage grants s3:PutObject under the data export
	// bucket's events/ prefix, and nothing else of it.
	WritesExportStage bool
}

// workers is the ONE list of functions that are not API groups. When a
// worker's functions/<name>/main.go lands, one entry here is all the stack
// needs: the function, its role, its schedule rule or queue subscription,
// and the assertion tests all follow this list. For example:
//
//	{Name: "webhook-delivery", ConsumesWebhookQueue: true, Access: ReadWrite},
//	{Name: "audit-stream", ConsumesAuditStream: true, Access: ReadOnly, PublishesWebhooks: true},
//	{Name: "usage-rollup", Schedule: "rate(1 hour)", Access: ReadWrite},
//
// Only functions that exist are listed: the stack never deploys a placeholder.
var workers = []Worker{
	// Fans committed changes out to webhooks and delivers them; it writes
	// delivery attempts and sends per-webhook messages back to the queue.
	{Name: "webhook-delivery", ConsumesWebhookQueue: true, Access: ReadWrite, PublishesWebhooks: true},
	// The table's stream is the outbox: this function hands every new
	// audit entry to the webhook queue, so commits send nothing and write
	// no outbox record (and no sweep is needed: the stream keeps a record
	// until the function took it).
	{Name: "audit-stream", ConsumesAuditStream: true, Access: ReadOnly, PublishesWebhooks: true},
	// The scheduled jobs commit audited changes, which the stream hands off.
	{Name: "expiring-targets", Schedule: "rate(1 minute)", Access: ReadWrite},
	{Name: "approvals-scheduler", Schedule: "rate(1 minute)", Access: ReadWrite},
	// Aggregates the SDK event payloads the events function queues; it
	// commits no audited change, so it publishes no webhooks.
	{Name: "events-ingest", ConsumesIngestQueue: true, Access: ReadWrite},
	// Rolls the hour cells of SDK events up into the usage days, hourly
	// at :05 (an hour is complete two minutes after it ends); it reads and
	// writes the table and nothing else. A day of a large account takes
	// well under Lambda's 15 minutes (see docs/usage.md).
	{Name: "usage-rollup", Schedule: "cron(5 * * * ? *)", Access: ReadWrite, Timeout: UsageRollupTimeout},
	// Moves the SDK events spooled for warehouse destinations to the S3
	// stage: it reads and writes the table (spool, batches, counters) and
	// puts objects in the stage, nothing else.
	{Name: "destinations-export", Schedule: "rate(5 minutes)", Access: ReadWrite, WritesExportStage: true},
	// Rewrites big segment stores' synchronized-on time, which SDKs call
	// stale after two minutes; it reads the table and writes only the
	// stores' status (and a sync lease), and reaches the stores over the
	// network, not through AWS permissions of its own.
	{Name: "big-segments-refresh", Schedule: "rate(1 minute)", Access: ReadWrite},
	// Runs big segment imports and exports (jobs a request recorded and
	// staged), resuming each where the last run stopped; an import ends with
	// the segment's audited update, which the stream hands off.
	{Name: "big-segment-jobs", Schedule: "rate(1 minute)", Access: ReadWrite, Timeout: UsageRollupTimeout},
}

// DestinationsGroup is the catalog group of warehouse destinations: its
// function names the stage in setup scripts (no S3 access) and seals key
// pairs with the secret the stack generates.
const DestinationsGroup = "destinations"

// UsageRollupTimeout is the usage rollup's budget: Lambda's maximum.
const UsageRollupTimeout = 15 * time.Minute

// IngestGroup is the catalog group SDKs post events to; its function
// queues payloads for the events-ingest worker.
const IngestGroup = "events"

// Workers returns the functions that are not API groups.
func Workers() []Worker { return append([]Worker(nil), workers...) }

// Timeouts. API functions answer interactive requests, and API Gateway
// gives up on an integration after 29 s anyway; workers get longer because
// a webhook delivery waits on someone else's server.
const (
	APIFunctionTimeout = 10 * time.Second
	WorkerTimeout      = 30 * time.Second
	// WebhookQueueVisibility follows AWS's advice for Lambda event sources:
	// six times the consumer's timeout, so a message is never handed to a
	// second invocation while the first may still be working on it.
	WebhookQueueVisibility = 6 * WorkerTimeout
)

// Spec is one Lambda function of the deployment and everything it is
// allowed to do; the stack builds from specs and the tests check them.
type Spec struct {
	Name string
	// API is true for resource-group functions, which serve routes.
	API     bool
	Access  Access
	Timeout time.Duration
	// PublishesWebhooks grants sqs:SendMessage on the dispatch queue and
	// passes its URL in the environment.
	PublishesWebhooks    bool
	Schedule             string
	ConsumesWebhookQueue bool
	// ConsumesAuditStream subscribes the function to the table's stream.
	ConsumesAuditStream bool
	// PublishesIngest grants sqs:SendMessage on the ingest queue and passes
	// its URL; ConsumesIngestQueue subscribes the function to it.
	PublishesIngest     bool
	ConsumesIngestQueue bool
	// NamesExportStage passes the data export bucket's name (and account)
	// in the environment; WritesExportStage also grants s3:PutObject under
	// its events/ prefix.
	NamesExportStage  bool
	WritesExportStage bool
	// SealsDestinationKeys passes the secret destination key pairs are
	// sealed with.
	SealsDestinationKeys bool
}

// Env is the function's environment: FunctionEnv, with the webhook queue
// only for functions that publish to it and rate limits only for API ones. The stack and the end-to-end
// harness both use it, so the harness runs each function as AWS would.
func (s Spec) Env(r Resources) map[string]string {
	if !s.PublishesWebhooks {
		r.WebhookQueueURL = ""
	}
	if !s.PublishesIngest {
		r.IngestQueueURL = ""
	}
	if !s.API {
		r.RateLimits = nil // workers serve no requests
	}
	if !s.NamesExportStage && !s.WritesExportStage {
		r.ExportBucket, r.ExportAccountID = "", ""
	}
	if !s.SealsDestinationKeys {
		r.DestinationKeySecret = ""
	}
	return FunctionEnv(r)
}

// SpecOf returns the spec of the named function.
func SpecOf(name string) (Spec, bool) {
	for _, s := range Specs() {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

// GroupAccess is ReadOnly for a group whose operations all have read scope,
// ReadWrite otherwise.
func GroupAccess(group string) (Access, error) {
	ops, err := catalog.Group(group)
	if err != nil {
		return 0, err
	}
	for _, op := range ops {
		if op.Scope != catalog.Read {
			return ReadWrite, nil
		}
	}
	return ReadOnly, nil
}

// Specs returns the API group functions followed by the workers.
//
// No API group publishes: the table's stream carries every committed
// change to the audit-stream worker, which alone hands changes to the
// dispatch queue, so no API function gets sqs:SendMessage or the queue.
func Specs() []Spec { return specs(workers) }

func specs(ws []Worker) []Spec {
	var out []Spec
	for _, g := range Functions() {
		access, err := GroupAccess(g)
		if err != nil {
			// Functions() comes from the catalog, so this cannot happen.
			panic(fmt.Sprintf("infra: group %q: %v", g, err))
		}
		spec := Spec{
			Name: g, API: true, Access: access, Timeout: APIFunctionTimeout,
		}
		if g == DestinationsGroup {
			spec.NamesExportStage, spec.SealsDestinationKeys = true, true
		}
		if g == IngestGroup {
			// The events function resolves the SDK credential (reads) and
			// queues the payload; the ingest worker writes the aggregates.
			spec.Access, spec.PublishesIngest = ReadOnly, true
		}
		out = append(out, spec)
	}
	for _, w := range ws {
		timeout := WorkerTimeout
		if w.Timeout > 0 {
			timeout = w.Timeout
		}
		out = append(out, Spec{
			Name: w.Name, Access: w.Access, Timeout: timeout,
			PublishesWebhooks: w.PublishesWebhooks, Schedule: w.Schedule,
			ConsumesWebhookQueue: w.ConsumesWebhookQueue, ConsumesIngestQueue: w.ConsumesIngestQueue,
			ConsumesAuditStream: w.ConsumesAuditStream,
			WritesExportStage:   w.WritesExportStage,
		})
	}
	return out
}

var (
	functionName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	// schedule accepts EventBridge's two forms; EventBridge checks the inside.
	schedule = regexp.MustCompile(`^(rate|cron)\(.+\)$`)
)

// validateWorkers refuses a worker list the stack cannot build correctly.
func validateWorkers(ws []Worker) error {
	taken := map[string]bool{"flagplane": true} // the local all-in-one binary
	for _, g := range Functions() {
		taken[g] = true
	}
	consumers, ingestConsumers, streamConsumers := 0, 0, 0
	for i, w := range ws {
		switch {
		case !functionName.MatchString(w.Name):
			return fmt.Errorf("worker %d: name %q is not a lower-case folder name", i, w.Name)
		case taken[w.Name]:
			return fmt.Errorf("worker %q: name already used by a group, the local binary or another worker", w.Name)
		case w.Access != ReadOnly && w.Access != ReadWrite:
			return fmt.Errorf("worker %q: set Access to ReadOnly or ReadWrite", w.Name)
		case w.Schedule != "" && !schedule.MatchString(w.Schedule):
			return fmt.Errorf("worker %q: schedule %q is neither rate(...) nor cron(...)", w.Name, w.Schedule)
		case w.Schedule == "" && !w.ConsumesWebhookQueue && !w.ConsumesIngestQueue && !w.ConsumesAuditStream:
			return fmt.Errorf("worker %q: nothing would ever invoke it; give it a Schedule, ConsumesWebhookQueue, ConsumesIngestQueue or ConsumesAuditStream", w.Name)
		case w.ConsumesWebhookQueue && w.ConsumesIngestQueue:
			return fmt.Errorf("worker %q: consume one queue, not both", w.Name)
		case w.ConsumesAuditStream && (w.ConsumesWebhookQueue || w.ConsumesIngestQueue || w.Schedule != ""):
			return fmt.Errorf("worker %q: the audit stream's consumer takes nothing else", w.Name)
		case w.ConsumesAuditStream && !w.PublishesWebhooks:
			return fmt.Errorf("worker %q: the audit stream's consumer must publish to the webhook queue", w.Name)
		}
		taken[w.Name] = true
		if w.ConsumesWebhookQueue {
			consumers++
		}
		if w.ConsumesIngestQueue {
			ingestConsumers++
		}
		if w.ConsumesAuditStream {
			streamConsumers++
		}
	}
	if streamConsumers > 1 {
		// Each would send every change: webhooks would fire twice.
		return fmt.Errorf("%d workers consume the audit stream; at most one may", streamConsumers)
	}
	if consumers > 1 {
		// Two subscribers would each see only some messages.
		return fmt.Errorf("%d workers consume the webhook queue; at most one may", consumers)
	}
	if ingestConsumers > 1 {
		return fmt.Errorf("%d workers consume the ingest queue; at most one may", ingestConsumers)
	}
	return nil
}
