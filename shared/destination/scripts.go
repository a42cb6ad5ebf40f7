package destination

import (
	"encoding/json"
	"fmt"
	"strings"
)

// scriptInput is what a setup script is made from. Every name in it was
// validated as an identifier (identRe) or a host; the stage location
// comes from the server's configuration and is quoted as a literal.
type scriptInput struct {
	kind       string
	names      Config
	projectKey string
	envKey     string
	envID      string
	stage      StageInfo
	// publicKey is the bare base64 public key (snowflake-v2).
	publicKey string
	// password is set only in the answer to a setup request (ClickHouse), never stored.
	password string
}

// The table every warehouse loads into, and its columns: one per field of
// an exported line (ingest.ExportLine), the event itself as JSON.
const tableName = "FLAGPLANE_EVENTS"

// literal quotes s as an SQL string literal of the kind's dialect.
func literal(kind, s string) string {
	switch kind {
	case KindBigQuery, KindClickHouse:
		return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
	default:
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
}

// roleARN is the role a warehouse assumes to read the stage: the one
// configured, or the default one the README describes.
func (in scriptInput) roleARN() string {
	if arn := in.names.Str("stageRoleArn", ""); arn != "" {
		return arn
	}
	return "arn:aws:iam::" + in.stage.AccountID + ":role/" + DefaultReaderRole
}

// DefaultReaderRole names the role warehouses assume to read the S3
// stage when a setup does not name one.
const DefaultReaderRole = "flagplane-export-reader"

// script builds the setup script of in's kind.
func script(in scriptInput) string {
	var b strings.Builder
	fmt.Fprintf(&b, "-- flagplane data export: %s setup for environment %s of project %s (environment id %s).\n", in.kind, in.envKey, in.projectKey, in.envID)
	fmt.Fprintf(&b, "-- flagplane writes the environment's SDK events as NDJSON batches to %s\n", in.stage.Location(in.envID))
	fmt.Fprintf(&b, "-- (one object per batch, <date>/<hour>/<batch>.ndjson); this script creates the objects and loads from there.\n")
	switch in.kind {
	case KindSnowflake:
		snowflake(&b, in)
	case KindBigQuery:
		bigquery(&b, in)
	case KindClickHouse:
		clickhouse(&b, in)
	case KindRedshift:
		redshift(&b, in)
	case KindDatabricks:
		databricks(&b, in)
	}
	return b.String()
}

func snowflake(b *strings.Builder, in scriptInput) {
	db := in.names.Str("databaseName", "FLAGPLANE")
	sc := db + "." + in.names.Str("schemaName", "EXPORT")
	wh := in.names.Str("warehouseName", "FLAGPLANE_EXPORT_WH")
	role := in.names.Str("roleName", "FLAGPLANE_EXPORT_ROLE")
	user := in.names.Str("userName", "FLAGPLANE_EXPORT_USER")
	tbl, stage, format := sc+"."+tableName, sc+".FLAGPLANE_STAGE", sc+".FLAGPLANE_NDJSON"
	key := literal(KindSnowflake, in.publicKey)
	fmt.Fprintf(b, "USE ROLE ACCOUNTADMIN;\n")
	fmt.Fprintf(b, "CREATE ROLE IF NOT EXISTS %s;\n", role)
	fmt.Fprintf(b, "CREATE WAREHOUSE IF NOT EXISTS %s WAREHOUSE_SIZE = 'XSMALL' AUTO_SUSPEND = 60 AUTO_RESUME = TRUE INITIALLY_SUSPENDED = TRUE;\n", wh)
	fmt.Fprintf(b, "CREATE DATABASE IF NOT EXISTS %s;\n", db)
	fmt.Fprintf(b, "CREATE SCHEMA IF NOT EXISTS %s;\n", sc)
	fmt.Fprintf(b, "-- The user signs in with the key pair flagplane generated; its private key never leaves flagplane.\n")
	fmt.Fprintf(b, "CREATE USER IF NOT EXISTS %s TYPE = SERVICE DEFAULT_ROLE = %s DEFAULT_WAREHOUSE = %s RSA_PUBLIC_KEY = %s;\n", user, role, wh, key)
	fmt.Fprintf(b, "ALTER USER %s SET RSA_PUBLIC_KEY = %s;\n", user, key)
	fmt.Fprintf(b, "GRANT ROLE %s TO USER %s;\n", role, user)
	fmt.Fprintf(b, "GRANT USAGE ON WAREHOUSE %s TO ROLE %s;\n", wh, role)
	fmt.Fprintf(b, "GRANT USAGE ON DATABASE %s TO ROLE %s;\n", db, role)
	fmt.Fprintf(b, "GRANT USAGE ON SCHEMA %s TO ROLE %s;\n", sc, role)
	fmt.Fprintf(b, "CREATE TABLE IF NOT EXISTS %s (ENVIRONMENT_ID VARCHAR, PROJECT_KEY VARCHAR, ENVIRONMENT_KEY VARCHAR, PAYLOAD_ID VARCHAR, SOURCE VARCHAR, RECEIVED_AT TIMESTAMP_NTZ, KIND VARCHAR, CREATION_DATE TIMESTAMP_NTZ, EVENT VARIANT, FILE_NAME VARCHAR);\n", tbl)
	fmt.Fprintf(b, "GRANT SELECT, INSERT ON TABLE %s TO ROLE %s;\n", tbl, role)
	fmt.Fprintf(b, "CREATE FILE FORMAT IF NOT EXISTS %s TYPE = JSON;\n", format)
	if in.stage.Kind == StageS3 {
		integ := "FLAGPLANE_S3_" + strings.ToUpper(safeSuffix(in.envID))
		fmt.Fprintf(b, "-- Snowflake reads the bucket as %s; give that role the trust policy of generate-trust-policy.\n", in.roleARN())
		fmt.Fprintf(b, "CREATE STORAGE INTEGRATION IF NOT EXISTS %s TYPE = EXTERNAL_STAGE STORAGE_PROVIDER = 'S3' ENABLED = TRUE STORAGE_AWS_ROLE_ARN = %s STORAGE_ALLOWED_LOCATIONS = (%s);\n",
			integ, literal(KindSnowflake, in.roleARN()), literal(KindSnowflake, in.stage.Location(in.envID)))
		fmt.Fprintf(b, "CREATE STAGE IF NOT EXISTS %s URL = %s STORAGE_INTEGRATION = %s FILE_FORMAT = %s;\n", stage, literal(KindSnowflake, in.stage.Location(in.envID)), integ, format)
	} else {
		fmt.Fprintf(b, "CREATE STAGE IF NOT EXISTS %s FILE_FORMAT = %s;\n", stage, format)
		fmt.Fprintf(b, "-- From SnowSQL on the machine holding the stage folder, upload the batches (COPY skips files it loaded before):\n")
		fmt.Fprintf(b, "-- PUT %s @%s AUTO_COMPRESS = TRUE;\n", literal(KindSnowflake, "file://"+in.stage.Location(in.envID)+"*/*/*.ndjson"), stage)
	}
	fmt.Fprintf(b, "GRANT USAGE ON STAGE %s TO ROLE %s;\n", stage, role)
	fmt.Fprintf(b, "-- Every 5 minutes, load what arrived. COPY remembers the files it loaded, so nothing is loaded twice.\n")
	fmt.Fprintf(b, "CREATE TASK IF NOT EXISTS %s.FLAGPLANE_LOAD WAREHOUSE = %s SCHEDULE = '5 MINUTE' AS\n", sc, wh)
	fmt.Fprintf(b, "  COPY INTO %s FROM (SELECT $1:environmentId::VARCHAR, $1:projectKey::VARCHAR, $1:environmentKey::VARCHAR, $1:payloadId::VARCHAR, $1:source::VARCHAR,\n", tbl)
	fmt.Fprintf(b, "    TO_TIMESTAMP_NTZ($1:receivedAt::NUMBER, 3), $1:kind::VARCHAR, TO_TIMESTAMP_NTZ($1:creationDate::NUMBER, 3), $1:event, METADATA$FILENAME FROM @%s)\n", stage)
	fmt.Fprintf(b, "  FILE_FORMAT = (FORMAT_NAME = %s);\n", literal(KindSnowflake, format))
	fmt.Fprintf(b, "ALTER TASK %s.FLAGPLANE_LOAD RESUME;\n", sc)
}

func bigquery(b *strings.Builder, in scriptInput) {
	project := in.names.Str("projectId", "")
	ds := in.names.Str("datasetName", "flagplane_export")
	tbl := "`" + project + "." + ds + "." + strings.ToLower(tableName) + "`"
	fmt.Fprintf(b, "CREATE SCHEMA IF NOT EXISTS `%s.%s`;\n", project, ds)
	fmt.Fprintf(b, "CREATE TABLE IF NOT EXISTS %s (environmentId STRING, projectKey STRING, environmentKey STRING, payloadId STRING, source STRING, receivedAt INT64, kind STRING, creationDate INT64, event JSON)\n", tbl)
	fmt.Fprintf(b, "  PARTITION BY DATE(TIMESTAMP_MILLIS(receivedAt));\n")
	if in.stage.Kind != StageS3 {
		fmt.Fprintf(b, "-- The stage is a folder on the flagplane machine: load each batch file from there, e.g.\n")
		fmt.Fprintf(b, "-- bq load --source_format=NEWLINE_DELIMITED_JSON %s.%s %s<date>/<hour>/<batch>.ndjson\n", ds, strings.ToLower(tableName), in.stage.Location(in.envID))
		return
	}
	conn := in.names.Str("connectionId", "aws-"+in.stage.Region+".flagplane")
	fmt.Fprintf(b, "-- BigQuery reads the S3 stage through the connection %s (an AWS connection whose role is %s).\n", conn, in.roleARN())
	fmt.Fprintf(b, "-- Schedule this statement hourly: it loads the previous hour's batches, so each hour is loaded once.\n")
	fmt.Fprintf(b, "EXECUTE IMMEDIATE FORMAT(\"\"\"LOAD DATA INTO %s FROM FILES (format = 'JSON', uris = ['%s%%s/*.ndjson']) WITH CONNECTION `%s`\"\"\",\n", tbl, in.stage.Location(in.envID), conn)
	fmt.Fprintf(b, "  FORMAT_TIMESTAMP('%%Y-%%m-%%d/%%H', TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 1 HOUR)));\n")
}

func clickhouse(b *strings.Builder, in scriptInput) {
	db := in.names.Str("clickHouseDatabaseName", "flagplane")
	user := in.names.Str("clickHouseUserName", "flagplane_export")
	tbl := db + "." + strings.ToLower(tableName)
	fmt.Fprintf(b, "CREATE DATABASE IF NOT EXISTS %s;\n", db)
	fmt.Fprintf(b, "CREATE TABLE IF NOT EXISTS %s (environmentId String, projectKey String, environmentKey String, payloadId String, source LowCardinality(String), receivedAt DateTime64(3), kind LowCardinality(String), creationDate DateTime64(3), event String, file String)\n", tbl)
	fmt.Fprintf(b, "  ENGINE = MergeTree ORDER BY (environmentId, receivedAt);\n")
	if in.password != "" {
		fmt.Fprintf(b, "CREATE USER IF NOT EXISTS %s IDENTIFIED WITH sha256_password BY %s;\n", user, literal(KindClickHouse, in.password))
	} else {
		fmt.Fprintf(b, "-- Create the user %s with a password of your choosing (CREATE USER ... IDENTIFIED WITH sha256_password BY '...').\n", user)
	}
	fmt.Fprintf(b, "GRANT SELECT, INSERT ON %s TO %s;\n", tbl, user)
	var source string
	if in.stage.Kind == StageS3 {
		bucket := in.names.Str("clickHouseS3BucketName", in.stage.Bucket)
		url := "https://" + bucket + ".s3.amazonaws.com/" + EnvPrefix(in.envID) + "**/*.ndjson"
		source = fmt.Sprintf("s3(%s, 'JSONEachRow')", literal(KindClickHouse, url))
		if arn := in.names.Str("clickHouseServiceRoleArn", ""); arn != "" {
			source = fmt.Sprintf("s3(%s, 'JSONEachRow', extra_credentials(role_arn = %s))", literal(KindClickHouse, url), literal(KindClickHouse, arn))
		}
	} else {
		source = fmt.Sprintf("file(%s, 'JSONEachRow')", literal(KindClickHouse, in.stage.Location(in.envID)+"**/*.ndjson"))
	}
	fmt.Fprintf(b, "-- Run on a schedule: loads the batch files not loaded yet (by file name), so nothing is loaded twice.\n")
	fmt.Fprintf(b, "INSERT INTO %s SELECT environmentId, projectKey, environmentKey, payloadId, source, fromUnixTimestamp64Milli(receivedAt), kind, fromUnixTimestamp64Milli(creationDate), toJSONString(event), _path\n", tbl)
	fmt.Fprintf(b, "  FROM %s\n", source)
	fmt.Fprintf(b, "  WHERE _path NOT IN (SELECT DISTINCT file FROM %s)\n", tbl)
	fmt.Fprintf(b, "  SETTINGS input_format_json_read_objects_as_strings = 0;\n")
}

func redshift(b *strings.Builder, in scriptInput) {
	sc := in.names.Str("schemaName", "flagplane_export")
	user := in.names.Str("userName", "flagplane_export")
	tbl := sc + "." + strings.ToLower(tableName)
	if db := in.names.Str("databaseName", ""); db != "" {
		fmt.Fprintf(b, "-- Run connected to the database %s.\n", db)
	}
	fmt.Fprintf(b, "CREATE SCHEMA IF NOT EXISTS %s;\n", sc)
	fmt.Fprintf(b, "CREATE TABLE IF NOT EXISTS %s (environmentid VARCHAR(64), projectkey VARCHAR(256), environmentkey VARCHAR(256), payloadid VARCHAR(256), source VARCHAR(32), receivedat BIGINT, kind VARCHAR(64), creationdate BIGINT, event SUPER);\n", tbl)
	fmt.Fprintf(b, "CREATE USER %s PASSWORD DISABLE;\n", user)
	fmt.Fprintf(b, "GRANT USAGE ON SCHEMA %s TO %s;\n", sc, user)
	fmt.Fprintf(b, "GRANT SELECT, INSERT ON %s TO %s;\n", tbl, user)
	location := in.stage.Location(in.envID)
	if in.stage.Kind != StageS3 {
		fmt.Fprintf(b, "-- Redshift loads from S3 only: copy the stage folder to a bucket first, e.g.\n")
		fmt.Fprintf(b, "-- aws s3 sync %s s3://<your bucket>/%s\n", location, EnvPrefix(in.envID))
		location = "s3://<your bucket>/" + EnvPrefix(in.envID)
	}
	role := "default"
	if arn, ok := redshiftRole(in); ok {
		role = literal(KindRedshift, arn)
	}
	fmt.Fprintf(b, "-- An auto-copy job: Redshift loads new batch files as they arrive and remembers the ones it loaded.\n")
	fmt.Fprintf(b, "COPY %s FROM %s IAM_ROLE %s FORMAT JSON 'auto ignorecase' JOB CREATE flagplane_export_%s AUTO ON;\n", tbl, literal(KindRedshift, location), role, safeSuffix(in.envID))
}

// redshiftRole is the role Redshift assumes to read the stage, when the
// cluster is named: the role the setup's IAM policies are for.
func redshiftRole(in scriptInput) (string, bool) {
	account := in.names.Str("clusterAwsAccountId", "")
	if account == "" || in.names.Str("clusterIdentifier", "") == "" || in.names.Str("clusterRegion", "") == "" {
		return "", false
	}
	return "arn:aws:iam::" + account + ":role/flagplane-redshift-" + safeSuffix(in.envID), true
}

func databricks(b *strings.Builder, in scriptInput) {
	catalog := in.names.Str("catalogName", "flagplane")
	sc := catalog + "." + in.names.Str("schemaName", "export")
	tbl := sc + "." + strings.ToLower(tableName)
	fmt.Fprintf(b, "CREATE CATALOG IF NOT EXISTS %s;\n", catalog)
	fmt.Fprintf(b, "CREATE SCHEMA IF NOT EXISTS %s;\n", sc)
	fmt.Fprintf(b, "CREATE TABLE IF NOT EXISTS %s (environmentId STRING, projectKey STRING, environmentKey STRING, payloadId STRING, source STRING, receivedAt BIGINT, kind STRING, creationDate BIGINT, event STRING) USING DELTA;\n", tbl)
	location := in.stage.Location(in.envID)
	if in.stage.Kind != StageS3 {
		fmt.Fprintf(b, "-- Databricks reads cloud storage: copy the stage folder to a bucket (or a volume) first, e.g.\n")
		fmt.Fprintf(b, "-- aws s3 sync %s s3://<your bucket>/%s\n", location, EnvPrefix(in.envID))
		location = "s3://<your bucket>/" + EnvPrefix(in.envID)
	}
	fmt.Fprintf(b, "-- Run on a schedule: COPY INTO skips files it loaded before, so nothing is loaded twice.\n")
	fmt.Fprintf(b, "COPY INTO %s FROM (SELECT environmentId, projectKey, environmentKey, payloadId, source, receivedAt, kind, creationDate, to_json(event) AS event FROM %s)\n", tbl, literal(KindDatabricks, location))
	fmt.Fprintf(b, "  FILEFORMAT = JSON FORMAT_OPTIONS ('inferSchema' = 'true') COPY_OPTIONS ('mergeSchema' = 'false');\n")
}

// safeSuffix is an identifier-safe form of an environment id.
func safeSuffix(envID string) string {
	var out strings.Builder
	for _, r := range envID {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			out.WriteRune(r)
		}
		if out.Len() == 24 {
			break
		}
	}
	return strings.ToLower(out.String())
}

// Policy is an AWS IAM policy document.
type Policy struct {
	Version   string            `json:"Version"`
	Statement []PolicyStatement `json:"Statement"`
}

// PolicyStatement is one statement of a Policy.
type PolicyStatement struct {
	Effect    string   `json:"Effect"`
	Action    []string `json:"Action"`
	Principal any      `json:"Principal,omitempty"`
	Resource  any      `json:"Resource,omitempty"`
	Condition any      `json:"Condition,omitempty"`
}

func encodePolicy(p Policy) string {
	data, _ := json.MarshalIndent(p, "", "  ")
	return string(data)
}

// readPolicy lets a role read one environment's part of the stage.
func readPolicy(si StageInfo, envID string) Policy {
	bucket := si.Bucket
	if si.Kind != StageS3 {
		bucket = "<your bucket>"
	}
	return Policy{Version: "2012-10-17", Statement: []PolicyStatement{
		{Effect: "Allow", Action: []string{"s3:GetObject", "s3:GetObjectVersion"}, Resource: "arn:aws:s3:::" + bucket + "/" + EnvPrefix(envID) + "*"},
		{Effect: "Allow", Action: []string{"s3:ListBucket", "s3:GetBucketLocation"}, Resource: "arn:aws:s3:::" + bucket,
			Condition: map[string]any{"StringLike": map[string]any{"s3:prefix": []string{EnvPrefix(envID) + "*"}}}},
	}}
}

// redshiftTrust lets the named cluster's Redshift assume the role.
func redshiftTrust(in scriptInput) Policy {
	account, region, cluster := in.names.Str("clusterAwsAccountId", ""), in.names.Str("clusterRegion", ""), in.names.Str("clusterIdentifier", "")
	return Policy{Version: "2012-10-17", Statement: []PolicyStatement{{
		Effect: "Allow", Action: []string{"sts:AssumeRole"}, Principal: map[string]any{"Service": "redshift.amazonaws.com"},
		Condition: map[string]any{
			"StringEquals": map[string]any{"aws:SourceAccount": account},
			"ArnLike":      map[string]any{"aws:SourceArn": "arn:aws:redshift:" + region + ":" + account + ":cluster:" + cluster},
		},
	}}}
}
