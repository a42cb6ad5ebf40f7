package infra

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/sdkapi"
	"github.com/flagplane/flagplane/shared/store"
)

var (
	relayOnce sync.Once
	relayTpl  *template
)

// relayProps switch the relay on with three replicas and plain HTTP.
var relayProps = FlagplaneStackProps{Relay: &RelayProps{Replicas: 3}}

// relayTemplate is the stack as `cdk deploy -c flagplane:relay=true -c
// flagplane:relayReplicas=3` makes it.
func relayTemplate(tb testing.TB) *template {
	tb.Helper()
	relayOnce.Do(func() { relayTpl = synth(tb, relayProps) })
	if relayTpl == nil {
		tb.Fatal("the relay template failed to synthesize in an earlier test")
	}
	return relayTpl
}

// relayTypes are the resource types only the relay brings.
var relayTypes = []string{"AWS::EC2::", "AWS::ECS::", "AWS::ElasticLoadBalancingV2::"}

func isRelayType(typ string) bool {
	return slices.ContainsFunc(relayTypes, func(p string) bool { return strings.HasPrefix(typ, p) })
}

// dockerImages reads the cloud assembly's image assets: their build
// context folders (absolute) and platforms, by asset hash.
func dockerImages(tb testing.TB, tpl *template) map[string]struct{ dir, platform string } {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join(tpl.outdir, "Test.assets.json"))
	if err != nil {
		tb.Fatalf("asset manifest: %v", err)
	}
	var m struct {
		DockerImages map[string]struct {
			Source struct {
				Directory string `json:"directory"`
				Platform  string `json:"platform"`
			} `json:"source"`
		} `json:"dockerImages"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		tb.Fatalf("asset manifest: %v", err)
	}
	out := map[string]struct{ dir, platform string }{}
	for hash, img := range m.DockerImages {
		out[hash] = struct{ dir, platform string }{filepath.Join(tpl.outdir, img.Source.Directory), img.Source.Platform}
	}
	return out
}

func TestStackWithoutRelay(t *testing.T) {
	// GIVEN the stack synthesized with default props (the relay is opt-in)
	tpl := defaultTemplate(t)

	// WHEN its resources, outputs and assets are read
	// THEN nothing of the relay is there: no VPC, cluster, load balancer,
	// image or output, so the default deployment costs nothing idle
	t.Run("no VPC, ECS or load balancer resource is in the template", func(t *testing.T) {
		for id, r := range tpl.Resources {
			if isRelayType(r.Type) {
				t.Errorf("%s %s present", r.Type, id)
			}
		}
	})
	t.Run("no relay output is in the template", func(t *testing.T) {
		for _, o := range []string{OutputRelayURL, OutputRelayDNSName, OutputRelayLogGroup} {
			if _, ok := tpl.Outputs[o]; ok {
				t.Errorf("output %s present", o)
			}
		}
	})
	t.Run("no container image is built on deploy", func(t *testing.T) {
		if imgs := dockerImages(t, tpl); len(imgs) > 0 {
			t.Errorf("image assets %v", imgs)
		}
	})
}

// relayContainer is the relay task's one container definition.
func relayContainer(tb testing.TB, tpl *template) map[string]any {
	tb.Helper()
	_, task := tpl.only(tb, "AWS::ECS::TaskDefinition")
	defs := list(task.Properties["ContainerDefinitions"])
	if len(defs) != 1 {
		tb.Fatalf("%d containers in the relay task, want 1", len(defs))
	}
	c, _ := defs[0].(map[string]any)
	return c
}

// containerEnv reads a container definition's environment.
func containerEnv(c map[string]any) map[string]string {
	out := map[string]string{}
	for _, e := range list(c["Environment"]) {
		m, _ := e.(map[string]any)
		out[render(m["Name"])] = render(m["Value"])
	}
	return out
}

// lbAttributes reads a load balancer's or target group's attributes.
func lbAttributes(v any) map[string]string {
	out := map[string]string{}
	for _, a := range list(v) {
		m, _ := a.(map[string]any)
		out[render(m["Key"])] = render(m["Value"])
	}
	return out
}

func TestStackRelay(t *testing.T) {
	// GIVEN the stack synthesized with the relay on, three replicas, HTTP
	tpl := relayTemplate(t)
	tableID, _ := tpl.only(t, "AWS::DynamoDB::Table")
	ingestID := ingestQueue(t, tpl)
	_, service := tpl.only(t, "AWS::ECS::Service")
	_, task := tpl.only(t, "AWS::ECS::TaskDefinition")
	container := relayContainer(t, tpl)
	lbID, lb := tpl.only(t, "AWS::ElasticLoadBalancingV2::LoadBalancer")
	_, listener := tpl.only(t, "AWS::ElasticLoadBalancingV2::Listener")
	_, group := tpl.only(t, "AWS::ElasticLoadBalancingV2::TargetGroup")
	lbAttrs := lbAttributes(lb.Properties["LoadBalancerAttributes"])
	groupAttrs := lbAttributes(group.Properties["TargetGroupAttributes"])
	logsID := render(prop(container, "LogConfiguration", "Options", "awslogs-group"))
	subnets := tpl.ofType("AWS::EC2::Subnet")
	publicSubnets := 0
	for _, id := range subnets {
		if tpl.Resources[id].Properties["MapPublicIpOnLaunch"] == true {
			publicSubnets++
		}
	}
	var endpoints []string
	for _, id := range tpl.ofType("AWS::EC2::VPCEndpoint") {
		p := tpl.Resources[id].Properties
		endpoints = append(endpoints, render(p["VpcEndpointType"])+" "+render(p["ServiceName"]))
	}

	// WHEN its relay resources are read
	// THEN the relay runs as configured: Fargate ARM tasks of flagplane
	// relay behind an internet-facing load balancer whose idle timeout
	// outlasts the stream heartbeat
	tests := []struct {
		name      string
		got, want any
	}{
		{"the service runs the configured number of replicas", service.Properties["DesiredCount"], 3},
		{"the service runs on Fargate", service.Properties["LaunchType"], "FARGATE"},
		{"a deployment starts new tasks before stopping old ones", prop(service.Properties, "DeploymentConfiguration", "MinimumHealthyPercent"), 100},
		{"a failed deployment rolls back", prop(service.Properties, "DeploymentConfiguration", "DeploymentCircuitBreaker", "Rollback"), true},
		{"tasks get public addresses, as there is no NAT gateway", prop(service.Properties, "NetworkConfiguration", "AwsvpcConfiguration", "AssignPublicIp"), "ENABLED"},
		{"tasks run on ARM64", prop(task.Properties, "RuntimePlatform", "CpuArchitecture"), "ARM64"},
		{"tasks have a quarter vCPU", task.Properties["Cpu"], "256"},
		{"tasks have half a GB", task.Properties["Memory"], "512"},
		{"the container runs flagplane relay on its port", container["Command"], RelayCommand},
		{"the container listens on the relay port", prop(list(container["PortMappings"])[0].(map[string]any), "ContainerPort"), RelayPort},
		{"the container's root file system is read-only", container["ReadonlyRootFilesystem"], true},
		{"the container may hold many sockets open", container["Ulimits"], []map[string]any{{"Name": "nofile", "SoftLimit": RelayNoFile, "HardLimit": RelayNoFile}}},
		{"the container reads the stack's table", containerEnv(container)[app.EnvTable], tableID},
		{"the container queues SDK events on the ingest queue", containerEnv(container)[app.EnvIngestQueueURL], ingestID},
		{"the container's Go heap stays under the task's memory", containerEnv(container)["GOMEMLIMIT"], RelayGoMemLimit},
		{"the container logs to the relay's log group", tpl.Resources[logsID].Type, "AWS::Logs::LogGroup"},
		{"relay logs are kept one month", tpl.Resources[logsID].Properties["RetentionInDays"], 30},
		{"relay logs are retained when the stack is deleted", tpl.Resources[logsID].DeletionPolicy, "Retain"},
		{"the load balancer is internet-facing", lb.Properties["Scheme"], "internet-facing"},
		{"the load balancer's idle timeout is RelayIdleTimeout", lbAttrs["idle_timeout.timeout_seconds"], "300"},
		{"the load balancer drops invalid header fields", lbAttrs["routing.http.drop_invalid_header_fields.enabled"], "true"},
		{"without a certificate the listener speaks HTTP on 80", []any{listener.Properties["Protocol"], listener.Properties["Port"]}, []any{"HTTP", 80}},
		{"the health check asks /healthz", group.Properties["HealthCheckPath"], RelayHealthPath},
		{"the target group reaches tasks by IP on the relay port", []any{group.Properties["TargetType"], group.Properties["Port"]}, []any{"ip", RelayPort}},
		{"a replaced task drains for 10 seconds", groupAttrs["deregistration_delay.timeout_seconds"], "10"},
		{"the VPC has no NAT gateway", len(tpl.ofType("AWS::EC2::NatGateway")), 0},
		{"the VPC has public subnets in two zones and no others", []int{len(subnets), publicSubnets}, []int{2, 2}},
		{"the VPC reaches DynamoDB through a free gateway endpoint", endpoints, []string{"Gateway com.amazonaws.AWS::Region.dynamodb"}},
		{"the relay URL is the load balancer's HTTP address", render(tpl.Outputs[OutputRelayURL].Value), "http://" + lbID + ".DNSName"},
		{"the load balancer's DNS name is an output", render(tpl.Outputs[OutputRelayDNSName].Value), lbID + ".DNSName"},
		{"the relay's log group is an output", render(tpl.Outputs[OutputRelayLogGroup].Value), logsID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !jsonEqual(tc.got, tc.want) {
				t.Fatalf("got %v, want %v", jsonString(tc.got), jsonString(tc.want))
			}
		})
	}
	t.Run("the idle timeout outlasts the relay's default heartbeat with a minute to spare", func(t *testing.T) {
		if RelayIdleTimeout < sdkapi.DefaultHeartbeat+time.Minute {
			t.Fatalf("idle timeout %s, heartbeat %s", RelayIdleTimeout, sdkapi.DefaultHeartbeat)
		}
	})
	t.Run("the service's tasks only admit the load balancer", func(t *testing.T) {
		_, sg := tpl.only(t, "AWS::ECS::Service")
		groups := strs(prop(sg.Properties, "NetworkConfiguration", "AwsvpcConfiguration", "SecurityGroups"))
		if len(groups) != 1 {
			t.Fatalf("service security groups %v", groups)
		}
		svcSG, _ := strings.CutSuffix(groups[0], ".GroupId")
		if inline := tpl.Resources[svcSG].Properties["SecurityGroupIngress"]; inline != nil {
			t.Errorf("the service's security group admits %v", inline)
		}
		lbSG, _ := strings.CutSuffix(strs(lb.Properties["SecurityGroups"])[0], ".GroupId")
		var from []string
		for _, id := range tpl.ofType("AWS::EC2::SecurityGroupIngress") {
			p := tpl.Resources[id].Properties
			if render(p["GroupId"]) == svcSG+".GroupId" {
				from = append(from, render(p["SourceSecurityGroupId"])+":"+render(p["FromPort"])+"-"+render(p["ToPort"]))
			}
		}
		if want := []string{lbSG + ".GroupId:8080-8080"}; !slices.Equal(from, want) {
			t.Fatalf("the service admits %v, want %v", from, want)
		}
	})
}

func TestStackRelayLeastPrivilege(t *testing.T) {
	// GIVEN the stack synthesized with the relay on
	tpl := relayTemplate(t)
	_, task := tpl.only(t, "AWS::ECS::TaskDefinition")
	taskRole, _ := strings.CutSuffix(render(task.Properties["TaskRoleArn"]), ".Arn")
	execRole, _ := strings.CutSuffix(render(task.Properties["ExecutionRoleArn"]), ".Arn")
	tableID, _ := tpl.only(t, "AWS::DynamoDB::Table")
	table := tableID + ".Arn"

	// WHEN the policies of the task's roles are read
	grants := grantsByRole(t, tpl)

	// THEN the relay's code may read the table and queue SDK events, and
	// nothing else: no write to the table at all
	t.Run("the task role may exactly read the table and send to the ingest queue", func(t *testing.T) {
		want := map[grant]bool{
			{"dynamodb:GetItem", table, ""}:                             true,
			{"dynamodb:Query", table, ""}:                               true,
			{"dynamodb:Query", table + "/index/" + store.IndexGSI1, ""}: true,
			{"sqs:SendMessage", ingestQueue(t, tpl) + ".Arn", ""}:       true,
		}
		if got := grants[taskRole]; !jsonEqual(sortedGrants(got), sortedGrants(want)) {
			t.Fatalf("granted %v, want %v", sortedGrants(got), sortedGrants(want))
		}
	})
	t.Run("the task role is assumed by ECS tasks only", func(t *testing.T) {
		doc := prop(tpl.Resources[taskRole].Properties, "AssumeRolePolicyDocument")
		for _, st := range list(prop(map[string]any{"d": doc}, "d", "Statement")) {
			if p := render(prop(st.(map[string]any), "Principal", "Service")); p != "ecs-tasks.amazonaws.com" {
				t.Errorf("the task role is assumed by %s", p)
			}
		}
	})
	t.Run("the execution role touches neither the table nor a queue", func(t *testing.T) {
		if len(grants[execRole]) == 0 {
			t.Fatal("the execution role has no grants: it could not pull the image")
		}
		for g := range grants[execRole] {
			if strings.HasPrefix(g.Action, "dynamodb:") || strings.HasPrefix(g.Action, "sqs:") {
				t.Errorf("the execution role may %s", g)
			}
		}
	})
	t.Run("the Lambda functions' grants are those of the default stack", func(t *testing.T) {
		if got, want := grantsOf(t, tpl), grantsOf(t, defaultTemplate(t)); !jsonEqual(sortedNamedGrants(got), sortedNamedGrants(want)) {
			t.Fatal("switching the relay on changed what the functions may do")
		}
	})
}

func sortedNamedGrants(m map[string]map[grant]bool) map[string][]string {
	out := map[string][]string{}
	for name, gs := range m {
		out[name] = sortedGrants(gs)
	}
	return out
}

func TestStackRelayHTTPS(t *testing.T) {
	// GIVEN the relay with a certificate and its domain name, replicas left to the default
	const arn = "arn:aws:acm:us-east-1:123456789012:certificate/0f0e0d0c-1111-2222-3333-444455556666"
	tpl := synth(t, FlagplaneStackProps{Relay: &RelayProps{CertificateArn: arn, DomainName: "relay.example.com"}})
	_, service := tpl.only(t, "AWS::ECS::Service")
	_, listener := tpl.only(t, "AWS::ElasticLoadBalancingV2::Listener")
	_, lb := tpl.only(t, "AWS::ElasticLoadBalancingV2::LoadBalancer")
	lbSG, _ := strings.CutSuffix(strs(lb.Properties["SecurityGroups"])[0], ".GroupId")
	var ports []string
	for _, rule := range list(tpl.Resources[lbSG].Properties["SecurityGroupIngress"]) {
		m, _ := rule.(map[string]any)
		ports = append(ports, render(m["CidrIp"])+":"+render(m["FromPort"]))
	}

	// WHEN it is synthesized
	// THEN the listener speaks HTTPS on 443 with the certificate and the
	// relay URL names the domain
	tests := []struct {
		name      string
		got, want any
	}{
		{"the service runs two replicas by default", service.Properties["DesiredCount"], DefaultRelayReplicas},
		{"the listener speaks HTTPS on 443", []any{listener.Properties["Protocol"], listener.Properties["Port"]}, []any{"HTTPS", 443}},
		{"the listener serves the certificate", prop(list(listener.Properties["Certificates"])[0].(map[string]any), "CertificateArn"), arn},
		{"the listener offers TLS 1.2 and 1.3 only (AWS's recommended policy)", listener.Properties["SslPolicy"], "ELBSecurityPolicy-TLS13-1-2-2021-06"},
		{"the load balancer admits anyone on 443 and nothing else", ports, []string{"0.0.0.0/0:443"}},
		{"the relay URL is the domain over HTTPS", render(tpl.Outputs[OutputRelayURL].Value), "https://relay.example.com"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !jsonEqual(tc.got, tc.want) {
				t.Fatalf("got %v, want %v", jsonString(tc.got), jsonString(tc.want))
			}
		})
	}
}

func TestStackResourceCounts(t *testing.T) {
	// GIVEN the stack without and with the relay
	off, on := defaultTemplate(t), relayTemplate(t)

	// WHEN their resources are counted
	added := 0
	for id, r := range on.Resources {
		if _, ok := off.Resources[id]; !ok {
			added++
			if !strings.HasPrefix(id, "Relay") {
				t.Errorf("the relay adds %s %s outside its construct", r.Type, id)
			}
		}
	}
	t.Logf("resources: %d without the relay, %d with it (+%d)", len(off.Resources), len(on.Resources), added)

	// THEN the relay only adds (it changes no resource of the default
	// stack) and both fit CloudFormation's 500 with room to grow
	t.Run("every resource of the default stack is unchanged with the relay on", func(t *testing.T) {
		for id, r := range off.Resources {
			if !jsonEqual(on.Resources[id], r) {
				t.Errorf("%s %s differs", r.Type, id)
			}
		}
	})
	t.Run("the stack with the relay has fewer than 300 of CloudFormation's 500 resources", func(t *testing.T) {
		if len(on.Resources) >= 300 {
			t.Fatalf("%d resources", len(on.Resources))
		}
	})
	t.Run("the relay adds fewer than 40 resources", func(t *testing.T) {
		if added >= 40 || added == 0 {
			t.Fatalf("%d resources added", added)
		}
	})
}

func TestRelayImage(t *testing.T) {
	// GIVEN the stack synthesized with the relay on, and the Dockerfile
	tpl := relayTemplate(t)
	imgs := dockerImages(t, tpl)
	if len(imgs) != 1 {
		t.Fatalf("%d image assets, want 1: %v", len(imgs), imgs)
	}
	var hash, dir, platform string
	for h, img := range imgs {
		hash, dir, platform = h, img.dir, img.platform
	}
	df := readDockerfile(t, filepath.Join(dir, "Dockerfile"))

	// WHEN the image's build context (the folder the CDK hands to docker
	// build on deploy) is read
	// THEN it holds what the Dockerfile copies and none of the checkout's bulk
	t.Run("the image is built for linux/arm64, the tasks' platform", func(t *testing.T) {
		if platform != "linux/arm64" {
			t.Fatalf("platform %q", platform)
		}
	})
	t.Run("the task runs the image built from the asset", func(t *testing.T) {
		if img := render(relayContainer(t, tpl)["Image"]); !strings.HasSuffix(img, ":"+hash+`"}`) && !strings.HasSuffix(img, ":"+hash) {
			t.Fatalf("image %s, asset %s", img, hash)
		}
	})
	t.Run("every file or folder the Dockerfile copies is in the build context", func(t *testing.T) {
		srcs := df.copySources()
		if len(srcs) == 0 {
			t.Fatal("the Dockerfile copies nothing from the context")
		}
		for _, src := range srcs {
			if _, err := os.Stat(filepath.Join(dir, src)); err != nil {
				t.Errorf("COPY %s: %v", src, err)
			}
		}
	})
	t.Run("the build context holds no tests, dependencies, builds or history", func(t *testing.T) {
		for _, name := range []string{"node_modules", "bin", "cdk.out", ".git", "infra", "README.md"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				t.Errorf("%s is in the build context", name)
			}
		}
		filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err == nil && (strings.HasSuffix(path, "_test.go") || d.Name() == "testdata") {
				t.Errorf("%s is in the build context", path)
			}
			return err
		})
	})
	t.Run("the Dockerfile's go build, run on the build context, makes a static linux/arm64 binary", func(t *testing.T) {
		goos, goarch, _ := strings.Cut(platform, "/")
		checkDockerBuild(t, df, dir, goos, goarch)
	})
}

// jsonString shows a value as JSON in a failure message.
func jsonString(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}

func TestCheckRelayProps(t *testing.T) {
	assets := fakeAssets(t, specNames(Specs()))
	const arn = "arn:aws:acm:us-east-1:123456789012:certificate/0f0e0d0c"
	tests := []struct {
		name  string
		relay RelayProps
		want  string // "" for valid
	}{
		{"GIVEN the relay's defaults THEN the props are valid", RelayProps{}, ""},
		{"GIVEN a certificate and its domain THEN the props are valid", RelayProps{CertificateArn: arn, DomainName: "flags.example.co.uk"}, ""},
		{"GIVEN negative replicas THEN they are refused", RelayProps{Replicas: -1}, "relay replicas -1"},
		{"GIVEN more replicas than the most THEN they are refused", RelayProps{Replicas: MaxRelayReplicas + 1}, "give 1 to 100"},
		{"GIVEN a certificate ARN of another service THEN it is refused", RelayProps{CertificateArn: "arn:aws:iam::123456789012:server-certificate/x"}, "not an ACM certificate ARN"},
		{"GIVEN a domain without a certificate THEN it is refused", RelayProps{DomainName: "relay.example.com"}, "needs the certificate"},
		{"GIVEN a domain with a port THEN it is refused", RelayProps{CertificateArn: arn, DomainName: "relay.example.com:443"}, "not a lower-case DNS name"},
		{"GIVEN an image folder without a Dockerfile THEN the error names it", RelayProps{ImageDir: t.TempDir()}, "no Dockerfile"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			relay := tc.relay
			err := (&FlagplaneStackProps{AssetDir: assets, Relay: &relay}).Check()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
			if relay != tc.relay {
				t.Errorf("Check changed the caller's props to %+v", relay)
			}
		})
	}
}
