package featurestoreapi_test

// The proof that delivery configurations really fill feature stores:
// LaunchDarkly's server-side Go SDK in daemon mode (no connection to
// flagplane, flags read from the store only) with its own Redis and
// DynamoDB integrations evaluates every flag as flagplane's evaluate
// operation does, before and after a flag change made through the API and
// written by the outbox consumer; its big segment status reads the
// synchronized-on time a big segment store integration keeps.
//
// The stores come from the environment: FLAGPLANE_TEST_REDIS (host:port)
// and FLAGPLANE_DYNAMODB_ENDPOINT (DynamoDB Local), as make test-featurestores
// sets them. Without them the tests skip, unless
// FLAGPLANE_REQUIRE_FEATURESTORES=1, where they fail.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"
	lddynamodb "github.com/launchdarkly/go-server-sdk-dynamodb/v4"
	ldredis "github.com/launchdarkly/go-server-sdk-redis-redigo/v3"
	ld "github.com/launchdarkly/go-server-sdk/v7"
	"github.com/launchdarkly/go-server-sdk/v7/interfaces"
	"github.com/launchdarkly/go-server-sdk/v7/ldcomponents"
	"github.com/launchdarkly/go-server-sdk/v7/subsystems"

	"github.com/flagplane/flagplane/shared/app/apptest"
)

// requireEnv returns the variable's value, skipping (or failing, when the
// tier requires the stores) without it.
func requireEnv(tb testing.TB, name string) string {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		if os.Getenv("FLAGPLANE_REQUIRE_FEATURESTORES") == "1" {
			tb.Fatalf("%s is not set: make test-featurestores starts the store and sets it", name)
		}
		tb.Skipf("%s is not set: run make test-featurestores", name)
	}
	return v
}

// storeKind is one store under test: the config flagplane gets and the
// SDK's builders for the same store.
type storeKind struct {
	name   string
	config func(tb testing.TB, prefix string) map[string]any
	data   func(tb testing.TB, config map[string]any) subsystems.ComponentConfigurer[subsystems.PersistentDataStore]
	big    func(tb testing.TB, config map[string]any) subsystems.ComponentConfigurer[subsystems.BigSegmentStore]
}

func redisKind() storeKind {
	hostPort := func(tb testing.TB) (string, int) {
		host, p, err := net.SplitHostPort(requireEnv(tb, "FLAGPLANE_TEST_REDIS"))
		if err != nil {
			tb.Fatalf("FLAGPLANE_TEST_REDIS: %v", err)
		}
		port, _ := strconv.Atoi(p)
		return host, port
	}
	return storeKind{
		name: "redis",
		config: func(tb testing.TB, prefix string) map[string]any {
			host, port := hostPort(tb)
			return map[string]any{"host": host, "port": port, "prefix": prefix}
		},
		data: func(tb testing.TB, c map[string]any) subsystems.ComponentConfigurer[subsystems.PersistentDataStore] {
			host, port := hostPort(tb)
			return ldredis.DataStore().HostAndPort(host, port).Prefix(c["prefix"].(string))
		},
		big: func(tb testing.TB, c map[string]any) subsystems.ComponentConfigurer[subsystems.BigSegmentStore] {
			host, port := hostPort(tb)
			return ldredis.BigSegmentStore().HostAndPort(host, port).Prefix(c["prefix"].(string))
		},
	}
}

func dynamoClient(tb testing.TB) *dynamodb.Client {
	endpoint := requireEnv(tb, "FLAGPLANE_DYNAMODB_ENDPOINT")
	return dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
}

func dynamoKind() storeKind {
	return storeKind{
		name: "dynamodb",
		config: func(tb testing.TB, prefix string) map[string]any {
			client := dynamoClient(tb)
			table := "fs-" + prefix
			_, err := client.CreateTable(context.Background(), &dynamodb.CreateTableInput{
				TableName: aws.String(table), BillingMode: types.BillingModePayPerRequest,
				AttributeDefinitions: []types.AttributeDefinition{
					{AttributeName: aws.String("namespace"), AttributeType: types.ScalarAttributeTypeS},
					{AttributeName: aws.String("key"), AttributeType: types.ScalarAttributeTypeS}},
				KeySchema: []types.KeySchemaElement{
					{AttributeName: aws.String("namespace"), KeyType: types.KeyTypeHash},
					{AttributeName: aws.String("key"), KeyType: types.KeyTypeRange}},
			})
			if err != nil {
				tb.Fatalf("create table %s: %v", table, err)
			}
			tb.Cleanup(func() {
				client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(table)})
			})
			return map[string]any{"tableName": table, "region": "us-east-1", "prefix": prefix,
				"endpoint": os.Getenv("FLAGPLANE_DYNAMODB_ENDPOINT"), "accessKeyId": "local", "secretAccessKey": "local-secret"}
		},
		data: func(tb testing.TB, c map[string]any) subsystems.ComponentConfigurer[subsystems.PersistentDataStore] {
			return lddynamodb.DataStore(c["tableName"].(string)).Prefix(c["prefix"].(string)).DynamoClient(dynamoClient(tb))
		},
		big: func(tb testing.TB, c map[string]any) subsystems.ComponentConfigurer[subsystems.BigSegmentStore] {
			return lddynamodb.BigSegmentStore(c["tableName"].(string)).Prefix(c["prefix"].(string)).DynamoClient(dynamoClient(tb))
		},
	}
}

// daemonClient is the SDK reading the store only.
func daemonClient(tb testing.TB, k storeKind, config map[string]any) *ld.LDClient {
	tb.Helper()
	cfg := ld.Config{
		DataSource: ldcomponents.ExternalUpdatesOnly(),
		DataStore:  ldcomponents.PersistentDataStore(k.data(tb, config)).NoCaching(),
		// A membership cache of milliseconds: a change shows at once.
		BigSegments: ldcomponents.BigSegments(k.big(tb, config)).StatusPollInterval(100 * time.Millisecond).
			ContextCacheTime(5 * time.Millisecond),
		Events:           ldcomponents.NoEvents(),
		Logging:          ldcomponents.NoLogging(),
		DiagnosticOptOut: true,
		ServiceEndpoints: interfaces.ServiceEndpoints{Streaming: "http://127.0.0.1:1", Polling: "http://127.0.0.1:1", Events: "http://127.0.0.1:1"},
	}
	c, err := ld.MakeCustomClient("sdk-daemon", cfg, 5*time.Second)
	if err != nil {
		tb.Fatalf("start the SDK in daemon mode: %v", err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// flags makes, through the API, flags of several shapes in project fs,
// environment test.
func flags(tb testing.TB, srv *apptest.Server) {
	tb.Helper()
	srv.MustCreateProject(tb, "fs")
	shapes := [][]any{{true, false}, {"red", "green", "blue"}, {1, 2.5, 100}, {map[string]any{"tier": "gold"}, []any{"x"}}}
	for i := 0; i < 12; i++ {
		vals := shapes[i%len(shapes)]
		n := len(vals)
		var variations []map[string]any
		for _, v := range vals {
			variations = append(variations, map[string]any{"value": v})
		}
		key := fmt.Sprintf("flag-%02d", i)
		mustOK(tb, beta(tb, srv, http.MethodPost, "/api/v2/flags/fs", map[string]any{"key": key, "name": key, "variations": variations}), http.StatusCreated)
		env := "/environments/test/"
		mustOK(tb, beta(tb, srv, http.MethodPatch, "/api/v2/flags/fs/"+key, []map[string]any{
			{"op": "replace", "path": env + "on", "value": i%5 != 3},
			{"op": "replace", "path": env + "offVariation", "value": i % n},
			{"op": "replace", "path": env + "targets", "value": []map[string]any{{"values": []string{"user-1"}, "variation": (i + 1) % n}}},
			{"op": "replace", "path": env + "rules", "value": []map[string]any{
				{"clauses": []map[string]any{{"attribute": "email", "op": "endsWith", "values": []string{"@corp.example"}}}, "variation": (i + 2) % n},
				{"clauses": []map[string]any{{"attribute": "country", "op": "in", "values": []string{"de", "fr"}}},
					"rollout": map[string]any{"variations": []map[string]any{{"variation": 0, "weight": 40000}, {"variation": n - 1, "weight": 60000}}}},
			}},
			{"op": "replace", "path": env + "fallthrough", "value": map[string]any{"variation": (i + 1) % n}},
		}), http.StatusOK)
	}
}

// beta sends a request with the header beta operations require (and
// others accept).
func beta(tb testing.TB, srv *apptest.Server, method, path string, body any) *apptest.Response {
	tb.Helper()
	return srv.Do(tb, method, path, body, "SVC-API-Version", "beta")
}

func mustOK(tb testing.TB, res *apptest.Response, want int) *apptest.Response {
	tb.Helper()
	if res.Status != want {
		tb.Fatalf("got %d, want %d: %s", res.Status, want, res.Body)
	}
	return res
}

func contexts() []ldcontext.Context {
	var out []ldcontext.Context
	for i := 0; i < 20; i++ {
		b := ldcontext.NewBuilder(fmt.Sprintf("user-%d", i))
		if i%3 == 0 {
			b.SetString("email", fmt.Sprintf("u%d@corp.example", i))
		}
		b.SetString("country", []string{"de", "us", "fr"}[i%3])
		out = append(out, b.Build())
	}
	return out
}

// evaluate is what flagplane's evaluate operation serves, by flag key.
func evaluate(tb testing.TB, srv *apptest.Server, c ldcontext.Context) map[string]json.RawMessage {
	tb.Helper()
	body, _ := json.Marshal(c)
	res := mustOK(tb, beta(tb, srv, http.MethodPost, "/api/v2/projects/fs/environments/test/flags/evaluate", body), http.StatusOK)
	var page struct {
		Items []struct {
			Key   string          `json:"key"`
			Value json.RawMessage `json:"_value"`
		} `json:"items"`
	}
	res.JSON(tb, &page)
	out := map[string]json.RawMessage{}
	for _, it := range page.Items {
		out[it.Key] = it.Value
	}
	return out
}

// mismatches compares the SDK's evaluations with flagplane's, for every
// context of cs (contexts() when none); it returns the differences.
func mismatches(tb testing.TB, srv *apptest.Server, client *ld.LDClient, cs ...ldcontext.Context) []string {
	tb.Helper()
	if len(cs) == 0 {
		cs = contexts()
	}
	var out []string
	for _, c := range cs {
		want := evaluate(tb, srv, c)
		state := client.AllFlagsState(c)
		if !state.IsValid() {
			return []string{"the SDK has no valid flag state: the store is not initialized"}
		}
		got := state.ToValuesMap()
		if len(got) != len(want) {
			out = append(out, fmt.Sprintf("%s: the SDK has %d flags, flagplane evaluates %d", c.Key(), len(got), len(want)))
		}
		for key, w := range want {
			g, ok := got[key]
			if !ok {
				out = append(out, fmt.Sprintf("%s: the SDK lacks %s", c.Key(), key))
				continue
			}
			if !jsonEqual([]byte(g.JSONString()), w) {
				out = append(out, fmt.Sprintf("%s %s: SDK %s, flagplane %s", c.Key(), key, g.JSONString(), w))
			}
		}
	}
	return out
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// eventually retries check until it returns nothing, for up to 10 s (the
// outbox consumer writes asynchronously).
func eventually(tb testing.TB, what string, check func() []string) {
	tb.Helper()
	var last []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if last = check(); len(last) == 0 {
			return
		}
	}
	if len(last) > 5 {
		last = last[:5]
	}
	tb.Fatalf("%s: still wrong after 10s: %v", what, last)
}

func TestTheSDKInDaemonModeEvaluatesWhatFlagplaneWrote(t *testing.T) {
	for _, k := range []storeKind{redisKind(), dynamoKind()} {
		t.Run(k.name, func(t *testing.T) {
			srv := apptest.New(t, apptest.WithWebhookDelivery())
			flags(t, srv)
			prefix := "p" + uuid.NewString()[:8]
			config := k.config(t, prefix)
			base := "/api/v2/integration-capabilities/featureStore/fs/test/" + k.name
			var created struct {
				ID string `json:"_id"`
			}
			mustOK(t, beta(t, srv, http.MethodPost, base, map[string]any{"name": "daemon", "on": true, "config": config}), http.StatusCreated).JSON(t, &created)
			client := daemonClient(t, k, config)

			t.Run("creating a configuration that is on writes every flag", func(t *testing.T) {
				eventually(t, "the SDK's evaluations", func() []string { return mismatches(t, srv, client) })
			})
			t.Run("a flag change through the API reaches the store", func(t *testing.T) {
				mustOK(t, beta(t, srv, http.MethodPatch, "/api/v2/flags/fs/flag-00", []map[string]any{
					{"op": "replace", "path": "/environments/test/fallthrough", "value": map[string]any{"variation": 0}},
					{"op": "replace", "path": "/environments/test/rules", "value": []any{}}}), http.StatusOK)
				eventually(t, "flag-00 after the change", func() []string {
					got, _ := client.BoolVariation("flag-00", ldcontext.New("user-9"), false)
					if !got {
						return []string{"flag-00 still serves false to user-9"}
					}
					return nil
				})
				eventually(t, "the SDK's evaluations", func() []string { return mismatches(t, srv, client) })
			})
			t.Run("a change of a variation's value, for every environment, reaches the store", func(t *testing.T) {
				mustOK(t, beta(t, srv, http.MethodPatch, "/api/v2/flags/fs/flag-01", []map[string]any{
					{"op": "replace", "path": "/variations/0/value", "value": "crimson"}}), http.StatusOK)
				// user-0 has an email at corp.example: the rule serving variation 0.
				eventually(t, "flag-01 after the change", func() []string {
					if got, _ := client.StringVariation("flag-01", contexts()[0], ""); got != "crimson" {
						return []string{"flag-01 serves " + got + " to user-0, want crimson"}
					}
					return mismatches(t, srv, client)
				})
			})
			t.Run("a deleted flag disappears from the store", func(t *testing.T) {
				mustOK(t, beta(t, srv, http.MethodDelete, "/api/v2/flags/fs/flag-05", nil), http.StatusNoContent)
				eventually(t, "flag-05 after its deletion", func() []string {
					if _, ok := client.AllFlagsState(ldcontext.New("u")).GetFlag("flag-05"); ok {
						return []string{"flag-05 is still in the store"}
					}
					return nil
				})
				eventually(t, "the SDK's evaluations", func() []string { return mismatches(t, srv, client) })
			})
			t.Run("a configuration created off writes nothing until turned on", func(t *testing.T) {
				offConfig := k.config(t, "p"+uuid.NewString()[:8])
				var off struct {
					ID string `json:"_id"`
				}
				mustOK(t, beta(t, srv, http.MethodPost, base, map[string]any{"name": "later", "config": offConfig}), http.StatusCreated).JSON(t, &off)
				offClient := daemonClient(t, k, offConfig)
				// The create's entry went through the consumer before this flag change's did.
				mustOK(t, beta(t, srv, http.MethodPatch, "/api/v2/flags/fs/flag-02", []map[string]any{
					{"op": "replace", "path": "/environments/test/offVariation", "value": 1}}), http.StatusOK)
				eventually(t, "the main store after the change", func() []string { return mismatches(t, srv, client) })
				if n := len(offClient.AllFlagsState(ldcontext.New("u")).ToValuesMap()); n != 0 {
					t.Fatalf("a configuration that is off wrote %d flags to its store", n)
				}
				mustOK(t, beta(t, srv, http.MethodPatch, base+"/"+off.ID, []map[string]any{{"op": "replace", "path": "/on", "value": true}}), http.StatusOK)
				eventually(t, "the SDK's evaluations once on", func() []string { return mismatches(t, srv, offClient) })
			})
			t.Run("the status records the last sync", func(t *testing.T) {
				var rep struct {
					Status struct {
						LastSync string `json:"lastSync"`
						Items    int    `json:"items"`
					} `json:"_status"`
				}
				mustOK(t, beta(t, srv, http.MethodGet, base+"/"+created.ID, nil), http.StatusOK).JSON(t, &rep)
				if rep.Status.LastSync == "" || rep.Status.Items != 11 {
					t.Fatalf("status: %+v, want a last sync and 11 items", rep.Status)
				}
			})
			t.Run("validate connects, writes and reads back", func(t *testing.T) {
				var v struct {
					StatusCode int    `json:"statusCode"`
					Error      string `json:"error"`
				}
				mustOK(t, beta(t, srv, http.MethodPost, base+"/"+created.ID+"/validate", nil), http.StatusOK).JSON(t, &v)
				if v.StatusCode != 200 || v.Error != "" {
					t.Fatalf("validate: %+v", v)
				}
			})
			t.Run("the SDK's big segment status is available once a big segment store is on", func(t *testing.T) {
				bs := "/api/v2/integration-capabilities/big-segment-store/fs/test/" + k.name
				var rep struct {
					ID     string `json:"_id"`
					Status struct {
						Available        bool   `json:"available"`
						PotentiallyStale bool   `json:"potentiallyStale"`
						LastSync         string `json:"lastSync"`
					} `json:"_status"`
				}
				mustOK(t, beta(t, srv, http.MethodPost, bs, map[string]any{"name": "big", "on": true, "config": config}), http.StatusCreated)
				eventually(t, "the SDK's big segment status", func() []string {
					st := client.GetBigSegmentStoreStatusProvider().GetStatus()
					if !st.Available || st.Stale {
						return []string{fmt.Sprintf("SDK status %+v", st)}
					}
					return nil
				})
				var list struct {
					Items []json.RawMessage `json:"items"`
				}
				mustOK(t, beta(t, srv, http.MethodGet, "/api/v2/integration-capabilities/big-segment-store", nil), http.StatusOK).JSON(t, &list)
				if len(list.Items) != 1 {
					t.Fatalf("list holds %d items, want 1", len(list.Items))
				}
				json.Unmarshal(list.Items[0], &rep)
				mustOK(t, beta(t, srv, http.MethodGet, bs+"/"+rep.ID, nil), http.StatusOK).JSON(t, &rep)
				if !rep.Status.Available || rep.Status.PotentiallyStale || rep.Status.LastSync == "" {
					t.Fatalf("_status %+v, want available, not stale, with a last sync", rep.Status)
				}
			})
		})
	}
}
