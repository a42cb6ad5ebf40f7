// Package app wires the store, the domain services and the HTTP kit into
// handlers: one per resource group for the Lambda functions, and one for
// every route for the local server.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/flagplane/flagplane/shared/awsenv"
	"github.com/flagplane/flagplane/shared/ingest/sqsingest"
	"github.com/flagplane/flagplane/shared/webhook/sqsqueue"

	"github.com/flagplane/flagplane/shared/aiconfig"
	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/application"
	"github.com/flagplane/flagplane/shared/approval"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/evaluation"
	"github.com/flagplane/flagplane/shared/expiring"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/member"
	"github.com/flagplane/flagplane/shared/oauth"
	"github.com/flagplane/flagplane/shared/pipeline"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/releasepolicy"
	"github.com/flagplane/flagplane/shared/reps"
	"github.com/flagplane/flagplane/shared/role"
	"github.com/flagplane/flagplane/shared/sdkcontext"
	"github.com/flagplane/flagplane/shared/sdkdata"
	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/dynamo"
	"github.com/flagplane/flagplane/shared/team"
	"github.com/flagplane/flagplane/shared/token"
	"github.com/flagplane/flagplane/shared/trigger"
	"github.com/flagplane/flagplane/shared/webhook"
)

// Settings are the options shared by every way of running.
type Settings struct {
	// Approvals turns the approvals feature on: approval settings are shown and patchable.
	Approvals bool
	// AccountID is stamped on audit entries; when empty the caller's token supplies it.
	AccountID string
	// AllowPrivateWebhooks lets webhooks reach loopback and private
	// addresses: local mode and tests; never in AWS unless asked.
	AllowPrivateWebhooks bool
	// RateLimits are the requests per ten seconds this process admits; the
	// zero value limits nothing (tests). `flagplane serve` and the Lambda
	// functions start from api.DefaultRateLimits.
	RateLimits api.RateLimits
	// CORSOrigins are the browser origins allowed to call ("*" for all);
	// none turns CORS off. In AWS, API Gateway answers CORS instead.
	CORSOrigins []string
	// SDKHeartbeat is the interval of SDK stream heartbeats
	// (sdkapi.DefaultHeartbeat when zero).
	SDKHeartbeat time.Duration
	// NoSDKStreaming answers the SDK stream with a 404 telling SDKs to
	// poll: the Lambda functions, which hold no long-lived connection.
	NoSDKStreaming bool
	// Clock is the time every service reads (time.Now when nil): tests set
	// it to move time.
	Clock func() time.Time
	// Ingest takes SDK event payloads: the local server's inbox, the ingest
	// queue in AWS; nil aggregates each payload in its request.
	Ingest ingest.Queue
	// AuditShards spreads the audit log over this many partitions (see
	// audit.Log.SetShards); 0 means 1. Every process of a table uses the same.
	AuditShards int
	// AuditStream says the table's stream carries the outbox (AWS, and the
	// end-to-end tier): commits write no outbox record and send nothing to
	// the webhook queue; the audit-stream function hands every new audit
	// entry to it instead (see audit.Log.SetStreamed).
	AuditStream bool
}

// App holds the wired services.
type App struct {
	Table     store.Table
	Services  Services
	Authn     *token.Authenticator
	Publisher audit.Publisher
	Logger    *slog.Logger
	// SDK serves LaunchDarkly's SDKs; every commit of this process tells it.
	SDK *sdkdata.Service

	settings Settings

	newGroups  []NewGroup
	groupsOnce sync.Once
	groups     []Group // see Groups
}

// New wires the services over table, and the groups it serves (built on
// first use, see Groups).
func New(table store.Table, publisher audit.Publisher, s Settings, logger *slog.Logger, groups ...NewGroup) *App {
	notify := &notifyingPublisher{next: publisher}
	// Every service reads the time from the one clock, which tests set.
	now := s.Clock
	if now == nil {
		now = time.Now
	}
	log := audit.New(table, notify, s.AccountID, logger, now)
	if s.AuditShards > 1 {
		if err := log.SetShards(s.AuditShards); err != nil {
			panic("app: " + err.Error()) // SettingsFromEnv and the stack refuse such counts
		}
	}
	log.SetStreamed(s.AuditStream)
	projects := project.NewService(table, log, now)
	roles := role.NewService(table, log, now)
	members := member.NewService(table, log, roles, now)
	teams := team.NewService(table, log, roles, members, now)
	grants := grantSource{roles: roles, members: members, teams: teams}
	authn := token.NewAuthenticator(table, grants, now)
	envs := environment.NewService(table, log, projects, s.Approvals, now)
	flags := flag.NewService(table, log, now)
	// Approvals installs its check on flags: direct changes in environments requiring approval are refused.
	approvals := approval.NewService(table, log, flags, envs, projects, members, teams, now)
	// Approval requests also carry reviewed changes to AI Config variations.
	aiconfigs := aiconfig.NewService(table, log, aiConfigProjects{projects: projects, envs: envs}, now)
	approvals.SetAIConfigs(aiconfigs)
	segments := segment.NewService(table, log, envs, now)
	// Approval requests act on segments too, and refuse direct changes where environments require approval for segments.
	approvals.SetSegments(segments)
	// The expiry job removes targets with its own flag service: a removal scheduled by an allowed change is not held for approval.
	// It removes segments' targets too, through their audited update without the approval check.
	expiringTargets := expiring.NewService(table, log, flag.NewService(table, log, now), envs, now)
	expiringTargets.SetSegments(segments)
	// Evaluation matches big segments from their members, as an SDK with a big segment store does.
	evaluations := evaluation.NewService(table)
	evaluations.SetMemberships(segments)
	sdk := sdkdata.NewService(table, envs, now)
	sdk.SetMemberships(segments)
	if logger != nil {
		sdk.Streams().SetLogger(logger)
	}
	notify.changed = sdk.Changed
	if s.Ingest == nil {
		// Payloads are applied before the answer.
		s.Ingest = ingest.Direct{Agg: ingest.NewAggregator(table, logger, now)}
	}
	return &App{
		Table: table,
		Services: Services{
			Projects:     projects,
			Environments: envs,
			Audit:        log,
			Roles:        roles,
			Members:      members,
			Tokens:       token.NewService(table, log, grants, authn, now),
			Teams:        teams,
			Webhooks:     webhook.NewService(table, log, webhook.Guard{AllowPrivate: s.AllowPrivateWebhooks}, now),
			OAuth:        oauth.NewService(table, log, members, now),
			Evaluation:   evaluations,
			Flags:        flags,
			Approvals:    approvals,
			Expiring:     expiringTargets,
			// Release policies are reordered in one transaction over all of a project's.
			ReleasePolicies: releasepolicy.NewService(table, log, projects),
			Ingest:          s.Ingest,
			Contexts:        sdkcontext.NewService(table, log, projects, envs, now),
			Applications:    application.NewService(table, log),
			AIConfigs:       aiconfigs,
			Triggers:        trigger.NewService(table, log, flags, envs, now),
			Pipelines:       pipeline.NewService(table, log, projects, envs, flags, now),
			Segments:        segments,
		},
		Authn:     authn,
		Publisher: publisher,
		Logger:    logger,
		SDK:       sdk,
		settings:  s,
		newGroups: groups,
	}
}

// Now is the app's clock (Settings.Clock).
func (a *App) Now() time.Time {
	if a.settings.Clock != nil {
		return a.settings.Clock()
	}
	return time.Now()
}

// Settings are the settings the app was wired with.
func (a *App) Settings() Settings { return a.settings }

// notifyingPublisher hands records on and tells the SDK data service that
// a commit landed, so streams and caches follow every change of this
// process, whichever service made it.
type notifyingPublisher struct {
	next    audit.Publisher
	changed func()
}

func (p *notifyingPublisher) Publish(ctx context.Context, rec audit.Outbox) error {
	err := p.next.Publish(ctx, rec)
	if p.changed != nil {
		p.changed()
	}
	return err
}

// grantSource gives authentication the custom roles and members rights are built from.
type grantSource struct {
	roles   *role.Service
	members *member.Service
	teams   *team.Service
}

func (g grantSource) Roles(ctx context.Context, keys []string) ([]policy.Grant, bool, error) {
	return g.roles.Grants(ctx, keys)
}

func (g grantSource) RoleIDs(ctx context.Context, refs []string) ([]string, error) {
	found, err := g.roles.Resolve(ctx, refs)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(found))
	for i, r := range found {
		if r != nil {
			ids[i] = r.ID
		}
	}
	return ids, nil
}

func (g grantSource) Member(ctx context.Context, id string) (string, []string, string, error) {
	m, err := g.members.Get(ctx, id)
	if err != nil {
		return "", nil, "", err
	}
	// A member also holds the custom roles of its teams.
	fromTeams, err := g.teams.RolesOf(ctx, id)
	if err != nil {
		return "", nil, "", err
	}
	return m.Role, append(append([]string(nil), m.CustomRoles...), fromTeams...), m.Email, nil
}

// Handlers returns the handler of every built operation of the app's
// groups, by operation id.
func (a *App) Handlers() map[string]api.Handler {
	h, _ := a.handlers("")
	return h
}

// handlers are the built handlers, and the needs that follow from
// requests, of the named group, or of all the app's groups when group is "".
func (a *App) handlers(group string) (map[string]api.Handler, map[string]api.Needs) {
	handlers, needs := map[string]api.Handler{}, map[string]api.Needs{}
	for _, g := range a.Groups() {
		if group != "" && g.Name != group {
			continue
		}
		for id, h := range g.Handlers {
			handlers[id] = h
		}
		for id, n := range g.Needs {
			needs[id] = n
		}
	}
	return handlers, needs
}

// Handler routes the operations of one catalog group, or of all groups when group is "".
func (a *App) Handler(group string) (http.Handler, error) {
	ops := catalog.All()
	if group != "" {
		var err error
		if ops, err = catalog.Group(group); err != nil {
			return nil, err
		}
	}
	h, err := a.HandlerFor(ops)
	if err != nil {
		return nil, fmt.Errorf("route group %q: %w", group, err)
	}
	return h, nil
}

// HandlerFor routes exactly ops, with the handlers the app's groups built
// for them (an operation none built answers 501): a process serving a few
// operations of several groups, such as the relay.
func (a *App) HandlerFor(ops []catalog.Operation) (http.Handler, error) {
	handlers, needs := a.handlers("")
	routed, routedNeeds := map[string]api.Handler{}, map[string]api.Needs{}
	for _, op := range ops {
		if h, ok := handlers[op.ID]; ok {
			routed[op.ID] = h
		}
		if n, ok := needs[op.ID]; ok {
			routedNeeds[op.ID] = n
		}
	}
	h, err := api.NewRouter(ops, api.Routes{
		Handlers: routed, Needs: routedNeeds, Authn: a.Authn, Tags: tagger{a.Services},
		Limits: a.settings.RateLimits, CORSOrigins: a.settings.CORSOrigins,
	})
	if err != nil {
		return nil, err
	}
	logger := a.Logger
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(api.WithLogger(r.Context(), logger)))
	}), nil
}

// Environment variables read by the Lambda functions (and the admin commands on AWS).
const (
	EnvTable     = "FLAGPLANE_TABLE"
	EnvApprovals = "FLAGPLANE_APPROVALS"
	// EnvAuditShards is the audit log's partition count (Settings.AuditShards).
	EnvAuditShards = "FLAGPLANE_AUDIT_SHARDS"
	// EnvAllowPrivateWebhooks lets webhooks reach private addresses (default false).
	EnvAllowPrivateWebhooks = "FLAGPLANE_WEBHOOKS_ALLOW_PRIVATE"
	// EnvRateLimitGlobal and EnvRateLimitRoute are the requests per ten
	// seconds admitted in all and per route (0: no limit); unset, the
	// defaults of api.DefaultRateLimits.
	EnvRateLimitGlobal = "FLAGPLANE_RATE_LIMIT_GLOBAL"
	EnvRateLimitRoute  = "FLAGPLANE_RATE_LIMIT_ROUTE"
	// EnvRateLimitCredential is the requests per ten seconds admitted per
	// SDK credential and SDK or event route (0: no limit).
	EnvRateLimitCredential = "FLAGPLANE_RATE_LIMIT_CREDENTIAL"
)

// SettingsFromEnv reads the shared settings from the environment.
func SettingsFromEnv() (Settings, error) {
	s := Settings{Approvals: true, AllowPrivateWebhooks: os.Getenv(EnvAllowPrivateWebhooks) == "true", NoSDKStreaming: true,
		AuditStream: os.Getenv(EnvAuditStream) == "true"}
	if raw := os.Getenv(EnvApprovals); raw != "" {
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return Settings{}, fmt.Errorf("%s must be true or false, not %q", EnvApprovals, raw)
		}
		s.Approvals = b
	}
	if raw := os.Getenv(EnvAuditShards); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || !store.ValidAuditShards(n) {
			return Settings{}, fmt.Errorf("%s must be a power of two from 1 to %d, not %q", EnvAuditShards, store.MaxAuditShards, raw)
		}
		s.AuditShards = n
	}
	limits, err := RateLimitsFromEnv()
	if err != nil {
		return Settings{}, err
	}
	s.RateLimits = limits
	return s, nil
}

// RateLimitsFromEnv reads EnvRateLimitGlobal, EnvRateLimitRoute and
// EnvRateLimitCredential over api.DefaultRateLimits.
func RateLimitsFromEnv() (api.RateLimits, error) {
	l := api.DefaultRateLimits
	for _, v := range []struct {
		name string
		into *int
	}{{EnvRateLimitGlobal, &l.Global}, {EnvRateLimitRoute, &l.Route}, {EnvRateLimitCredential, &l.Credential}} {
		raw := os.Getenv(v.name)
		if raw == "" {
			continue
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n < 0 || n > api.MaxRateLimit {
			return l, fmt.Errorf("%s must be a whole number of requests per 10 seconds from 0 (no limit) to %d, not %q", v.name, api.MaxRateLimit, raw)
		}
		*v.into = n
	}
	return l, nil
}

// DynamoFromEnv opens the DynamoDB table named by FLAGPLANE_TABLE with the
// function's environment (see awsenv), endpoint included.
func DynamoFromEnv(ctx context.Context) (store.Table, error) {
	name := os.Getenv(EnvTable)
	if name == "" {
		return nil, fmt.Errorf("%s is not set: name the DynamoDB table", EnvTable)
	}
	cfg, err := awsenv.Config()
	if err != nil {
		return nil, fmt.Errorf("aws config: %w", err)
	}
	client := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = awsenv.Endpoint("DYNAMODB") })
	return dynamo.New(client, name, dynamo.Options{})
}

// EnvWebhookQueueURL names the webhook dispatch queue: webhook delivery
// sends its follow-up messages to it, and the audit-stream function (or,
// without the stream, every function that changes things) hands changes
// to it.
const EnvWebhookQueueURL = "FLAGPLANE_WEBHOOK_QUEUE_URL"

// EnvAuditStream, "true", says the table's stream carries the outbox
// (Settings.AuditStream): the stack sets it on every function.
const EnvAuditStream = "FLAGPLANE_AUDIT_STREAM"

// FromEnv wires the services over the DynamoDB table for a Lambda
// function. With a webhook queue in the environment and no audit stream,
// committed changes are handed to it; with the stream (EnvAuditStream),
// the audit-stream function hands them over and commits send nothing.
func FromEnv(ctx context.Context, groups ...NewGroup) (*App, *sqsqueue.Queue, error) {
	s, err := SettingsFromEnv()
	if err != nil {
		return nil, nil, err
	}
	return FromEnvWith(ctx, s, slog.New(slog.NewJSONHandler(os.Stderr, nil)), groups...)
}

// FromEnvWith is FromEnv with settings and a logger of the caller's (the
// relay's: SettingsFromEnv with streaming on): the table and the queues
// still come from the environment.
func FromEnvWith(ctx context.Context, s Settings, logger *slog.Logger, groups ...NewGroup) (*App, *sqsqueue.Queue, error) {
	table, err := DynamoFromEnv(ctx)
	if err != nil {
		return nil, nil, err
	}
	var publisher audit.Publisher = audit.Discard{}
	var queue *sqsqueue.Queue
	if url := os.Getenv(EnvWebhookQueueURL); url != "" {
		cfg, err := awsenv.Config()
		if err != nil {
			return nil, nil, fmt.Errorf("aws config: %w", err)
		}
		queue = sqsqueue.New(sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = awsenv.Endpoint("SQS") }), url)
		if !s.AuditStream {
			// Without the stream, each commit hands its record to the queue itself.
			publisher = webhook.Publisher{Queue: queue}
		}
	}
	// With an ingest queue, SDK event payloads go to it and the ingest worker aggregates them.
	if url := os.Getenv(EnvIngestQueueURL); url != "" {
		cfg, err := awsenv.Config()
		if err != nil {
			return nil, nil, fmt.Errorf("aws config: %w", err)
		}
		s.Ingest = sqsingest.New(sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = awsenv.Endpoint("SQS") }), url)
	} else {
		// On DynamoDB each aggregate is its own conditional put: half the cost of a transaction's write.
		s.Ingest = ingest.Direct{Agg: ingest.NewAggregator(table, logger, time.Now).PerItemWrites()}
	}
	return New(table, publisher, s, logger, groups...), queue, nil
}

// EnvIngestQueueURL names the SDK event ingest queue: the events function
// sends payloads to it; without it, payloads are aggregated in the request.
const EnvIngestQueueURL = "FLAGPLANE_INGEST_QUEUE_URL"

// LambdaHandler is what a group's function serves: the group's routes.
func LambdaHandler(ctx context.Context, group NewGroup) (http.Handler, error) {
	a, _, err := FromEnv(ctx, group)
	if err != nil {
		return nil, err
	}
	return a.Handler(a.Groups()[0].Name)
}

// Dispatcher delivers webhooks for a, sending follow-up messages to queue.
// Every group's consumers read the outbox through it too.
func (a *App) Dispatcher(queue webhook.Queue, allowPrivate bool) *webhook.Dispatcher {
	d := webhook.NewDispatcher(a.Table, a.Services.Webhooks, a.Services.Audit, queue,
		webhook.Guard{AllowPrivate: allowPrivate}, reps.EntryPayload, a.Now)
	for _, g := range a.Groups() {
		for _, c := range g.Consumers {
			d.AddConsumer(c)
		}
	}
	return d
}

// Delivery settings of local mode.
const (
	// LocalWebhookAttempts is how many tries a delivery gets before its dead letter.
	LocalWebhookAttempts = 5
	localWebhookWorkers  = 8
)

// NewWithMemoryQueue wires the services with webhook delivery through an
// in-process queue (local mode): every committed change is fanned out to
// its webhooks and delivered with retries, by the same dispatcher the
// SQS-triggered function runs. backoff is the wait after the n-th failure.
func NewWithMemoryQueue(table store.Table, s Settings, logger *slog.Logger, attempts int, backoff func(int) time.Duration, groups ...NewGroup) (*App, *webhook.MemoryQueue) {
	queue := webhook.NewMemoryQueue(attempts, localWebhookWorkers, backoff)
	a := New(table, webhook.Publisher{Queue: queue}, s, logger, groups...)
	// The queue is in memory: outbox records stay until their fan-out.
	a.Services.Audit.SetDropOnFanOut(true)
	queue.Start(a.Dispatcher(queue, s.AllowPrivateWebhooks).Handle)
	return a, queue
}
