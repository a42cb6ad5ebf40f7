package ingest

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"
)

// event is one event of schema 4, with only the fields aggregation uses.
type event struct {
	Kind         string                 `json:"kind"`
	CreationDate int64                  `json:"creationDate"`
	Context      json.RawMessage        `json:"context"`
	ContextKeys  map[string]string      `json:"contextKeys"`
	Key          string                 `json:"key"`
	StartDate    int64                  `json:"startDate"`
	EndDate      int64                  `json:"endDate"`
	Features     map[string]summaryFlag `json:"features"`

	parsed ldcontext.Context
}

type summaryFlag struct {
	ContextKinds []string         `json:"contextKinds"`
	Counters     []summaryCounter `json:"counters"`
}

type summaryCounter struct {
	Variation *int  `json:"variation"`
	Version   *int  `json:"version"`
	Count     int64 `json:"count"`
	Unknown   bool  `json:"unknown"`
}

// errNotArray is a body that is not a JSON array of events.
var errNotArray = errors.New("the body is not a JSON array of events")

// parseEvents splits a body into its good events and the number of
// malformed ones (bad JSON inside the array, an unknown kind, a missing or
// invalid context): a malformed event never costs a good one.
func parseEvents(body []byte) ([]event, int, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err != nil {
		return nil, 0, fmt.Errorf("%w: %v", errNotArray, err)
	}
	out := make([]event, 0, len(raws))
	skipped := 0
	for _, raw := range raws {
		var e event
		if err := json.Unmarshal(raw, &e); err != nil || !e.valid() {
			skipped++
			continue
		}
		out = append(out, e)
	}
	return out, skipped, nil
}

// valid checks what each kind needs and parses its context.
func (e *event) valid() bool {
	switch e.Kind {
	case "index", "identify":
		return e.parseContext()
	case "feature", "debug", "custom":
		if e.Key == "" {
			return false
		}
		if len(e.Context) > 0 {
			return e.parseContext()
		}
		return len(e.ContextKeys) > 0
	case "summary":
		for _, f := range e.Features {
			for _, c := range f.Counters {
				if c.Count < 0 {
					return false
				}
			}
		}
		return e.EndDate > 0
	}
	return false
}

// MaxContextSize is the largest context (JSON) an event may carry; a
// larger one is malformed, so no stored item outgrows DynamoDB's limit.
const MaxContextSize = 32 << 10

func (e *event) parseContext() bool {
	if len(e.Context) == 0 || len(e.Context) > MaxContextSize {
		return false
	}
	if err := json.Unmarshal(e.Context, &e.parsed); err != nil {
		return false
	}
	return e.parsed.Err() == nil
}

// diagnostic is a diagnostic event (diagnostic-init or periodic diagnostic).
type diagnostic struct {
	Kind string `json:"kind"`
	SDK  struct {
		Name           string `json:"name"`
		Version        string `json:"version"`
		WrapperName    string `json:"wrapperName"`
		WrapperVersion string `json:"wrapperVersion"`
	} `json:"sdk"`
	Configuration struct {
		StreamingDisabled bool `json:"streamingDisabled"`
		UsingRelayDaemon  bool `json:"usingRelayDaemon"`
		UsingProxy        bool `json:"usingProxy"`
	} `json:"configuration"`
}

// connection says how the SDK receives flags: "streaming", "polling", or "relay".
func (d diagnostic) connection() string {
	switch {
	case d.Configuration.UsingRelayDaemon:
		return "relay"
	case d.Configuration.StreamingDisabled:
		return "polling"
	}
	return "streaming"
}
