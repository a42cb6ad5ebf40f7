package webhookapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/webhook"
)

// receiver is a webhook endpoint that fails the first failFirst attempts of
// every delivery and records what arrives.
type receiver struct {
	*httptest.Server
	failFirst int

	mu       sync.Mutex
	tries    map[string]int // delivery id -> attempts seen
	received []delivered    // accepted deliveries, in order
}

type delivered struct {
	id, signature string
	body          []byte
}

func newReceiver(tb testing.TB, failFirst int) *receiver {
	tb.Helper()
	rc := &receiver{failFirst: failFirst, tries: map[string]int{}}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id := r.Header.Get(webhook.DeliveryHeader)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.tries[id]++
		if rc.tries[id] <= rc.failFirst {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		rc.received = append(rc.received, delivered{id: id, signature: r.Header.Get(webhook.SignatureHeader), body: body})
	}))
	tb.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) got() []delivered {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivered(nil), rc.received...)
}

// idle waits until the delivery queue has nothing left to do.
func idle(tb testing.TB, srv *apptest.Server) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Queue.Idle(ctx); err != nil {
		tb.Fatalf("the delivery queue did not settle: %v", err)
	}
}

func createHook(tb testing.TB, srv *apptest.Server, body map[string]any) map[string]any {
	tb.Helper()
	res := srv.Do(tb, http.MethodPost, "/api/v2/webhooks", body)
	apptest.WantStatus(tb, res, http.StatusOK)
	return res.Map(tb)
}

func TestWebhookResource(t *testing.T) {
	srv := apptest.New(t)
	t.Run("a URL on a loopback or private address is refused unless allowed", func(t *testing.T) {
		for _, u := range []string{"http://127.0.0.1:9/x", "http://10.1.2.3/x", "http://169.254.169.254/latest", "http://[::1]/x"} {
			apptest.WantError(t, srv.Do(t, http.MethodPost, "/api/v2/webhooks", map[string]any{"url": u, "sign": false, "on": true}), http.StatusBadRequest, "invalid_request", "url")
		}
	})
	t.Run("a URL that is not absolute http(s) is refused", func(t *testing.T) {
		for _, u := range []string{"ftp://example.com/x", "/relative", "http://user:pw@example.com/x", "not a url"} {
			apptest.WantError(t, srv.Do(t, http.MethodPost, "/api/v2/webhooks", map[string]any{"url": u, "sign": false, "on": true}), http.StatusBadRequest, "invalid_request", "url")
		}
	})
	t.Run("url, sign and on are required", func(t *testing.T) {
		apptest.WantError(t, srv.Do(t, http.MethodPost, "/api/v2/webhooks", map[string]any{"url": "http://example.com/x", "on": true}), http.StatusBadRequest, "invalid_request", "sign")
	})

	local := apptest.New(t, apptest.WithWebhookDelivery())
	var id string
	t.Run("a signed webhook without a secret gets a strong one, shown only on create", func(t *testing.T) {
		h := createHook(t, local, map[string]any{"url": "http://127.0.0.1:9/hook", "sign": true, "on": true, "name": "n", "tags": []string{"ops"}})
		id = h["_id"].(string)
		if secret, _ := h["secret"].(string); len(secret) < 32 || strings.Contains(secret, "*") {
			t.Fatalf("create answered secret %q", secret)
		}
		got := local.Do(t, http.MethodGet, "/api/v2/webhooks/"+id, nil).Map(t)
		if got["secret"] != "********" || got["_access"] == nil {
			t.Fatalf("a later read shows secret %v", got["secret"])
		}
		list := local.Do(t, http.MethodGet, "/api/v2/webhooks", nil)
		if strings.Contains(string(list.Body), h["secret"].(string)) {
			t.Fatal("the list shows the secret")
		}
	})
	t.Run("patch changes on, name and statements; other paths are refused", func(t *testing.T) {
		res := local.Do(t, http.MethodPatch, "/api/v2/webhooks/"+id, []map[string]any{
			{"op": "replace", "path": "/on", "value": false}, {"op": "replace", "path": "/name", "value": "renamed"},
			{"op": "replace", "path": "/statements", "value": []map[string]any{{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"*"}}}},
		})
		apptest.WantStatus(t, res, http.StatusOK)
		if got := res.Map(t); got["on"] != false || got["name"] != "renamed" {
			t.Fatalf("patched %v", got)
		}
		apptest.WantError(t, local.Do(t, http.MethodPatch, "/api/v2/webhooks/"+id, []map[string]any{{"op": "replace", "path": "/_id", "value": "x"}}), http.StatusBadRequest, "invalid_request")
	})
	t.Run("a deleted webhook is gone", func(t *testing.T) {
		apptest.WantStatus(t, local.Do(t, http.MethodDelete, "/api/v2/webhooks/"+id, nil), http.StatusNoContent)
		apptest.WantError(t, local.Do(t, http.MethodGet, "/api/v2/webhooks/"+id, nil), http.StatusNotFound, "not_found")
	})
}

func TestWebhookDelivery(t *testing.T) {
	srv := apptest.New(t, apptest.WithWebhookDelivery())
	flaky := newReceiver(t, 2)     // fails twice, then accepts
	narrow := newReceiver(t, 0)    // only environment changes of project "other"
	off := newReceiver(t, 0)       // turned off
	broken := newReceiver(t, 1000) // never accepts
	flakyHook := createHook(t, srv, map[string]any{"url": flaky.URL, "sign": true, "on": true})
	createHook(t, srv, map[string]any{"url": narrow.URL, "sign": false, "on": true,
		"statements": []map[string]any{{"effect": "allow", "resources": []string{"proj/other:env/*"}, "actions": []string{"*"}}}})
	createHook(t, srv, map[string]any{"url": off.URL, "sign": true, "on": false})
	brokenHook := createHook(t, srv, map[string]any{"url": broken.URL, "sign": true, "on": true})
	idle(t, srv) // webhook creations are changes too; settle them first
	before := len(flaky.got())

	const changes = 5
	apptest.EmptyProject(t, srv, "p")
	for i := range changes - 1 {
		srv.MustCreateEnvironment(t, "p", "e"+string(rune('a'+i)), nil)
	}
	idle(t, srv)

	got := flaky.got()[before:]
	t.Run("every matching change arrives despite failed attempts", func(t *testing.T) {
		if len(got) != changes {
			t.Fatalf("%d deliveries arrived, want %d", len(got), changes)
		}
	})
	t.Run("each payload is the change's audit entry, signed with the webhook's secret", func(t *testing.T) {
		for _, d := range got {
			if d.signature != webhook.Sign(d.body, flakyHook["secret"].(string)) {
				t.Fatalf("signature %q does not verify", d.signature)
			}
			var e struct {
				ID       string `json:"_id"`
				Accesses []struct {
					Action, Resource string
				} `json:"accesses"`
			}
			if err := json.Unmarshal(d.body, &e); err != nil || e.ID == "" || len(e.Accesses) == 0 {
				t.Fatalf("payload %s", d.body)
			}
			if entry := srv.Do(t, http.MethodGet, "/api/v2/auditlog/"+e.ID, nil); entry.Status != http.StatusOK {
				t.Fatalf("payload names entry %s, which the audit log does not have", e.ID)
			}
		}
	})
	t.Run("retries of one delivery carry the same delivery id", func(t *testing.T) {
		flaky.mu.Lock()
		defer flaky.mu.Unlock()
		for _, d := range got {
			if flaky.tries[d.id] != 3 {
				t.Fatalf("delivery %s was tried %d times, want 3 (two failures, one success)", d.id, flaky.tries[d.id])
			}
		}
	})
	t.Run("a webhook whose statements do not match gets nothing", func(t *testing.T) {
		if n := len(narrow.got()); n != 0 {
			t.Fatalf("%d deliveries", n)
		}
	})
	t.Run("a webhook that is off gets nothing", func(t *testing.T) {
		if n := len(off.got()); n != 0 {
			t.Fatalf("%d deliveries", n)
		}
	})
	t.Run("deliveries whose attempts run out end as dead letters", func(t *testing.T) {
		dead := 0
		for _, d := range srv.Queue.Dead() {
			if d.Message.HookID == brokenHook["_id"] && d.Attempts == 5 {
				dead++
			}
		}
		if dead < changes {
			t.Fatalf("%d dead letters for the broken webhook, want at least %d", dead, changes)
		}
	})
	t.Run("the latest attempts can be read on the webhook", func(t *testing.T) {
		res := srv.Do(t, http.MethodGet, "/api/v2/webhooks/"+brokenHook["_id"].(string), nil)
		var h struct {
			Deliveries []webhook.Attempt `json:"_deliveries"`
		}
		res.JSON(t, &h)
		if len(h.Deliveries) == 0 || h.Deliveries[0].Status != http.StatusServiceUnavailable || h.Deliveries[0].Error == "" {
			t.Fatalf("deliveries %+v", h.Deliveries)
		}
	})
}

// unreachable is a queue that is down: the hand-off after a commit fails.
type unreachable struct{}

func (unreachable) Publish(context.Context, audit.Outbox) error {
	return errors.New("queue unreachable")
}

func TestWebhookDeliveryAfterACrash(t *testing.T) {
	srv := apptest.New(t, apptest.WithWebhookDelivery())
	rc := newReceiver(t, 0)
	createHook(t, srv, map[string]any{"url": rc.URL, "sign": false, "on": true,
		"statements": []map[string]any{{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"createProject"}}}})
	idle(t, srv)

	// A process commits a change and then cannot hand it to the queue (as if
	// it crashed between the two steps): the outbox record stays behind.
	down := audit.New(srv.Table, unreachable{}, srv.AccountID, nil, time.Now)
	if _, _, err := project.NewService(srv.Table, down, srv.App.Now).Create(context.Background(), project.Input{Key: new("crashed"), Name: new("Crashed")}); err != nil {
		t.Fatal(err)
	}
	idle(t, srv)
	if n := len(rc.got()); n != 0 {
		t.Fatalf("%d deliveries before the sweep", n)
	}

	t.Run("the sweep hands the change over and it is delivered", func(t *testing.T) {
		if n, err := srv.App.Services.Audit.Sweep(context.Background(), 0); err != nil || n != 1 {
			t.Fatalf("sweep re-sent %d, %v", n, err)
		}
		idle(t, srv)
		got := rc.got()
		if len(got) != 1 || !strings.Contains(string(got[0].body), `"proj/crashed"`) {
			t.Fatalf("deliveries %d: %s", len(got), got)
		}
	})
	t.Run("once changes are fanned out no outbox record is left", func(t *testing.T) {
		if res := srv.Do(t, http.MethodPost, "/api/v2/projects", map[string]any{"key": "after", "name": "After"}); res.Status != http.StatusCreated {
			t.Fatalf("create project: %d %s", res.Status, res)
		}
		idle(t, srv)
		page, err := srv.Table.Query(context.Background(), store.Query{PK: store.OutboxPK})
		if err != nil || len(page.Items) != 0 {
			t.Fatalf("%d outbox records left (%v), want none", len(page.Items), err)
		}
	})
}
