package evaluation

import (
	"encoding/json"
	"sort"

	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/jsondoc"
)

// ParseContext reads a context as the SDKs serialise one: a single-kind
// object ({"kind":"user","key":"u1",...}) or a multi-kind object
// ({"kind":"multi","user":{"key":"u1"},"org":{"key":"o1"}}). The SDK's own
// JSON reading decides what is valid; a problem is a 400 naming it. The
// pre-context user schema (no "kind") is refused: it silently drops
// unknown top-level attributes, which would make rules miss unnoticed.
func ParseContext(body []byte) (ldcontext.Context, error) {
	var top map[string]json.RawMessage
	if err := jsondoc.Unmarshal(body, &top); err != nil {
		return ldcontext.Context{}, err
	}
	if top == nil {
		return ldcontext.Context{}, fault.New(fault.Invalid, "request body must be a context object, not null")
	}
	rawKind, ok := top["kind"]
	if !ok {
		return ldcontext.Context{}, fault.New(fault.Invalid, `invalid context: "kind" is required: send {"kind":"user","key":"..."} for one kind or {"kind":"multi","user":{"key":"..."},...} for several`)
	}
	var kind string
	if err := json.Unmarshal(rawKind, &kind); err != nil {
		return ldcontext.Context{}, fault.New(fault.Invalid, `invalid context: "kind" must be a string, not %s`, rawKind)
	}
	var c ldcontext.Context
	if err := c.UnmarshalJSON(body); err != nil {
		if ldcontext.Kind(kind) == ldcontext.MultiKind {
			if named := multiProblem(top); named != nil {
				return ldcontext.Context{}, named
			}
		}
		return ldcontext.Context{}, fault.Wrap(err, fault.Invalid, "invalid context: %s", err.Error())
	}
	return c, nil
}

// multiProblem finds which kind of a multi-kind context is invalid, so the
// message can name it; nil when no single kind is at fault.
func multiProblem(top map[string]json.RawMessage) error {
	kinds := make([]string, 0, len(top))
	for k := range top {
		if k != "kind" {
			kinds = append(kinds, k)
		}
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		var attrs map[string]json.RawMessage
		if err := json.Unmarshal(top[k], &attrs); err != nil || attrs == nil {
			return fault.New(fault.Invalid, "invalid context: kind %q of the multi-kind context must be an object, not %s", k, top[k])
		}
		kindJSON, _ := json.Marshal(k)
		attrs["kind"] = kindJSON
		single, _ := json.Marshal(attrs)
		var c ldcontext.Context
		if err := c.UnmarshalJSON(single); err != nil {
			return fault.Wrap(err, fault.Invalid, "invalid context: kind %q of the multi-kind context: %s", k, err.Error())
		}
	}
	return nil
}
