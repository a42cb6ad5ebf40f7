package destination

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/flagplane/flagplane/shared/fault"
)

// The warehouse kinds a destination may be.
const (
	KindSnowflake  = "snowflake-v2"
	KindBigQuery   = "bigquery"
	KindClickHouse = "clickhouse"
	KindRedshift   = "redshift"
	KindDatabricks = "databricks"
)

// Kinds lists the kinds, in the order errors name them.
var Kinds = []string{KindSnowflake, KindBigQuery, KindClickHouse, KindRedshift, KindDatabricks}

// CheckKind refuses a kind that is not one of Kinds; what names where it came from.
func CheckKind(what, kind string) error {
	if !slices.Contains(Kinds, kind) {
		return fault.New(fault.Invalid, "%s %s is not one of %s", what, quote(kind), strings.Join(Kinds, ", "))
	}
	return nil
}

// quote shows a client's value in an error, cut short so a hostile one
// cannot flood the answer.
func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return fmt.Sprintf("%q", s)
}

// A check validates one config field's value.
type check struct {
	kind  string // "string" or "boolean", the JSON type
	valid func(string) bool
	rule  string // what a valid value is, for the error
}

var (
	// identRe is a SQL identifier every warehouse takes unquoted: custom
	// object names go into setup scripts, so nothing else may pass.
	identRe   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
	hostRe    = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*(?::[0-9]{1,5})?$`)
	arnRe     = regexp.MustCompile(`^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]{1,512}$`)
	accountRe = regexp.MustCompile(`^[0-9]{12}$`)
	regionRe  = regexp.MustCompile(`^[a-z]{2}(?:-[a-z]+)+-[0-9]$`)
	clusterRe = regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`)
	bucketRe  = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	gcpRe     = regexp.MustCompile(`^[a-z][a-z0-9-]{4,28}[a-z0-9]$`)
	connRe    = regexp.MustCompile(`^[a-z0-9-]{1,64}\.[A-Za-z0-9_-]{1,1000}$`)
)

var (
	ident   = check{"string", identRe.MatchString, "a SQL identifier: a letter or _ then letters, digits or _, at most 128 characters"}
	host    = check{"string", func(s string) bool { return len(s) <= 253 && hostRe.MatchString(s) }, "a host name, optionally with :port"}
	boolean = check{kind: "boolean"}
	roleARN = check{"string", arnRe.MatchString, "an IAM role ARN, arn:aws:iam::<account>:role/<name>"}
	text    = check{"string", func(s string) bool { return len(s) > 0 && len(s) <= 16<<10 }, "a non-empty string of at most 16384 characters"}
)

// fields are, per kind, the config fields a destination (and a setup
// request) may carry; anything else is refused, so a typo is not
// silently dropped.
var fields = map[string]map[string]check{
	KindSnowflake: {
		"snowflakeHostAddress": host, "publicKey": text,
		"databaseName": ident, "schemaName": ident, "warehouseName": ident, "roleName": ident, "userName": ident,
		"includeNetworkPolicy": boolean, "stageRoleArn": roleARN,
	},
	KindBigQuery: {
		"projectId":    {"string", gcpRe.MatchString, "a Google Cloud project id: 6 to 30 lowercase letters, digits or -"},
		"datasetName":  ident,
		"connectionId": {"string", connRe.MatchString, "a BigQuery connection id, <location>.<connection>"},
		"stageRoleArn": roleARN,
	},
	KindClickHouse: {
		"endpoint": host, "clickHouseDatabaseName": ident, "clickHouseUserName": ident,
		"clickHouseS3BucketName":           {"string", bucketRe.MatchString, "an S3 bucket name"},
		"clickHouseIncludeHostRestriction": boolean,
		"clickHouseServiceRoleArn":         roleARN,
	},
	KindRedshift: {
		"clusterIdentifier":   {"string", clusterRe.MatchString, "a Redshift cluster identifier: a lowercase letter then lowercase letters, digits or -"},
		"clusterRegion":       {"string", regionRe.MatchString, "an AWS region such as us-east-1"},
		"clusterAwsAccountId": {"string", accountRe.MatchString, "a 12-digit AWS account id"},
		"databaseName":        ident, "schemaName": ident, "userName": ident,
	},
	KindDatabricks: {
		"host": host, "catalogName": ident, "schemaName": ident, "stageRoleArn": roleARN,
	},
}

// required are the config fields a destination of each kind must carry.
var required = map[string][]string{
	KindSnowflake:  {"snowflakeHostAddress", "publicKey"},
	KindBigQuery:   {"projectId"},
	KindClickHouse: {"endpoint"},
	KindRedshift:   {"clusterIdentifier", "clusterRegion", "clusterAwsAccountId"},
	KindDatabricks: {"host"},
}

// hostField names the field holding the warehouse's address, per kind.
var hostField = map[string]string{
	KindSnowflake: "snowflakeHostAddress", KindClickHouse: "endpoint", KindDatabricks: "host",
}

// Config is a destination's configuration: string and boolean fields.
type Config map[string]any

// Str returns the string field name, or def when unset.
func (c Config) Str(name, def string) string {
	if s, ok := c[name].(string); ok && s != "" {
		return s
	}
	return def
}

// Bool returns the boolean field name.
func (c Config) Bool(name string) bool {
	b, _ := c[name].(bool)
	return b
}

// checkConfig validates c for kind; prefix names the object in errors
// ("config." for a destination, "" for a setup body).
func checkConfig(kind string, c Config, prefix string, needAll bool) error {
	allowed := fields[kind]
	names := make([]string, 0, len(c))
	for name := range c {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		chk, ok := allowed[name]
		if !ok {
			return fault.New(fault.Invalid, "field %s does not apply to a %s destination; its fields are %s", quote(prefix+name), kind, strings.Join(slices.Sorted(maps.Keys(allowed)), ", "))
		}
		switch v := c[name].(type) {
		case bool:
			if chk.kind != "boolean" {
				return fault.New(fault.Invalid, "field %q must be a string", prefix+name)
			}
		case string:
			if chk.kind != "string" {
				return fault.New(fault.Invalid, "field %q must be a boolean", prefix+name)
			}
			if !chk.valid(v) {
				return fault.New(fault.Invalid, "field %q must be %s, not %s", prefix+name, chk.rule, quote(v))
			}
		case nil:
			delete(c, name)
		default:
			return fault.New(fault.Invalid, "field %q must be a %s", prefix+name, chk.kind)
		}
	}
	// The warehouse loads from the stage: flagplane never connects to it,
	// so there are no flagplane addresses to allow.
	for _, name := range []string{"includeNetworkPolicy", "clickHouseIncludeHostRestriction"} {
		if c.Bool(name) {
			return fault.New(fault.Invalid, "field %q cannot be true: the warehouse loads from flagplane's stage and flagplane never connects to the warehouse, so there are no flagplane addresses to allow", prefix+name)
		}
	}
	if needAll {
		for _, name := range required[kind] {
			if c.Str(name, "") == "" {
				return fault.New(fault.Invalid, "field %q is required for a %s destination", prefix+name, kind)
			}
		}
	}
	return nil
}
