package featurestoreapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/featurestore/featurestoreapi"
)

// The API's rules for configurations, without a store: what is accepted,
// what is refused and why, and that secrets never show.

const fsBase = "/api/v2/integration-capabilities/featureStore/p/test"

func newServer(tb testing.TB) *apptest.Server {
	tb.Helper()
	// The stores named here are nowhere: the guard, which would refuse
	// them at creation, is tested on every destination in shared/app/allgroups.
	tb.Setenv(featurestoreapi.EnvAllowPrivate, "true")
	srv := apptest.New(tb)
	srv.MustCreateProject(tb, "p")
	return srv
}

func redisConfig() map[string]any {
	return map[string]any{"host": "redis.internal", "port": 6380, "password": "hunter2-secret", "tls": true, "prefix": "ld"}
}

func TestCreatingAConfigurationChecksItsFields(t *testing.T) {
	srv := newServer(t)
	for _, tc := range []struct {
		name, path string
		body       any
		status     int
		says       string
	}{
		{"a redis configuration is created off by default, with defaults filled in", fsBase + "/redis", map[string]any{"config": map[string]any{"host": "redis.internal"}}, http.StatusCreated, `"port":6379`},
		{"a dynamodb configuration needs a table and a region", fsBase + "/dynamodb", map[string]any{"config": map[string]any{"tableName": "flags"}}, http.StatusBadRequest, `config field \"region\" is required`},
		{"an unknown store is refused, naming the stores", fsBase + "/mongodb", map[string]any{"config": map[string]any{}}, http.StatusBadRequest, "use one of dynamodb, redis"},
		{"an unknown config field is refused, naming it", fsBase + "/redis", map[string]any{"config": map[string]any{"host": "h", "hots": "x"}}, http.StatusBadRequest, `\"hots\" is not a redis setting`},
		{"a port of the wrong type is refused", fsBase + "/redis", map[string]any{"config": map[string]any{"host": "h", "port": "6379"}}, http.StatusBadRequest, `\"port\" must be an integer`},
		{"a port out of range is refused", fsBase + "/redis", map[string]any{"config": map[string]any{"host": "h", "port": 70000}}, http.StatusBadRequest, "between 1 and 65535"},
		{"a host with a scheme is refused", fsBase + "/redis", map[string]any{"config": map[string]any{"host": "redis://h"}}, http.StatusBadRequest, "without scheme"},
		{"a missing config is refused", fsBase + "/redis", map[string]any{"name": "x"}, http.StatusBadRequest, `field \"config\" is required`},
		{"half an access key is refused", fsBase + "/dynamodb", map[string]any{"config": map[string]any{"tableName": "flags", "region": "eu-west-1", "accessKeyId": "AKIA"}}, http.StatusBadRequest, "go together"},
		{"an unknown environment is not found", "/api/v2/integration-capabilities/featureStore/p/nope/redis", map[string]any{"config": redisConfig()}, http.StatusNotFound, "nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := beta(t, srv, http.MethodPost, tc.path, tc.body)
			if res.Status != tc.status || !strings.Contains(string(res.Body), tc.says) {
				t.Fatalf("got %d %s, want %d saying %s", res.Status, res.Body, tc.status, tc.says)
			}
			if strings.Contains(string(res.Body), `"on":true`) {
				t.Fatalf("a configuration created without on is on: %s", res.Body)
			}
		})
	}
}

func TestSecretsNeverShow(t *testing.T) {
	srv := newServer(t)
	var c struct {
		ID     string         `json:"_id"`
		Config map[string]any `json:"config"`
	}
	mustOK(t, beta(t, srv, http.MethodPost, fsBase+"/redis", map[string]any{"name": "cache", "config": redisConfig()}), http.StatusCreated).JSON(t, &c)
	one := fsBase + "/redis/" + c.ID
	mustOK(t, beta(t, srv, http.MethodPatch, one, []map[string]any{{"op": "replace", "path": "/config/port", "value": 6381}}), http.StatusOK)
	mustOK(t, beta(t, srv, http.MethodPatch, one, []map[string]any{{"op": "replace", "path": "/config/password", "value": "new-secret-value"}}), http.StatusOK)
	reads := map[string]string{
		"the create":        "",
		"a read":            one,
		"the environment's": fsBase,
		"the list":          "/api/v2/integration-capabilities/featureStore",
		"the audit log":     "/api/v2/auditlog",
		"validate's answer": one + "/validate",
	}
	for what, path := range reads {
		t.Run(what+" shows the password masked", func(t *testing.T) {
			if path == "" {
				if c.Config["password"] != "********" {
					t.Fatalf("create shows password %v", c.Config["password"])
				}
				return
			}
			method := http.MethodGet
			if strings.HasSuffix(path, "/validate") {
				method = http.MethodPost
			}
			body := string(mustOK(t, beta(t, srv, method, path, nil), http.StatusOK).Body)
			if strings.Contains(body, "hunter2") || strings.Contains(body, "new-secret-value") {
				t.Fatalf("%s shows a secret: %s", path, body)
			}
		})
	}
	t.Run("every audit entry of the configuration masks the password, delta included", func(t *testing.T) {
		var log struct {
			Items []struct {
				ID string `json:"_id"`
			} `json:"items"`
		}
		mustOK(t, beta(t, srv, http.MethodGet, "/api/v2/auditlog", nil), http.StatusOK).JSON(t, &log)
		for _, e := range log.Items {
			body := string(mustOK(t, beta(t, srv, http.MethodGet, "/api/v2/auditlog/"+e.ID, nil), http.StatusOK).Body)
			if strings.Contains(body, "hunter2") || strings.Contains(body, "new-secret-value") {
				t.Fatalf("audit entry %s shows a secret: %s", e.ID, body)
			}
		}
	})
	t.Run("a patch leaving the masked password alone keeps the stored one", func(t *testing.T) {
		// The stored password is the patched one: validating it reaches the
		// store (nowhere here), so only the version shows the change went in.
		var got struct {
			Version int            `json:"version"`
			Config  map[string]any `json:"config"`
		}
		mustOK(t, beta(t, srv, http.MethodGet, one, nil), http.StatusOK).JSON(t, &got)
		if got.Version != 3 || got.Config["password"] != "********" || got.Config["port"] != float64(6381) {
			t.Fatalf("after two patches: %+v", got)
		}
	})
}

func TestConfigurationsAnswerForTheirOwnPath(t *testing.T) {
	srv := newServer(t)
	var c struct {
		ID string `json:"_id"`
	}
	mustOK(t, beta(t, srv, http.MethodPost, fsBase+"/redis", map[string]any{"config": redisConfig()}), http.StatusCreated).JSON(t, &c)
	for _, tc := range []struct{ name, path string }{
		{"another store's path", fsBase + "/dynamodb/" + c.ID},
		{"another environment's path", "/api/v2/integration-capabilities/featureStore/p/production/redis/" + c.ID},
		{"the big segment store path", "/api/v2/integration-capabilities/big-segment-store/p/test/redis/" + c.ID},
		{"an id that is not one", fsBase + "/redis/not-an-id"},
	} {
		t.Run(tc.name+" does not find it", func(t *testing.T) {
			mustOK(t, beta(t, srv, http.MethodGet, tc.path, nil), http.StatusNotFound)
		})
	}
	t.Run("a patch of a read-only field is refused, naming it", func(t *testing.T) {
		res := beta(t, srv, http.MethodPatch, fsBase+"/redis/"+c.ID, []map[string]any{{"op": "replace", "path": "/projectKey", "value": "q"}})
		if res.Status != http.StatusBadRequest || !strings.Contains(string(res.Body), "projectKey") {
			t.Fatalf("got %d %s", res.Status, res.Body)
		}
	})
	t.Run("a patch with a bad config value is refused, naming the field", func(t *testing.T) {
		res := beta(t, srv, http.MethodPatch, fsBase+"/redis/"+c.ID, []map[string]any{{"op": "replace", "path": "/config/port", "value": -1}})
		if res.Status != http.StatusBadRequest || !strings.Contains(string(res.Body), "port") {
			t.Fatalf("got %d %s", res.Status, res.Body)
		}
	})
	t.Run("a deleted configuration is gone", func(t *testing.T) {
		mustOK(t, beta(t, srv, http.MethodDelete, fsBase+"/redis/"+c.ID, nil), http.StatusNoContent)
		mustOK(t, beta(t, srv, http.MethodGet, fsBase+"/redis/"+c.ID, nil), http.StatusNotFound)
	})
}

func TestValidateAndStatusSayWhatFailed(t *testing.T) {
	srv := newServer(t)
	var c struct {
		ID string `json:"_id"`
	}
	// Nothing listens on port 1: the connection is refused.
	mustOK(t, beta(t, srv, http.MethodPost, fsBase+"/redis", map[string]any{"config": map[string]any{"host": "127.0.0.1", "port": 1}}), http.StatusCreated).JSON(t, &c)
	var v struct {
		StatusCode int    `json:"statusCode"`
		Error      string `json:"error"`
	}
	mustOK(t, beta(t, srv, http.MethodPost, fsBase+"/redis/"+c.ID+"/validate", nil), http.StatusOK).JSON(t, &v)
	// One message for the step: not the address, not "refused" (a timeout says the same).
	if v.StatusCode != 503 || v.Error != "connect: the store could not be reached" {
		t.Fatalf("validate: %+v, want a failed connect saying only that", v)
	}
	bs := "/api/v2/integration-capabilities/big-segment-store/p/test/redis"
	var b struct {
		ID     string `json:"_id"`
		Status struct {
			Available        bool   `json:"available"`
			PotentiallyStale bool   `json:"potentiallyStale"`
			LastError        string `json:"lastError"`
			Errors           []struct {
				Message string `json:"message"`
			} `json:"errors"`
		} `json:"_status"`
	}
	mustOK(t, beta(t, srv, http.MethodPost, bs, map[string]any{"config": map[string]any{"host": "127.0.0.1", "port": 1}}), http.StatusCreated).JSON(t, &b)
	if b.Status.Available || !b.Status.PotentiallyStale || b.Status.LastError == "" || len(b.Status.Errors) == 0 || b.Status.Errors[0].Message != "connection check: the store could not be reached" {
		t.Fatalf("big segment status of an unreachable store: %+v", b.Status)
	}
}

func TestValidateNeedsTheRightToChangeTheConfiguration(t *testing.T) {
	// Validate connects to the configured host: a reader must not be able
	// to make the service knock on hosts for them.
	srv := newServer(t)
	var c struct {
		ID string `json:"_id"`
	}
	mustOK(t, beta(t, srv, http.MethodPost, fsBase+"/redis", map[string]any{"config": map[string]any{"host": "127.0.0.1", "port": 1}}), http.StatusCreated).JSON(t, &c)
	validate := fsBase + "/redis/" + c.ID + "/validate"
	for _, tc := range []struct {
		name  string
		token map[string]any
		want  int
	}{
		{"a reader is refused", map[string]any{"name": "reader", "role": "reader"}, http.StatusForbidden},
		{"a writer token whose role may only view the project is refused",
			map[string]any{"name": "viewer", "inlineRole": []map[string]any{{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"viewProject"}}}}, http.StatusForbidden},
		{"a role that may change another environment's configurations is refused",
			map[string]any{"name": "other", "inlineRole": []map[string]any{{"effect": "allow", "resources": []string{"proj/p:env/production:integration/*"}, "actions": []string{"updateConfiguration"}}}}, http.StatusForbidden},
		{"a role that may change this environment's configurations validates them",
			map[string]any{"name": "owner", "inlineRole": []map[string]any{{"effect": "allow", "resources": []string{"proj/p:env/test:integration/*"}, "actions": []string{"updateConfiguration"}}}}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, tok := srv.MustCreateToken(t, tc.token)
			res := srv.Do(t, http.MethodPost, validate, nil, "SVC-API-Version", "beta", "Authorization", tok)
			if res.Status != tc.want {
				t.Fatalf("got %d %s, want %d", res.Status, res.Body, tc.want)
			}
		})
	}
}
