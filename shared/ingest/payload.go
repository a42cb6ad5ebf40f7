// Package ingest takes the event payloads LaunchDarkly's SDKs send (event
// schema 4: index, identify, feature, custom, summary; and diagnostic
// events) and aggregates them into the table: context instances, context
// kinds, the attribute index, applications and their versions, the flags
// each application evaluated, per-flag evaluation counters by variation
// and hour, the SDKs seen, and hourly counters with distinct-context
// sketches. Raw events are not stored, except those of environments
// exporting to a warehouse destination, which the export tap spools until
// the export job has written them to the stage (export.go).
//
// A payload travels as one message (one per payload, never per event):
// through an inbox in the data file locally, through SQS in AWS; the
// Aggregator applies it, in marked steps, so a delivery again after a
// failure or a crash counts each event once. No HTTP or AWS code lives here.
package ingest

import (
	"encoding/json"
	"strings"
)

// Sources of payloads: which SDKs sent them, by the route they used.
const (
	SourceServer     = "server"
	SourceMobile     = "mobile"
	SourceClient     = "client"
	SourceDiagnostic = "diagnostic"
	// SourceMobileDiagnostic and SourceClientDiagnostic are the diagnostic
	// events of mobile and client-side SDKs.
	SourceMobileDiagnostic = "diagnostic-mobile"
	SourceClientDiagnostic = "diagnostic-client"
)

// IsDiagnostic says whether a source carries one diagnostic event rather than an array of events.
func IsDiagnostic(source string) bool {
	return source == SourceDiagnostic || source == SourceMobileDiagnostic || source == SourceClientDiagnostic
}

// MaxBody is the largest payload accepted (5 MiB); larger ones get 413.
const MaxBody = 5 << 20

// Payload is one SDK request's events with what the request said about
// its sender: the message between the ingest handler and the aggregator.
type Payload struct {
	Source     string `json:"source"`
	ProjectKey string `json:"projectKey"`
	EnvKey     string `json:"environmentKey"`
	// EnvID is the environment's _id, which names its context partition.
	EnvID string `json:"environmentId"`
	// PayloadID is X-LaunchDarkly-Payload-ID: a retry carries the same one.
	PayloadID string `json:"payloadId,omitempty"`
	// UserAgent is X-LaunchDarkly-User-Agent or else User-Agent, e.g. "GoClient/7.14.6".
	UserAgent string `json:"userAgent,omitempty"`
	// Wrapper is X-LaunchDarkly-Wrapper, e.g. "react-client-sdk/3.0.0".
	Wrapper string `json:"wrapper,omitempty"`
	// Tags is X-LaunchDarkly-Tags: "application-id/shop application-version/1.2".
	Tags string `json:"tags,omitempty"`
	// ReceivedAt is Unix milliseconds.
	ReceivedAt int64 `json:"receivedAt"`
	// Body is the request body as sent: a JSON array of events (or one
	// diagnostic event).
	Body json.RawMessage `json:"body"`
}

// Application is what X-LaunchDarkly-Tags says about the sending application.
type Application struct {
	ID          string
	Version     string
	VersionName string
}

// App parses the payload's tags. Values LaunchDarkly would refuse
// (characters other than letters, digits, '.', '_', '-'; over 64) are ignored.
func (p Payload) App() Application {
	var a Application
	for _, field := range strings.Fields(p.Tags) {
		name, value, ok := strings.Cut(field, "/")
		if !ok || !validTag(value) {
			continue
		}
		switch name {
		case "application-id":
			a.ID = value
		case "application-version":
			a.Version = value
		case "application-version-name":
			a.VersionName = value
		}
	}
	if a.ID == "" {
		a.Version, a.VersionName = "", ""
	}
	return a
}

func validTag(v string) bool {
	if v == "" || len(v) > 64 {
		return false
	}
	for _, r := range v {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
		default:
			return false
		}
	}
	return true
}

// SDK is the SDK that sent the payload, from its user agent ("GoClient/7.14.6").
type SDK struct {
	Type    string `json:"type"`
	Name    string `json:"name"`
	Version string `json:"version"`
	Wrapper string `json:"wrapper,omitempty"`
}

// SDK parses the payload's user agent; unknown parts stay empty.
func (p Payload) SDK() SDK {
	s := SDK{Type: sdkType(p.Source), Wrapper: p.Wrapper}
	ua := strings.TrimSpace(p.UserAgent)
	if first, _, _ := strings.Cut(ua, " "); first != "" {
		s.Name, s.Version, _ = strings.Cut(first, "/")
	}
	if len(s.Name) > 64 {
		s.Name = s.Name[:64]
	}
	if len(s.Version) > 32 {
		s.Version = s.Version[:32]
	}
	return s
}

func sdkType(source string) string {
	switch source {
	case SourceMobile, SourceMobileDiagnostic:
		return "mobile"
	case SourceClient, SourceClientDiagnostic:
		return "browser"
	}
	return "server"
}
