package infra

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/dynamo"
)

// apiDocument is the OpenAPI body of the stack's HTTP API.
func apiDocument(tb testing.TB, tpl *template) map[string]any {
	tb.Helper()
	_, api := tpl.only(tb, "AWS::ApiGatewayV2::Api")
	body, ok := api.Properties["Body"].(map[string]any)
	if !ok {
		tb.Fatalf("the API has no OpenAPI body: %v", api.Properties)
	}
	return body
}

// routedOperation is one operation of the API's body, as API Gateway
// imports it.
type routedOperation struct {
	params      []string // the declared path parameters
	integration map[string]any
	function    string // the function the integration invokes, by name
}

// bodyRoutes reads the body's operations by route key ("GET /path"),
// following each integration $ref to its function.
func bodyRoutes(tb testing.TB, tpl *template) map[string]routedOperation {
	tb.Helper()
	byLogicalID := map[string]string{}
	for name, id := range tpl.functions(tb) {
		byLogicalID[id] = name
	}
	body := apiDocument(tb, tpl)
	integrations, _ := prop(body, "components", "x-amazon-apigateway-integrations").(map[string]any)
	out := map[string]routedOperation{}
	paths, _ := body["paths"].(map[string]any)
	for path, v := range paths {
		item, _ := v.(map[string]any)
		var params []string
		for _, p := range list(item["parameters"]) {
			pm, _ := p.(map[string]any)
			if pm["in"] == "path" && pm["required"] == true {
				params = append(params, render(pm["name"]))
			}
		}
		for method, v := range item {
			if method == "parameters" {
				continue
			}
			ref, _ := prop(v.(map[string]any), "x-amazon-apigateway-integration", "$ref").(string)
			name, ok := strings.CutPrefix(ref, "#/components/x-amazon-apigateway-integrations/")
			integ, found := integrations[name].(map[string]any)
			if !ok || !found {
				tb.Fatalf("%s %s: integration %q is not one of the body's", method, path, ref)
			}
			fnID, _ := strings.CutSuffix(render(integ["uri"]), ".Arn")
			out[strings.ToUpper(method)+" "+path] = routedOperation{params: params, integration: integ, function: byLogicalID[fnID]}
		}
	}
	return out
}

func TestStackRoutes(t *testing.T) {
	// GIVEN the stack synthesized with default props
	tpl := defaultTemplate(t)
	apiID, apiRes := tpl.only(t, "AWS::ApiGatewayV2::Api")
	body := apiDocument(t, tpl)

	// WHEN the operations of its API's OpenAPI body are followed to their
	// integrations and functions
	routed := bodyRoutes(t, tpl)

	// THEN they are the catalog's routes, each to its group's function
	tests := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"routes and integrations are no CloudFormation resources of their own", func(t *testing.T) {
			for _, typ := range []string{"AWS::ApiGatewayV2::Route", "AWS::ApiGatewayV2::Integration"} {
				if ids := tpl.ofType(typ); len(ids) > 0 {
					t.Errorf("%d %s resources: %v", len(ids), typ, ids)
				}
			}
		}},
		{"the body routes exactly as many operations as the catalog has that are not local-only", func(t *testing.T) {
			want := 0
			for _, op := range catalog.All() {
				if !op.LocalOnly {
					want++
				}
			}
			if len(routed) != want {
				t.Fatalf("%d operations, the catalog has %d that are not local-only", len(routed), want)
			}
		}},
		{"every catalog route is in the body and invokes its group's function", func(t *testing.T) {
			for _, r := range Routes() {
				got, ok := routed[r.Key]
				switch {
				case !ok:
					t.Errorf("route %q missing", r.Key)
				case got.function != r.Function:
					t.Errorf("route %q invokes %q, want %q", r.Key, got.function, r.Function)
				}
			}
		}},
		{"the body has no route the catalog does not list", func(t *testing.T) {
			want := map[string]bool{}
			for _, r := range Routes() {
				want[r.Key] = true
			}
			for key := range routed {
				if !want[key] {
					t.Errorf("route %q is not in the catalog", key)
				}
			}
		}},
		{"no route catches every path, so a path nothing serves is API Gateway's 404", func(t *testing.T) {
			for key := range routed {
				if strings.Contains(key, "$default") || strings.Contains(key, "+}") || strings.Contains(key, "X-AMAZON-APIGATEWAY-ANY-METHOD") {
					t.Errorf("route %q catches requests no operation names", key)
				}
			}
		}},
		{"every path parameter is declared", func(t *testing.T) {
			for key, op := range routed {
				var want []string
				for _, seg := range strings.Split(key, "/") {
					if name, ok := strings.CutPrefix(seg, "{"); ok {
						want = append(want, strings.TrimSuffix(name, "}"))
					}
				}
				if !slices.Equal(op.params, want) {
					t.Errorf("route %q declares %v, want %v", key, op.params, want)
				}
			}
		}},
		{"every integration is a Lambda proxy with payload format 2.0", func(t *testing.T) {
			for key, op := range routed {
				i := op.integration
				if i["type"] != "aws_proxy" || i["httpMethod"] != "POST" || i["payloadFormatVersion"] != "2.0" {
					t.Errorf("route %q: integration %v", key, i)
				}
			}
		}},
		{"there is one integration per function, not per route", func(t *testing.T) {
			integrations, _ := prop(body, "components", "x-amazon-apigateway-integrations").(map[string]any)
			if len(integrations) != len(Functions()) {
				t.Errorf("%d integrations for %d functions", len(integrations), len(Functions()))
			}
		}},
		{"API Gateway may invoke each group's function from this API only, with one permission per function", func(t *testing.T) {
			byLogicalID := map[string]string{}
			for name, id := range tpl.functions(t) {
				byLogicalID[id] = name
			}
			invokable := map[string]int{}
			for _, id := range tpl.ofType("AWS::Lambda::Permission") {
				p := tpl.Resources[id].Properties
				if p["Principal"] != "apigateway.amazonaws.com" {
					continue // schedules; see checkWiring
				}
				if p["Action"] != "lambda:InvokeFunction" {
					t.Errorf("permission %s: API Gateway may %v", id, p["Action"])
				}
				if src := render(p["SourceArn"]); !strings.HasSuffix(src, ":"+apiID+"/*/*/*") {
					t.Errorf("permission %s: source %s is not the API", id, src)
				}
				fnID, _ := strings.CutSuffix(render(p["FunctionName"]), ".Arn")
				invokable[byLogicalID[fnID]]++
			}
			for _, f := range Functions() {
				if invokable[f] != 1 {
					t.Errorf("API Gateway has %d permissions to invoke %q, want 1", invokable[f], f)
				}
			}
		}},
		{"CORS is off unless configured", func(t *testing.T) {
			if c, ok := body["x-amazon-apigateway-cors"]; ok {
				t.Errorf("CORS configured by default: %v", c)
			}
			if c, ok := apiRes.Properties["CorsConfiguration"]; ok {
				t.Errorf("CORS configured by default: %v", c)
			}
		}},
		{"the API is imported from OpenAPI 3 and named after the stack", func(t *testing.T) {
			if v, _ := body["openapi"].(string); !strings.HasPrefix(v, "3.0.") {
				t.Errorf("openapi %q", v)
			}
			if got := prop(body, "info", "title"); got != "Test" {
				t.Errorf("title %v, want the stack's name", got)
			}
		}},
		{"an import warning fails the deployment rather than leave a route out", func(t *testing.T) {
			if apiRes.Properties["FailOnWarnings"] != true {
				t.Errorf("FailOnWarnings %v", apiRes.Properties["FailOnWarnings"])
			}
		}},
		{"the API has an auto-deployed default stage", func(t *testing.T) {
			_, stage := tpl.only(t, "AWS::ApiGatewayV2::Stage")
			if stage.Properties["StageName"] != "$default" || stage.Properties["AutoDeploy"] != true || render(stage.Properties["ApiId"]) != apiID {
				t.Errorf("stage %v", stage.Properties)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.check)
	}
}

func TestStackFunctions(t *testing.T) {
	// GIVEN the stack synthesized with default props
	tpl := defaultTemplate(t)
	tableID, _ := tpl.only(t, "AWS::DynamoDB::Table")
	queueID := webhookQueue(t, tpl)

	// WHEN its functions are read by their name tag
	fns := tpl.functions(t)

	// THEN each spec has exactly one, configured as Lambda runs Go
	t.Run("there is exactly one function per group and worker", func(t *testing.T) {
		want := specNames(Specs())
		got := slices.Sorted(maps.Keys(fns))
		sort.Strings(want)
		if !slices.Equal(got, want) {
			t.Fatalf("functions %v, want %v", got, want)
		}
	})
	for _, s := range Specs() {
		t.Run(fmt.Sprintf("the %s function runs its bootstrap on provided.al2023 arm64 with the shared environment", s.Name), func(t *testing.T) {
			p := tpl.Resources[fns[s.Name]].Properties
			checks := []struct {
				what      string
				got, want any
			}{
				{"runtime", p["Runtime"], "provided.al2023"},
				{"architectures", strs(p["Architectures"]), []string{"arm64"}},
				{"handler", p["Handler"], "bootstrap"},
				{"memory", p["MemorySize"], float64(FunctionMemoryMB)},
				{"timeout", p["Timeout"], s.Timeout.Seconds()},
				{"reserved concurrency", p["ReservedConcurrentExecutions"], nil},
				{"environment", envOf(p), withExportEnv(t, tpl, s, expectedEnv(s, tableID, queueID, ingestQueue(t, tpl)))},
			}
			for _, c := range checks {
				if !jsonEqual(c.got, c.want) {
					t.Errorf("%s: got %v, want %v", c.what, c.got, c.want)
				}
			}
			logs := tpl.Resources[render(prop(p, "LoggingConfig", "LogGroup"))]
			if logs.Type != "AWS::Logs::LogGroup" || logs.Properties["RetentionInDays"] != float64(30) {
				t.Errorf("log group %v with retention %v, want one month", logs.Type, logs.Properties["RetentionInDays"])
			}
			if logs.DeletionPolicy != "Retain" {
				t.Errorf("log group deletion policy %q, want Retain by default", logs.DeletionPolicy)
			}
		})
	}
}

// envOf renders a function's environment variables.
func envOf(p map[string]any) map[string]string {
	out := map[string]string{}
	vars, _ := prop(p, "Environment", "Variables").(map[string]any)
	for k, v := range vars {
		out[k] = render(v)
	}
	return out
}

// expectedEnv is FunctionEnv with the table and queue as the template
// refers to them; only functions that publish see the queue, and only the
// events function the ingest queue (ingestID, when given). Every function
// is told the table's stream carries the outbox.
func expectedEnv(s Spec, tableID, queueID string, ingestID ...string) map[string]string {
	r := Resources{TableName: tableID, AuditStream: true}
	if s.PublishesWebhooks {
		r.WebhookQueueURL = queueID
	}
	if s.PublishesIngest && len(ingestID) > 0 {
		r.IngestQueueURL = ingestID[0]
	}
	if s.API {
		r.RateLimits = &api.DefaultRateLimits // by default the stack states the defaults
	}
	return FunctionEnv(r)
}

func TestSpecEnv(t *testing.T) {
	r := Resources{TableName: "t", WebhookQueueURL: "q", RateLimits: &api.DefaultRateLimits, AuditStream: true}
	t.Run("GIVEN an API function THEN its environment has the rate limits", func(t *testing.T) {
		env := Spec{API: true}.Env(Resources{TableName: "t", RateLimits: &api.RateLimits{Global: 300, Route: 0, Credential: 40}})
		if env[app.EnvRateLimitGlobal] != "300" || env[app.EnvRateLimitRoute] != "0" || env[app.EnvRateLimitCredential] != "40" {
			t.Fatalf("env %v", env)
		}
	})
	t.Run("GIVEN a worker THEN its environment has no rate limits", func(t *testing.T) {
		if env := (Spec{}).Env(r); env[app.EnvRateLimitGlobal] != "" || env[app.EnvRateLimitRoute] != "" || env[app.EnvRateLimitCredential] != "" {
			t.Fatalf("env %v", env)
		}
	})
	tests := []struct {
		name      string
		spec      Spec
		wantQueue bool
	}{
		{"GIVEN a function that publishes THEN its environment names the queue", Spec{PublishesWebhooks: true}, true},
		{"GIVEN a function that does not publish THEN its environment has no queue", Spec{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := tc.spec.Env(r)
			if _, ok := env[EnvWebhookQueueURL]; ok != tc.wantQueue || !jsonEqual(env, expectedEnv(tc.spec, "t", "q")) {
				t.Fatalf("env %v", env)
			}
		})
	}
}

// webhookQueue is the queue with a redrive policy (the other is its DLQ).
func webhookQueue(tb testing.TB, tpl *template) string {
	tb.Helper()
	var ids []string
	for _, id := range tpl.ofType("AWS::SQS::Queue") {
		if tpl.Resources[id].Properties["RedrivePolicy"] != nil && strings.HasPrefix(id, "WebhookQueue") {
			ids = append(ids, id)
		}
	}
	if len(ids) != 1 {
		tb.Fatalf("want one webhook queue with a redrive policy, found %v", ids)
	}
	return ids[0]
}

func TestStackTable(t *testing.T) {
	// GIVEN the stack synthesized with default props and the table the
	// store's tests create
	tpl := defaultTemplate(t)
	id, table := tpl.only(t, "AWS::DynamoDB::Table")
	p := table.Properties
	in := dynamo.TableInput("flagplane")

	// WHEN the template's table is compared with it
	var wantKeys, wantAttrs []map[string]string
	for _, k := range in.KeySchema {
		wantKeys = append(wantKeys, map[string]string{"AttributeName": *k.AttributeName, "KeyType": string(k.KeyType)})
	}
	for _, a := range in.AttributeDefinitions {
		wantAttrs = append(wantAttrs, map[string]string{"AttributeName": *a.AttributeName, "AttributeType": string(a.AttributeType)})
	}
	var wantIndexes []map[string]any
	for _, g := range in.GlobalSecondaryIndexes {
		var keys []map[string]string
		for _, k := range g.KeySchema {
			keys = append(keys, map[string]string{"AttributeName": *k.AttributeName, "KeyType": string(k.KeyType)})
		}
		wantIndexes = append(wantIndexes, map[string]any{
			"IndexName": *g.IndexName, "KeySchema": keys,
			"Projection": map[string]string{"ProjectionType": string(g.Projection.ProjectionType)},
		})
	}

	// THEN it is the same table, with expiry, recovery and retention on top
	tests := []struct {
		name      string
		got, want any
	}{
		{"the key schema equals dynamo.TableInput", p["KeySchema"], wantKeys},
		{"the attribute definitions equal dynamo.TableInput", sortedBy(p["AttributeDefinitions"], "AttributeName"), sortedMaps(wantAttrs, "AttributeName")},
		{"the secondary indexes equal dynamo.TableInput", p["GlobalSecondaryIndexes"], wantIndexes},
		{"billing is pay per request, as dynamo.TableInput", p["BillingMode"], string(in.BillingMode)},
		{"the key file names the partition key", prop(p, "KeySchema"), []map[string]string{
			{"AttributeName": store.AttrPK, "KeyType": string(types.KeyTypeHash)},
			{"AttributeName": store.AttrSK, "KeyType": string(types.KeyTypeRange)},
		}},
		{"the index is the key file's GSI1 projecting all attributes", prop(p, "GlobalSecondaryIndexes"), []map[string]any{{
			"IndexName": store.IndexGSI1,
			"KeySchema": []map[string]string{
				{"AttributeName": store.AttrGSI1PK, "KeyType": "HASH"},
				{"AttributeName": store.AttrGSI1SK, "KeyType": "RANGE"},
			},
			"Projection": map[string]string{"ProjectionType": "ALL"},
		}}},
		{"items expire on the key file's ttl attribute", p["TimeToLiveSpecification"], map[string]any{"AttributeName": store.AttrTTL, "Enabled": true}},
		{"point-in-time recovery is on", prop(p, "PointInTimeRecoverySpecification", "PointInTimeRecoveryEnabled"), true},
		{"its stream carries the keys of new items (the outbox), as dynamo.TableInput", p["StreamSpecification"], map[string]any{"StreamViewType": string(in.StreamSpecification.StreamViewType)}},
		{"the table is retained when the stack is deleted", table.DeletionPolicy, "Retain"},
		{"the table is retained when it is replaced", table.UpdateReplacePolicy, "Retain"},
		{"the table name is left to CloudFormation", p["TableName"], nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !jsonEqual(tc.got, tc.want) {
				t.Fatalf("table %s:\n got %v\nwant %v", id, tc.got, tc.want)
			}
		})
	}
}

func sortedBy(v any, key string) []any {
	items := append([]any(nil), list(v)...)
	sort.Slice(items, func(i, j int) bool {
		a, _ := items[i].(map[string]any)
		b, _ := items[j].(map[string]any)
		return render(a[key]) < render(b[key])
	})
	return items
}

func sortedMaps(ms []map[string]string, key string) []map[string]string {
	out := append([]map[string]string(nil), ms...)
	sort.Slice(out, func(i, j int) bool { return out[i][key] < out[j][key] })
	return out
}

func TestStackQueues(t *testing.T) {
	// GIVEN the stack synthesized with default props
	tpl := defaultTemplate(t)
	queueID := webhookQueue(t, tpl)
	queue := tpl.Resources[queueID].Properties
	var dlqID string
	for _, id := range tpl.ofType("AWS::SQS::Queue") {
		if id != queueID {
			dlqID = id
		}
	}

	// WHEN the webhook queue and its dead-letter queue are read
	// THEN failed messages move on after N receives, nothing is redelivered
	// while a consumer may still work on it, and both are encrypted
	tests := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"there are five queues: webhook dispatch and dead-letter, SDK event ingest and dead-letter, the audit stream's dead-letter", func(t *testing.T) {
			if n := len(tpl.ofType("AWS::SQS::Queue")); n != 5 {
				t.Fatalf("%d queues", n)
			}
		}},
		{"the dispatch queue redrives to the dead-letter queue after the default receives", func(t *testing.T) {
			rp := queue["RedrivePolicy"].(map[string]any)
			if render(rp["deadLetterTargetArn"]) != dlqID+".Arn" || rp["maxReceiveCount"] != float64(DefaultDeadLetterMaxReceives) {
				t.Fatalf("redrive policy %v", rp)
			}
		}},
		{"the visibility timeout exceeds the delivery timeout and every consumer's", func(t *testing.T) {
			vis, _ := queue["VisibilityTimeout"].(float64)
			if vis <= WorkerTimeout.Seconds() {
				t.Fatalf("visibility %vs, delivery functions may run %v", vis, WorkerTimeout)
			}
			checkConsumerTimeouts(t, tpl, vis)
		}},
		{"both queues are encrypted at rest with SQS-managed keys", func(t *testing.T) {
			for _, id := range tpl.ofType("AWS::SQS::Queue") {
				if tpl.Resources[id].Properties["SqsManagedSseEnabled"] != true {
					t.Errorf("queue %s is not encrypted", id)
				}
			}
		}},
		{"both queues refuse requests without TLS", func(t *testing.T) {
			guarded := map[string]bool{}
			for _, id := range tpl.ofType("AWS::SQS::QueuePolicy") {
				p := tpl.Resources[id].Properties
				for _, st := range list(prop(p, "PolicyDocument", "Statement")) {
					s, _ := st.(map[string]any)
					if s["Effect"] == "Deny" && render(prop(s, "Condition", "Bool", "aws:SecureTransport")) == "false" {
						for _, q := range strs(p["Queues"]) {
							guarded[q] = true
						}
					}
				}
			}
			for _, id := range tpl.ofType("AWS::SQS::Queue") {
				if !guarded[id] {
					t.Errorf("queue %s accepts plain HTTP", id)
				}
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.check)
	}
}

// checkConsumerTimeouts fails if a function fed by an event source mapping
// may run longer than the queue hides a message.
func checkConsumerTimeouts(t *testing.T, tpl *template, visibility float64) {
	t.Helper()
	for _, id := range tpl.ofType("AWS::Lambda::EventSourceMapping") {
		fn := tpl.Resources[render(tpl.Resources[id].Properties["FunctionName"])]
		if timeout, _ := fn.Properties["Timeout"].(float64); timeout >= visibility {
			t.Errorf("consumer %s times out after %vs, visibility is %vs", id, timeout, visibility)
		}
	}
}

func TestStackOutputs(t *testing.T) {
	// GIVEN the stack synthesized with default props
	tpl := defaultTemplate(t)
	tableID, _ := tpl.only(t, "AWS::DynamoDB::Table")
	apiID, _ := tpl.only(t, "AWS::ApiGatewayV2::Api")
	queueID := webhookQueue(t, tpl)
	var dlqID string
	for _, id := range tpl.ofType("AWS::SQS::Queue") {
		if id != queueID {
			dlqID = id
		}
	}

	// WHEN its outputs are read
	// THEN the API URL, table name and queue URLs are there
	tests := []struct {
		name, output, want string
	}{
		{"the API URL is an output", OutputAPIURL, apiID + ".ApiEndpoint"},
		{"the table name is an output", OutputTableName, tableID},
		{"the webhook queue URL is an output", OutputWebhookQueueURL, queueID},
		{"the dead-letter queue URL is an output", OutputWebhookDLQueueURL, dlqID},
		{"the access log group is an output", OutputAccessLogGroup, accessLogGroup(t, tpl)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, ok := tpl.Outputs[tc.output]
			if !ok {
				t.Fatalf("no output %s", tc.output)
			}
			if got := render(o.Value); got != tc.want {
				t.Fatalf("output %s is %s, want %s", tc.output, got, tc.want)
			}
		})
	}
}

func TestStackFitsCloudFormationLimits(t *testing.T) {
	// GIVEN the stack synthesized with default props
	tpl := defaultTemplate(t)
	// WHEN it is measured
	// THEN CloudFormation and API Gateway accept it, with room to grow
	tests := []struct {
		name       string
		got, limit int
	}{
		{"it has fewer than 250 of CloudFormation's 500 resources", len(tpl.Resources), 249},
		{"it has at most CloudFormation's 200 outputs", len(tpl.Outputs), 200},
		{"its routes fit one HTTP API", len(bodyRoutes(t, tpl)), MaxRoutes},
		{"the template is under CloudFormation's 1 MB body limit", tpl.size, 1_000_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got > tc.limit {
				t.Fatalf("%d, limit %d", tc.got, tc.limit)
			}
		})
	}
	t.Run("the API takes an Api, a stage and one permission per function, however many operations it routes", func(t *testing.T) {
		got := len(tpl.ofType("AWS::ApiGatewayV2::Api")) + len(tpl.ofType("AWS::ApiGatewayV2::Stage"))
		for _, id := range tpl.ofType("AWS::Lambda::Permission") {
			if tpl.Resources[id].Properties["Principal"] == "apigateway.amazonaws.com" {
				got++
			}
		}
		if want := 2 + len(Functions()); got != want {
			t.Errorf("%d resources for the API, want %d", got, want)
		}
		t.Logf("%d resources in the stack, %d of them for the API's %d routes", len(tpl.Resources), got, len(Routes()))
	})
}

// accessLogGroup is the logical id of the log group the API's stage logs
// requests to.
func accessLogGroup(tb testing.TB, tpl *template) string {
	tb.Helper()
	_, stage := tpl.only(tb, "AWS::ApiGatewayV2::Stage")
	id, ok := strings.CutSuffix(render(prop(stage.Properties, "AccessLogSettings", "DestinationArn")), ".Arn")
	if !ok || tpl.Resources[id].Type != "AWS::Logs::LogGroup" {
		tb.Fatalf("the stage logs to %v, not to a log group of the stack", prop(stage.Properties, "AccessLogSettings"))
	}
	return id
}

func TestStackAPIStage(t *testing.T) {
	// GIVEN the stack synthesized with default props
	tpl := defaultTemplate(t)
	_, stage := tpl.only(t, "AWS::ApiGatewayV2::Stage")
	logs := tpl.Resources[accessLogGroup(t, tpl)]

	// WHEN its stage's access log format is read as JSON with placeholders
	format, _ := prop(stage.Properties, "AccessLogSettings", "Format").(string)
	var fields map[string]string
	formatErr := json.Unmarshal([]byte(format), &fields)

	// THEN every request is logged as one JSON object carrying the request
	// id, in a log group kept like the functions' logs, and the stage is
	// throttled by default
	tests := []struct {
		name      string
		got, want any
	}{
		{"the access log format is one JSON object", formatErr, nil},
		{"the access log carries API Gateway's request id", fields["requestId"], "$context.requestId"},
		{"the access log carries the route, status and latencies", []string{fields["routeKey"], fields["status"], fields["responseLatency"], fields["integrationLatency"]},
			[]string{"$context.routeKey", "$context.status", "$context.responseLatency", "$context.integrationLatency"}},
		{"the access log has every field of AccessLogFields", len(fields), len(AccessLogFields)},
		// As the stage logged before the API was imported from its OpenAPI
		// body: dashboards and queries read these keys.
		{"the access log keeps its keys and variables", fields, map[string]string{
			"requestId": "$context.requestId", "requestTime": "$context.requestTime",
			"sourceIp": "$context.identity.sourceIp", "userAgent": "$context.identity.userAgent",
			"httpMethod": "$context.httpMethod", "routeKey": "$context.routeKey", "path": "$context.path",
			"protocol": "$context.protocol", "status": "$context.status", "responseLength": "$context.responseLength",
			"responseLatency": "$context.responseLatency", "integrationStatus": "$context.integrationStatus",
			"integrationLatency": "$context.integrationLatency", "integrationError": "$context.integrationErrorMessage",
			"error": "$context.error.message",
		}},
		{"access logs are kept one month", logs.Properties["RetentionInDays"], 30},
		{"access logs are retained when the stack is deleted", logs.DeletionPolicy, "Retain"},
		{"the stage's steady rate defaults to DefaultThrottleRate", prop(stage.Properties, "DefaultRouteSettings", "ThrottlingRateLimit"), DefaultThrottleRate},
		{"the stage's burst defaults to DefaultThrottleBurst", prop(stage.Properties, "DefaultRouteSettings", "ThrottlingBurstLimit"), DefaultThrottleBurst},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !jsonEqual(tc.got, tc.want) {
				t.Fatalf("got %v, want %v (format %s)", tc.got, tc.want, format)
			}
		})
	}
}

func TestStackLogRetention(t *testing.T) {
	tests := []struct {
		name string
		tpl  func(testing.TB) *template
		days float64
	}{
		{"GIVEN default props THEN every log group keeps 30 days", defaultTemplate, 30},
		{"GIVEN a retention of one week THEN every log group keeps 7 days", optionsTemplate, 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// WHEN every log group of the stack is read
			tpl := tc.tpl(t)
			groups := tpl.ofType("AWS::Logs::LogGroup")

			// THEN each function and the API have their own, all with the
			// retention, and no function logs to a group Lambda would make
			// on first use (which would keep logs forever)
			if got, want := len(groups), len(tpl.functions(t))+1; got != want {
				t.Errorf("%d log groups, want one per function plus the access logs: %d", got, want)
			}
			for _, id := range groups {
				if got := tpl.Resources[id].Properties["RetentionInDays"]; got != tc.days {
					t.Errorf("log group %s keeps logs %v days, want %v", id, got, tc.days)
				}
			}
			for name, id := range tpl.functions(t) {
				lg := render(prop(tpl.Resources[id].Properties, "LoggingConfig", "LogGroup"))
				if tpl.Resources[lg].Type != "AWS::Logs::LogGroup" {
					t.Errorf("function %s logs to %q, not to a log group of the stack", name, lg)
				}
			}
			if custom := tpl.ofType("Custom::LogRetention"); len(custom) > 0 {
				t.Errorf("retention set after the fact by %v", custom)
			}
		})
	}
}
