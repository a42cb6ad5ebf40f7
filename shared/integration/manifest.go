// Package integration holds integration configurations: a manifest per
// supported integration key (shipped in manifests/, one JSON file each),
// configurations whose configValues the manifest's JSON Schema validates,
// and the event hooks that send audit log entries to the integrations.
package integration

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/flagplane/flagplane/shared/fault"
)

// Capabilities a manifest may offer.
const (
	// CapabilityEventsHook sends audit log entries to the integration.
	CapabilityEventsHook = "auditLogEventsHook"
)

// Setup kinds: how a new configuration becomes active.
const (
	// SetupVerifyEndpoint makes a new configuration a pending draft until
	// its endpoint answers a signed verification challenge (two-step setup).
	SetupVerifyEndpoint = "verifyEndpoint"
)

// Manifest describes one integration: what its configValues hold (a JSON
// Schema 2020-12 object schema, closed with additionalProperties false;
// properties marked writeOnly are secrets, never shown after creation) and
// what it can do.
type Manifest struct {
	Key          string          `json:"key"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	Capabilities []string        `json:"capabilities"`
	Setup        string          `json:"setup,omitempty"`
	ConfigSchema json.RawMessage `json:"configSchema"`

	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved            // the whole object: the last word
	fieldOf  map[string]*jsonschema.Resolved // each property alone, to name the field that fails
	secrets  []string                        // the writeOnly properties, sorted
	fields   []string                        // every property, sorted
}

// Offers reports whether the integration has the capability.
func (m *Manifest) Offers(capability string) bool { return slices.Contains(m.Capabilities, capability) }

// Secret reports whether configValues field name is a secret.
func (m *Manifest) Secret(name string) bool {
	_, ok := slices.BinarySearch(m.secrets, name)
	return ok
}

// Defaults returns values with the schema's defaults filled in for
// fields that are absent.
func (m *Manifest) Defaults(values map[string]any) map[string]any {
	out := make(map[string]any, len(values))
	for k, v := range values {
		out[k] = v
	}
	for name, p := range m.schema.Properties {
		if _, ok := out[name]; !ok && len(p.Default) > 0 {
			var v any
			if json.Unmarshal(p.Default, &v) == nil {
				out[name] = v
			}
		}
	}
	return out
}

//go:embed manifests/*.json
var manifestFiles embed.FS

// manifests are the shipped manifests by key, loaded and compiled once.
var manifests = mustLoadManifests()

// Lookup returns the manifest of an integration key, or a 404 naming the
// keys there are.
func Lookup(key string) (*Manifest, error) {
	m, ok := manifests[key]
	if !ok {
		return nil, fault.New(fault.NotFound, "integration %q not found: the integrations with configurations are %s", key, strings.Join(Keys(), ", "))
	}
	return m, nil
}

// Keys are the integration keys with a manifest, sorted.
func Keys() []string {
	out := make([]string, 0, len(manifests))
	for k := range manifests {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func mustLoadManifests() map[string]*Manifest {
	out, err := loadManifests()
	if err != nil {
		panic(err) // a shipped manifest is broken: a build defect, caught by the package's tests
	}
	return out
}

func loadManifests() (map[string]*Manifest, error) {
	files, err := manifestFiles.ReadDir("manifests")
	if err != nil {
		return nil, fmt.Errorf("read manifests: %w", err)
	}
	out := map[string]*Manifest{}
	for _, f := range files {
		raw, err := manifestFiles.ReadFile("manifests/" + f.Name())
		if err != nil {
			return nil, fmt.Errorf("read manifest %s: %w", f.Name(), err)
		}
		m, err := parseManifest(raw)
		if err != nil {
			return nil, fmt.Errorf("manifest %s: %w", f.Name(), err)
		}
		if want := strings.TrimSuffix(f.Name(), path.Ext(f.Name())); m.Key != want {
			return nil, fmt.Errorf("manifest %s: key %q must match the file name", f.Name(), m.Key)
		}
		if _, ok := renderers[m.Key]; !ok && m.Offers(CapabilityEventsHook) {
			return nil, fmt.Errorf("manifest %s offers %s but no renderer is registered for it", f.Name(), CapabilityEventsHook)
		}
		out[m.Key] = m
	}
	return out, nil
}

// jsonTypes are the type names a property may have.
var jsonTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// parseManifest reads one manifest and resolves its schema. The library
// does not check a schema against the meta-schema, so the shape flagplane
// relies on is checked here: a closed object of typed properties, with no
// keyword the library would ignore.
func parseManifest(raw []byte) (*Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	switch {
	case m.Key == "" || m.Name == "":
		return nil, fmt.Errorf("key and name are required")
	case len(m.ConfigSchema) == 0:
		return nil, fmt.Errorf("configSchema is required")
	case m.Setup != "" && m.Setup != SetupVerifyEndpoint:
		return nil, fmt.Errorf("setup %q is not one of %q", m.Setup, SetupVerifyEndpoint)
	}
	for _, c := range m.Capabilities {
		if c != CapabilityEventsHook {
			return nil, fmt.Errorf("capability %q is not one flagplane runs (%s)", c, CapabilityEventsHook)
		}
	}
	m.schema = new(jsonschema.Schema)
	if err := json.Unmarshal(m.ConfigSchema, m.schema); err != nil {
		return nil, fmt.Errorf("configSchema: %w", err)
	}
	sch := m.schema
	switch {
	case sch.Type != "object" || len(sch.Properties) == 0:
		return nil, fmt.Errorf("configSchema must be an object schema with properties")
	case sch.AdditionalProperties == nil || sch.AdditionalProperties.Not == nil:
		return nil, fmt.Errorf("configSchema must set additionalProperties to false: a field no manifest names is refused")
	case len(sch.Extra) > 0:
		return nil, fmt.Errorf("configSchema has keywords the validator does not know: %v", slices.Sorted(maps.Keys(sch.Extra)))
	}
	var err error
	if m.resolved, err = sch.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true}); err != nil {
		return nil, fmt.Errorf("configSchema: %w", err)
	}
	m.fieldOf = map[string]*jsonschema.Resolved{}
	for name, p := range sch.Properties {
		switch {
		case !slices.Contains(jsonTypes, p.Type):
			return nil, fmt.Errorf("configSchema property %q: type %q is not a JSON type", name, p.Type)
		case len(p.Extra) > 0:
			return nil, fmt.Errorf("configSchema property %q has keywords the validator does not know: %v", name, slices.Sorted(maps.Keys(p.Extra)))
		}
		if m.fieldOf[name], err = p.Resolve(nil); err != nil {
			return nil, fmt.Errorf("configSchema property %q: %w", name, err)
		}
		m.fields = append(m.fields, name)
		if p.WriteOnly {
			m.secrets = append(m.secrets, name)
		}
	}
	for _, r := range sch.Required {
		if _, ok := sch.Properties[r]; !ok {
			return nil, fmt.Errorf("configSchema requires %q, which is not a property", r)
		}
	}
	sort.Strings(m.fields)
	sort.Strings(m.secrets)
	return &m, nil
}

// Validate checks configValues against the manifest's schema; the 400
// names every field that is missing, unknown or wrong, as
// configValues.<field>, and never echoes a secret's value.
func (m *Manifest) Validate(values map[string]any) error {
	if values == nil {
		return fault.New(fault.Invalid, "field \"configValues\" is required: an object with the fields of the %s integration (%s)", m.Key, strings.Join(m.fields, ", "))
	}
	// Through JSON, so the validator sees plain JSON values whatever the caller built.
	raw, err := json.Marshal(values)
	if err != nil {
		return fault.New(fault.Invalid, "field \"configValues\" is not a JSON object")
	}
	var inst map[string]any
	if err := json.Unmarshal(raw, &inst); err != nil {
		return fault.New(fault.Invalid, "field \"configValues\" is not a JSON object")
	}
	var problems []string
	for _, name := range m.schema.Required {
		if _, ok := inst[name]; !ok {
			problems = append(problems, fmt.Sprintf("field %q is required", "configValues."+name))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(inst)) {
		r, ok := m.fieldOf[name]
		if !ok {
			problems = append(problems, fmt.Sprintf("field %q is not a field of the %s integration (its fields: %s)", "configValues."+name, m.Key, strings.Join(m.fields, ", ")))
			continue
		}
		if err := r.Validate(inst[name]); err != nil {
			if m.Secret(name) {
				// The library's message quotes the value: a secret is never echoed.
				problems = append(problems, fmt.Sprintf("field %q is not a valid %s", "configValues."+name, m.title(name)))
			} else {
				problems = append(problems, fmt.Sprintf("field %q: %s", "configValues."+name, reason(err)))
			}
		}
	}
	if len(problems) > 0 {
		return fault.New(fault.Invalid, "configValues of the %s integration: %s", m.Key, strings.Join(problems, "; "))
	}
	// The whole object, for what no single field shows; its message may quote a secret, so it is not passed on.
	if err := m.resolved.Validate(inst); err != nil {
		return fault.New(fault.Invalid, "configValues of the %s integration do not match its manifest", m.Key)
	}
	return nil
}

// reason is the library's message without the schema locations it
// prefixes ("validating root: ").
func reason(err error) string {
	msg := err.Error()
	for strings.HasPrefix(msg, "validating ") {
		_, rest, ok := strings.Cut(msg, ": ")
		if !ok {
			break
		}
		msg = rest
	}
	return msg
}

func (m *Manifest) title(field string) string {
	if p := m.schema.Properties[field]; p != nil && p.Title != "" {
		return p.Title
	}
	return field
}
