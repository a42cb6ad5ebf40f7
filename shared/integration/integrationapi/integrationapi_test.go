package integrationapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/webhook"
)

const (
	base = "/api/v2/integration-configurations"
	// ddKey is a Datadog API key of the right shape, to be found nowhere but in the store.
	ddKey = "0123456789abcdef0123456789abcdef"
)

var beta = []string{"SVC-API-Version", "beta"}

func keyPath(key string) string { return base + "/keys/" + key }
func idPath(id string) string   { return base + "/" + id }

// do calls the API with the beta header.
func do(tb testing.TB, srv *apptest.Server, method, path string, body any, headers ...string) *apptest.Response {
	tb.Helper()
	return srv.Do(tb, method, path, body, append(append([]string{}, beta...), headers...)...)
}

func wantStatus(tb testing.TB, res *apptest.Response, status int) {
	tb.Helper()
	if res.Status != status {
		tb.Fatalf("status %d, want %d: %s", res.Status, status, res.Body)
	}
}

func wantError(tb testing.TB, res *apptest.Response, status int, parts ...string) {
	tb.Helper()
	wantStatus(tb, res, status)
	for _, p := range parts {
		if !strings.Contains(string(res.Body), p) {
			tb.Errorf("answer %s lacks %q", res.Body, p)
		}
	}
}

// create makes a configuration and returns its answer.
func create(tb testing.TB, srv *apptest.Server, key string, body map[string]any) map[string]any {
	tb.Helper()
	res := do(tb, srv, http.MethodPost, keyPath(key), body)
	wantStatus(tb, res, http.StatusCreated)
	return res.Map(tb)
}

// request is one request a receiver got.
type request struct {
	Header http.Header
	Body   string
}

// receiver is an integration's endpoint on 127.0.0.1: it records what it
// gets, answers a generic webhook's challenge (when echo is set), and
// fails the first failFirst deliveries.
type receiver struct {
	*httptest.Server
	mu        sync.Mutex
	got       []request
	echo      bool
	failFirst int
}

func newReceiver(tb testing.TB, echo bool) *receiver {
	tb.Helper()
	rc := &receiver{echo: echo}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var ch struct{ Kind, Challenge string }
		_ = json.Unmarshal(b, &ch)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if ch.Kind == "verification" {
			if rc.echo {
				fmt.Fprintf(w, `{"challenge":%q}`, ch.Challenge)
			} else {
				w.WriteHeader(http.StatusNotFound)
			}
			return
		}
		rc.got = append(rc.got, request{Header: r.Header.Clone(), Body: string(b)})
		if rc.failFirst > 0 {
			rc.failFirst--
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	tb.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) requests() []request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]request(nil), rc.got...)
}

func (rc *receiver) setEcho(v bool) {
	rc.mu.Lock()
	rc.echo = v
	rc.mu.Unlock()
}

// waitFor polls until cond holds, or fails after a while.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCreateAndReadAConfiguration(t *testing.T) {
	srv := apptest.New(t, apptest.WithWebhookDelivery()) // the receiver is on loopback
	rc := newReceiver(t, true)
	got := create(t, srv, "slack", map[string]any{"name": "Ops channel", "tags": []string{"ops"},
		"configValues":     map[string]any{"url": rc.URL + "/services/T0/B0/slack-secret"},
		"capabilityConfig": map[string]any{"auditLogEventsHook": map[string]any{"statements": []any{map[string]any{"effect": "allow", "resources": []string{"proj/*:env/*:flag/*"}, "actions": []string{"*"}}}}},
	})
	id, _ := got["_id"].(string)

	t.Run("the answer has the reference's fields, enabled by default", func(t *testing.T) {
		if got["name"] != "Ops channel" || got["_integrationKey"] != "slack" || got["enabled"] != true || id == "" {
			t.Errorf("answer %v", got)
		}
		if _, ok := got["_createdAt"].(float64); !ok {
			t.Errorf("_createdAt %v is not a number", got["_createdAt"])
		}
		links, _ := got["_links"].(map[string]any)
		if self, _ := links["self"].(map[string]any); self["href"] != idPath(id) {
			t.Errorf("_links %v", links)
		}
		if _, ok := got["_access"].(map[string]any); !ok {
			t.Errorf("no _access: %v", got)
		}
	})
	t.Run("capabilityConfig is a JSON-encoded string (spec 2.9)", func(t *testing.T) {
		s, ok := got["capabilityConfig"].(string)
		var decoded struct {
			AuditLogEventsHook struct{ Statements []map[string]any } `json:"auditLogEventsHook"`
		}
		if !ok || json.Unmarshal([]byte(s), &decoded) != nil || len(decoded.AuditLogEventsHook.Statements) != 1 {
			t.Errorf("capabilityConfig %#v", got["capabilityConfig"])
		}
	})
	t.Run("the secret URL is masked from the creation answer on", func(t *testing.T) {
		for _, res := range []*apptest.Response{do(t, srv, http.MethodGet, idPath(id), nil), do(t, srv, http.MethodGet, keyPath("slack"), nil)} {
			wantStatus(t, res, http.StatusOK)
			if strings.Contains(string(res.Body), "slack-secret") || !strings.Contains(string(res.Body), `"url":"********"`) {
				t.Errorf("answer %s", res.Body)
			}
		}
		if v, _ := got["configValues"].(map[string]any); v["url"] != "********" {
			t.Errorf("creation answer configValues %v", v)
		}
	})
	t.Run("the list of the key holds it, another key's list does not", func(t *testing.T) {
		var list struct {
			Items []map[string]any `json:"items"`
			Links map[string]any   `json:"_links"`
		}
		do(t, srv, http.MethodGet, keyPath("slack"), nil).JSON(t, &list)
		if len(list.Items) != 1 || list.Items[0]["_id"] != id || list.Links["self"] == nil {
			t.Errorf("list %v", list)
		}
		do(t, srv, http.MethodGet, keyPath("msteams"), nil).JSON(t, &list)
		if len(list.Items) != 0 {
			t.Errorf("msteams list %v", list.Items)
		}
	})
	t.Run("the capabilityConfig string a read shows can be sent back as it is", func(t *testing.T) {
		narrowed := `{"auditLogEventsHook":{"statements":[{"resources":["proj/p:env/*:flag/*"],"actions":["updateOn"],"effect":"allow"}]}}`
		res := do(t, srv, http.MethodPatch, idPath(id), []any{map[string]any{"op": "replace", "path": "/capabilityConfig", "value": narrowed}})
		wantStatus(t, res, http.StatusOK)
		if got := res.Map(t)["capabilityConfig"]; got != narrowed {
			t.Errorf("capabilityConfig %v, want %s", got, narrowed)
		}
		body := map[string]any{"name": "From a read", "configValues": map[string]any{"url": rc.URL + "/x"}, "capabilityConfig": narrowed}
		if got := create(t, srv, "slack", body)["capabilityConfig"]; got != narrowed {
			t.Errorf("created with capabilityConfig %v", got)
		}
		res = do(t, srv, http.MethodPost, keyPath("slack"), map[string]any{"name": "x", "configValues": map[string]any{"url": rc.URL}, "capabilityConfig": "{not json"})
		wantError(t, res, http.StatusBadRequest, "capabilityConfig")
	})
	t.Run("without the beta header the group is refused", func(t *testing.T) {
		wantStatus(t, srv.Do(t, http.MethodGet, keyPath("slack"), nil), http.StatusForbidden)
	})
}

func TestBadInputIsRefusedNamingTheField(t *testing.T) {
	srv := apptest.New(t, apptest.WithWebhookDelivery()) // no host name resolves in tests
	slackURL := map[string]any{"url": "https://hooks.slack.com/services/T/B/x"}
	tests := []struct {
		name   string
		key    string
		body   any
		status int
		parts  []string
	}{
		{"an integration without a manifest", "pagerduty", map[string]any{"name": "x", "configValues": map[string]any{}}, http.StatusNotFound, []string{"pagerduty", "slack"}},
		{"no name", "slack", map[string]any{"configValues": slackURL}, http.StatusBadRequest, []string{`\"name\" is required`}},
		{"no configValues", "slack", map[string]any{"name": "x"}, http.StatusBadRequest, []string{`\"configValues\" is required`}},
		{"a required field missing", "newrelic", map[string]any{"name": "x", "configValues": map[string]any{"accountId": "1"}}, http.StatusBadRequest, []string{`configValues.insertKey\" is required`}},
		{"a field the manifest does not have", "slack", map[string]any{"name": "x", "configValues": map[string]any{"url": "https://h.example/", "icon": ":x:"}}, http.StatusBadRequest, []string{`configValues.icon\" is not a field`}},
		{"a value outside the manifest's list", "datadog", map[string]any{"name": "x", "configValues": map[string]any{"apiKey": ddKey, "site": "evil.example"}}, http.StatusBadRequest, []string{`configValues.site`}},
		{"a wrong JSON type", "slack", map[string]any{"name": 7, "configValues": slackURL}, http.StatusBadRequest, []string{"name"}},
		{"a capability the integration does not offer", "slack", map[string]any{"name": "x", "configValues": slackURL, "capabilityConfig": map[string]any{"approvals": map[string]any{}}}, http.StatusBadRequest, []string{"approvals"}},
		{"a statement that is not valid", "slack", map[string]any{"name": "x", "configValues": slackURL, "capabilityConfig": map[string]any{"auditLogEventsHook": map[string]any{"statements": []any{map[string]any{"effect": "maybe", "resources": []string{"proj/*"}, "actions": []string{"*"}}}}}}, http.StatusBadRequest, []string{"capabilityConfig.auditLogEventsHook.statements"}},
		{"a URL that is not http(s)", "msteams", map[string]any{"name": "x", "configValues": map[string]any{"url": "file:///etc/passwd"}}, http.StatusBadRequest, []string{"configValues.url"}},
	}
	for _, tt := range tests {
		t.Run(tt.name+" answers "+fmt.Sprint(tt.status), func(t *testing.T) {
			wantError(t, do(t, srv, http.MethodPost, keyPath(tt.key), tt.body), tt.status, tt.parts...)
		})
	}
	t.Run("an unknown id is not found", func(t *testing.T) {
		wantStatus(t, do(t, srv, http.MethodGet, idPath("8b1c8a4e-0000-4000-8000-000000000000"), nil), http.StatusNotFound)
		wantStatus(t, do(t, srv, http.MethodGet, idPath("not-a-uuid"), nil), http.StatusNotFound)
	})
	t.Run("includePending must be a boolean", func(t *testing.T) {
		wantError(t, do(t, srv, http.MethodGet, keyPath("slack")+"?includePending=maybe", nil), http.StatusBadRequest, "includePending")
	})
}

func TestTheSSRFGuardAppliesToEndpoints(t *testing.T) {
	srv := apptest.New(t) // without webhook delivery: private addresses are refused, as in AWS
	res := do(t, srv, http.MethodPost, keyPath("slack"), map[string]any{"name": "x", "configValues": map[string]any{"url": "http://127.0.0.1:9/hook"}})
	wantError(t, res, http.StatusBadRequest, "loopback", "configValues.url")
	res = do(t, srv, http.MethodPost, keyPath("msteams"), map[string]any{"name": "x", "configValues": map[string]any{"url": "http://169.254.169.254/latest"}})
	wantError(t, res, http.StatusBadRequest, "metadata")
}

func TestPatchAConfiguration(t *testing.T) {
	srv := apptest.New(t)
	id := create(t, srv, "datadog", map[string]any{"name": "DD", "configValues": map[string]any{"apiKey": ddKey}})["_id"].(string)
	patch := func(ops ...map[string]any) *apptest.Response { return do(t, srv, http.MethodPatch, idPath(id), ops) }
	replace := func(path string, v any) map[string]any {
		return map[string]any{"op": "replace", "path": path, "value": v}
	}

	t.Run("name, tags and enabled change and the secret stays", func(t *testing.T) {
		res := patch(replace("/name", "Datadog EU"), replace("/enabled", false), replace("/tags", []string{"eu"}))
		wantStatus(t, res, http.StatusOK)
		got := res.Map(t)
		if got["name"] != "Datadog EU" || got["enabled"] != false || fmt.Sprint(got["tags"]) != "[eu]" {
			t.Errorf("answer %v", got)
		}
	})
	t.Run("a non-secret field changes and is validated", func(t *testing.T) {
		wantStatus(t, patch(replace("/configValues/site", "datadoghq.eu")), http.StatusOK)
		wantError(t, patch(replace("/configValues/site", "nowhere.example")), http.StatusBadRequest, "configValues.site")
	})
	t.Run("removing a required field is refused naming it", func(t *testing.T) {
		wantError(t, patch(map[string]any{"op": "remove", "path": "/configValues/apiKey"}), http.StatusBadRequest, `configValues.apiKey\" is required`)
	})
	t.Run("a read-only field cannot be patched", func(t *testing.T) {
		wantError(t, patch(replace("/_integrationKey", "slack")), http.StatusBadRequest, "_integrationKey")
	})
	t.Run("a semantic patch is refused", func(t *testing.T) {
		res := do(t, srv, http.MethodPatch, idPath(id), map[string]any{"instructions": []any{}}, "Content-Type", "application/json; domain-model=flagplane.semanticpatch")
		wantError(t, res, http.StatusBadRequest, "JSON patch")
	})
	t.Run("a patch of an unknown configuration is not found", func(t *testing.T) {
		wantStatus(t, do(t, srv, http.MethodPatch, idPath("8b1c8a4e-0000-4000-8000-000000000000"), []any{replace("/name", "x")}), http.StatusNotFound)
	})
	t.Run("a delete answers 204, then the configuration is gone", func(t *testing.T) {
		wantStatus(t, do(t, srv, http.MethodDelete, idPath(id), nil), http.StatusNoContent)
		wantStatus(t, do(t, srv, http.MethodGet, idPath(id), nil), http.StatusNotFound)
		wantStatus(t, do(t, srv, http.MethodDelete, idPath(id), nil), http.StatusNotFound)
	})
}

func TestConcurrentPatchesApplyOrAnswer409(t *testing.T) {
	srv := apptest.New(t)
	id := create(t, srv, "datadog", map[string]any{"name": "S", "configValues": map[string]any{"apiKey": ddKey}})["_id"].(string)
	const n = 16
	statuses := make([]int, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			res := do(t, srv, http.MethodPatch, idPath(id), []any{map[string]any{"op": "add", "path": "/tags/-", "value": fmt.Sprintf("t%02d", i)}})
			statuses[i] = res.Status
			if res.Status == http.StatusConflict && !strings.Contains(string(res.Body), "optimistic_locking_error") {
				t.Errorf("409 without its code: %s", res.Body)
			}
		}()
	}
	close(start)
	wg.Wait()
	var applied []string
	for i, s := range statuses {
		switch s {
		case http.StatusOK:
			applied = append(applied, fmt.Sprintf("t%02d", i))
		case http.StatusConflict:
		default:
			t.Errorf("patch %d answered %d", i, s)
		}
	}
	var got struct{ Tags []string }
	do(t, srv, http.MethodGet, idPath(id), nil).JSON(t, &got)
	if len(applied) == 0 || len(got.Tags) != len(applied) {
		t.Errorf("stored tags %v, applied %v: every applied patch must be kept, and no refused one", got.Tags, applied)
	}
	t.Logf("%d of %d concurrent patches applied", len(applied), n)
}

func TestSecretsNeverLeaveInClear(t *testing.T) {
	srv := apptest.New(t, apptest.WithWebhookDelivery())
	hooks := newReceiver(t, false)
	wantStatus(t, srv.Do(t, http.MethodPost, "/api/v2/webhooks", map[string]any{"url": hooks.URL, "sign": false, "on": true}), http.StatusOK)

	newKey := "fedcba9876543210fedcba9876543210"
	id := create(t, srv, "datadog", map[string]any{"name": "DD", "configValues": map[string]any{"apiKey": ddKey}})["_id"].(string)
	res := do(t, srv, http.MethodPatch, idPath(id), []any{
		map[string]any{"op": "replace", "path": "/configValues/apiKey", "value": newKey},
		map[string]any{"op": "replace", "path": "/configValues", "value": map[string]any{"apiKey": newKey, "site": "datadoghq.eu"}},
	})
	wantStatus(t, res, http.StatusOK)
	wantStatus(t, do(t, srv, http.MethodDelete, idPath(id), nil), http.StatusNoContent)

	var log struct {
		Items []struct {
			ID   string `json:"_id"`
			Kind string `json:"kind"`
		} `json:"items"`
	}
	list := srv.Do(t, http.MethodGet, "/api/v2/auditlog", nil)
	wantStatus(t, list, http.StatusOK)
	list.JSON(t, &log)
	var bodies []string
	for _, e := range log.Items {
		if e.Kind == "integration" {
			entry := srv.Do(t, http.MethodGet, "/api/v2/auditlog/"+e.ID, nil)
			wantStatus(t, entry, http.StatusOK)
			bodies = append(bodies, string(entry.Body))
		}
	}
	if len(bodies) != 3 {
		t.Fatalf("%d integration entries, want create, update and delete", len(bodies))
	}
	waitFor(t, "the webhook to get the three integration entries", func() bool {
		n := 0
		for _, r := range hooks.requests() {
			if strings.Contains(r.Body, `"kind":"integration"`) {
				n++
			}
		}
		return n >= 3
	})
	for _, r := range hooks.requests() {
		bodies = append(bodies, r.Body)
	}
	for i, b := range bodies {
		for _, secret := range []string{ddKey, newKey} {
			if strings.Contains(b, secret) {
				t.Errorf("answer or payload %d holds a secret in clear: %s", i, b)
			}
		}
	}
	if !strings.Contains(strings.Join(bodies, ""), "********") {
		t.Error("no masked value shown anywhere: the test proves nothing")
	}
}

func TestPendingDraftsAreListedOnlyOnRequest(t *testing.T) {
	srv := apptest.New(t, apptest.WithWebhookDelivery())
	rc := newReceiver(t, false) // does not answer the challenge yet
	values := map[string]any{"url": rc.URL + "/in", "secret": "a-signing-secret-of-some-length"}
	draft := create(t, srv, "generic-webhook", map[string]any{"name": "Receiver", "configValues": values})
	id := draft["_id"].(string)
	if draft["_pending"] != true {
		t.Fatalf("a setup whose endpoint did not answer the challenge is not pending: %v", draft)
	}
	if msg, _ := draft["_setupError"].(string); !strings.Contains(msg, "status 404") || strings.Contains(msg, "/in") {
		t.Errorf("_setupError %q: want the failure, naming the host only", msg)
	}
	ids := func(query string) []string {
		var list struct {
			Items []struct {
				ID string `json:"_id"`
			} `json:"items"`
		}
		do(t, srv, http.MethodGet, keyPath("generic-webhook")+query, nil).JSON(t, &list)
		var out []string
		for _, it := range list.Items {
			out = append(out, it.ID)
		}
		return out
	}
	t.Run("the draft is left out of the list by default", func(t *testing.T) {
		if got := ids(""); len(got) != 0 {
			t.Errorf("list %v", got)
		}
		if got := ids("?includePending=false"); len(got) != 0 {
			t.Errorf("list %v", got)
		}
	})
	t.Run("includePending=true lists it", func(t *testing.T) {
		if got := ids("?includePending=true"); len(got) != 1 || got[0] != id {
			t.Errorf("list %v", got)
		}
	})
	t.Run("a draft is sent no events", func(t *testing.T) {
		srv.MustCreateProject(t, "quiet")
		time.Sleep(200 * time.Millisecond) // the queue delivers in milliseconds; nothing may arrive
		if got := rc.requests(); len(got) != 0 {
			t.Errorf("the draft was sent %d events", len(got))
		}
	})
	t.Run("a patch once the endpoint answers finalizes it", func(t *testing.T) {
		rc.setEcho(true)
		res := do(t, srv, http.MethodPatch, idPath(id), []any{map[string]any{"op": "replace", "path": "/name", "value": "Verified"}})
		wantStatus(t, res, http.StatusOK)
		if got := res.Map(t); got["_pending"] != nil || got["_setupError"] != nil {
			t.Errorf("still pending: %s", res.Body)
		}
		if got := ids(""); len(got) != 1 || got[0] != id {
			t.Errorf("list %v", got)
		}
	})
	t.Run("a setup whose endpoint answers at once is active from the start", func(t *testing.T) {
		got := create(t, srv, "generic-webhook", map[string]any{"name": "Direct", "configValues": values})
		if got["_pending"] != nil {
			t.Errorf("answer %v", got)
		}
	})
	t.Run("moving an active configuration to an endpoint that does not answer the challenge is refused", func(t *testing.T) {
		silent := newReceiver(t, false)
		res := do(t, srv, http.MethodPatch, idPath(id), []any{map[string]any{"op": "replace", "path": "/configValues/url", "value": silent.URL}})
		wantError(t, res, http.StatusBadRequest, "verification challenge", "status 404", "nothing was changed")
		var got struct{ ConfigValues map[string]any }
		do(t, srv, http.MethodGet, idPath(id), nil).JSON(t, &got)
		if got.ConfigValues["url"] != values["url"] {
			t.Errorf("url %v after the refused patch", got.ConfigValues["url"])
		}
	})
}

func TestEventHooksDeliverThroughTheOutbox(t *testing.T) {
	srv := apptest.New(t, apptest.WithWebhookDelivery())
	slack, teams, generic := newReceiver(t, true), newReceiver(t, true), newReceiver(t, true)
	flagsOnly := map[string]any{"auditLogEventsHook": map[string]any{"statements": []any{
		map[string]any{"effect": "allow", "resources": []string{"proj/*:env/*:flag/*"}, "actions": []string{"*"}},
	}}}
	create(t, srv, "slack", map[string]any{"name": "Everything", "configValues": map[string]any{"url": slack.URL + "/services/T/B/x"}})
	create(t, srv, "msteams", map[string]any{"name": "Flags only", "configValues": map[string]any{"url": teams.URL}, "capabilityConfig": flagsOnly})
	create(t, srv, "msteams", map[string]any{"name": "Off", "enabled": false, "configValues": map[string]any{"url": teams.URL + "/off"}})
	secret := "generic-signing-secret"
	create(t, srv, "generic-webhook", map[string]any{"name": "Signed", "configValues": map[string]any{"url": generic.URL, "secret": secret}})

	srv.MustCreateProject(t, "hooked")
	res := srv.Do(t, http.MethodPost, "/api/v2/flags/hooked", map[string]any{"key": "f1", "name": "F1"})
	wantStatus(t, res, http.StatusCreated)

	t.Run("Slack gets a message for the project and the flag", func(t *testing.T) {
		waitFor(t, "Slack messages", func() bool {
			all := ""
			for _, r := range slack.requests() {
				all += r.Body
			}
			return strings.Contains(all, "hooked") && strings.Contains(all, "F1")
		})
		var msg struct{ Text string }
		if err := json.Unmarshal([]byte(slack.requests()[0].Body), &msg); err != nil || msg.Text == "" {
			t.Errorf("not a Slack message: %s", slack.requests()[0].Body)
		}
	})
	t.Run("Teams gets a MessageCard for the flag only, and nothing on the disabled configuration", func(t *testing.T) {
		waitFor(t, "a Teams card", func() bool { return len(teams.requests()) > 0 })
		time.Sleep(200 * time.Millisecond)
		for _, r := range teams.requests() {
			if !strings.Contains(r.Body, `"@type":"MessageCard"`) || !strings.Contains(r.Body, "F1") {
				t.Errorf("card %s", r.Body)
			}
		}
		if n := len(teams.requests()); n != 1 {
			t.Errorf("%d Teams requests, want the flag's one", n)
		}
	})
	t.Run("the generic webhook gets the signed audit entry", func(t *testing.T) {
		waitFor(t, "a signed entry", func() bool { return len(generic.requests()) >= 2 })
		for _, r := range generic.requests() {
			if got, want := r.Header.Get(webhook.SignatureHeader), webhook.Sign([]byte(r.Body), secret); got != want {
				t.Errorf("signature %q, want %q", got, want)
			}
			if r.Header.Get(webhook.DeliveryHeader) == "" || !strings.Contains(r.Body, `"_id"`) {
				t.Errorf("delivery %v %s", r.Header, r.Body)
			}
		}
	})
}

func TestARetryDoesNotResendToConfigurationsAlreadyServed(t *testing.T) {
	srv := apptest.New(t, apptest.WithWebhookDelivery())
	good, flaky := newReceiver(t, true), newReceiver(t, true)
	for name, rc := range map[string]*receiver{"Good": good, "Flaky": flaky} {
		create(t, srv, "generic-webhook", map[string]any{"name": name, "configValues": map[string]any{"url": rc.URL, "secret": "a-signing-secret-of-some-length"},
			"capabilityConfig": map[string]any{"auditLogEventsHook": map[string]any{"statements": []any{
				map[string]any{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"createProject"}},
			}}}})
	}
	flaky.mu.Lock()
	flaky.failFirst = 2
	flaky.mu.Unlock()
	srv.MustCreateProject(t, "retried")

	waitFor(t, "the flaky receiver to take the entry on the third attempt", func() bool { return len(flaky.requests()) >= 3 })
	time.Sleep(200 * time.Millisecond)
	deliveries := func(rc *receiver) map[string]int {
		out := map[string]int{}
		for _, r := range rc.requests() {
			out[r.Header.Get(webhook.DeliveryHeader)]++
		}
		return out
	}
	if got := deliveries(good); len(got) != 1 {
		t.Fatalf("the good receiver got deliveries %v, want one", got)
	}
	for id, n := range deliveries(good) {
		if n != 1 {
			t.Errorf("the good receiver got delivery %s %d times while the flaky one was retried", id, n)
		}
	}
	for id, n := range deliveries(flaky) {
		if n != 3 {
			t.Errorf("the flaky receiver got delivery %s %d times, want 2 failures and 1 success", id, n)
		}
	}
}

func TestPoliciesNameAConfigurationByItsIntegrationKeyAndTags(t *testing.T) {
	srv := apptest.New(t)
	role := func(key string, statements ...map[string]any) string {
		wantStatus(t, srv.Do(t, http.MethodPost, "/api/v2/roles", map[string]any{"key": key, "name": key, "policy": statements}), http.StatusCreated)
		_, tok := srv.MustCreateToken(t, map[string]any{"name": key, "customRoleIds": []string{key}})
		return tok
	}
	datadogOnly := role("datadog-only", map[string]any{"effect": "allow", "resources": []string{"integration/datadog"}, "actions": []string{"*"}})
	notProd := role("not-prod",
		map[string]any{"effect": "allow", "resources": []string{"integration/*"}, "actions": []string{"*"}},
		map[string]any{"effect": "deny", "resources": []string{"integration/*;prod"}, "actions": []string{"*"}})
	body := func(tags ...string) map[string]any {
		return map[string]any{"name": "DD", "tags": tags, "configValues": map[string]any{"apiKey": ddKey}}
	}
	newRelic := map[string]any{"name": "NR", "configValues": map[string]any{"insertKey": "NRAK-0123456789abcdef", "accountId": "42"}}

	t.Run("a role on integration/datadog creates Datadog configurations only", func(t *testing.T) {
		wantStatus(t, do(t, srv, http.MethodPost, keyPath("datadog"), body(), "Authorization", datadogOnly), http.StatusCreated)
		wantError(t, do(t, srv, http.MethodPost, keyPath("newrelic"), newRelic, "Authorization", datadogOnly), http.StatusForbidden, "integration/newrelic")
	})
	prod := create(t, srv, "datadog", body("prod"))["_id"].(string)
	dev := create(t, srv, "datadog", body("dev"))["_id"].(string)
	rename := []any{map[string]any{"op": "replace", "path": "/name", "value": "Renamed"}}
	t.Run("a deny on the prod tag holds for the stored configuration's tags", func(t *testing.T) {
		wantError(t, do(t, srv, http.MethodPatch, idPath(prod), rename, "Authorization", notProd), http.StatusForbidden, "updateName", "integration/datadog;prod")
		wantError(t, do(t, srv, http.MethodDelete, idPath(prod), nil, "Authorization", notProd), http.StatusForbidden, "deleteIntegration")
		wantStatus(t, do(t, srv, http.MethodPatch, idPath(dev), rename, "Authorization", notProd), http.StatusOK)
	})
	t.Run("a create carrying the denied tag is refused", func(t *testing.T) {
		wantStatus(t, do(t, srv, http.MethodPost, keyPath("datadog"), body("prod"), "Authorization", notProd), http.StatusForbidden)
	})
	t.Run("the deny covers reading too, while _access of another configuration allows every action", func(t *testing.T) {
		wantStatus(t, do(t, srv, http.MethodGet, idPath(prod), nil, "Authorization", notProd), http.StatusForbidden)
		var got struct {
			Access struct {
				Allowed []struct{ Action string } `json:"allowed"`
				Denied  []struct{ Action string } `json:"denied"`
			} `json:"_access"`
		}
		res := do(t, srv, http.MethodGet, idPath(dev), nil, "Authorization", notProd)
		wantStatus(t, res, http.StatusOK)
		res.JSON(t, &got)
		if len(got.Access.Allowed) != 6 || len(got.Access.Denied) != 0 {
			t.Errorf("_access %+v", got.Access)
		}
		res = do(t, srv, http.MethodGet, idPath(dev), nil, "Authorization", datadogOnly)
		res.JSON(t, &got)
		if len(got.Access.Allowed) != 6 {
			t.Errorf("_access for the datadog role %+v", got.Access)
		}
	})
}
