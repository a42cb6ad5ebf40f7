package infra

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
)

// checkWiring fails unless the template schedules exactly the specs with a
// schedule and subscribes exactly the queue consumers, and nothing but API
// Gateway (for API functions) and EventBridge (for scheduled ones) may
// invoke a function.
func checkWiring(t *testing.T, tpl *template, specs []Spec) {
	t.Helper()
	fns := tpl.functions(t)
	names := map[string]string{} // logical id -> name
	for n, id := range fns {
		names[id] = n
	}
	queue := webhookQueue(t, tpl)
	ingest := ingestQueue(t, tpl)
	fromIngest, fromStream := map[string]bool{}, map[string]bool{}
	table, _ := tpl.only(t, "AWS::DynamoDB::Table")

	wantSchedules, wantConsumers := map[string]string{}, []string{}
	api := map[string]bool{}
	for _, s := range specs {
		if s.Schedule != "" {
			wantSchedules[s.Name] = s.Schedule
		}
		if s.ConsumesWebhookQueue || s.ConsumesIngestQueue || s.ConsumesAuditStream {
			wantConsumers = append(wantConsumers, s.Name)
		}
		if s.ConsumesAuditStream {
			// and the stream's dead-letter queue, to redrive what it holds
			wantConsumers = append(wantConsumers, s.Name)
		}
		fromIngest[s.Name] = s.ConsumesIngestQueue
		fromStream[s.Name] = s.ConsumesAuditStream
		api[s.Name] = s.API
	}
	sort.Strings(wantConsumers)

	t.Run("every scheduled function has one enabled EventBridge rule with its schedule, and no other rule exists", func(t *testing.T) {
		got := map[string]string{}
		for _, id := range tpl.ofType("AWS::Events::Rule") {
			p := tpl.Resources[id].Properties
			targets := list(p["Targets"])
			if len(targets) != 1 || p["State"] != "ENABLED" {
				t.Errorf("rule %s: state %v, %d targets", id, p["State"], len(targets))
				continue
			}
			fnID, _ := strings.CutSuffix(render(prop(targets[0].(map[string]any), "Arn")), ".Arn")
			name := names[fnID]
			if _, dup := got[name]; dup {
				t.Errorf("function %q scheduled twice", name)
			}
			got[name], _ = p["ScheduleExpression"].(string)
		}
		if !jsonEqual(got, wantSchedules) {
			t.Errorf("schedules %v, want %v", got, wantSchedules)
		}
	})
	t.Run("every queue consumer has one event source mapping on its queue (webhook or ingest), or on the table's stream and its dead-letter queue, with partial batch responses, and no other mapping exists", func(t *testing.T) {
		var got []string
		for _, id := range tpl.ofType("AWS::Lambda::EventSourceMapping") {
			p := tpl.Resources[id].Properties
			want := queue + ".Arn"
			if fromIngest[names[render(p["FunctionName"])]] {
				want = ingest + ".Arn"
			}
			if fromStream[names[render(p["FunctionName"])]] {
				want = table + ".StreamArn"
				if strings.HasPrefix(render(p["EventSourceArn"]), "AuditStreamDeadLetterQueue") {
					want = render(p["EventSourceArn"])
				}
			}
			if render(p["EventSourceArn"]) != want {
				t.Errorf("mapping %s reads %s, not %s", id, render(p["EventSourceArn"]), want)
			}
			if !slices.Equal(strs(p["FunctionResponseTypes"]), []string{"ReportBatchItemFailures"}) {
				t.Errorf("mapping %s: response types %v, want partial batch responses", id, p["FunctionResponseTypes"])
			}
			got = append(got, names[render(p["FunctionName"])])
		}
		sort.Strings(got)
		if !slices.Equal(got, wantConsumers) {
			t.Errorf("consumers %v, want %v", got, wantConsumers)
		}
	})
	t.Run("only API Gateway invokes API functions and only EventBridge invokes scheduled ones", func(t *testing.T) {
		for _, id := range tpl.ofType("AWS::Lambda::Permission") {
			p := tpl.Resources[id].Properties
			fnID, _ := strings.CutSuffix(render(p["FunctionName"]), ".Arn")
			name := names[fnID]
			switch p["Principal"] {
			case "apigateway.amazonaws.com":
				if !api[name] {
					t.Errorf("API Gateway may invoke %q, which serves no route", name)
				}
			case "events.amazonaws.com":
				src, _ := strings.CutSuffix(render(p["SourceArn"]), ".Arn")
				if wantSchedules[name] == "" || tpl.Resources[src].Type != "AWS::Events::Rule" {
					t.Errorf("EventBridge may invoke %q from %s", name, src)
				}
			default:
				t.Errorf("%v may invoke %q", p["Principal"], name)
			}
		}
	})
	t.Run("every queue consumer times out before the queue would hand its message to another", func(t *testing.T) {
		vis, _ := tpl.Resources[queue].Properties["VisibilityTimeout"].(float64)
		checkConsumerTimeouts(t, tpl, vis)
	})
}

func TestStackWiringFollowsTheWorkerList(t *testing.T) {
	// GIVEN the stack synthesized with default props and today's worker list
	tpl := defaultTemplate(t)
	// WHEN its schedules and queue subscriptions are read
	// THEN they are exactly what the list says (today: none at all)
	checkWiring(t, tpl, Specs())
	if len(Workers()) == 0 {
		t.Run("with no workers listed there is no EventBridge rule and no event source mapping", func(t *testing.T) {
			if n := len(tpl.ofType("AWS::Events::Rule")) + len(tpl.ofType("AWS::Lambda::EventSourceMapping")); n != 0 {
				t.Fatalf("%d rules and mappings", n)
			}
		})
	}
}

// fakeWorkers stand in for workers that do not exist yet, one of each kind.
var fakeWorkers = []Worker{
	{Name: "fake-delivery", ConsumesWebhookQueue: true, Access: ReadWrite},
	{Name: "fake-sweep", Schedule: "rate(5 minutes)", Access: ReadWrite, PublishesWebhooks: true},
	{Name: "fake-rollup", Schedule: "cron(0 3 * * ? *)", Access: ReadOnly},
}

// optionsProps turns every option away from its default.
var optionsProps = FlagplaneStackProps{
	workers:                    fakeWorkers,
	CORSAllowOrigins:           []string{"https://app.example.com", "http://localhost:3000"},
	RemoveTableOnDelete:        true,
	DefaultReservedConcurrency: 3,
	ReservedConcurrency:        map[string]int{"projects": 7},
	LogRetention:               awslogs.RetentionDays_ONE_WEEK,
	DeadLetterMaxReceives:      2,
	ThrottleRate:               25.5,
	ThrottleBurst:              50,
	RateLimits:                 &api.RateLimits{Global: 500, Route: 0, Credential: 70},
}

var (
	optionsOnce sync.Once
	optionsTpl  *template
)

func optionsTemplate(tb testing.TB) *template {
	tb.Helper()
	optionsOnce.Do(func() { optionsTpl = synth(tb, optionsProps) })
	if optionsTpl == nil {
		tb.Fatal("the options template failed to synthesize in an earlier test")
	}
	return optionsTpl
}

func TestStackWiresListedWorkers(t *testing.T) {
	// GIVEN a worker list with a queue consumer and two scheduled functions
	// that have no code yet
	all := specs(fakeWorkers)

	// WHEN the stack is synthesized with it
	tpl := optionsTemplate(t)

	// THEN each gets its function, its rule or subscription, and exactly
	// the rights it needs
	checkWiring(t, tpl, all)
	checkLeastPrivilege(t, tpl, all)
	t.Run("the listed workers made rules and mappings", func(t *testing.T) {
		if got := len(tpl.ofType("AWS::Events::Rule")); got != 2 {
			t.Errorf("%d rules, want 2", got)
		}
		if got := len(tpl.ofType("AWS::Lambda::EventSourceMapping")); got != 1 {
			t.Errorf("%d mappings, want 1", got)
		}
	})
	t.Run("workers get the worker timeout and the shared environment", func(t *testing.T) {
		fns := tpl.functions(t)
		ids := idsOf(t, tpl)
		for _, s := range all[len(all)-len(fakeWorkers):] {
			p := tpl.Resources[fns[s.Name]].Properties
			if p["Timeout"] != WorkerTimeout.Seconds() {
				t.Errorf("%s: timeout %v", s.Name, p["Timeout"])
			}
			if got, want := envOf(p), expectedEnv(s, ids.table, ids.queue); !jsonEqual(got, want) {
				t.Errorf("%s: environment %v, want %v", s.Name, got, want)
			}
		}
	})
}

func TestStackOptions(t *testing.T) {
	// GIVEN props that change every option
	// WHEN the stack is synthesized with them
	tpl := optionsTemplate(t)
	fns := tpl.functions(t)
	cors, _ := apiDocument(t, tpl)["x-amazon-apigateway-cors"].(map[string]any)
	_, table := tpl.only(t, "AWS::DynamoDB::Table")
	queue := tpl.Resources[webhookQueue(t, tpl)].Properties
	logs := idsOf(t, tpl).logs
	_, stage := tpl.only(t, "AWS::ApiGatewayV2::Stage")
	accessLogs := tpl.Resources[accessLogGroup(t, tpl)]

	// THEN each shows in the template
	tests := []struct {
		name      string
		got, want any
	}{
		{"CORS allows the configured origins", cors["allowOrigins"], optionsProps.CORSAllowOrigins},
		{"CORS allows the catalog's methods", cors["allowMethods"], []string{"DELETE", "GET", "PATCH", "POST", "PUT"}},
		{"CORS allows the token, JSON and beta headers", cors["allowHeaders"], CORSAllowHeaders},
		{"CORS lets scripts read the rate-limit and request-id headers", cors["exposeHeaders"], CORSExposeHeaders},
		{"browsers may cache a preflight's answer for an hour", cors["maxAge"], 3600},
		{"API functions get the configured global rate limit", envOf(tpl.Resources[fns["flags"]].Properties)[app.EnvRateLimitGlobal], "500"},
		{"API functions get the configured route rate limit (0: none)", envOf(tpl.Resources[fns["flags"]].Properties)[app.EnvRateLimitRoute], "0"},
		{"the SDK function gets the configured credential rate limit", envOf(tpl.Resources[fns["sdk"]].Properties)[app.EnvRateLimitCredential], "70"},
		{"the events function gets the configured credential rate limit", envOf(tpl.Resources[fns["events"]].Properties)[app.EnvRateLimitCredential], "70"},
		{"the table is deleted with the stack when asked", table.DeletionPolicy, "Delete"},
		{"a named function gets its own reserved concurrency", tpl.Resources[fns["projects"]].Properties["ReservedConcurrentExecutions"], 7},
		{"other functions get the default reserved concurrency", tpl.Resources[fns["flags"]].Properties["ReservedConcurrentExecutions"], 3},
		{"log retention follows the option", tpl.Resources[logs["flags"]].Properties["RetentionInDays"], 7},
		{"log groups are deleted with the table", tpl.Resources[logs["flags"]].DeletionPolicy, "Delete"},
		{"messages are dead-lettered after the configured receives", prop(queue, "RedrivePolicy", "maxReceiveCount"), 2},
		{"the stage admits the configured steady rate", prop(stage.Properties, "DefaultRouteSettings", "ThrottlingRateLimit"), 25.5},
		{"the stage admits the configured burst", prop(stage.Properties, "DefaultRouteSettings", "ThrottlingBurstLimit"), 50},
		{"access log retention follows the option", accessLogs.Properties["RetentionInDays"], 7},
		{"the access log group is deleted with the table", accessLogs.DeletionPolicy, "Delete"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !jsonEqual(tc.got, tc.want) {
				t.Fatalf("got %v, want %v", tc.got, tc.want)
			}
		})
	}
}

func TestStackWithoutHTTPAPI(t *testing.T) {
	// GIVEN props that leave the HTTP API out (LocalStack's free image)
	// WHEN the stack is synthesized with them
	tpl := synth(t, FlagplaneStackProps{OmitHTTPAPI: true})

	// THEN there is no API, but every function, the table and the queues are
	for id, r := range tpl.Resources {
		apiPermission := r.Type == "AWS::Lambda::Permission" && r.Properties["Principal"] == "apigateway.amazonaws.com"
		if strings.HasPrefix(r.Type, "AWS::ApiGatewayV2::") || apiPermission {
			t.Errorf("%s %s present", r.Type, id)
		}
	}
	for _, o := range []string{OutputAPIURL, OutputAccessLogGroup} {
		if _, ok := tpl.Outputs[o]; ok {
			t.Errorf("output %s present", o)
		}
	}
	if got := len(tpl.functions(t)); got != len(Specs()) {
		t.Errorf("%d functions, want %d", got, len(Specs()))
	}
	for _, o := range []string{OutputTableName, OutputWebhookQueueURL, OutputWebhookDLQueueURL} {
		if _, ok := tpl.Outputs[o]; !ok {
			t.Errorf("output %s missing", o)
		}
	}
}

func TestWorkerList(t *testing.T) {
	t.Run("GIVEN today's worker list THEN it is valid", func(t *testing.T) {
		if err := validateWorkers(Workers()); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("GIVEN today's worker list THEN every worker has a main package under functions", func(t *testing.T) {
		for _, w := range Workers() {
			if _, err := os.Stat(filepath.Join("..", "functions", w.Name, "main.go")); err != nil {
				t.Errorf("worker %q: %v", w.Name, err)
			}
		}
	})
	t.Run("GIVEN the fake workers THEN they are valid", func(t *testing.T) {
		if err := validateWorkers(fakeWorkers); err != nil {
			t.Fatal(err)
		}
	})

	bad := []struct {
		name    string
		workers []Worker
		want    string
	}{
		{"a worker named like a group is refused", []Worker{{Name: "projects", Schedule: "rate(1 hour)", Access: ReadOnly}}, "already used"},
		{"a worker named like the local binary is refused", []Worker{{Name: "flagplane", Schedule: "rate(1 hour)", Access: ReadOnly}}, "already used"},
		{"a worker listed twice is refused", []Worker{{Name: "sweep", Schedule: "rate(1 hour)", Access: ReadOnly}, {Name: "sweep", Schedule: "rate(1 hour)", Access: ReadOnly}}, "already used"},
		{"a worker without access is refused", []Worker{{Name: "sweep", Schedule: "rate(1 hour)"}}, "Access"},
		{"a schedule that is neither rate nor cron is refused", []Worker{{Name: "sweep", Schedule: "every hour", Access: ReadOnly}}, "neither rate"},
		{"a worker nothing invokes is refused", []Worker{{Name: "sweep", Access: ReadOnly}}, "nothing would ever invoke it"},
		{"a name that is not a folder name is refused", []Worker{{Name: "Sweep", Schedule: "rate(1 hour)", Access: ReadOnly}}, "folder name"},
		{"two queue consumers are refused", []Worker{{Name: "a", ConsumesWebhookQueue: true, Access: ReadOnly}, {Name: "b", ConsumesWebhookQueue: true, Access: ReadOnly}}, "at most one"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			err := validateWorkers(tc.workers)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestCheckProps(t *testing.T) {
	assets := fakeAssets(t, specNames(Specs()))
	tests := []struct {
		name  string
		props FlagplaneStackProps
		want  string // "" for valid
	}{
		{"GIVEN the built bootstraps THEN the props are valid", FlagplaneStackProps{AssetDir: assets}, ""},
		{"GIVEN no bootstraps THEN the error says to run make build", FlagplaneStackProps{AssetDir: t.TempDir()}, "make build"},
		{"GIVEN reserved concurrency for an unknown function THEN it is refused", FlagplaneStackProps{AssetDir: assets, ReservedConcurrency: map[string]int{"projcts": 2}}, "no such function"},
		{"GIVEN a negative reserved concurrency THEN it is refused", FlagplaneStackProps{AssetDir: assets, DefaultReservedConcurrency: -1}, "negative"},
		{"GIVEN a dead-letter count above SQS's limit THEN it is refused", FlagplaneStackProps{AssetDir: assets, DeadLetterMaxReceives: 1001}, "1 to 1000"},
		{"GIVEN two origins in one entry THEN it is refused", FlagplaneStackProps{AssetDir: assets, CORSAllowOrigins: []string{"https://a.example, https://b.example"}}, "one origin per entry"},
		{"GIVEN an origin with a path THEN it is refused", FlagplaneStackProps{AssetDir: assets, CORSAllowOrigins: []string{"https://a.example/app"}}, "scheme://host"},
		{"GIVEN any origin THEN the props are valid", FlagplaneStackProps{AssetDir: assets, CORSAllowOrigins: []string{"*"}}, ""},
		{"GIVEN a negative rate limit THEN it is refused", FlagplaneStackProps{AssetDir: assets, RateLimits: &api.RateLimits{Route: -1}}, "rate limit"},
		{"GIVEN an invalid worker list THEN it is refused", FlagplaneStackProps{AssetDir: assets, workers: []Worker{{Name: "x"}}}, "workers"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.props.Check()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
	t.Run("GIVEN no asset directory THEN bin/lambda under the repository root is used", func(t *testing.T) {
		// Without `make build` the bootstrap check fails; the directory is set first.
		c, _ := resolve(&FlagplaneStackProps{})
		root, err := RepoRoot(".")
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(root, DefaultAssetDir); c.AssetDir != want {
			t.Fatalf("asset dir %q, want %q", c.AssetDir, want)
		}
	})
}
