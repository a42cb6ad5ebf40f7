package sdkapi_test

// The browser tier's OFREP proof (make test-browser): OpenFeature's web
// SDK with its OFREP web provider (npm @openfeature/web-sdk and
// @openfeature/ofrep-web-provider, pinned in localstack/browser) in
// headless Chromium, on a page of another origin than the local server's,
// with the environment's client-side id in Authorization. For each
// context of the OFREP proof it evaluates the flags and resolves what the
// evaluate operation decides (a flag only server-side SDKs see is not
// found); polling with the bulk evaluation's ETag gets 304s, and a change
// made through the API reaches the page at the next poll.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/browsertest"
)

// ofrepPage starts OpenFeature's web SDK with the OFREP web provider,
// polling every pollMs milliseconds, on the initial context; it defines
// resolve(cases), which evaluates cases for the current context, and
// keeps the provider's events in proof.events.
func ofrepPage(server, clientSideID string, pollMs int, context map[string]any) []byte {
	cfg, _ := json.Marshal(map[string]any{"server": server, "clientSideId": clientSideID, "pollMs": pollMs, "context": context})
	return []byte(`<!doctype html>
<meta charset="utf-8">
<title>flagplane: OpenFeature's OFREP web provider</title>
<script src="/ofrep.js"></script>
<script>
const cfg = ` + string(cfg) + `;
const { OpenFeature, OFREPWebProvider, ProviderEvents } = OpenFeatureWeb;
window.proof = { ready: false, error: null, events: [] };
const provider = new OFREPWebProvider({
  baseUrl: cfg.server, headers: [['Authorization', cfg.clientSideId]],
  pollInterval: cfg.pollMs, changeDetection: 'polling', cacheMode: 'disabled',
});
for (const ev of [ProviderEvents.Ready, ProviderEvents.Error, ProviderEvents.ConfigurationChanged, ProviderEvents.Stale]) {
  OpenFeature.addHandler(ev, (d) => proof.events.push({ type: ev, message: (d && d.message) || '', flags: (d && d.flagsChanged) || [], at: performance.timeOrigin + performance.now() }));
}
OpenFeature.setProviderAndWait(provider, cfg.context).then(() => { proof.ready = true; }, (e) => { proof.error = String(e); });
const client = OpenFeature.getClient();
const getters = { boolean: 'getBooleanDetails', string: 'getStringDetails', number: 'getNumberDetails', object: 'getObjectDetails' };
window.resolve = (cases) => cases.map((c) => {
  const d = client[getters[c.type]](c.flag, c.default);
  return { value: d.value, variant: d.variant ?? '', reason: d.reason ?? '', errorCode: d.errorCode ?? '' };
});
</script>
`)
}

func TestBrowserOFREPWebProvider(t *testing.T) {
	b := browsertest.Start(t)
	files := map[string][]byte{"/ofrep.js": browsertest.Bundle(t, "ofrep")}
	origin := browsertest.Serve(t, files)
	api := startServe(t, origin)
	if strings.TrimPrefix(origin, "http://") == strings.TrimPrefix(api.base, "http://") {
		t.Fatalf("the page and the server share an origin (%s): CORS would not be tested", origin)
	}
	if res := api.request(t, http.MethodPost, "/api/v2/projects", map[string]any{"key": "ofw", "name": "OFREP web"}); res.Status != http.StatusCreated {
		t.Fatalf("create the project: %d %s", res.Status, res.Body)
	}
	apptest.OFREPFlags(t, api.request, "ofw", "test")
	var env struct {
		ID string `json:"_id"`
	}
	api.request(t, http.MethodGet, "/api/v2/projects/ofw/environments/test", nil).JSON(t, &env)

	// The cases by context, in the order they come; the one without a
	// targeting key is proved apart: the provider keeps its flags and
	// reports the 400.
	var contexts []map[string]any
	byContext := map[string][]apptest.OFREPCase{}
	var noKey apptest.OFREPCase
	for _, c := range apptest.OFREPCases() {
		if c.ErrorCode == "TARGETING_KEY_MISSING" {
			noKey = c
			continue
		}
		k := string(mustJSON(t, c.Context))
		if _, seen := byContext[k]; !seen {
			contexts = append(contexts, c.Context)
		}
		byContext[k] = append(byContext[k], c.ClientSide())
	}
	const pollMs = 200
	files["/index.html"] = ofrepPage(api.base, env.ID, pollMs, contexts[0])
	page := b.Open(t, origin+"/")
	var ready bool
	page.Wait(t, `proof.ready || proof.error`, 15*time.Second, &ready)
	var startErr string
	page.Eval(t, `proof.error || ''`, &startErr)
	if startErr != "" {
		t.Fatalf("the provider did not start: %s", startErr)
	}

	resolve := func(t *testing.T, cases []apptest.OFREPCase) []apptest.OFREPOutcome {
		t.Helper()
		type pageCase struct {
			Flag    string `json:"flag"`
			Type    string `json:"type"`
			Default any    `json:"default"`
		}
		var in []pageCase
		for _, c := range cases {
			in = append(in, pageCase{c.Flag, c.Type, c.Default})
		}
		var out []apptest.OFREPOutcome
		page.Eval(t, "resolve("+string(mustJSON(t, in))+")", &out)
		if len(out) != len(cases) {
			t.Fatalf("the page resolved %d of %d cases", len(out), len(cases))
		}
		return out
	}
	for i, ctx := range contexts {
		cases := byContext[string(mustJSON(t, ctx))]
		if i > 0 {
			page.Eval(t, "OpenFeature.setContext("+string(mustJSON(t, ctx))+").then(() => true)", nil)
		}
		got := resolve(t, cases)
		for j, c := range cases {
			t.Run(c.Name, func(t *testing.T) { apptest.CheckOFREP(t, api.request, "ofw", "test", c, got[j]) })
		}
	}

	t.Run("the bulk evaluations came through CORS, and polls with the ETag got 304", func(t *testing.T) {
		var ok, notModified int
		for deadline := time.Now().Add(5 * time.Second); notModified == 0 && time.Now().Before(deadline); time.Sleep(pollMs * time.Millisecond) {
			ok, notModified = 0, 0
			for _, r := range page.Requests() {
				if r.URL != api.base+"/ofrep/v1/evaluate/flags" || r.Method != http.MethodPost || r.Status == 0 && r.Failure == "" {
					continue // another request, or one not answered yet
				}
				switch r.Status {
				case http.StatusOK:
					ok++
				case http.StatusNotModified:
					notModified++
				default:
					t.Fatalf("a bulk evaluation answered %d (%s)", r.Status, r.Failure)
				}
			}
		}
		if ok < len(contexts) || notModified == 0 {
			t.Errorf("%d bulk evaluations answered 200 and %d 304, want one 200 per context (%d) and polls answered 304", ok, notModified, len(contexts))
		}
		t.Logf("%d bulk evaluations answered 200, %d polls 304", ok, notModified)
	})

	t.Run("a change made through the API reaches the page at the next poll", func(t *testing.T) {
		page.Eval(t, `OpenFeature.setContext({targetingKey: 'u-target'}).then(() => true)`, nil)
		var before bool
		page.Eval(t, `client.getBooleanValue('ofrep-bool', false)`, &before)
		if !before {
			t.Fatal("u-target does not get the target's true before the change")
		}
		var events int
		page.Eval(t, `proof.events.length`, &events)
		start := time.Now()
		if res := api.request(t, http.MethodPatch, "/api/v2/flags/ofw/ofrep-bool",
			[]map[string]any{{"op": "replace", "path": "/environments/test/targets", "value": []any{}}}); res.Status != http.StatusOK {
			t.Fatalf("patch: %d %s", res.Status, res.Body)
		}
		page.Wait(t, `client.getBooleanValue('ofrep-bool', true) === false`, 5*time.Second, nil)
		took := time.Since(start)
		var changed []string
		page.Eval(t, fmt.Sprintf(`proof.events.slice(%d).filter((e) => e.type === %q).flatMap((e) => e.flags)`, events, "PROVIDER_CONFIGURATION_CHANGED"), &changed)
		if strings.Join(changed, ",") != "ofrep-bool" {
			t.Errorf("configuration-changed events named %v, want ofrep-bool", changed)
		}
		if took > 2*pollMs*time.Millisecond+time.Second {
			t.Errorf("the change took %v to reach the page, polling every %d ms", took, pollMs)
		}
		t.Logf("the change reached the page after %v (polling every %d ms)", took, pollMs)
	})

	t.Run(noKey.Name+": the provider reports the 400 and keeps its flags", func(t *testing.T) {
		var events int
		page.Eval(t, `proof.events.length`, &events)
		page.Eval(t, "OpenFeature.setContext("+string(mustJSON(t, noKey.Context))+").then(() => true)", nil)
		var msg string
		page.Wait(t, fmt.Sprintf(`(proof.events.slice(%d).find((e) => e.type === %q) || {}).message`, events, "PROVIDER_ERROR"), 5*time.Second, &msg)
		if !strings.Contains(msg, "400") {
			t.Errorf("error event %q, want the bulk evaluation's 400", msg)
		}
		last := page.Requests()
		for i := len(last) - 1; i >= 0; i-- {
			if r := last[i]; r.URL == api.base+"/ofrep/v1/evaluate/flags" && r.Method == http.MethodPost && r.Status != http.StatusNotModified {
				if r.Status != http.StatusBadRequest {
					t.Errorf("the last bulk evaluation answered %d, want 400", r.Status)
				}
				break
			}
		}
	})
}
