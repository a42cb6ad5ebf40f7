package infra

import (
	"github.com/flagplane/flagplane/shared/app"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"

	"github.com/flagplane/flagplane/shared/api"
)

func TestSettingsFromContext(t *testing.T) {
	tests := []struct {
		name    string
		context map[string]string
		want    func(AppSettings) bool
		wantErr string
	}{
		{"GIVEN no context THEN the defaults hold", nil, func(s AppSettings) bool {
			p := s.Props
			return s.StackName == DefaultStackName && p.AssetDir == "" && p.CORSAllowOrigins == nil &&
				!p.RemoveTableOnDelete && p.LogRetention == "" && p.DeadLetterMaxReceives == 0 &&
				p.DefaultReservedConcurrency == 0 && p.ReservedConcurrency == nil && !p.OmitHTTPAPI &&
				p.ThrottleRate == 0 && p.ThrottleBurst == 0 && p.RateLimits == nil && p.Relay == nil
		}, ""},
		{"GIVEN relay true THEN the relay is on with its defaults", map[string]string{CtxRelay: "true"}, func(s AppSettings) bool {
			return s.Props.Relay != nil && *s.Props.Relay == RelayProps{}
		}, ""},
		{"GIVEN relay false THEN there is no relay", map[string]string{CtxRelay: "false"}, func(s AppSettings) bool {
			return s.Props.Relay == nil
		}, ""},
		{"GIVEN the relay with replicas, a certificate and a domain THEN each is set", map[string]string{
			CtxRelay: "true", CtxRelayReplicas: "4", CtxRelayDomainName: "relay.example.com",
			CtxRelayCertificateArn: "arn:aws:acm:eu-west-1:123456789012:certificate/abcd-1234",
		}, func(s AppSettings) bool {
			return s.Props.Relay != nil && *s.Props.Relay == RelayProps{Replicas: 4, DomainName: "relay.example.com",
				CertificateArn: "arn:aws:acm:eu-west-1:123456789012:certificate/abcd-1234"}
		}, ""},
		{"GIVEN relay replicas without the relay THEN the key is named", map[string]string{CtxRelayReplicas: "3"}, nil, CtxRelayReplicas},
		{"GIVEN relay replicas with the relay off THEN the key is named", map[string]string{CtxRelay: "false", CtxRelayReplicas: "3"}, nil, CtxRelayReplicas},
		{"GIVEN a word for the relay THEN the key is named", map[string]string{CtxRelay: "on"}, nil, CtxRelay},
		{"GIVEN zero relay replicas THEN the key is named", map[string]string{CtxRelay: "true", CtxRelayReplicas: "0"}, nil, CtxRelayReplicas},
		{"GIVEN more relay replicas than the most THEN the key is named", map[string]string{CtxRelay: "true", CtxRelayReplicas: "101"}, nil, CtxRelayReplicas},
		{"GIVEN relay replicas that are not a number THEN the key is named", map[string]string{CtxRelay: "true", CtxRelayReplicas: "two"}, nil, CtxRelayReplicas},
		{"GIVEN a certificate that is not an ACM ARN THEN the key is named", map[string]string{CtxRelay: "true", CtxRelayCertificateArn: "arn:aws:iam::123456789012:server-certificate/relay"}, nil, CtxRelayCertificateArn},
		{"GIVEN a relay domain without a certificate THEN the key is named", map[string]string{CtxRelay: "true", CtxRelayDomainName: "relay.example.com"}, nil, CtxRelayDomainName},
		{"GIVEN a relay domain that is a URL THEN the key is named", map[string]string{
			CtxRelay: "true", CtxRelayDomainName: "https://relay.example.com",
			CtxRelayCertificateArn: "arn:aws:acm:eu-west-1:123456789012:certificate/abcd-1234",
		}, nil, CtxRelayDomainName},
		{"GIVEN a global rate limit THEN it is set and the route limit keeps its default", map[string]string{CtxRateLimitGlobal: "500"}, func(s AppSettings) bool {
			return s.Props.RateLimits != nil && *s.Props.RateLimits == api.RateLimits{Global: 500, Route: api.DefaultRateLimits.Route, Credential: api.DefaultRateLimits.Credential}
		}, ""},
		{"GIVEN a route rate limit of 0 THEN routes are not limited", map[string]string{CtxRateLimitRoute: "0"}, func(s AppSettings) bool {
			return s.Props.RateLimits != nil && *s.Props.RateLimits == api.RateLimits{Global: api.DefaultRateLimits.Global, Route: 0, Credential: api.DefaultRateLimits.Credential}
		}, ""},
		{"GIVEN a credential rate limit of 0 THEN SDK credentials are not limited", map[string]string{CtxRateLimitCredential: "0"}, func(s AppSettings) bool {
			return s.Props.RateLimits != nil && *s.Props.RateLimits == api.RateLimits{Global: api.DefaultRateLimits.Global, Route: api.DefaultRateLimits.Route, Credential: 0}
		}, ""},
		{"GIVEN a credential rate limit over the largest THEN the key is named", map[string]string{CtxRateLimitCredential: "2000000000"}, nil, CtxRateLimitCredential},
		{"GIVEN a negative rate limit THEN the key is named", map[string]string{CtxRateLimitRoute: "-5"}, nil, CtxRateLimitRoute},
		{"GIVEN a rate limit that is not a number THEN the key is named", map[string]string{CtxRateLimitGlobal: "lots"}, nil, CtxRateLimitGlobal},
		{"GIVEN a stack name THEN it is used", map[string]string{CtxStackName: "FlagplaneStaging"}, func(s AppSettings) bool {
			return s.StackName == "FlagplaneStaging"
		}, ""},
		{"GIVEN comma-separated origins THEN each is one CORS origin", map[string]string{CtxCORSOrigins: "https://a.example, https://b.example,"}, func(s AppSettings) bool {
			return strings.Join(s.Props.CORSAllowOrigins, " ") == "https://a.example https://b.example"
		}, ""},
		{"GIVEN one number of reserved executions THEN every function gets it", map[string]string{CtxReservedConcurrency: "10"}, func(s AppSettings) bool {
			return s.Props.DefaultReservedConcurrency == 10 && s.Props.ReservedConcurrency == nil
		}, ""},
		{"GIVEN reserved executions per function THEN each is set and * is the rest", map[string]string{CtxReservedConcurrency: "projects=5, flags=20,*=2"}, func(s AppSettings) bool {
			r := s.Props.ReservedConcurrency
			return len(r) == 2 && r["projects"] == 5 && r["flags"] == 20 && s.Props.DefaultReservedConcurrency == 2
		}, ""},
		{"GIVEN removeTableOnDelete true THEN the table goes with the stack", map[string]string{CtxRemoveTableOnDelete: "true"}, func(s AppSettings) bool {
			return s.Props.RemoveTableOnDelete
		}, ""},
		{"GIVEN a retention of 90 days THEN logs are kept three months", map[string]string{CtxLogRetentionDays: "90"}, func(s AppSettings) bool {
			return s.Props.LogRetention == awslogs.RetentionDays_THREE_MONTHS
		}, ""},
		{"GIVEN a retention of 0 days THEN logs are kept forever", map[string]string{CtxLogRetentionDays: "0"}, func(s AppSettings) bool {
			return s.Props.LogRetention == awslogs.RetentionDays_INFINITE
		}, ""},
		{"GIVEN httpApi false THEN the API is left out", map[string]string{CtxHTTPAPI: "false"}, func(s AppSettings) bool {
			return s.Props.OmitHTTPAPI
		}, ""},
		{"GIVEN a dead-letter count THEN it is used", map[string]string{CtxDeadLetterMaxReceives: "3"}, func(s AppSettings) bool {
			return s.Props.DeadLetterMaxReceives == 3
		}, ""},
		{"GIVEN a throttle rate and burst THEN the stage gets them", map[string]string{CtxThrottleRate: "12.5", CtxThrottleBurst: "40"}, func(s AppSettings) bool {
			return s.Props.ThrottleRate == 12.5 && s.Props.ThrottleBurst == 40
		}, ""},
		{"GIVEN 32 audit shards THEN every function and the relay are told", map[string]string{CtxAuditShards: "32"}, func(s AppSettings) bool {
			return s.Props.AuditShards == 32 && FunctionEnv(Resources{AuditShards: 32})[app.EnvAuditShards] == "32" &&
				FunctionEnv(Resources{AuditShards: 1})[app.EnvAuditShards] == ""
		}, ""},
		{"GIVEN an audit shard count that is not a power of two THEN the key is named", map[string]string{CtxAuditShards: "24"}, nil, CtxAuditShards},
		{"GIVEN a zero throttle rate THEN the key is named", map[string]string{CtxThrottleRate: "0"}, nil, CtxThrottleRate},
		{"GIVEN a throttle rate that is not a number THEN the key is named", map[string]string{CtxThrottleRate: "fast"}, nil, CtxThrottleRate},
		{"GIVEN a fractional burst THEN the key is named", map[string]string{CtxThrottleBurst: "2.5"}, nil, CtxThrottleBurst},
		{"GIVEN a retention CloudWatch does not offer THEN the key is named", map[string]string{CtxLogRetentionDays: "31"}, nil, CtxLogRetentionDays},
		{"GIVEN a word for a boolean THEN the key is named", map[string]string{CtxRemoveTableOnDelete: "yes please"}, nil, CtxRemoveTableOnDelete},
		{"GIVEN a malformed per-function reservation THEN the key is named", map[string]string{CtxReservedConcurrency: "projects:5"}, nil, CtxReservedConcurrency},
		{"GIVEN a negative reservation THEN the key is named", map[string]string{CtxReservedConcurrency: "-1"}, nil, CtxReservedConcurrency},
		{"GIVEN zero receives THEN the key is named", map[string]string{CtxDeadLetterMaxReceives: "0"}, nil, CtxDeadLetterMaxReceives},
		{"GIVEN a non-boolean httpApi THEN the key is named", map[string]string{CtxHTTPAPI: "off"}, nil, CtxHTTPAPI},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// WHEN the settings are read from that context
			s, err := SettingsFromContext(func(k string) (string, bool) {
				v, ok := tc.context[k]
				return v, ok
			})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.want(s) {
				t.Fatalf("settings %+v", s)
			}
		})
	}
}
