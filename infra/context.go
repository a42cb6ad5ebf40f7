package infra

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/store"
)

// CDK context keys the app reads, from cdk.json or `cdk deploy -c key=value`.
const (
	// CtxStackName names the stack (default DefaultStackName), so one account
	// can hold several deployments.
	CtxStackName = "flagplane:stackName"
	// CtxAssetDir overrides where the bootstraps are (default bin/lambda).
	CtxAssetDir = "flagplane:assetDir"
	// CtxCORSOrigins is a comma-separated list of allowed origins.
	CtxCORSOrigins = "flagplane:corsOrigins"
	// CtxReservedConcurrency is "N" for every function or
	// "name=N,name=N[,*=N]" per function, * for the rest.
	CtxReservedConcurrency = "flagplane:reservedConcurrency"
	// CtxRemoveTableOnDelete "true" deletes the table with the stack.
	CtxRemoveTableOnDelete = "flagplane:removeTableOnDelete"
	// CtxLogRetentionDays is one of CloudWatch's retention periods in days,
	// or 0 to keep logs forever.
	CtxLogRetentionDays = "flagplane:logRetentionDays"
	// CtxDeadLetterMaxReceives is the receive count before dead-lettering.
	CtxDeadLetterMaxReceives = "flagplane:deadLetterMaxReceives"
	// CtxThrottleRate is the API stage's steady requests per second and
	// CtxThrottleBurst the burst it admits above that rate.
	CtxThrottleRate  = "flagplane:throttleRate"
	CtxThrottleBurst = "flagplane:throttleBurst"
	// CtxRateLimitGlobal and CtxRateLimitRoute are the requests per ten
	// seconds each API function instance admits in all and per route, and
	// CtxRateLimitCredential per SDK credential and SDK or event route
	// (0: no limit); see FlagplaneStackProps.RateLimits.
	CtxRateLimitGlobal     = "flagplane:rateLimitGlobal"
	CtxRateLimitRoute      = "flagplane:rateLimitRoute"
	CtxRateLimitCredential = "flagplane:rateLimitCredential"
	// CtxHTTPAPI "false" leaves out the HTTP API (see OmitHTTPAPI).
	CtxHTTPAPI = "flagplane:httpApi"
	// CtxRelay "true" adds the streaming relay (see RelayProps); the other
	// relay keys need it: CtxRelayReplicas is its number of tasks,
	// CtxRelayCertificateArn an ACM certificate for HTTPS and
	// CtxRelayDomainName the certificate's name pointing at the relay.
	CtxRelay               = "flagplane:relay"
	CtxRelayReplicas       = "flagplane:relayReplicas"
	CtxRelayCertificateArn = "flagplane:relayCertificateArn"
	CtxRelayDomainName     = "flagplane:relayDomainName"
	// CtxAuditShards spreads the audit log over this many partitions (a
	// power of two, 1 to 64; default 1): about 500 changes a second each.
	// Raise it only; see FlagplaneStackProps.AuditShards.
	CtxAuditShards = "flagplane:auditShards"
)

// DefaultStackName is the stack's name unless CtxStackName says otherwise.
const DefaultStackName = "Flagplane"

// retentionByDays maps CloudWatch's allowed retention periods to CDK's enum.
var retentionByDays = map[int]awslogs.RetentionDays{
	0:    awslogs.RetentionDays_INFINITE,
	1:    awslogs.RetentionDays_ONE_DAY,
	3:    awslogs.RetentionDays_THREE_DAYS,
	5:    awslogs.RetentionDays_FIVE_DAYS,
	7:    awslogs.RetentionDays_ONE_WEEK,
	14:   awslogs.RetentionDays_TWO_WEEKS,
	30:   awslogs.RetentionDays_ONE_MONTH,
	60:   awslogs.RetentionDays_TWO_MONTHS,
	90:   awslogs.RetentionDays_THREE_MONTHS,
	120:  awslogs.RetentionDays_FOUR_MONTHS,
	150:  awslogs.RetentionDays_FIVE_MONTHS,
	180:  awslogs.RetentionDays_SIX_MONTHS,
	365:  awslogs.RetentionDays_ONE_YEAR,
	400:  awslogs.RetentionDays_THIRTEEN_MONTHS,
	545:  awslogs.RetentionDays_EIGHTEEN_MONTHS,
	731:  awslogs.RetentionDays_TWO_YEARS,
	1096: awslogs.RetentionDays_THREE_YEARS,
	1827: awslogs.RetentionDays_FIVE_YEARS,
	2192: awslogs.RetentionDays_SIX_YEARS,
	2557: awslogs.RetentionDays_SEVEN_YEARS,
	2922: awslogs.RetentionDays_EIGHT_YEARS,
	3288: awslogs.RetentionDays_NINE_YEARS,
	3653: awslogs.RetentionDays_TEN_YEARS,
}

// AppSettings is what the CDK app reads from its context.
type AppSettings struct {
	StackName string
	Props     FlagplaneStackProps
}

// SettingsFromContext reads the CDK context through lookup, which reports
// a key's value as text and whether it is set. Unset keys keep the stack's
// defaults; a malformed value is an error naming the key.
func SettingsFromContext(lookup func(key string) (string, bool)) (AppSettings, error) {
	s := AppSettings{StackName: DefaultStackName}
	get := func(key string) (string, bool) {
		v, ok := lookup(key)
		v = strings.TrimSpace(v)
		return v, ok && v != ""
	}
	if v, ok := get(CtxStackName); ok {
		s.StackName = v
	}
	if v, ok := get(CtxAssetDir); ok {
		s.Props.AssetDir = v
	}
	if v, ok := get(CtxCORSOrigins); ok {
		for _, o := range strings.Split(v, ",") {
			if o = strings.TrimSpace(o); o != "" {
				s.Props.CORSAllowOrigins = append(s.Props.CORSAllowOrigins, o)
			}
		}
	}
	if v, ok := get(CtxReservedConcurrency); ok {
		if err := parseReserved(v, &s.Props); err != nil {
			return s, fmt.Errorf("context %s: %w", CtxReservedConcurrency, err)
		}
	}
	if v, ok := get(CtxRemoveTableOnDelete); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return s, fmt.Errorf("context %s: %q is not true or false", CtxRemoveTableOnDelete, v)
		}
		s.Props.RemoveTableOnDelete = b
	}
	if v, ok := get(CtxLogRetentionDays); ok {
		days, err := strconv.Atoi(v)
		r, known := retentionByDays[days]
		if err != nil || !known {
			return s, fmt.Errorf("context %s: %q is not one of CloudWatch's periods (%s)", CtxLogRetentionDays, v, retentionChoices())
		}
		s.Props.LogRetention = r
	}
	if v, ok := get(CtxDeadLetterMaxReceives); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return s, fmt.Errorf("context %s: %q is not a positive whole number", CtxDeadLetterMaxReceives, v)
		}
		s.Props.DeadLetterMaxReceives = n
	}
	if v, ok := get(CtxAuditShards); ok {
		n, err := strconv.Atoi(v)
		if err != nil || !store.ValidAuditShards(n) {
			return s, fmt.Errorf("context %s: %q is not a power of two from 1 to %d", CtxAuditShards, v, store.MaxAuditShards)
		}
		s.Props.AuditShards = n
	}
	if v, ok := get(CtxThrottleRate); ok {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || !(r > 0) || math.IsInf(r, 0) {
			return s, fmt.Errorf("context %s: %q is not a positive number of requests per second", CtxThrottleRate, v)
		}
		s.Props.ThrottleRate = r
	}
	if v, ok := get(CtxThrottleBurst); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return s, fmt.Errorf("context %s: %q is not a positive whole number of requests", CtxThrottleBurst, v)
		}
		s.Props.ThrottleBurst = n
	}
	for _, key := range []string{CtxRateLimitGlobal, CtxRateLimitRoute, CtxRateLimitCredential} {
		v, ok := get(key)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > api.MaxRateLimit {
			return s, fmt.Errorf("context %s: %q is not a whole number of requests per 10 seconds from 0 (no limit) to %d", key, v, api.MaxRateLimit)
		}
		if s.Props.RateLimits == nil {
			limits := api.DefaultRateLimits
			s.Props.RateLimits = &limits
		}
		switch key {
		case CtxRateLimitGlobal:
			s.Props.RateLimits.Global = n
		case CtxRateLimitRoute:
			s.Props.RateLimits.Route = n
		default:
			s.Props.RateLimits.Credential = n
		}
	}
	if v, ok := get(CtxHTTPAPI); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return s, fmt.Errorf("context %s: %q is not true or false", CtxHTTPAPI, v)
		}
		s.Props.OmitHTTPAPI = !b
	}
	if err := relayFromContext(get, &s.Props); err != nil {
		return s, err
	}
	return s, nil
}

// relayFromContext reads the relay's keys: CtxRelay switches it on, and
// the others, which only mean something then, are refused without it.
func relayFromContext(get func(string) (string, bool), p *FlagplaneStackProps) error {
	on := false
	if v, ok := get(CtxRelay); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("context %s: %q is not true or false", CtxRelay, v)
		}
		on = b
	}
	var r RelayProps
	for _, key := range []string{CtxRelayReplicas, CtxRelayCertificateArn, CtxRelayDomainName} {
		v, ok := get(key)
		if !ok {
			continue
		}
		if !on {
			return fmt.Errorf("context %s: the relay is off; add -c %s=true to deploy it", key, CtxRelay)
		}
		switch key {
		case CtxRelayReplicas:
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > MaxRelayReplicas {
				return fmt.Errorf("context %s: %q is not a whole number of tasks from 1 to %d", key, v, MaxRelayReplicas)
			}
			r.Replicas = n
		case CtxRelayCertificateArn:
			if !certificateArn.MatchString(v) {
				return fmt.Errorf("context %s: %q is not an ACM certificate ARN (arn:aws:acm:<region>:<account>:certificate/<id>)", key, v)
			}
			r.CertificateArn = v
		default:
			if !domainName.MatchString(v) {
				return fmt.Errorf("context %s: %q is not a lower-case DNS name such as relay.example.com", key, v)
			}
			r.DomainName = v
		}
	}
	if r.DomainName != "" && r.CertificateArn == "" {
		return fmt.Errorf("context %s: give %s too, the certificate that covers %s", CtxRelayDomainName, CtxRelayCertificateArn, r.DomainName)
	}
	if on {
		p.Relay = &r
	}
	return nil
}

// parseReserved reads "N" or "name=N,...,*=N".
func parseReserved(v string, p *FlagplaneStackProps) error {
	count := func(s string) (int, error) {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%q is not a whole number of executions", s)
		}
		return n, nil
	}
	if !strings.Contains(v, "=") {
		n, err := count(v)
		p.DefaultReservedConcurrency = n
		return err
	}
	p.ReservedConcurrency = map[string]int{}
	for _, pair := range strings.Split(v, ",") {
		name, raw, ok := strings.Cut(pair, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return fmt.Errorf("%q is not name=N", pair)
		}
		n, err := count(raw)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if name == "*" {
			p.DefaultReservedConcurrency = n
		} else {
			p.ReservedConcurrency[name] = n
		}
	}
	return nil
}

func retentionChoices() string {
	days := make([]int, 0, len(retentionByDays))
	for d := range retentionByDays {
		days = append(days, d)
	}
	sort.Ints(days)
	parts := make([]string, len(days))
	for i, d := range days {
		parts[i] = strconv.Itoa(d)
	}
	return strings.Join(parts, ", ")
}
