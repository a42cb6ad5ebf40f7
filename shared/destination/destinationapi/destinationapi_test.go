package destinationapi_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/destination"
	"github.com/flagplane/flagplane/shared/destination/destinationapi"
	"github.com/flagplane/flagplane/shared/store"
)

const base = "/api/v2/destinations"

func destPath(project, env string) string { return base + "/" + project + "/" + env }

func setupPath(project, env, kind, op string) string {
	return base + "/projects/" + project + "/environments/" + env + "/kinds/" + kind + "/" + op
}

// newServer is a test server with project p (environments production and test).
func newServer(tb testing.TB) *apptest.Server {
	tb.Helper()
	srv := apptest.New(tb)
	srv.MustCreateProject(tb, "p")
	return srv
}

// must checks a status and decodes the answer.
func must(tb testing.TB, res *apptest.Response, status int) map[string]any {
	tb.Helper()
	if res.Status != status {
		tb.Fatalf("status %d, want %d: %s", res.Status, status, res.Body)
	}
	if status == http.StatusNoContent {
		return nil
	}
	return res.Map(tb)
}

// keyPair generates an environment's key pair and returns its answer.
func keyPair(tb testing.TB, srv *apptest.Server, path string) (pemKey, body string) {
	tb.Helper()
	out := must(tb, srv.Do(tb, http.MethodPost, path, nil), http.StatusCreated)
	return out["public_key"].(string), out["public_key_pkcs8"].(string)
}

func TestDestinationsAreCreatedReadPatchedAndDeleted(t *testing.T) {
	srv := newServer(t)
	created := must(t, srv.Do(t, http.MethodPost, destPath("p", "production"), map[string]any{
		"name": "Warehouse", "kind": "bigquery", "on": true, "config": `{"projectId":"my-gcp-project","datasetName":"events"}`,
	}), http.StatusCreated)
	id := created["_id"].(string)
	t.Run("the answer carries config as a JSON-encoded string and createdAt as a string", func(t *testing.T) {
		var cfg map[string]any
		if err := json.Unmarshal([]byte(created["config"].(string)), &cfg); err != nil || cfg["projectId"] != "my-gcp-project" {
			t.Errorf("config %v: %v", created["config"], err)
		}
		if _, ok := created["createdAt"].(string); !ok || created["on"] != true || created["version"] != float64(1) || created["kind"] != "bigquery" {
			t.Errorf("answer %v", created)
		}
		links := created["_links"].(map[string]any)
		if links["self"].(map[string]any)["href"] != destPath("p", "production")+"/"+id {
			t.Errorf("links %v", links)
		}
		if _, ok := created["_access"].(map[string]any); !ok {
			t.Errorf("no _access: %v", created)
		}
	})
	t.Run("a config sent as an object is taken alike", func(t *testing.T) {
		must(t, srv.Do(t, http.MethodPost, destPath("p", "test"), map[string]any{
			"kind": "databricks", "config": map[string]any{"host": "dbc-1234.cloud.databricks.com"},
		}), http.StatusCreated)
	})
	t.Run("it is read alone and in the list of every destination", func(t *testing.T) {
		got := must(t, srv.Do(t, http.MethodGet, destPath("p", "production")+"/"+id, nil), http.StatusOK)
		if got["name"] != "Warehouse" {
			t.Errorf("get %v", got)
		}
		list := must(t, srv.Do(t, http.MethodGet, base, nil), http.StatusOK)
		if items := list["items"].([]any); len(items) != 2 {
			t.Errorf("%d items", len(items))
		}
	})
	t.Run("a JSON patch changes a config field, the name and on, and moves the version", func(t *testing.T) {
		got := must(t, srv.Do(t, http.MethodPatch, destPath("p", "production")+"/"+id, []map[string]any{
			{"op": "replace", "path": "/config/datasetName", "value": "events_v2"},
			{"op": "replace", "path": "/name", "value": "Renamed"},
			{"op": "replace", "path": "/on", "value": false},
		}), http.StatusOK)
		if !strings.Contains(got["config"].(string), `"events_v2"`) || got["name"] != "Renamed" || got["on"] != false || got["version"] != float64(2) {
			t.Errorf("patched %v", got)
		}
	})
	refused := []struct {
		name, method, path string
		body               any
		status             int
		says               string
	}{
		{"a kind that is not a warehouse kind is refused, naming the kinds", http.MethodPost, destPath("p", "production"),
			map[string]any{"kind": "kinesis", "config": "{}"}, 400, "snowflake-v2, bigquery, clickhouse, redshift, databricks"},
		{"a config field of another kind is refused, naming it", http.MethodPost, destPath("p", "production"),
			map[string]any{"kind": "bigquery", "config": map[string]any{"projectId": "my-gcp-project", "host": "x"}}, 400, "config.host"},
		{"a required config field is named when missing", http.MethodPost, destPath("p", "production"),
			map[string]any{"kind": "clickhouse", "config": map[string]any{}}, 400, "config.endpoint"},
		{"a custom name that is not an identifier is refused", http.MethodPost, destPath("p", "production"),
			map[string]any{"kind": "bigquery", "config": map[string]any{"projectId": "my-gcp-project", "datasetName": "x; DROP TABLE y"}}, 400, "SQL identifier"},
		{"config that is not an object is refused", http.MethodPost, destPath("p", "production"),
			map[string]any{"kind": "bigquery", "config": "[1]"}, 400, "JSON object"},
		{"a snowflake destination needs a public key flagplane generated", http.MethodPost, destPath("p", "production"),
			map[string]any{"kind": "snowflake-v2", "config": map[string]any{"snowflakeHostAddress": "ab12345.snowflakecomputing.com", "publicKey": foreignKey(t)}}, 400, "generate a key pair first"},
		{"kind cannot be patched", http.MethodPatch, destPath("p", "production") + "/" + id,
			[]map[string]any{{"op": "replace", "path": "/kind", "value": "redshift"}}, 400, "kind"},
		{"an unknown environment is a 404", http.MethodPost, destPath("p", "nope"), map[string]any{"kind": "bigquery", "config": map[string]any{"projectId": "my-gcp-project"}}, 404, "nope"},
		{"an unknown id is a 404", http.MethodGet, destPath("p", "production") + "/not-an-id", nil, 404, "not found"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			res := srv.Do(t, c.method, c.path, c.body)
			if res.Status != c.status || !strings.Contains(res.String(), c.says) {
				t.Errorf("status %d %s; want %d naming %q", res.Status, res.Body, c.status, c.says)
			}
		})
	}
	t.Run("a deleted destination is gone", func(t *testing.T) {
		must(t, srv.Do(t, http.MethodDelete, destPath("p", "production")+"/"+id, nil), http.StatusNoContent)
		must(t, srv.Do(t, http.MethodGet, destPath("p", "production")+"/"+id, nil), http.StatusNotFound)
	})
}

// foreignKey is a valid RSA public key flagplane did not generate.
func foreignKey(tb testing.TB) string {
	tb.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		tb.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	return base64.StdEncoding.EncodeToString(der)
}

func TestKeyPairsSignWithTheStoredPrivateKeyAndVerifyWithTheAnsweredPublicKey(t *testing.T) {
	srv := newServer(t)
	svc := destinationapi.Service(srv.App)
	for _, path := range []string{base + "/generate-warehouse-destination-key-pair",
		base + "/projects/p/environments/production/generate-warehouse-destination-key-pair"} {
		t.Run(path, func(t *testing.T) {
			res := srv.Do(t, http.MethodPost, path, nil)
			if strings.Contains(res.String(), "PRIVATE") {
				t.Fatal("the answer holds a private key")
			}
			pemKey, body := keyPair(t, srv, path)
			block, _ := pem.Decode([]byte(pemKey))
			if block == nil || block.Type != "PUBLIC KEY" || base64.StdEncoding.EncodeToString(block.Bytes) != body || strings.ContainsAny(body, "\n-") {
				t.Fatalf("public_key %q and public_key_pkcs8 %q are not the PEM and bare forms of one key", pemKey, body)
			}
			pub, err := x509.ParsePKIXPublicKey(block.Bytes)
			if err != nil || pub.(*rsa.PublicKey).N.BitLen() < 2048 {
				t.Fatalf("public key: %v", err)
			}
			priv, err := svc.PrivateKey(t.Context(), body)
			if err != nil {
				t.Fatal(err)
			}
			digest := sha256.Sum256([]byte("a Snowflake JWT signing input"))
			sig, err := rsa.SignPKCS1v15(rand.Reader, priv, crypto.SHA256, digest[:])
			if err != nil {
				t.Fatal(err)
			}
			if err := rsa.VerifyPKCS1v15(pub.(*rsa.PublicKey), crypto.SHA256, digest[:], sig); err != nil {
				t.Errorf("a signature of the stored key does not verify with the answered one: %v", err)
			}
		})
	}
	t.Run("the stored private key is sealed: neither the item nor the audit log holds it in the clear", func(t *testing.T) {
		_, body := keyPair(t, srv, base+"/generate-warehouse-destination-key-pair")
		priv, err := svc.PrivateKey(t.Context(), body)
		if err != nil {
			t.Fatal(err)
		}
		plain, _ := x509.MarshalPKCS8PrivateKey(priv)
		der, _ := base64.StdEncoding.DecodeString(body)
		it, err := srv.Table.Get(t.Context(), keyItem(der))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(it.Data), base64.StdEncoding.EncodeToString(plain)[:64]) {
			t.Error("the key pair item holds the private key in the clear")
		}
		log := srv.Do(t, http.MethodGet, "/api/v2/auditlog?limit=20", nil).String()
		if strings.Contains(log, "sealedPrivateKey") || strings.Contains(log, base64.StdEncoding.EncodeToString(plain)[:64]) {
			t.Error("the audit log holds the private key")
		}
	})
	t.Run("a key generated for one environment cannot serve another", func(t *testing.T) {
		_, body := keyPair(t, srv, base+"/projects/p/environments/production/generate-warehouse-destination-key-pair")
		res := srv.Do(t, http.MethodPost, destPath("p", "test"), map[string]any{"kind": "snowflake-v2",
			"config": map[string]any{"snowflakeHostAddress": "ab12345.snowflakecomputing.com", "publicKey": body}})
		if res.Status != http.StatusBadRequest || !strings.Contains(res.String(), "production") {
			t.Errorf("%d %s", res.Status, res.Body)
		}
		must(t, srv.Do(t, http.MethodPost, destPath("p", "production"), map[string]any{"kind": "snowflake-v2",
			"config": map[string]any{"snowflakeHostAddress": "ab12345.snowflakecomputing.com", "publicKey": body}}), http.StatusCreated)
	})
	t.Run("an unknown environment is a 404", func(t *testing.T) {
		must(t, srv.Do(t, http.MethodPost, base+"/projects/p/environments/nope/generate-warehouse-destination-key-pair", nil), http.StatusNotFound)
	})
}

func TestTrustPolicyLetsTheStageAccountAssumeTheRoleWithAnEnvironmentsExternalID(t *testing.T) {
	srv := newServer(t)
	policy := func(env string) map[string]any {
		out := must(t, srv.Do(t, http.MethodPost, base+"/projects/p/environments/"+env+"/generate-trust-policy", nil), http.StatusCreated)
		return out["awsTrustPolicy"].(map[string]any)
	}
	prod := policy("production")
	st := prod["Statement"].([]any)[0].(map[string]any)
	if prod["Version"] != "2012-10-17" || st["Effect"] != "Allow" || st["Action"].([]any)[0] != "sts:AssumeRole" {
		t.Fatalf("policy %v", prod)
	}
	external := func(p map[string]any) string {
		return p["Statement"].([]any)[0].(map[string]any)["Condition"].(map[string]any)["StringEquals"].(map[string]any)["sts:ExternalId"].(string)
	}
	t.Run("the external id is the same every time for an environment", func(t *testing.T) {
		if a, b := external(prod), external(policy("production")); a != b || !strings.HasPrefix(a, destination.ExternalIDPrefix) {
			t.Errorf("%q then %q", a, b)
		}
	})
	t.Run("another environment has another external id", func(t *testing.T) {
		if external(prod) == external(policy("test")) {
			t.Error("two environments share an external id")
		}
	})
}

// keyItem is the key of the stored key pair whose public key is der.
func keyItem(der []byte) store.Key { return store.DestinationKeyPairKey(destination.Fingerprint(der)) }
