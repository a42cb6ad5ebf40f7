package eventapi_test

// The proof that flagplane takes LaunchDarkly's SDK events: the real
// server-side Go SDK (github.com/launchdarkly/go-server-sdk/v7, a test-only
// dependency) polls flagplane for flags, evaluates them, identifies and
// tracks, and its flushed events read back through the API as contexts,
// context kinds, an auto-added application with its version, and
// evaluation counts.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"
	ld "github.com/launchdarkly/go-server-sdk/v7"
	"github.com/launchdarkly/go-server-sdk/v7/interfaces"
	"github.com/launchdarkly/go-server-sdk/v7/ldcomponents"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/store"
)

// eventually retries check until it holds or 5 s pass: the SDK flushes on its own goroutine.
func eventually(t *testing.T, what string, check func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ok, got := check()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: never happened; last: %s", what, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestGoSDKEvents(t *testing.T) {
	srv := apptest.New(t)
	e := apptest.NewSDKEnv(t, srv, "sdkevents")
	apptest.WantStatus(t, srv.Do(t, http.MethodPost, apptest.FlagsPath(e.Project), map[string]any{"key": "dark-mode", "name": "Dark mode"}), http.StatusCreated)
	apptest.WantStatus(t, srv.Do(t, http.MethodPatch, apptest.FlagPath(e.Project, "dark-mode"), []apptest.PatchOp{apptest.Replace("/environments/production/on", true)}), http.StatusOK)

	client, err := ld.MakeCustomClient(e.SDKKey, ld.Config{
		ServiceEndpoints: interfaces.ServiceEndpoints{Streaming: srv.URL, Polling: srv.URL, Events: srv.URL},
		DataSource:       ldcomponents.PollingDataSource(),
		Events:           ldcomponents.SendEvents().FlushInterval(time.Hour),
		ApplicationInfo:  interfaces.ApplicationInfo{ApplicationID: "checkout-svc", ApplicationVersion: "2.0.1"},
		Logging:          ldcomponents.NoLogging(),
	}, 5*time.Second)
	if err != nil {
		t.Fatalf("start the SDK: %v", err)
	}
	defer client.Close()

	alice := ldcontext.NewBuilder("alice").Name("Alice").SetString("country", "NZ").Build()
	multi := ldcontext.NewMulti(ldcontext.New("bob"), ldcontext.NewBuilder("acme").Kind("org").SetString("plan", "gold").Build())
	for i := 0; i < 3; i++ {
		if v, _ := client.BoolVariation("dark-mode", alice, false); !v {
			t.Fatalf("dark-mode is on in production, the SDK says %v", v)
		}
	}
	_, _ = client.BoolVariation("dark-mode", multi, false)
	_, _ = client.BoolVariation("no-such-flag", alice, false)
	_ = client.Identify(ldcontext.New("carol"))
	_ = client.TrackEvent("purchase", alice)
	client.Flush()
	base := apptest.EnvPath(e.Project, e.Env)

	t.Run("its contexts read back, multi-kind ones with their associated contexts", func(t *testing.T) {
		eventually(t, "alice appears", func() (bool, string) {
			res := srv.Do(t, http.MethodGet, base+"/contexts/user/alice", nil)
			return res.Status == http.StatusOK && strings.Contains(res.String(), `\"country\":\"NZ\"`), res.String()
		})
		eventually(t, "bob appears with acme", func() (bool, string) {
			res := srv.Do(t, http.MethodGet, base+"/contexts/org/acme", nil)
			return strings.Contains(res.String(), `"associatedContexts":2`) && strings.Contains(res.String(), `"applicationId":"checkout-svc"`), res.String()
		})
		eventually(t, "carol, identified, appears", func() (bool, string) {
			res := srv.Do(t, http.MethodGet, base+"/contexts/user/carol", nil)
			return strings.Contains(res.String(), `"totalCount":1`), res.String()
		})
	})
	t.Run("the context kinds it used exist", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, apptest.ProjectPath(e.Project)+"/context-kinds", nil)
		if !strings.Contains(res.String(), `"key":"org"`) || !strings.Contains(res.String(), `"key":"user"`) {
			t.Errorf("want user and org kinds: %s", res.Body)
		}
	})
	t.Run("the application and its version are added, with the flags it evaluated", func(t *testing.T) {
		eventually(t, "the application appears", func() (bool, string) {
			res := srv.Do(t, http.MethodGet, apptest.API+"/applications/checkout-svc?expand=flags", nil, apptest.BetaHeader...)
			body := res.String()
			return res.Status == http.StatusOK && strings.Contains(body, `"autoAdded":true`) && strings.Contains(body, `"name":"Dark mode"`), body
		})
		res := srv.Do(t, http.MethodGet, apptest.API+"/applications/checkout-svc/versions", nil, apptest.BetaHeader...)
		if !strings.Contains(res.String(), `"key":"2.0.1"`) {
			t.Errorf("want version 2.0.1: %s", res.Body)
		}
	})
	t.Run("its evaluations are counted by variation", func(t *testing.T) {
		eventually(t, "four evaluations of dark-mode are counted", func() (bool, string) {
			it, err := srv.Table.Get(t.Context(), store.FlagEvalKey(e.Project, e.Env, "dark-mode", time.Now().UTC().Format("2006010215")))
			if err != nil {
				return false, err.Error()
			}
			var doc ingest.FlagEvals
			if err := json.Unmarshal(it.Data, &doc); err != nil {
				return false, err.Error()
			}
			return doc.Counts["0"] == 4, fmt.Sprint(doc.Counts)
		})
	})
	t.Run("the SDK is recorded from its user agent and its diagnostic event", func(t *testing.T) {
		eventually(t, "the SDK is seen", func() (bool, string) {
			page, err := srv.Table.Query(t.Context(), store.Query{PK: store.SDKSeenPK, SKPrefix: e.ClientID + "#server#"})
			if err != nil {
				return false, err.Error()
			}
			var names []string
			for _, it := range page.Items {
				var seen ingest.SDKSeen
				_ = json.Unmarshal(it.Data, &seen)
				names = append(names, seen.Name+"/"+seen.Version+"/"+seen.Connection)
			}
			got := strings.Join(names, " ")
			return strings.Contains(got, "GoClient/7.14.6") && strings.Contains(got, "go-server-sdk/7.14.6/polling"), got
		})
	})
}
