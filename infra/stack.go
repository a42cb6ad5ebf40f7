package infra

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/auditstream"
	"github.com/flagplane/flagplane/shared/destination"
	"github.com/flagplane/flagplane/shared/store"
)

// FlagplaneStackProps configures the stack. The zero value (plus an asset
// directory holding the bootstraps) is a sensible production deployment.
type FlagplaneStackProps struct {
	awscdk.StackProps
	// AssetDir holds <function>/bootstrap for every function, as `make build`
	// writes them. Default: DefaultAssetDir under the repository root.
	AssetDir string
	// ReservedConcurrency caps the given functions (by name); functions not
	// named get DefaultReservedConcurrency. 0 means unreserved. Reserving
	// takes from the account's pool, which must keep 100 unreserved.
	ReservedConcurrency        map[string]int
	DefaultReservedConcurrency int
	// CORSAllowOrigins turns on CORS for these origins; no CORS when empty.
	CORSAllowOrigins []string
	// RemoveTableOnDelete deletes the table (and the functions' log groups)
	// with the stack. By default both are retained: the table is all of the
	// service's data.
	RemoveTableOnDelete bool
	// LogRetention of the functions' log groups. Default one month.
	LogRetention awslogs.RetentionDays
	// DeadLetterMaxReceives is how often a webhook message is received before
	// it moves to the dead-letter queue. Default 5.
	DeadLetterMaxReceives int
	// ThrottleRate is the steady request rate (per second) the API's stage
	// admits across all clients and ThrottleBurst the burst above it.
	// Defaults DefaultThrottleRate and DefaultThrottleBurst.
	ThrottleRate  float64
	ThrottleBurst int
	// RateLimits are the LaunchDarkly-style limits (requests per ten
	// seconds, in all and per route) each instance of an API function
	// applies on its own; nil means api.DefaultRateLimits, zeros no limit.
	RateLimits *api.RateLimits
	// OmitHTTPAPI leaves the API Gateway HTTP API out, for emulators without
	// API Gateway v2 (LocalStack's free image); the functions can still be
	// invoked directly.
	OmitHTTPAPI bool
	// Relay, when set, adds the streaming relay (see RelayProps); nil, the
	// default, adds nothing: no VPC, no load balancer, no cost.
	Relay *RelayProps
	// AuditShards spreads the audit log over this many partitions (a power
	// of two up to store.MaxAuditShards; 0 or 1: one). One partition takes
	// about 500 changes a second; every reader of the log reads each shard,
	// so the relay's feed costs grow with it. Never lower it on a deployed
	// table: entries in the shards dropped would no longer be read.
	AuditShards int

	// workers replaces Workers() when not nil; tests prove the wiring with
	// entries that have no function yet.
	workers []Worker
}

// Defaults.
const (
	DefaultDeadLetterMaxReceives = 5
	// FunctionMemoryMB: a Go bootstrap needs little memory, but Lambda's CPU
	// share grows with it and 256 MB keeps cold starts and JSON work quick.
	FunctionMemoryMB = 256
	// FunctionTagKey tags every function's resources with the function's name.
	FunctionTagKey = "flagplane:function"
	// DefaultThrottleRate and DefaultThrottleBurst cap the whole API well
	// below the account's shared 10,000 requests/s, so one runaway client
	// cannot starve other APIs of the account or run up the Lambda bill; a
	// control API sees people and pipelines, not SDK traffic.
	DefaultThrottleRate  = 100
	DefaultThrottleBurst = 200
)

// AccessLogFields is the access log line of the API's stage, one JSON
// object per request. requestId is the id the functions log and answer in
// X-Request-Id, so one request can be followed from the access log into the
// function's log. Every value is quoted: API Gateway writes "-" for an
// absent number, which would break an unquoted JSON number.
var AccessLogFields = []struct{ Name, Variable string }{
	{"requestId", "$context.requestId"},
	{"requestTime", "$context.requestTime"},
	{"sourceIp", "$context.identity.sourceIp"},
	{"userAgent", "$context.identity.userAgent"},
	{"httpMethod", "$context.httpMethod"},
	{"routeKey", "$context.routeKey"},
	{"path", "$context.path"},
	{"protocol", "$context.protocol"},
	{"status", "$context.status"},
	{"responseLength", "$context.responseLength"},
	{"responseLatency", "$context.responseLatency"},
	{"integrationStatus", "$context.integrationStatus"},
	{"integrationLatency", "$context.integrationLatency"},
	{"integrationError", "$context.integrationErrorMessage"},
	{"error", "$context.error.message"},
}

// AccessLogFormat is AccessLogFields as API Gateway's format string.
func AccessLogFormat() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range AccessLogFields {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(f.Name)
		fmt.Fprintf(&b, `%s:"%s"`, name, f.Variable)
	}
	b.WriteByte('}')
	return b.String()
}

// DefaultLogRetention keeps a month of function logs.
var DefaultLogRetention = awslogs.RetentionDays_ONE_MONTH

// Output names of the stack.
const (
	OutputAPIURL            = "ApiUrl"
	OutputTableName         = "TableName"
	OutputWebhookQueueURL   = "WebhookQueueUrl"
	OutputWebhookDLQueueURL = "WebhookDeadLetterQueueUrl"
	OutputIngestQueueURL    = "IngestQueueUrl"
	OutputIngestDLQueueURL  = "IngestDeadLetterQueueUrl"
	// OutputAuditStreamDLQueueURL receives, for a batch of the table's
	// stream the audit-stream function failed every retry of, the shard and
	// sequence numbers it spans (not the records: the stream keeps those 24 hours).
	OutputAuditStreamDLQueueURL = "AuditStreamDeadLetterQueueUrl"
	OutputExportBucket          = "ExportBucketName"
	OutputAccessLogGroup        = "ApiAccessLogGroup"
)

// config is the props after defaults and validation.
type config struct {
	FlagplaneStackProps
	specs []Spec
	// routes are the HTTP API's operations (see apiRoutes).
	routes []Route
}

func resolve(props *FlagplaneStackProps) (config, error) {
	var c config
	if props != nil {
		c.FlagplaneStackProps = *props
	}
	if c.AssetDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return c, fmt.Errorf("asset directory: %w", err)
		}
		root, err := RepoRoot(wd)
		if err != nil {
			return c, fmt.Errorf("asset directory: %w", err)
		}
		c.AssetDir = filepath.Join(root, DefaultAssetDir)
	}
	if c.LogRetention == "" {
		c.LogRetention = DefaultLogRetention
	}
	if c.DeadLetterMaxReceives == 0 {
		c.DeadLetterMaxReceives = DefaultDeadLetterMaxReceives
	}
	if c.ThrottleRate == 0 {
		c.ThrottleRate = DefaultThrottleRate
	}
	if c.ThrottleBurst == 0 {
		c.ThrottleBurst = DefaultThrottleBurst
	}
	if c.ThrottleRate < 0 || c.ThrottleBurst < 0 {
		return c, fmt.Errorf("throttle rate %v and burst %d: both must be positive", c.ThrottleRate, c.ThrottleBurst)
	}
	if c.RateLimits == nil {
		limits := api.DefaultRateLimits
		c.RateLimits = &limits
	}
	if err := c.RateLimits.Check(); err != nil {
		return c, err
	}
	if c.AuditShards == 0 {
		c.AuditShards = 1
	}
	if !store.ValidAuditShards(c.AuditShards) {
		return c, fmt.Errorf("audit shards %d: a power of two from 1 to %d", c.AuditShards, store.MaxAuditShards)
	}
	if c.DeadLetterMaxReceives < 1 || c.DeadLetterMaxReceives > 1000 {
		return c, fmt.Errorf("dead-letter max receives %d: SQS allows 1 to 1000", c.DeadLetterMaxReceives)
	}
	ws := c.workers
	if ws == nil {
		ws = workers
	}
	if err := validateWorkers(ws); err != nil {
		return c, fmt.Errorf("workers: %w", err)
	}
	c.specs = specs(ws)
	names := make([]string, len(c.specs))
	known := map[string]bool{}
	for i, s := range c.specs {
		names[i] = s.Name
		known[s.Name] = true
	}
	if c.DefaultReservedConcurrency < 0 {
		return c, fmt.Errorf("default reserved concurrency %d is negative", c.DefaultReservedConcurrency)
	}
	for name, n := range c.ReservedConcurrency {
		if !known[name] {
			return c, fmt.Errorf("reserved concurrency for %q: no such function", name)
		}
		if n < 0 {
			return c, fmt.Errorf("reserved concurrency for %q is negative", name)
		}
	}
	for _, o := range c.CORSAllowOrigins {
		if o == "" || strings.ContainsAny(o, " ,") {
			return c, fmt.Errorf("CORS origin %q: give one origin per entry, e.g. https://app.example.com", o)
		}
	}
	if err := api.CheckCORSOrigins(c.CORSAllowOrigins); err != nil {
		return c, err
	}
	if err := CheckAssets(c.AssetDir, names); err != nil {
		return c, err
	}
	routes, err := apiRoutes()
	if err != nil {
		return c, fmt.Errorf("HTTP API: %w", err)
	}
	for _, r := range routes {
		if !known[r.Function] {
			return c, fmt.Errorf("HTTP API: route %q names function %q, which is neither a group nor a worker", r.Key, r.Function)
		}
	}
	c.routes = routes
	if c.Relay != nil {
		relay := *c.Relay // the caller's props stay as given
		if err := resolveRelay(&relay); err != nil {
			return c, err
		}
		c.Relay = &relay
	}
	return c, nil
}

// reserved is the reserved concurrency of a function, 0 for none.
func (c config) reserved(name string) int {
	if n, ok := c.ReservedConcurrency[name]; ok {
		return n
	}
	return c.DefaultReservedConcurrency
}

// NewFlagplaneStack builds the whole deployment: the table, the webhook
// queues, one function per catalog group (plus the workers), the HTTP API
// with one route per operation of the OpenAPI document (bar the local-only
// ones), schedules and outputs, and the streaming relay when Relay is set
// (see newRelay). Like CDK
// constructs, which throw, it panics on invalid props or missing bootstraps.
func NewFlagplaneStack(scope constructs.Construct, id string, props *FlagplaneStackProps) awscdk.Stack {
	c, err := resolve(props)
	if err != nil {
		panic(fmt.Errorf("flagplane stack %s: %w", id, err))
	}
	stack := awscdk.NewStack(scope, jsii.String(id), &c.StackProps)

	table := newTable(stack, c)
	queue, dlq := newQueues(stack, c, "Webhook")
	ingest, ingestDLQ := newQueues(stack, c, "Ingest")
	// The audit-stream function reads its stream's dead letters too (to
	// redrive them), so they stay hidden while it works on one.
	streamDLQ := newDeadLetterQueue(stack, "AuditStreamDeadLetterQueue", WebhookQueueVisibility)

	export := newExportStage(stack, c)

	fns := map[string]awslambda.Function{}
	for _, s := range c.specs {
		fns[s.Name] = newFunction(stack, c, s, table, queue, ingest, export)
	}
	if !c.OmitHTTPAPI {
		api, accessLogs := newHTTPAPI(stack, c, fns)
		output(stack, OutputAPIURL, api.AttrApiEndpoint(), "Base URL of the API; paths start with /api/v2")
		output(stack, OutputAccessLogGroup, accessLogs.LogGroupName(), "Log group of the API's access log, one JSON line per request")
	}
	for _, s := range c.specs {
		wireWorker(stack, s, fns[s.Name], queue, ingest, table, streamDLQ)
	}

	if c.Relay != nil {
		newRelay(stack, c, table, ingest)
	}

	output(stack, OutputTableName, table.TableName(), "DynamoDB table holding all data")
	output(stack, OutputWebhookQueueURL, queue.QueueUrl(), "SQS queue of webhook deliveries")
	output(stack, OutputWebhookDLQueueURL, dlq.QueueUrl(), "Webhook deliveries that failed every attempt")
	output(stack, OutputIngestQueueURL, ingest.QueueUrl(), "SQS queue of SDK event payloads, one message per payload")
	output(stack, OutputIngestDLQueueURL, ingestDLQ.QueueUrl(), "SDK event payloads that failed every attempt")
	output(stack, OutputAuditStreamDLQueueURL, streamDLQ.QueueUrl(), "Table stream batches the audit-stream function failed every retry of (shard and sequence numbers)")
	output(stack, OutputExportBucket, export.bucket.BucketName(), "S3 bucket of the data export's stage: events/<environment id>/<date>/<hour>/<batch>.ndjson")
	return stack
}

func output(stack awscdk.Stack, name string, value *string, description string) {
	awscdk.NewCfnOutput(stack, jsii.String(name), &awscdk.CfnOutputProps{
		Value: value, Description: jsii.String(description),
	})
}

func removal(c config) awscdk.RemovalPolicy {
	if c.RemoveTableOnDelete {
		return awscdk.RemovalPolicy_DESTROY
	}
	return awscdk.RemovalPolicy_RETAIN
}

// newTable is dynamo.TableInput as CloudFormation, plus what CreateTable
// cannot say: expiry, point-in-time recovery and the removal policy. All
// names come from the store's key file.
func newTable(stack awscdk.Stack, c config) awsdynamodb.Table {
	str := func(name string) *awsdynamodb.Attribute {
		return &awsdynamodb.Attribute{Name: jsii.String(name), Type: awsdynamodb.AttributeType_STRING}
	}
	table := awsdynamodb.NewTable(stack, jsii.String("Table"), &awsdynamodb.TableProps{
		PartitionKey:        str(store.AttrPK),
		SortKey:             str(store.AttrSK),
		BillingMode:         awsdynamodb.BillingMode_PAY_PER_REQUEST,
		TimeToLiveAttribute: jsii.String(store.AttrTTL),
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		// The stream is the outbox: the audit-stream function hands every
		// new audit entry to the webhook queue. The keys are enough: the
		// entry's sort key is its id, which starts with its millisecond.
		Stream:        awsdynamodb.StreamViewType_KEYS_ONLY,
		RemovalPolicy: removal(c),
	})
	table.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
		IndexName:      jsii.String(store.IndexGSI1),
		PartitionKey:   str(store.AttrGSI1PK),
		SortKey:        str(store.AttrGSI1SK),
		ProjectionType: awsdynamodb.ProjectionType_ALL,
	})
	return table
}

// newQueues makes a work queue and its dead-letter queue, named from
// prefix ("Webhook", "Ingest"), both encrypted at rest with SQS-managed
// keys (no KMS grants needed) and refusing plain-HTTP access.
func newQueues(stack awscdk.Stack, c config, prefix string) (queue, dlq awssqs.Queue) {
	dlq = newDeadLetterQueue(stack, prefix+"DeadLetterQueue", 0)
	queue = awssqs.NewQueue(stack, jsii.String(prefix+"Queue"), &awssqs.QueueProps{
		Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(WebhookQueueVisibility.Seconds())),
		DeadLetterQueue: &awssqs.DeadLetterQueue{
			Queue:           dlq,
			MaxReceiveCount: jsii.Number(float64(c.DeadLetterMaxReceives)),
		},
	})
	return queue, dlq
}

// newDeadLetterQueue makes a dead-letter queue, encrypted at rest with
// SQS-managed keys and refusing plain-HTTP access.
func newDeadLetterQueue(stack awscdk.Stack, id string, visibility time.Duration) awssqs.Queue {
	props := &awssqs.QueueProps{
		Encryption: awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL: jsii.Bool(true),
		// The longest SQS allows, to leave time to inspect and redrive.
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
	}
	if visibility > 0 {
		props.VisibilityTimeout = awscdk.Duration_Seconds(jsii.Number(visibility.Seconds()))
	}
	return awssqs.NewQueue(stack, jsii.String(id), props)
}

// pascal turns a function name such as "ai-configs" into "AiConfigs" for
// construct ids, which become readable logical ids.
func pascal(name string) string {
	var b strings.Builder
	for _, part := range strings.Split(name, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// newFunction makes one function with its own role and log group, tagged
// with its name, and grants it exactly what its spec says.
func newFunction(stack awscdk.Stack, c config, s Spec, table awsdynamodb.Table, queue, ingest awssqs.Queue, export exportStage) awslambda.Function {
	scope := constructs.NewConstruct(stack, jsii.String(pascal(s.Name)))
	awscdk.Tags_Of(scope).Add(jsii.String(FunctionTagKey), jsii.String(s.Name), nil)

	// An own role rather than Lambda's default, which would attach the
	// managed AWSLambdaBasicExecutionRole (logs on every log group).
	role := awsiam.NewRole(scope, jsii.String("Role"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		Description: jsii.String("flagplane " + s.Name + " function"),
	})
	logs := awslogs.NewLogGroup(scope, jsii.String("Logs"), &awslogs.LogGroupProps{
		Retention:     c.LogRetention,
		RemovalPolicy: removal(c),
	})
	logs.GrantWrite(role)
	grantTable(role, table, s.Access)

	if s.PublishesWebhooks {
		role.AddToPrincipalPolicy(allow("PublishWebhooks", []string{"sqs:SendMessage"}, *queue.QueueArn()))
	}
	if s.PublishesIngest {
		role.AddToPrincipalPolicy(allow("QueueEventPayloads", []string{"sqs:SendMessage"}, *ingest.QueueArn()))
	}
	if s.WritesExportStage {
		role.AddToPrincipalPolicy(allow("WriteExportBatches", []string{"s3:PutObject"}, *export.bucket.ArnForObjects(jsii.String(destination.EventsPrefix + "*"))))
	}
	env := map[string]*string{}
	for k, v := range s.Env(Resources{TableName: *table.TableName(), WebhookQueueURL: *queue.QueueUrl(), IngestQueueURL: *ingest.QueueUrl(), RateLimits: c.RateLimits, AuditShards: c.AuditShards, AuditStream: true,
		ExportBucket: *export.bucket.BucketName(), ExportAccountID: *stack.Account(), DestinationKeySecret: *export.keySecret.SecretValue().UnsafeUnwrap()}) {
		env[k] = jsii.String(v)
	}

	props := &awslambda.FunctionProps{
		Description:  jsii.String("flagplane " + s.Name),
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: awslambda.Architecture_ARM_64(),
		Handler:      jsii.String("bootstrap"),
		Code:         awslambda.Code_FromAsset(jsii.String(filepath.Join(c.AssetDir, s.Name)), nil),
		MemorySize:   jsii.Number(FunctionMemoryMB),
		Timeout:      awscdk.Duration_Seconds(jsii.Number(s.Timeout.Seconds())),
		Environment:  &env,
		Role:         role,
		LogGroup:     logs,
	}
	if n := c.reserved(s.Name); n > 0 {
		props.ReservedConcurrentExecutions = jsii.Number(float64(n))
	}
	return awslambda.NewFunction(scope, jsii.String("Function"), props)
}

// exportStage is what the data export needs beyond the table: the S3
// stage and the secret destination key pairs are sealed with.
type exportStage struct {
	bucket    awss3.Bucket
	keySecret awssecretsmanager.Secret
}

// ExportRetention is how long the stage keeps a batch: warehouses load
// within minutes, and a week covers a warehouse that was down.
const ExportRetention = 30

// newExportStage makes the stage bucket (private, every public access
// blocked, encrypted with S3's keys, TLS only, owner-enforced objects,
// batches expiring after ExportRetention days) and the key-sealing secret
// (64 random characters, generated by Secrets Manager).
func newExportStage(stack awscdk.Stack, c config) exportStage {
	bucket := awss3.NewBucket(stack, jsii.String("ExportBucket"), &awss3.BucketProps{
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		ObjectOwnership:   awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
		LifecycleRules: &[]*awss3.LifecycleRule{{
			Id:                                  jsii.String("ExpireExportedBatches"),
			Enabled:                             jsii.Bool(true),
			Prefix:                              jsii.String(destination.EventsPrefix),
			Expiration:                          awscdk.Duration_Days(jsii.Number(ExportRetention)),
			AbortIncompleteMultipartUploadAfter: awscdk.Duration_Days(jsii.Number(1)),
		}},
		RemovalPolicy: removal(c),
	})
	secret := awssecretsmanager.NewSecret(stack, jsii.String("DestinationKeySecret"), &awssecretsmanager.SecretProps{
		Description: jsii.String("flagplane: seals the private keys of warehouse destination key pairs"),
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
			PasswordLength: jsii.Number(64), ExcludePunctuation: jsii.Bool(true), IncludeSpace: jsii.Bool(false),
		},
		// Losing it loses every sealed key: kept unless the table goes too.
		RemovalPolicy: removal(c),
	})
	return exportStage{bucket: bucket, keySecret: secret}
}

func allow(sid string, actions []string, resources ...string) awsiam.PolicyStatement {
	return awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String(sid),
		Effect:    awsiam.Effect_ALLOW,
		Actions:   jsii.Strings(actions...),
		Resources: jsii.Strings(resources...),
	})
}

// Table actions by access. These are the actions behind the store's calls:
// GetItem, Query, PutItem, DeleteItem, and TransactWriteItems, which AWS
// authorizes per element (Put -> PutItem, Delete -> DeleteItem,
// ConditionCheck -> ConditionCheckItem).
var (
	tableReadActions  = []string{"dynamodb:GetItem", "dynamodb:Query"}
	tableWriteActions = []string{"dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"}
)

// MetaPartition is the only partition a read-only function may write: the
// cursor-signing secret lives there and is created on first use.
var MetaPartition = store.MetaKey("").PK

func grantTable(role awsiam.Role, table awsdynamodb.Table, access Access) {
	tableArn := *table.TableArn()
	indexArn := tableArn + "/index/" + store.IndexGSI1
	role.AddToPrincipalPolicy(allow("ReadItems", tableReadActions, tableArn))
	role.AddToPrincipalPolicy(allow("QueryIndex", []string{"dynamodb:Query"}, indexArn))
	switch access {
	case ReadWrite:
		role.AddToPrincipalPolicy(allow("WriteItems", tableWriteActions, tableArn))
	default:
		put := allow("CreateCursorSecret", []string{"dynamodb:PutItem"}, tableArn)
		put.AddCondition(jsii.String("ForAllValues:StringEquals"), map[string]any{
			"dynamodb:LeadingKeys": []string{MetaPartition},
		})
		role.AddToPrincipalPolicy(put)
	}
}

// newHTTPAPI makes the HTTP API from its OpenAPI definition (see
// apiDefinition), its default stage, and one invoke permission per function
// for the whole API rather than one per route.
//
// The API has a construct id of its own ("HttpApi"): an API once built from
// Route resources cannot be switched to an imported definition in place (API
// Gateway drops routes when both are mixed), so a stack deployed before gets
// a new API, and a new ApiUrl, on its next update.
func newHTTPAPI(stack awscdk.Stack, c config, fns map[string]awslambda.Function) (awsapigatewayv2.CfnApi, awslogs.LogGroup) {
	var cors *apiCORS
	if len(c.CORSAllowOrigins) > 0 {
		cors = corsFor(c.CORSAllowOrigins, c.routes)
	}
	info := apiInfo{Title: *stack.StackName(), Description: "flagplane control API", Version: "2"}
	// resolve checked that every route's function is in fns.
	arn := func(function string) string { return *fns[function].FunctionArn() }
	body, err := apiDefinition(info, c.routes, arn, cors)
	if err != nil {
		panic(fmt.Errorf("infra: %w", err))
	}
	scope := constructs.NewConstruct(stack, jsii.String("HttpApi"))
	api := awsapigatewayv2.NewCfnApi(scope, jsii.String("Resource"), &awsapigatewayv2.CfnApiProps{
		Body: body,
		// A warning on import means a route left out: fail the deployment.
		FailOnWarnings: jsii.Bool(true),
	})
	accessLogs := newStage(stack, scope, c, api)

	// The source is every stage, method and path of this API.
	source := stack.FormatArn(&awscdk.ArnComponents{
		Service:      jsii.String("execute-api"),
		Resource:     api.Ref(),
		ResourceName: jsii.String("*/*/*"),
		ArnFormat:    awscdk.ArnFormat_SLASH_RESOURCE_NAME,
	})
	seen := map[string]bool{}
	for _, r := range c.routes {
		if seen[r.Function] {
			continue
		}
		seen[r.Function] = true
		awslambda.NewCfnPermission(scope, jsii.String("Invoke"+pascal(r.Function)), &awslambda.CfnPermissionProps{
			Action:       jsii.String("lambda:InvokeFunction"),
			FunctionName: fns[r.Function].FunctionArn(),
			Principal:    jsii.String("apigateway.amazonaws.com"),
			SourceArn:    source,
		})
	}
	return api, accessLogs
}

// newStage makes the API's $default stage, deployed on every change, with
// JSON access logs in a log group of its own (kept as long as the
// functions' logs) and the stage-wide throttle.
func newStage(stack awscdk.Stack, scope constructs.Construct, c config, api awsapigatewayv2.CfnApi) awslogs.LogGroup {
	logs := awslogs.NewLogGroup(stack, jsii.String("ApiAccessLogs"), &awslogs.LogGroupProps{
		Retention:     c.LogRetention,
		RemovalPolicy: removal(c),
	})
	awsapigatewayv2.NewCfnStage(scope, jsii.String("DefaultStage"), &awsapigatewayv2.CfnStageProps{
		ApiId:      api.Ref(),
		StageName:  jsii.String("$default"),
		AutoDeploy: jsii.Bool(true),
		AccessLogSettings: &awsapigatewayv2.CfnStage_AccessLogSettingsProperty{
			DestinationArn: logs.LogGroupArn(),
			Format:         jsii.String(AccessLogFormat()),
		},
		DefaultRouteSettings: &awsapigatewayv2.CfnStage_RouteSettingsProperty{
			ThrottlingRateLimit:  jsii.Number(c.ThrottleRate),
			ThrottlingBurstLimit: jsii.Number(float64(c.ThrottleBurst)),
		},
	})
	return logs
}

// corsFor allows the routes' methods and the request headers clients
// send, and lets scripts read the rate-limit and request-id headers.
func corsFor(origins []string, routes []Route) *apiCORS {
	seen := map[string]bool{}
	for _, r := range routes {
		m, _, _ := strings.Cut(r.Key, " ")
		seen[m] = true
	}
	methods := make([]string, 0, len(seen))
	for m := range seen {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	return &apiCORS{
		AllowOrigins:  origins,
		AllowMethods:  methods,
		AllowHeaders:  CORSAllowHeaders,
		ExposeHeaders: CORSExposeHeaders,
		MaxAge:        3600,
	}
}

// CORSAllowHeaders are the request headers a browser client may send, as
// the local server allows them: the access token, JSON bodies, the version
// and beta headers, method override and request ids.
var CORSAllowHeaders = lower(api.CORSAllowHeaders)

// CORSExposeHeaders are the answer headers a script may read: the
// rate-limit headers and the request id.
var CORSExposeHeaders = lower(api.CORSExposeHeaders)

func lower(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strings.ToLower(n)
	}
	return out
}

// AuditStreamRetries bounds the retries of a failing batch of the table's
// stream (bisected on each error, so a failing record is soon retried
// alone): after them the batch's shard and sequence numbers go to the
// stream's dead-letter queue, and the shard moves on.
const AuditStreamRetries = 100

// wireWorker subscribes a worker to the webhook queue, the ingest queue or
// the table's stream, and schedules it, as its spec says; API functions
// need none of these.
func wireWorker(stack awscdk.Stack, s Spec, fn awslambda.Function, queue, ingest awssqs.Queue, table awsdynamodb.Table, streamDLQ awssqs.Queue) {
	if s.ConsumesAuditStream {
		// The event source also grants the role exactly the stream's read actions.
		fn.AddEventSource(awslambdaeventsources.NewDynamoEventSource(table, &awslambdaeventsources.DynamoEventSourceProps{
			// From the oldest record kept, so no change is skipped when the mapping starts after the stream.
			StartingPosition:        awslambda.StartingPosition_TRIM_HORIZON,
			BatchSize:               jsii.Number(auditstream.BatchSize),
			BisectBatchOnError:      jsii.Bool(true),
			ReportBatchItemFailures: jsii.Bool(true),
			RetryAttempts:           jsii.Number(AuditStreamRetries),
			OnFailure:               awslambdaeventsources.NewSqsDlq(streamDLQ),
			Filters:                 &[]*map[string]any{{"pattern": auditstream.Filter()}},
		}))
		// A batch that failed every retry is redriven from the audit log by
		// the same function; one that fails again comes back after the
		// queue's visibility timeout, for as long as the queue keeps it.
		fn.AddEventSource(awslambdaeventsources.NewSqsEventSource(streamDLQ, &awslambdaeventsources.SqsEventSourceProps{
			BatchSize:               jsii.Number(1),
			ReportBatchItemFailures: jsii.Bool(true),
		}))
	}
	if s.ConsumesIngestQueue {
		fn.AddEventSource(awslambdaeventsources.NewSqsEventSource(ingest, &awslambdaeventsources.SqsEventSourceProps{
			BatchSize:               jsii.Number(10),
			ReportBatchItemFailures: jsii.Bool(true),
		}))
	}
	if s.ConsumesWebhookQueue {
		// The event source also grants the role exactly the consume actions.
		fn.AddEventSource(awslambdaeventsources.NewSqsEventSource(queue, &awslambdaeventsources.SqsEventSourceProps{
			BatchSize:               jsii.Number(10),
			ReportBatchItemFailures: jsii.Bool(true),
		}))
	}
	if s.Schedule != "" {
		awsevents.NewRule(stack, jsii.String(pascal(s.Name)+"Schedule"), &awsevents.RuleProps{
			Description: jsii.String("runs flagplane " + s.Name),
			Schedule:    awsevents.Schedule_Expression(jsii.String(s.Schedule)),
			Targets:     &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(fn, nil)},
		})
	}
}

// Check reports what NewFlagplaneStack would panic on (invalid props,
// missing bootstraps), so a CLI can print one line instead of a trace.
func (p *FlagplaneStackProps) Check() error {
	_, err := resolve(p)
	return err
}
