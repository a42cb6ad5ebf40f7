package apptest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// SDKEnv is an environment's credentials, as an SDK is configured with them.
type SDKEnv struct {
	Project, Env                string
	SDKKey, MobileKey, ClientID string
}

// NewSDKEnv creates project (with the default environments) and returns
// the credentials of its production environment.
func NewSDKEnv(tb testing.TB, srv *Server, project string) SDKEnv {
	tb.Helper()
	srv.MustCreateProject(tb, project)
	e := GetEnv(tb, srv, project, "production")
	return SDKEnv{Project: project, Env: "production", SDKKey: e["apiKey"].(string), MobileKey: e["mobileKey"].(string), ClientID: e["_id"].(string)}
}

// GoSDKPayload is a payload as LaunchDarkly's Go server SDK v7 flushes it:
// an index event per new context, a feature event for a tracked flag
// ("checkout"), a custom event and the summary of every evaluation.
func GoSDKPayload(now time.Time, contexts ...string) string {
	ms := now.UnixMilli()
	var events []string
	for _, key := range contexts {
		events = append(events, fmt.Sprintf(`{"kind":"index","creationDate":%d,"context":{"kind":"user","key":%q,"name":"User %s","country":"NZ","_meta":{"redactedAttributes":["email"]}}}`, ms, key, key))
	}
	events = append(events,
		fmt.Sprintf(`{"kind":"feature","creationDate":%d,"key":"checkout","version":3,"context":{"kind":"multi","user":{"key":%q},"org":{"key":"acme","plan":"gold"}},"variation":1,"value":true,"default":false}`, ms, contexts[0]),
		fmt.Sprintf(`{"kind":"custom","creationDate":%d,"key":"purchase","contextKeys":{"user":%q},"metricValue":9.5}`, ms, contexts[0]),
		fmt.Sprintf(`{"kind":"summary","startDate":%d,"endDate":%d,"features":{"checkout":{"default":false,"contextKinds":["user","org"],"counters":[{"variation":1,"version":3,"value":true,"count":5},{"variation":0,"version":3,"value":false,"count":2}]},"missing":{"default":"x","contextKinds":["user"],"counters":[{"unknown":true,"value":"x","count":1}]}}}`, ms-1000, ms))
	return "[" + strings.Join(events, ",") + "]"
}

// PostEvents posts an event payload to path with auth as Authorization,
// the Go SDK's headers (application shop-api 1.4.2) and the given extra ones.
func PostEvents(tb testing.TB, srv *Server, path, auth, body string, headers ...string) *Response {
	tb.Helper()
	h := append([]string{"Authorization", auth, "User-Agent", "GoClient/7.14.6", "X-LaunchDarkly-Event-Schema", "4",
		"X-LaunchDarkly-Tags", "application-id/shop-api application-version/1.4.2"}, headers...)
	return srv.Do(tb, http.MethodPost, path, body, h...)
}
