package destinationapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestSetupScriptsCreateTheObjectsAndLoadFromTheStage(t *testing.T) {
	srv := newServer(t)
	env := must(t, srv.Do(t, http.MethodGet, "/api/v2/projects/p/environments/production", nil), http.StatusOK)
	id := env["_id"].(string)
	kinds := []struct {
		kind string
		body map[string]any
		// want are lines the script must hold: the custom names, the table and the load from the stage.
		want []string
	}{
		{"snowflake-v2", map[string]any{"snowflakeHostAddress": "ab12345.us-east-1.snowflakecomputing.com", "databaseName": "ANALYTICS",
			"schemaName": "FLAGS", "warehouseName": "LOAD_WH", "roleName": "LOADER", "userName": "FP_USER"},
			[]string{"CREATE DATABASE IF NOT EXISTS ANALYTICS;", "CREATE SCHEMA IF NOT EXISTS ANALYTICS.FLAGS;", "CREATE WAREHOUSE IF NOT EXISTS LOAD_WH",
				"CREATE ROLE IF NOT EXISTS LOADER;", "CREATE USER IF NOT EXISTS FP_USER", "RSA_PUBLIC_KEY = '", "CREATE TABLE IF NOT EXISTS ANALYTICS.FLAGS.FLAGPLANE_EVENTS",
				"CREATE STAGE IF NOT EXISTS ANALYTICS.FLAGS.FLAGPLANE_STAGE", "COPY INTO ANALYTICS.FLAGS.FLAGPLANE_EVENTS", "events/" + id + "/"}},
		{"bigquery", map[string]any{"projectId": "my-gcp-project", "datasetName": "flag_events"},
			[]string{"CREATE SCHEMA IF NOT EXISTS `my-gcp-project.flag_events`;", "CREATE TABLE IF NOT EXISTS `my-gcp-project.flag_events.flagplane_events`", "bq load", "events/" + id + "/"}},
		{"clickhouse", map[string]any{"endpoint": "abc.clickhouse.cloud:8443", "clickHouseDatabaseName": "fp", "clickHouseUserName": "fp_loader", "clickHousePassword": "s3cr'et"},
			[]string{"CREATE DATABASE IF NOT EXISTS fp;", "CREATE TABLE IF NOT EXISTS fp.flagplane_events", "CREATE USER IF NOT EXISTS fp_loader IDENTIFIED WITH sha256_password BY 's3cr\\'et';",
				"INSERT INTO fp.flagplane_events", "file('", "events/" + id + "/**/*.ndjson"}},
		{"redshift", map[string]any{"clusterIdentifier": "analytics-1", "clusterRegion": "eu-west-1", "clusterAwsAccountId": "123456789012", "schemaName": "fp", "userName": "fp_loader"},
			[]string{"CREATE SCHEMA IF NOT EXISTS fp;", "CREATE TABLE IF NOT EXISTS fp.flagplane_events", "CREATE USER fp_loader PASSWORD DISABLE;",
				"COPY fp.flagplane_events FROM", "IAM_ROLE 'arn:aws:iam::123456789012:role/flagplane-redshift-", "JOB CREATE", "events/" + id + "/"}},
		{"databricks", map[string]any{"host": "dbc-1234.cloud.databricks.com", "catalogName": "main", "schemaName": "fp"},
			[]string{"CREATE CATALOG IF NOT EXISTS main;", "CREATE SCHEMA IF NOT EXISTS main.fp;", "CREATE TABLE IF NOT EXISTS main.fp.flagplane_events", "COPY INTO main.fp.flagplane_events", "events/" + id + "/"}},
	}
	for _, k := range kinds {
		t.Run("a "+k.kind+" script holds the custom names, the table and the load from the stage", func(t *testing.T) {
			out := must(t, srv.Do(t, http.MethodPost, setupPath("p", "production", k.kind, "setup"), k.body), http.StatusCreated)
			script := out["script"].(string)
			for _, w := range k.want {
				if !strings.Contains(script, w) {
					t.Errorf("script lacks %q:\n%s", w, script)
				}
			}
			switch k.kind {
			case "snowflake-v2":
				if !strings.Contains(script, "RSA_PUBLIC_KEY = '"+out["publicKeyPkcs8"].(string)+"'") || !strings.HasPrefix(out["publicKey"].(string), "-----BEGIN PUBLIC KEY-----") {
					t.Errorf("the script does not give the user the answered key: %v", out)
				}
			case "clickhouse", "redshift":
				if out["s3BucketName"] == nil {
					t.Errorf("no s3BucketName: %v", out)
				}
			}
			if k.kind == "redshift" {
				var perms, trust map[string]any
				if json.Unmarshal([]byte(out["redshiftIAMPermissionsPolicy"].(string)), &perms) != nil || json.Unmarshal([]byte(out["redshiftIAMTrustPolicy"].(string)), &trust) != nil {
					t.Fatalf("policies are not JSON: %v", out)
				}
				if !strings.Contains(out["redshiftIAMTrustPolicy"].(string), "arn:aws:redshift:eu-west-1:123456789012:cluster:analytics-1") ||
					!strings.Contains(out["redshiftIAMPermissionsPolicy"].(string), "events/"+id+"/*") {
					t.Errorf("policies do not name the cluster and the stage: %v", out)
				}
			}
		})
	}
	t.Run("defaults apply when no custom names are sent", func(t *testing.T) {
		out := must(t, srv.Do(t, http.MethodPost, setupPath("p", "test", "databricks", "setup"), nil), http.StatusCreated)
		if !strings.Contains(out["script"].(string), "CREATE CATALOG IF NOT EXISTS flagplane;") {
			t.Errorf("script %s", out["script"])
		}
	})
	hostile := []struct{ name, kind, field, value string }{
		{"a statement in a database name", "snowflake-v2", "databaseName", "X; DROP DATABASE PROD; --"},
		{"a quote in a schema name", "redshift", "schemaName", "fp'--"},
		{"a quoted identifier", "bigquery", "datasetName", "`evil`"},
		{"a newline in a user name", "clickhouse", "clickHouseUserName", "u\nDROP TABLE x"},
		{"a path in a host", "databricks", "host", "dbc/../../x"},
		{"an ARN with a quote", "clickhouse", "clickHouseServiceRoleArn", "arn:aws:iam::123456789012:role/x'"},
	}
	for _, h := range hostile {
		t.Run("hostile input is refused with a 400 naming the field: "+h.name, func(t *testing.T) {
			body := map[string]any{h.field: h.value}
			if h.kind == "bigquery" {
				body["projectId"] = "my-gcp-project"
			}
			res := srv.Do(t, http.MethodPost, setupPath("p", "production", h.kind, "setup"), body)
			if res.Status != http.StatusBadRequest || !strings.Contains(res.String(), h.field) {
				t.Errorf("%d %s", res.Status, res.Body)
			}
		})
	}
	t.Run("an unknown kind is a 400 naming the kinds", func(t *testing.T) {
		res := srv.Do(t, http.MethodPost, setupPath("p", "production", "segment", "setup"), nil)
		if res.Status != http.StatusBadRequest || !strings.Contains(res.String(), "databricks") {
			t.Errorf("%d %s", res.Status, res.Body)
		}
	})
}

func TestCompleteSetupChecksTheHostAndKeyAndFillsTheArtifacts(t *testing.T) {
	srv := newServer(t)
	const host = "ab12345.us-east-1.snowflakecomputing.com"
	t.Run("without a setup there is nothing to complete", func(t *testing.T) {
		must(t, srv.Do(t, http.MethodPost, setupPath("p", "production", "snowflake-v2", "complete-setup"), map[string]any{"publicKey": foreignKey(t), "snowflakeHostAddress": host}), http.StatusNotFound)
	})
	setup := must(t, srv.Do(t, http.MethodPost, setupPath("p", "production", "snowflake-v2", "setup"), map[string]any{
		"snowflakeHostAddress": host, "databaseName": "ANALYTICS", "name": "Snowflake"}), http.StatusCreated)
	wrong := []struct {
		name string
		body map[string]any
		says string
	}{
		{"another host is refused", map[string]any{"publicKey": setup["publicKey"], "snowflakeHostAddress": "other.snowflakecomputing.com"}, "snowflakeHostAddress"},
		{"another public key is refused", map[string]any{"publicKey": foreignKey(t), "snowflakeHostAddress": host}, "publicKey"},
		{"a missing public key is refused", map[string]any{"snowflakeHostAddress": host}, "publicKey"},
	}
	for _, c := range wrong {
		t.Run(c.name, func(t *testing.T) {
			res := srv.Do(t, http.MethodPost, setupPath("p", "production", "snowflake-v2", "complete-setup"), c.body)
			if res.Status != http.StatusBadRequest || !strings.Contains(res.String(), c.says) {
				t.Errorf("%d %s", res.Status, res.Body)
			}
		})
	}
	t.Run("the matching host and key (either form) make a destination that is on, with the script and the stage", func(t *testing.T) {
		d := must(t, srv.Do(t, http.MethodPost, setupPath("p", "production", "snowflake-v2", "complete-setup"),
			map[string]any{"publicKey": setup["publicKeyPkcs8"], "snowflakeHostAddress": strings.ToUpper(host)}), http.StatusCreated)
		art, _ := d["completedArtifacts"].(map[string]any)
		if d["on"] != true || d["kind"] != "snowflake-v2" || d["name"] != "Snowflake" || art == nil ||
			!strings.Contains(art["sqlSetupScript"].(string), "CREATE DATABASE IF NOT EXISTS ANALYTICS;") || art["s3BucketName"] == "" {
			t.Errorf("destination %v", d)
		}
		if !strings.Contains(d["config"].(string), setup["publicKeyPkcs8"].(string)) {
			t.Errorf("config %v lacks the public key", d["config"])
		}
	})
	t.Run("a completed setup cannot be completed twice", func(t *testing.T) {
		must(t, srv.Do(t, http.MethodPost, setupPath("p", "production", "snowflake-v2", "complete-setup"),
			map[string]any{"publicKey": setup["publicKey"], "snowflakeHostAddress": host}), http.StatusNotFound)
	})
	t.Run("a second setup replaces the first: only its key completes", func(t *testing.T) {
		first := must(t, srv.Do(t, http.MethodPost, setupPath("p", "test", "snowflake-v2", "setup"), map[string]any{"snowflakeHostAddress": host}), http.StatusCreated)
		second := must(t, srv.Do(t, http.MethodPost, setupPath("p", "test", "snowflake-v2", "setup"), map[string]any{"snowflakeHostAddress": host}), http.StatusCreated)
		res := srv.Do(t, http.MethodPost, setupPath("p", "test", "snowflake-v2", "complete-setup"), map[string]any{"publicKey": first["publicKey"], "snowflakeHostAddress": host})
		if res.Status != http.StatusBadRequest || !strings.Contains(res.String(), "latest") {
			t.Errorf("the first key: %d %s", res.Status, res.Body)
		}
		must(t, srv.Do(t, http.MethodPost, setupPath("p", "test", "snowflake-v2", "complete-setup"), map[string]any{"publicKey": second["publicKey"], "snowflakeHostAddress": host}), http.StatusCreated)
	})
	t.Run("a ClickHouse password is in the setup answer only: never in the destination or the audit log", func(t *testing.T) {
		const pw = "Very-Secret-Pw-42"
		must(t, srv.Do(t, http.MethodPost, setupPath("p", "test", "clickhouse", "setup"),
			map[string]any{"endpoint": "abc.clickhouse.cloud:8443", "clickHousePassword": pw}), http.StatusCreated)
		d := srv.Do(t, http.MethodPost, setupPath("p", "test", "clickhouse", "complete-setup"), map[string]any{"endpoint": "abc.clickhouse.cloud:8443"})
		if d.Status != http.StatusCreated || strings.Contains(d.String(), pw) {
			t.Errorf("%d %s", d.Status, d.Body)
		}
		if log := srv.Do(t, http.MethodGet, "/api/v2/auditlog?limit=50", nil).String(); strings.Contains(log, pw) {
			t.Error("the audit log holds the password")
		}
	})
}
