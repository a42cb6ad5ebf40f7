package allgroups_test

import (
	"bufio"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/featurestore/featurestoreapi"
)

// Every place a user names a host flagplane connects to refuses, at
// creation and on patch, every address of IANA's special-purpose
// registries: one address per registry entry, the forms issue 21 found
// accepted, loopback spelled as inet_aton reads it and the IPv6 forms
// carrying an IPv4 address, listed in shared/webhook/testdata (the guard's
// own tests prove the list covers every entry of the rule's table).

// destinationKind is one place a user names a host.
type destinationKind struct {
	name string
	// create is the path and body creating one aimed at u.
	create func(u *url.URL) (string, any)
	// field is what the 400 names.
	field string
	// patchPath is the JSON pointer a patch changes the host with.
	patchPath string
	// patchValue is that member's value for u.
	patchValue func(u *url.URL) any
	// statusChecked: reading one dials the store (big segment stores), so
	// no control is created here (it would wait on an unreachable host).
	statusChecked bool
}

func outboundKinds() []destinationKind {
	whole := func(u *url.URL) any { return u.String() }
	host := func(u *url.URL) any { return u.Hostname() }
	integration := func(key string, extra map[string]any) func(u *url.URL) (string, any) {
		return func(u *url.URL) (string, any) {
			values := map[string]any{"url": u.String()}
			for k, v := range extra {
				values[k] = v
			}
			return api + "/integration-configurations/keys/" + key, map[string]any{"name": "hook", "enabled": false, "configValues": values}
		}
	}
	flagImport := func(key string, config map[string]any) func(u *url.URL) (string, any) {
		return func(u *url.URL) (string, any) {
			c := map[string]any{"baseUrl": u.String()}
			for k, v := range config {
				c[k] = v
			}
			return api + "/integration-capabilities/flag-import/p/" + key, map[string]any{"name": "import", "config": c}
		}
	}
	store := func(base, key string) func(u *url.URL) (string, any) {
		return func(u *url.URL) (string, any) {
			config := map[string]any{"host": u.Hostname()}
			if key == "dynamodb" {
				config = map[string]any{"tableName": "flags", "region": "us-east-1", "endpoint": u.String(), "accessKeyId": "AKIA", "secretAccessKey": "secret"}
			}
			return api + "/integration-capabilities/" + base + "/p/test/" + key, map[string]any{"name": "store", "on": false, "config": config}
		}
	}
	kinds := []destinationKind{
		{name: "a webhook", field: "url", patchPath: "/url", patchValue: whole,
			create: func(u *url.URL) (string, any) {
				return api + "/webhooks", map[string]any{"url": u.String(), "sign": false, "on": false}
			}},
		{name: "a Slack integration", create: integration("slack", nil), field: "configValues.url", patchPath: "/configValues/url", patchValue: whole},
		{name: "a Microsoft Teams integration", create: integration("msteams", nil), field: "configValues.url", patchPath: "/configValues/url", patchValue: whole},
		{name: "a generic webhook integration", create: integration("generic-webhook", map[string]any{"secret": "0123456789abcdef-secret"}),
			field: "configValues.url", patchPath: "/configValues/url", patchValue: whole},
		{name: "a LaunchDarkly flag import", create: flagImport("launchdarkly", map[string]any{"apiKey": "api-0123", "sourceProjectKey": "default"}),
			field: "config.baseUrl", patchPath: "/config/baseUrl", patchValue: whole},
		{name: "an Unleash flag import", create: flagImport("unleash", map[string]any{"apiToken": "*:*.secret-token"}),
			field: "config.baseUrl", patchPath: "/config/baseUrl", patchValue: whole},
		{name: "a Redis delivery configuration", create: store("featureStore", "redis"), field: "config.host", patchPath: "/config/host", patchValue: host},
		{name: "a DynamoDB delivery configuration", create: store("featureStore", "dynamodb"), field: "config.endpoint", patchPath: "/config/endpoint", patchValue: whole},
		{name: "a Redis big segment store", create: store("big-segment-store", "redis"), field: "config.host", statusChecked: true},
		{name: "a DynamoDB big segment store", create: store("big-segment-store", "dynamodb"), field: "config.endpoint", statusChecked: true},
	}
	return kinds
}

// refusedHosts reads the guard's list: host as written in a URL, and what it is.
func refusedHosts(tb testing.TB) [][2]string {
	tb.Helper()
	f, err := os.Open("../../webhook/testdata/refused-hosts.txt")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out [][2]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			host, what, _ := strings.Cut(line, "\t")
			out = append(out, [2]string{host, what})
		}
	}
	if err := sc.Err(); err != nil || len(out) == 0 {
		tb.Fatalf("read the refused hosts: %v (%d)", err, len(out))
	}
	return out
}

// wantRefusal checks the answer is the guard's 400, naming the field.
func wantRefusal(tb testing.TB, res *apptest.Response, field string) {
	tb.Helper()
	apptest.WantError(tb, res, http.StatusBadRequest, "invalid_request", `field "`+field+`"`, "outbound requests may not reach it")
}

func TestEveryDestinationRefusesEverySpecialPurposeAddress(t *testing.T) {
	// The deployment's switch for stores must not leak in from the environment.
	t.Setenv(featurestoreapi.EnvAllowPrivate, "false")
	srv := apptest.New(t) // the guard of a deployment: private addresses refused
	srv.MustCreateProject(t, "p")
	hosts := refusedHosts(t)
	kinds := outboundKinds()
	t.Logf("%d addresses × %d destination kinds", len(hosts), len(kinds))

	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			for _, h := range hosts {
				t.Run("refuses "+h[0]+" ("+h[1]+") at creation", func(t *testing.T) {
					u, err := url.Parse("http://" + h[0] + "/hook")
					if err != nil {
						t.Fatal(err)
					}
					path, body := k.create(u)
					wantRefusal(t, srv.Do(t, http.MethodPost, path, body, apptest.BetaHeader...), k.field)
				})
			}
			if k.statusChecked {
				return // a patch goes through the same check as the delivery configuration's above
			}
			public, _ := url.Parse("http://8.8.8.8/hook")
			path, body := k.create(public)
			created := srv.Do(t, http.MethodPost, path, body, apptest.BetaHeader...)
			// The reference answers 200 to some creates (webhooks, flag imports), 201 to others.
			if created.Status != http.StatusCreated && created.Status != http.StatusOK {
				t.Fatalf("a public address is refused: %d %s", created.Status, created.Body)
			}
			self := selfPath(t, created)
			before := srv.Do(t, http.MethodGet, self, nil, apptest.BetaHeader...)
			apptest.WantStatus(t, before, http.StatusOK)
			for _, h := range hosts {
				t.Run("refuses a patch to "+h[0]+", leaving it as it was", func(t *testing.T) {
					u, _ := url.Parse("http://" + h[0] + "/hook")
					patch := []map[string]any{{"op": "replace", "path": k.patchPath, "value": k.patchValue(u)}}
					wantRefusal(t, srv.Do(t, http.MethodPatch, self, patch, apptest.BetaHeader...), k.field)
					if after := srv.Do(t, http.MethodGet, self, nil, apptest.BetaHeader...); string(after.Body) != string(before.Body) {
						t.Errorf("the refused patch changed what is stored:\n%s\nwas\n%s", after.Body, before.Body)
					}
				})
			}
		})
	}
}

// selfPath is where a created destination is read and patched: its self link.
func selfPath(tb testing.TB, res *apptest.Response) string {
	tb.Helper()
	var created struct {
		Links struct {
			Self struct {
				Href string `json:"href"`
			} `json:"self"`
		} `json:"_links"`
	}
	res.JSON(tb, &created)
	if created.Links.Self.Href == "" {
		tb.Fatalf("the created destination has no self link: %s", res.Body)
	}
	return created.Links.Self.Href
}
