package flagimportapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/flagimport"
	"github.com/flagplane/flagplane/shared/store"
)

func TestConfigurationsAreCreatedReadListedPatchedAndDeleted(t *testing.T) {
	srv := apptest.New(t, apptest.WithWebhookDelivery())
	srv.MustCreateProject(t, "p")
	c := createConfig(t, srv, "p", "unleash", map[string]any{"name": "Unleash prod", "tags": []string{"a"},
		"config": map[string]any{"baseUrl": "http://127.0.0.1:4242/", "apiToken": "*:*.secret-token-1", "unleashProject": "default"}})

	t.Run("a create answers the configuration with links, version 1 and a pending status", func(t *testing.T) {
		if c.ID == "" || len(c.ID) != 24 || c.IntegrationKey != "unleash" || c.ProjectKey != "p" || c.Name != "Unleash prod" || c.Version != 1 {
			t.Errorf("configuration %+v", c)
		}
		if c.Config["baseUrl"] != "http://127.0.0.1:4242" {
			t.Errorf("baseUrl %v, want it without the trailing slash", c.Config["baseUrl"])
		}
		for _, l := range []string{"self", "parent", "project"} {
			if c.Links[l] == nil {
				t.Errorf("no %s link in %v", l, c.Links)
			}
		}
		if c.Access == nil || c.Status.Status != "pending" {
			t.Errorf("_access %v _status %+v", c.Access, c.Status)
		}
	})
	t.Run("a read masks the credential", func(t *testing.T) {
		got := decodeConfig(t, must(t, srv, http.StatusOK, http.MethodGet, configPath(c), nil))
		if got.Config["apiToken"] != flagimport.Mask || got.ID != c.ID {
			t.Errorf("read %+v", got)
		}
	})
	t.Run("the list holds it, masked", func(t *testing.T) {
		res := must(t, srv, http.StatusOK, http.MethodGet, base, nil)
		if strings.Contains(string(res.Body), "secret-token-1") {
			t.Error("the list shows the token")
		}
		var out struct {
			Items []config       `json:"items"`
			Links map[string]any `json:"_links"`
		}
		res.JSON(t, &out)
		if len(out.Items) != 1 || out.Items[0].ID != c.ID || out.Links["self"] == nil {
			t.Errorf("list %s", res.Body)
		}
	})
	t.Run("a patch that leaves the masked credential keeps it and changes the rest", func(t *testing.T) {
		got := decodeConfig(t, must(t, srv, http.StatusOK, http.MethodPatch, configPath(c), []map[string]any{
			{"op": "replace", "path": "/name", "value": "Renamed"},
			{"op": "add", "path": "/tags/-", "value": "b"},
			{"op": "replace", "path": "/config/unleashProject", "value": "other"},
		}))
		if got.Name != "Renamed" || len(got.Tags) != 2 || got.Config["unleashProject"] != "other" || got.Version != 2 {
			t.Errorf("patched %+v", got)
		}
		stored := storedConfig(t, srv, c)
		if stored.Config.String("apiToken") != "*:*.secret-token-1" {
			t.Errorf("stored token %q, want the one created", stored.Config.String("apiToken"))
		}
	})
	t.Run("a patch of the credential replaces it, and its audit entry shows only the mask", func(t *testing.T) {
		must(t, srv, http.StatusOK, http.MethodPatch, configPath(c), []map[string]any{{"op": "replace", "path": "/config/apiToken", "value": "*:*.secret-token-2"}})
		if got := storedConfig(t, srv, c).Config.String("apiToken"); got != "*:*.secret-token-2" {
			t.Errorf("stored token %q, want the patched one", got)
		}
		for _, e := range auditEntries(t, srv) {
			body := srv.Do(t, http.MethodGet, "/api/v2/auditlog/"+e["_id"].(string), nil).Body
			if strings.Contains(string(body), "secret-token") {
				t.Errorf("audit entry %v holds a token: %s", e["_id"], body)
			}
		}
	})
	t.Run("a patch that changes nothing keeps the version", func(t *testing.T) {
		got := decodeConfig(t, must(t, srv, http.StatusOK, http.MethodPatch, configPath(c), []map[string]any{{"op": "replace", "path": "/name", "value": "Renamed"}}))
		if got.Version != 3 {
			t.Errorf("version %d, want 3", got.Version)
		}
	})
	t.Run("a patch of another field is refused, naming the editable ones", func(t *testing.T) {
		wantError(t, do(t, srv, http.MethodPatch, configPath(c), []map[string]any{{"op": "replace", "path": "/integrationKey", "value": "split"}}),
			http.StatusBadRequest, "integrationKey")
	})
	t.Run("a patch to an invalid config is refused", func(t *testing.T) {
		wantError(t, do(t, srv, http.MethodPatch, configPath(c), []map[string]any{{"op": "remove", "path": "/config/baseUrl"}}),
			http.StatusBadRequest, "config.baseUrl", "required")
	})
	t.Run("a delete answers 204 and the configuration is gone", func(t *testing.T) {
		must(t, srv, http.StatusNoContent, http.MethodDelete, configPath(c), nil)
		wantError(t, do(t, srv, http.MethodGet, configPath(c), nil), http.StatusNotFound, c.ID)
		wantError(t, do(t, srv, http.MethodDelete, configPath(c), nil), http.StatusNotFound)
	})
}

// storedConfig reads the configuration as stored, secrets in clear.
func storedConfig(t *testing.T, srv *apptest.Server, c config) flagimport.Configuration {
	t.Helper()
	it, err := srv.Table.Get(t.Context(), store.FlagImportKey(c.ProjectKey, c.IntegrationKey, c.ID))
	if err != nil {
		t.Fatal(err)
	}
	var out flagimport.Configuration
	if err := json.Unmarshal(it.Data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestConfigurationsAreValidated(t *testing.T) {
	srv := apptest.New(t, apptest.WithWebhookDelivery())
	srv.MustCreateProject(t, "p")
	ld := func(extra map[string]any) map[string]any {
		cfg := map[string]any{"baseUrl": "https://app.launchdarkly.com", "apiKey": "api-x", "sourceProjectKey": "default"}
		for k, v := range extra {
			cfg[k] = v
		}
		return map[string]any{"config": cfg}
	}
	cases := []struct {
		name        string
		integration string
		body        any
		status      int
		parts       []string
	}{
		{"an unknown source system is refused, naming the known ones", "flagsmith", ld(nil), 400, []string{"integrationKey", "launchdarkly, split, unleash"}},
		{"a body without config is refused", "launchdarkly", map[string]any{"name": "x"}, 400, []string{"config"}},
		{"a config that is not an object is refused", "launchdarkly", map[string]any{"config": "x"}, 400, []string{"config"}},
		{"a missing required setting is named", "launchdarkly", map[string]any{"config": map[string]any{"baseUrl": "https://x.example"}}, 400, []string{"config.apiKey", "required"}},
		{"an unknown setting is refused, naming the settings", "launchdarkly", ld(map[string]any{"apikey": "typo"}), 400, []string{"config.apikey", "sourceProjectKey"}},
		{"a setting of the wrong type is named", "launchdarkly", ld(map[string]any{"apiKey": 5}), 400, []string{"config.apiKey", "string"}},
		{"a base URL that is not http(s) is refused", "launchdarkly", ld(map[string]any{"baseUrl": "ftp://x.example"}), 400, []string{"config.baseUrl"}},
		{"a base URL with credentials is refused", "launchdarkly", ld(map[string]any{"baseUrl": "https://u:p@x.example"}), 400, []string{"config.baseUrl"}},
		{"an invalid tag is named", "launchdarkly", ld(map[string]any{"ldTag": "a tag"}), 400, []string{"config.ldTag"}},
		{"a maintainer who is no member is refused", "launchdarkly", ld(map[string]any{"ldMaintainer": "nobody"}), 400, []string{"config.ldMaintainer", "nobody"}},
		{"an environment map that is not an object of strings is refused", "launchdarkly", ld(map[string]any{"environmentMap": []string{"x"}}), 400, []string{"config.environmentMap"}},
		{"an environment map that maps two sources to one environment is refused", "launchdarkly",
			ld(map[string]any{"environmentMap": map[string]string{"dev": "test", "qa": "test"}}), 400, []string{"config.environmentMap", "test"}},
		{"split needs its workspace settings", "split", map[string]any{"config": map[string]any{"workspaceApiKey": "k"}}, 400, []string{"config.workspaceId"}},
		{"an invalid name is refused", "launchdarkly", map[string]any{"name": " ", "config": ld(nil)["config"]}, 400, []string{"name"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, do(t, srv, http.MethodPost, base+"/p/"+tc.integration, tc.body), tc.status, tc.parts...)
		})
	}
	t.Run("a missing project is a 404", func(t *testing.T) {
		wantError(t, do(t, srv, http.MethodPost, base+"/nope/launchdarkly", ld(nil)), http.StatusNotFound, "nope")
	})
	t.Run("a split configuration keeps the reference's shape, and its trigger says imports from split do not run here", func(t *testing.T) {
		c := createConfig(t, srv, "p", "split", map[string]any{"config": map[string]any{"workspaceApiKey": "wk", "workspaceId": "ws", "environmentId": "env",
			"splitTag": "t", "ldApiKey": "api-y", "ldTag": "from-split"}})
		if c.Config["workspaceApiKey"] != flagimport.Mask || c.Config["ldApiKey"] != flagimport.Mask || c.Config["workspaceId"] != "ws" {
			t.Errorf("config %v", c.Config)
		}
		wantError(t, do(t, srv, http.MethodPost, configPath(c)+"/trigger", nil), http.StatusBadRequest, "split", "launchdarkly and unleash")
	})
}

func TestSourceURLsPassTheWebhookGuard(t *testing.T) {
	// Without local mode's allowance, loopback and private sources are refused.
	srv := apptest.New(t)
	srv.MustCreateProject(t, "p")
	for _, u := range []string{"http://127.0.0.1:8080", "http://10.0.0.5", "http://169.254.169.254", "http://[::1]:4242", "http://2130706433"} {
		t.Run(u+" is refused", func(t *testing.T) {
			wantError(t, do(t, srv, http.MethodPost, base+"/p/unleash", map[string]any{"config": map[string]any{"baseUrl": u, "apiToken": "t"}}),
				http.StatusBadRequest, "config.baseUrl")
		})
	}
}

// blockingSource is a LaunchDarkly-compatible API whose flag list answers
// only when released, so a test can hold an import running.
type blockingSource struct {
	*httptest.Server
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func newBlockingSource(t *testing.T) *blockingSource {
	b := &blockingSource{entered: make(chan struct{}, 10), release: make(chan struct{})}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A run lists the source's environments first; only its read of
		// the flags is held and counted.
		if strings.HasSuffix(r.URL.Path, "/environments") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"items":[{"key":"production"}],"totalCount":1}`))
			return
		}
		b.entered <- struct{}{}
		<-b.release
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"items":[],"totalCount":0}`))
	}))
	t.Cleanup(func() { b.open(); b.Close() })
	return b
}

func (b *blockingSource) open() { b.once.Do(func() { close(b.release) }) }

// triggerAtOnce sends n triggers at once of a new configuration in project
// whose source holds the import running, and checks that exactly one runs
// (201) and the others, answering within wait while it runs, are refused
// (409). It returns the source.
func triggerAtOnce(t *testing.T, srv *apptest.Server, project string, n int, wait time.Duration) *blockingSource {
	t.Helper()
	source := newBlockingSource(t)
	c := createConfig(t, srv, project, "launchdarkly", map[string]any{"config": map[string]any{"baseUrl": source.URL, "apiKey": "k", "sourceProjectKey": "s"}})
	answers := make(chan int, n)
	var start sync.WaitGroup
	start.Add(1)
	for range n {
		go func() {
			start.Wait()
			answers <- do(t, srv, http.MethodPost, configPath(c)+"/trigger", nil).Status
		}()
	}
	start.Done()
	// The losers answer while the winner waits on the source.
	counts := map[int]int{}
	for range n - 1 {
		select {
		case s := <-answers:
			counts[s]++
		case <-time.After(wait):
			t.Fatalf("only %v answered", counts)
		}
	}
	source.open()
	counts[<-answers]++
	if counts[http.StatusCreated] != 1 || counts[http.StatusConflict] != n-1 {
		t.Errorf("statuses %v, want one 201 and %d 409s", counts, n-1)
	}
	return source
}

func TestASecondTriggerWhileOneRunsIsRefused(t *testing.T) {
	srv := apptest.New(t, apptest.WithWebhookDelivery())
	srv.MustCreateProject(t, "p")
	source := newBlockingSource(t)
	c := createConfig(t, srv, "p", "launchdarkly", map[string]any{"config": map[string]any{"baseUrl": source.URL, "apiKey": "k", "sourceProjectKey": "s"}})

	done := make(chan *apptest.Response, 1)
	go func() { done <- do(t, srv, http.MethodPost, configPath(c)+"/trigger", nil) }()
	select {
	case <-source.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the first trigger never reached the source")
	}
	t.Run("the running import shows as importing", func(t *testing.T) {
		got := decodeConfig(t, must(t, srv, http.StatusOK, http.MethodGet, configPath(c), nil))
		if got.Status.Status != "importing" {
			t.Errorf("_status %+v, want importing", got.Status)
		}
	})
	t.Run("a second trigger is a 409", func(t *testing.T) {
		wantError(t, do(t, srv, http.MethodPost, configPath(c)+"/trigger", nil), http.StatusConflict, "already running")
	})
	t.Run("a delete is a 409", func(t *testing.T) {
		wantError(t, do(t, srv, http.MethodDelete, configPath(c), nil), http.StatusConflict, "running")
	})
	source.open()
	res := <-done
	t.Run("the first trigger finishes with 201 and complete", func(t *testing.T) {
		if res.Status != http.StatusCreated {
			t.Fatalf("status %d: %s", res.Status, res.Body)
		}
		if got := decodeConfig(t, must(t, srv, http.StatusOK, http.MethodGet, configPath(c), nil)); got.Status.Status != "complete" {
			t.Errorf("_status %+v", got.Status)
		}
	})
	t.Run("after it, a trigger runs again", func(t *testing.T) {
		source.entered = make(chan struct{}, 10)
		trigger(t, srv, c)
	})
}

func TestARunThatCrashedDoesNotBlockTheNext(t *testing.T) {
	srv := apptest.New(t, apptest.WithWebhookDelivery())
	srv.MustCreateProject(t, "p")
	source := newBlockingSource(t)
	source.open()
	c := createConfig(t, srv, "p", "launchdarkly", map[string]any{"config": map[string]any{"baseUrl": source.URL, "apiKey": "k", "sourceProjectKey": "s"}})
	// What a process that died mid-run leaves: the lease, run out.
	past := time.Now().Add(-time.Minute).UnixMilli()
	data, _ := json.Marshal(flagimport.Run{Status: flagimport.StatusImporting, RunID: "dead", StartedAt: past - 1000, LeaseUntil: past, Errors: []flagimport.RunError{}})
	k := store.FlagImportRunKey("p", "launchdarkly", c.ID)
	pk, sk := store.FlagImportIndexKeys("p", "launchdarkly", c.ID, true)
	if err := srv.Table.Put(t.Context(), store.Item{PK: k.PK, SK: k.SK, GSI1PK: pk, GSI1SK: sk, Version: 1, Data: data}, store.IfNotExists()); err != nil {
		t.Fatal(err)
	}
	t.Run("the read shows the crashed run as failed, saying so", func(t *testing.T) {
		got := decodeConfig(t, must(t, srv, http.StatusOK, http.MethodGet, configPath(c), nil))
		if got.Status.Status != "failed" || len(got.Status.Errors) != 1 || !strings.Contains(got.Status.Errors[0].Message, "stopped before finishing") {
			t.Errorf("_status %+v", got.Status)
		}
	})
	t.Run("a trigger takes over the lease and completes", func(t *testing.T) {
		if got := trigger(t, srv, c); got.Status.Status != "complete" {
			t.Errorf("_status %+v", got.Status)
		}
	})
}

func TestOfTriggersSentAtOnceExactlyOneRuns(t *testing.T) {
	srv := apptest.New(t, apptest.WithWebhookDelivery())
	srv.MustCreateProject(t, "p")
	source := triggerAtOnce(t, srv, "p", 6, 10*time.Second)
	if len(source.entered) != 1 {
		t.Errorf("the source was read %d times, want once", len(source.entered))
	}
}

func TestDeletingTheProjectDeletesItsConfigurations(t *testing.T) {
	srv := apptest.New(t)
	srv.MustCreateProject(t, "gone")
	srv.MustCreateProject(t, "kept")
	split := map[string]any{"config": map[string]any{"workspaceApiKey": "wk", "workspaceId": "w", "environmentId": "e"}}
	doomed := createConfig(t, srv, "gone", "split", split)
	kept := createConfig(t, srv, "kept", "split", split)
	if res := srv.Do(t, http.MethodDelete, "/api/v2/projects/gone", nil); res.Status != http.StatusNoContent {
		t.Fatalf("delete project: %d %s", res.Status, res.Body)
	}
	var out struct {
		Items []config `json:"items"`
	}
	must(t, srv, http.StatusOK, http.MethodGet, base, nil).JSON(t, &out)
	if len(out.Items) != 1 || out.Items[0].ID != kept.ID {
		t.Errorf("list %+v, want only %s", out.Items, kept.ID)
	}
	wantError(t, do(t, srv, http.MethodGet, configPath(doomed), nil), http.StatusNotFound, "gone")
}
