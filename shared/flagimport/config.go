// Package flagimport holds flag import configurations (spec 2.18): where a
// project's flags come from in another feature-management system, and the
// runs that read them there and create or update them here, through the
// flag service and so through the one audited commit path.
package flagimport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
)

// Integration keys: the source systems a configuration may name.
const (
	LaunchDarkly = "launchdarkly"
	Unleash      = "unleash"
	Split        = "split"
)

// fieldKind is what a config field holds.
type fieldKind int

const (
	text    fieldKind = iota // a non-empty string
	baseURL                  // an http(s) URL passing the SSRF guard
	key                      // a key in the source system
	tag                      // a flagplane tag
	envMap                   // an object: source environment key -> environment key here
)

// field is one entry of a source system's config object.
type field struct {
	name     string
	kind     fieldKind
	required bool
	// secret fields are credentials: stored, never shown (masked) or audited.
	secret bool
}

// schemas are the config fields of every source system. The shared ones:
// ldMaintainer (the member id set as the imported flags' maintainer) and
// ldTag (a tag added to every imported flag), as in the reference's example.
var schemas = map[string][]field{
	// Any LaunchDarkly-compatible REST API: LaunchDarkly itself, or another
	// flagplane. sourceProjectKey is the project read there.
	LaunchDarkly: {
		{name: "baseUrl", kind: baseURL, required: true},
		{name: "apiKey", kind: text, required: true, secret: true},
		{name: "sourceProjectKey", kind: key, required: true},
		{name: "environmentMap", kind: envMap},
		{name: "ldMaintainer", kind: text},
		{name: "ldTag", kind: tag},
	},
	// Unleash's admin API with an admin API token; unleashProject defaults
	// to Unleash's "default" project.
	Unleash: {
		{name: "baseUrl", kind: baseURL, required: true},
		{name: "apiToken", kind: text, required: true, secret: true},
		{name: "unleashProject", kind: key},
		{name: "environmentMap", kind: envMap},
		{name: "ldMaintainer", kind: text},
		{name: "ldTag", kind: tag},
	},
	// The reference's example configuration. Kept and validated; no run
	// reads Split here (see Runnable).
	Split: {
		{name: "workspaceApiKey", kind: text, required: true, secret: true},
		{name: "workspaceId", kind: text, required: true},
		{name: "environmentId", kind: text, required: true},
		{name: "splitTag", kind: text},
		{name: "ldApiKey", kind: text, secret: true},
		{name: "ldMaintainer", kind: text},
		{name: "ldTag", kind: tag},
	},
}

// IntegrationKeys are the source systems, sorted.
func IntegrationKeys() []string {
	out := make([]string, 0, len(schemas))
	for k := range schemas {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Runnable reports whether imports from integrationKey can run here: Split
// keeps its configuration shape, but no reader of Split's API is built
// (it could not be tested here).
func Runnable(integrationKey string) bool { return integrationKey != Split }

// ValidIntegrationKey refuses a source system flagplane has no schema for.
func ValidIntegrationKey(integrationKey string) error {
	if _, ok := schemas[integrationKey]; !ok {
		return fault.New(fault.Invalid, "path parameter \"integrationKey\" must be one of %s, not %q", strings.Join(IntegrationKeys(), ", "), integrationKey)
	}
	return nil
}

// Limits on a configuration.
const (
	MaxConfigValueLength = 2048
	MaxEnvironmentMap    = 50
)

// Mask replaces a stored secret in every read and audit entry.
const Mask = "********"

// Config is a source system's config object as stored: each field's JSON
// value, secrets in clear (the run needs them).
type Config map[string]json.RawMessage

// String returns field name's string value, or "".
func (c Config) String(name string) string {
	var s string
	_ = json.Unmarshal(c[name], &s)
	return s
}

// EnvironmentMap returns the environmentMap field, or nil.
func (c Config) EnvironmentMap() map[string]string {
	var m map[string]string
	_ = json.Unmarshal(c["environmentMap"], &m)
	return m
}

// Masked is c as reads and audit entries show it: every secret replaced.
func (c Config) Masked(integrationKey string) Config {
	out := make(Config, len(c))
	for k, v := range c {
		out[k] = v
	}
	for _, f := range schemas[integrationKey] {
		if f.secret && out[f.name] != nil {
			out[f.name] = json.RawMessage(`"` + Mask + `"`)
		}
	}
	return out
}

// keepSecrets gives next the stored secrets of old wherever next still
// holds the mask: a patched configuration read back with its masked
// secrets keeps them, while a new value replaces them.
func keepSecrets(integrationKey string, old, next Config) {
	for _, f := range schemas[integrationKey] {
		if !f.secret {
			continue
		}
		var s string
		if json.Unmarshal(next[f.name], &s) == nil && s == Mask && old[f.name] != nil {
			next[f.name] = old[f.name]
		}
	}
}

// validate checks c against integrationKey's schema and returns it
// compacted. Unknown fields are refused (naming the known ones): a typo in
// a credential's name would otherwise run an import without it.
func validate(integrationKey string, c Config) (Config, error) {
	schema := schemas[integrationKey]
	known := make([]string, 0, len(schema))
	for _, f := range schema {
		known = append(known, f.name)
	}
	for name := range c {
		if !slices.Contains(known, name) {
			return nil, fault.New(fault.Invalid, "field \"config.%s\" is not a %s setting; the settings are %s", name, integrationKey, strings.Join(known, ", "))
		}
	}
	out := Config{}
	for _, f := range schema {
		raw, ok := c[f.name]
		if !ok || string(raw) == "null" {
			if f.required {
				return nil, fault.New(fault.Invalid, "field \"config.%s\" is required for %s imports", f.name, integrationKey)
			}
			continue
		}
		where := "config." + f.name
		if f.kind == envMap {
			m, err := checkEnvMap(where, raw)
			if err != nil {
				return nil, err
			}
			out[f.name], _ = json.Marshal(m)
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, fault.New(fault.Invalid, "field %q must be a string", where)
		}
		s = strings.TrimSpace(s)
		switch {
		case s == "" && f.required:
			return nil, fault.New(fault.Invalid, "field %q is required for %s imports and must not be empty", where, integrationKey)
		case s == "":
			continue
		case len(s) > MaxConfigValueLength:
			return nil, fault.New(fault.Invalid, "field %q must be at most %d characters", where, MaxConfigValueLength)
		case f.kind == key:
			if err := environment.ValidKey(where, s); err != nil {
				return nil, err
			}
		case f.kind == tag:
			if err := environment.ValidTags(where, []string{s}); err != nil {
				return nil, err
			}
		case f.kind == baseURL:
			s = strings.TrimRight(s, "/")
		}
		out[f.name], _ = json.Marshal(s)
	}
	return out, nil
}

func checkEnvMap(where string, raw json.RawMessage) (map[string]string, error) {
	var m map[string]string
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, fault.New(fault.Invalid, "field %q must be an object mapping source environment keys to environment keys of the project", where)
	}
	if len(m) > MaxEnvironmentMap {
		return nil, fault.New(fault.Invalid, "field %q maps %d environments, at most %d allowed", where, len(m), MaxEnvironmentMap)
	}
	targets := map[string]string{}
	for from, to := range m {
		if from == "" || len(from) > MaxConfigValueLength {
			return nil, fault.New(fault.Invalid, "field %q: source environment keys must be 1 to %d characters", where, MaxConfigValueLength)
		}
		if err := environment.ValidKey(fmt.Sprintf("%s.%s", where, from), to); err != nil {
			return nil, err
		}
		if other, dup := targets[to]; dup {
			return nil, fault.New(fault.Invalid, "field %q maps both %q and %q to environment %q; an environment takes one source", where, other, from, to)
		}
		targets[to] = from
	}
	return m, nil
}
