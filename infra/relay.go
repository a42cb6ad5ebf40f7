package infra

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsecrassets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsecs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awselasticloadbalancingv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/flagplane/flagplane/shared/store"
)

// RelayProps switch on the streaming relay: `flagplane relay` (the
// repository's Dockerfile) as a Fargate service behind an internet-facing
// Application Load Balancer, in a VPC of its own with public subnets only.
// SDKs stream from its URL (OutputRelayURL); it reads the table and sends
// SDK events to the ingest queue, and nothing else.
type RelayProps struct {
	// Replicas is the number of relay tasks; DefaultRelayReplicas when 0.
	// Two or more keep streams up while a task restarts or is replaced.
	Replicas int
	// CertificateArn, an ACM certificate in the stack's region, makes the
	// load balancer listen for HTTPS on 443; without it, plain HTTP on 80
	// (fine for server SDKs inside a private network; browsers on https
	// pages need HTTPS).
	CertificateArn string
	// DomainName is the certificate's name that points (CNAME or alias) at
	// the load balancer; OutputRelayURL then names it. Only with a
	// certificate.
	DomainName string
	// ImageDir holds the Dockerfile the image is built from at deploy time;
	// default the repository root.
	ImageDir string
}

// The relay's sizing and timings.
const (
	DefaultRelayReplicas = 2
	// MaxRelayReplicas bounds the context value: far above any need (each
	// task holds thousands of streams), well below ECS's per-service limit.
	MaxRelayReplicas = 100
	// RelayCPU (0.25 vCPU) and RelayMemoryMiB are the smallest Fargate task:
	// a relay holds streams open and fans out small patches.
	RelayCPU       = 256
	RelayMemoryMiB = 512
	// RelayGoMemLimit keeps Go's heap under the task's memory, so the
	// runtime collects harder rather than the task being killed.
	RelayGoMemLimit = "450MiB"
	// RelayPort is the port the relay listens on in its task.
	RelayPort = 8080
	// RelayIdleTimeout is the load balancer's idle timeout: an SSE stream
	// sends nothing between changes but heartbeats, so it must exceed the
	// relay's heartbeat interval (sdkapi.DefaultHeartbeat, 3 minutes) or
	// the load balancer cuts idle streams.
	RelayIdleTimeout = 5 * time.Minute
	// RelayDeregistrationDelay is how long a task being replaced keeps its
	// streams: SDKs reconnect to another task at once, so a short drain
	// makes deployments quick and loses nothing.
	RelayDeregistrationDelay = 10 * time.Second
	// RelayHealthPath is the relay's health check.
	RelayHealthPath = "/healthz"
	// RelayNoFile is the task's open-file limit: each stream is a socket.
	RelayNoFile = 65535
)

// RelayCommand is the container's command (after its ENTRYPOINT, the
// flagplane binary).
var RelayCommand = []string{"relay", "-addr", ":" + strconv.Itoa(RelayPort)}

// Output names of the relay, when switched on.
const (
	OutputRelayURL      = "RelayUrl"
	OutputRelayDNSName  = "RelayLoadBalancerDnsName"
	OutputRelayLogGroup = "RelayLogGroup"
)

var (
	// certificateArn is an ACM certificate in any partition.
	certificateArn = regexp.MustCompile(`^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate/[A-Za-z0-9-]+$`)
	// domainName is a DNS name of at least two labels.
	domainName = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$`)
)

// resolveRelay fills in the relay's defaults and checks its props.
func resolveRelay(r *RelayProps) error {
	if r.Replicas == 0 {
		r.Replicas = DefaultRelayReplicas
	}
	if r.Replicas < 1 || r.Replicas > MaxRelayReplicas {
		return fmt.Errorf("relay replicas %d: give 1 to %d", r.Replicas, MaxRelayReplicas)
	}
	if r.CertificateArn != "" && !certificateArn.MatchString(r.CertificateArn) {
		return fmt.Errorf("relay certificate %q is not an ACM certificate ARN (arn:aws:acm:<region>:<account>:certificate/<id>)", r.CertificateArn)
	}
	if r.DomainName != "" {
		if r.CertificateArn == "" {
			return fmt.Errorf("relay domain name %q needs the certificate that covers it", r.DomainName)
		}
		if !domainName.MatchString(r.DomainName) {
			return fmt.Errorf("relay domain name %q is not a lower-case DNS name such as relay.example.com", r.DomainName)
		}
	}
	if r.ImageDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("relay image: %w", err)
		}
		root, err := RepoRoot(wd)
		if err != nil {
			return fmt.Errorf("relay image: %w", err)
		}
		r.ImageDir = root
	}
	if fi, err := os.Stat(filepath.Join(r.ImageDir, "Dockerfile")); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("relay image: no Dockerfile in %s", r.ImageDir)
	}
	return nil
}

// RelayEnv is the relay container's environment: what the SDK and events
// functions get (the table, the ingest queue, the rate limits), plus the Go
// runtime's memory limit.
func RelayEnv(r Resources) map[string]string {
	env := FunctionEnv(r)
	env["GOMEMLIMIT"] = RelayGoMemLimit
	return env
}

// newRelay builds the relay under its own construct "Relay": VPC (public
// subnets in two zones, no NAT gateway, a free gateway endpoint for
// DynamoDB), cluster, image, task definition, service and load balancer.
// Nothing in it runs, or costs, unless RelayProps is set.
func newRelay(stack awscdk.Stack, c config, table awsdynamodb.Table, ingest awssqs.Queue) {
	r := c.Relay
	scope := constructs.NewConstruct(stack, jsii.String("Relay"))

	vpc := awsec2.NewVpc(scope, jsii.String("Vpc"), &awsec2.VpcProps{
		MaxAzs:      jsii.Number(2),
		NatGateways: jsii.Number(0),
		SubnetConfiguration: &[]*awsec2.SubnetConfiguration{{
			Name: jsii.String("Public"), SubnetType: awsec2.SubnetType_PUBLIC, CidrMask: jsii.Number(24),
		}},
		// Reads of the table stay on AWS's network, at no charge.
		GatewayEndpoints: &map[string]*awsec2.GatewayVpcEndpointOptions{
			"DynamoDB": {Service: awsec2.GatewayVpcEndpointAwsService_DYNAMODB()},
		},
		// A custom resource (a Lambda function) would do it; nothing here
		// uses the default security group.
		RestrictDefaultSecurityGroup: jsii.Bool(false),
	})
	cluster := awsecs.NewCluster(scope, jsii.String("Cluster"), &awsecs.ClusterProps{Vpc: vpc})

	image := awsecrassets.NewDockerImageAsset(scope, jsii.String("Image"), &awsecrassets.DockerImageAssetProps{
		Directory:  jsii.String(r.ImageDir),
		Platform:   awsecrassets.Platform_LINUX_ARM64(),
		IgnoreMode: awscdk.IgnoreMode_DOCKER,
	})

	// The task role: read the table (items and index), send SDK event
	// payloads to the ingest queue. No write to the table at all.
	role := awsiam.NewRole(scope, jsii.String("TaskRole"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("ecs-tasks.amazonaws.com"), nil),
		Description: jsii.String("flagplane relay task"),
	})
	tableArn := *table.TableArn()
	role.AddToPrincipalPolicy(allow("ReadItems", tableReadActions, tableArn))
	role.AddToPrincipalPolicy(allow("QueryIndex", []string{"dynamodb:Query"}, tableArn+"/index/"+store.IndexGSI1))
	role.AddToPrincipalPolicy(allow("QueueEventPayloads", []string{"sqs:SendMessage"}, *ingest.QueueArn()))

	task := awsecs.NewFargateTaskDefinition(scope, jsii.String("Task"), &awsecs.FargateTaskDefinitionProps{
		Cpu:            jsii.Number(RelayCPU),
		MemoryLimitMiB: jsii.Number(RelayMemoryMiB),
		RuntimePlatform: &awsecs.RuntimePlatform{
			CpuArchitecture:       awsecs.CpuArchitecture_ARM64(),
			OperatingSystemFamily: awsecs.OperatingSystemFamily_LINUX(),
		},
		TaskRole: role,
	})
	logs := awslogs.NewLogGroup(scope, jsii.String("Logs"), &awslogs.LogGroupProps{
		Retention:     c.LogRetention,
		RemovalPolicy: removal(c),
	})
	env := map[string]*string{}
	for k, v := range RelayEnv(Resources{TableName: *table.TableName(), IngestQueueURL: *ingest.QueueUrl(), RateLimits: c.RateLimits, AuditShards: c.AuditShards}) {
		env[k] = jsii.String(v)
	}
	task.AddContainer(jsii.String("Relay"), &awsecs.ContainerDefinitionOptions{
		Image:                  awsecs.ContainerImage_FromDockerImageAsset(image),
		Command:                jsii.Strings(RelayCommand...),
		Environment:            &env,
		PortMappings:           &[]*awsecs.PortMapping{{ContainerPort: jsii.Number(RelayPort)}},
		Logging:                awsecs.LogDrivers_AwsLogs(&awsecs.AwsLogDriverProps{StreamPrefix: jsii.String("relay"), LogGroup: logs}),
		ReadonlyRootFilesystem: jsii.Bool(true),
		Ulimits: &[]*awsecs.Ulimit{{
			Name: awsecs.UlimitName_NOFILE, SoftLimit: jsii.Number(RelayNoFile), HardLimit: jsii.Number(RelayNoFile),
		}},
	})

	// Public subnets without a NAT gateway: tasks get a public address to
	// reach ECR, CloudWatch Logs and SQS; their security group only admits
	// the load balancer.
	service := awsecs.NewFargateService(scope, jsii.String("Service"), &awsecs.FargateServiceProps{
		Cluster:                cluster,
		TaskDefinition:         task,
		DesiredCount:           jsii.Number(float64(r.Replicas)),
		AssignPublicIp:         jsii.Bool(true),
		VpcSubnets:             &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PUBLIC},
		MinHealthyPercent:      jsii.Number(100),
		MaxHealthyPercent:      jsii.Number(200),
		CircuitBreaker:         &awsecs.DeploymentCircuitBreaker{Rollback: jsii.Bool(true)},
		HealthCheckGracePeriod: awscdk.Duration_Seconds(jsii.Number(30)),
	})

	lb := awselasticloadbalancingv2.NewApplicationLoadBalancer(scope, jsii.String("LoadBalancer"), &awselasticloadbalancingv2.ApplicationLoadBalancerProps{
		Vpc:                     vpc,
		InternetFacing:          jsii.Bool(true),
		IdleTimeout:             awscdk.Duration_Seconds(jsii.Number(RelayIdleTimeout.Seconds())),
		DropInvalidHeaderFields: jsii.Bool(true),
	})
	listenerProps := &awselasticloadbalancingv2.BaseApplicationListenerProps{
		Port:     jsii.Number(80),
		Protocol: awselasticloadbalancingv2.ApplicationProtocol_HTTP,
		Open:     jsii.Bool(true),
	}
	scheme, host := "http", lb.LoadBalancerDnsName()
	if r.CertificateArn != "" {
		listenerProps.Port = jsii.Number(443)
		listenerProps.Protocol = awselasticloadbalancingv2.ApplicationProtocol_HTTPS
		listenerProps.Certificates = &[]awselasticloadbalancingv2.IListenerCertificate{
			awselasticloadbalancingv2.ListenerCertificate_FromArn(jsii.String(r.CertificateArn)),
		}
		listenerProps.SslPolicy = awselasticloadbalancingv2.SslPolicy_RECOMMENDED_TLS
		scheme = "https"
		if r.DomainName != "" {
			host = jsii.String(r.DomainName)
		}
	}
	listener := lb.AddListener(jsii.String("Listener"), listenerProps)
	listener.AddTargets(jsii.String("Relay"), &awselasticloadbalancingv2.AddApplicationTargetsProps{
		Port:     jsii.Number(RelayPort),
		Protocol: awselasticloadbalancingv2.ApplicationProtocol_HTTP,
		Targets:  &[]awselasticloadbalancingv2.IApplicationLoadBalancerTarget{service},
		HealthCheck: &awselasticloadbalancingv2.HealthCheck{
			Path:                    jsii.String(RelayHealthPath),
			Interval:                awscdk.Duration_Seconds(jsii.Number(10)),
			Timeout:                 awscdk.Duration_Seconds(jsii.Number(5)),
			HealthyThresholdCount:   jsii.Number(2),
			UnhealthyThresholdCount: jsii.Number(3),
		},
		DeregistrationDelay: awscdk.Duration_Seconds(jsii.Number(RelayDeregistrationDelay.Seconds())),
	})

	output(stack, OutputRelayURL, awscdk.Fn_Join(jsii.String(""), jsii.Strings(scheme+"://", *host)),
		"URL of the streaming relay: SDKs' stream URI (and optionally base and events URI)")
	output(stack, OutputRelayDNSName, lb.LoadBalancerDnsName(), "DNS name of the relay's load balancer, for a CNAME or alias record")
	output(stack, OutputRelayLogGroup, logs.LogGroupName(), "Log group of the relay tasks")
}
