package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/webhook"
)

// event is what a renderer builds a request from: the audit entry, its
// JSON as the audit log API shows it, and the delivery's id (the same
// across retries, so receivers can drop duplicates).
type event struct {
	Entry      audit.Entry
	JSON       []byte
	DeliveryID string
}

// A renderer turns an event into one integration's HTTP request. Adding an
// integration is a manifest in manifests/ and a renderer here.
type renderer struct {
	// endpoint is where requests go, from the configValues (defaults filled in).
	endpoint func(values map[string]any) (*url.URL, error)
	// urlField names the configValues field the endpoint is taken from; the
	// SSRF guard checks such user-chosen hosts. Empty: the host is the
	// service's own, picked from a fixed list (a site, a region).
	urlField string
	// request is the body and headers of the POST (Content-Type included).
	request func(ev event, values map[string]any) ([]byte, http.Header, error)
}

var renderers = map[string]renderer{
	"slack":           {endpoint: urlField("url"), urlField: "url", request: slackMessage},
	"msteams":         {endpoint: urlField("url"), urlField: "url", request: teamsCard},
	"datadog":         {endpoint: datadogEndpoint, request: datadogEvent},
	"newrelic":        {endpoint: newRelicEndpoint, request: newRelicEvent},
	"generic-webhook": {endpoint: urlField("url"), urlField: "url", request: signedEntry},
}

func str(values map[string]any, name string) string {
	s, _ := values[name].(string)
	return s
}

// urlField takes the endpoint from a URL field, checked like a webhook's
// URL. Errors never quote the URL: for Slack and Teams it is a secret.
func urlField(name string) func(map[string]any) (*url.URL, error) {
	return func(values map[string]any) (*url.URL, error) {
		u, err := webhook.CheckURL(str(values, name))
		if err != nil {
			return nil, fmtField(name, "must be an absolute http or https URL with a host and no user information")
		}
		return u, nil
	}
}

func fmtField(name, msg string) error {
	return fault.New(fault.Invalid, "field %q %s", "configValues."+name, msg)
}

func jsonHeader() http.Header {
	return http.Header{"Content-Type": {"application/json"}, "User-Agent": {"flagplane-integrations/1"}}
}

// summary is the entry in one line of plain text, with its comment.
func summary(e audit.Entry) string {
	s := e.Title
	if e.Comment != "" {
		s += ": " + e.Comment
	}
	return s
}

// slackMessage is an incoming-webhook message.
func slackMessage(ev event, _ map[string]any) ([]byte, http.Header, error) {
	body, err := json.Marshal(map[string]any{"text": summary(ev.Entry)})
	return body, jsonHeader(), err
}

// teamsCard is an Office 365 connector MessageCard.
func teamsCard(ev event, _ map[string]any) ([]byte, http.Header, error) {
	e := ev.Entry
	facts := []map[string]string{{"name": "Kind", "value": e.Kind}, {"name": "By", "value": e.Subject.Name}}
	if e.Comment != "" {
		facts = append(facts, map[string]string{"name": "Comment", "value": e.Comment})
	}
	body, err := json.Marshal(map[string]any{
		"@type": "MessageCard", "@context": "https://schema.org/extensions",
		"summary": e.Title, "themeColor": "405BFF", "title": "flagplane: " + e.Name,
		"sections": []any{map[string]any{"activityTitle": e.Title, "facts": facts}},
	})
	return body, jsonHeader(), err
}

func datadogEndpoint(values map[string]any) (*url.URL, error) {
	site := str(values, "site")
	if site == "" {
		return nil, fmtField("site", "is required")
	}
	return url.Parse("https://api." + site + "/api/v1/events")
}

// datadogEvent is a Datadog events API (v1) event; the key goes in DD-API-KEY.
func datadogEvent(ev event, values map[string]any) ([]byte, http.Header, error) {
	e := ev.Entry
	tags := []string{"source:flagplane", "kind:" + e.Kind}
	for _, a := range e.Accesses {
		tags = append(tags, "action:"+a.Action)
	}
	body, err := json.Marshal(map[string]any{
		"title": e.Title, "text": summary(e), "date_happened": e.Date / 1000,
		"aggregation_key": e.ID, "source_type_name": "flagplane", "alert_type": "info", "tags": tags,
	})
	h := jsonHeader()
	h.Set("DD-API-KEY", str(values, "apiKey"))
	return body, h, err
}

// New Relic's event API hosts, by region.
var newRelicHosts = map[string]string{"us": "insights-collector.newrelic.com", "eu": "insights-collector.eu01.nr-data.net"}

func newRelicEndpoint(values map[string]any) (*url.URL, error) {
	host, ok := newRelicHosts[str(values, "region")]
	if !ok {
		return nil, fmtField("region", "must be us or eu")
	}
	return url.Parse("https://" + host + "/v1/accounts/" + url.PathEscape(str(values, "accountId")) + "/events")
}

// newRelicEvent is one custom event of type FlagplaneAuditEvent; the key goes in Api-Key.
func newRelicEvent(ev event, values map[string]any) ([]byte, http.Header, error) {
	e := ev.Entry
	actions := make([]string, 0, len(e.Accesses))
	resources := make([]string, 0, len(e.Accesses))
	for _, a := range e.Accesses {
		actions, resources = append(actions, a.Action), append(resources, a.Resource)
	}
	body, err := json.Marshal([]map[string]any{{
		"eventType": "FlagplaneAuditEvent", "timestamp": e.Date, "entryId": e.ID, "kind": e.Kind, "name": e.Name,
		"title": e.Title, "comment": e.Comment, "subject": e.Subject.Name,
		"actions": strings.Join(actions, ","), "resources": strings.Join(resources, ","),
	}})
	h := jsonHeader()
	h.Set("Api-Key", str(values, "insertKey"))
	return body, h, err
}

// signedEntry is the entry as the audit log API shows it, signed as
// webhooks are (hex HMAC-SHA256 of the body in X-SVC-Signature).
func signedEntry(ev event, values map[string]any) ([]byte, http.Header, error) {
	h := jsonHeader()
	h.Set(webhook.SignatureHeader, webhook.Sign(ev.JSON, str(values, "secret")))
	h.Set(webhook.DeliveryHeader, ev.DeliveryID)
	return ev.JSON, h, nil
}

// challenge is the body of a generic webhook's verification request.
type challenge struct {
	Kind      string `json:"kind"`
	Challenge string `json:"challenge"`
}

// verificationRequest is the signed challenge of a two-step setup.
func verificationRequest(token string, values map[string]any) ([]byte, http.Header, error) {
	body, err := json.Marshal(challenge{Kind: "verification", Challenge: token})
	if err != nil {
		return nil, nil, fmt.Errorf("encode challenge: %w", err)
	}
	h := jsonHeader()
	h.Set(webhook.SignatureHeader, webhook.Sign(body, str(values, "secret")))
	return body, h, nil
}
