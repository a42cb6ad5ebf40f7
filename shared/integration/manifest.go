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
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

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
// Schema; properties marked writeOnly are secrets, never shown after
// creation) and what it can do.
type Manifest struct {
	Key          string          `json:"key"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	Capabilities []string        `json:"capabilities"`
	Setup        string          `json:"setup,omitempty"`
	ConfigSchema json.RawMessage `json:"configSchema"`

	schema  *jsonschema.Schema
	secrets []string // the writeOnly properties, sorted
	fields  []string // every property, sorted
}

// Offers reports whether the integration has the capability.
func (m *Manifest) Offers(capability string) bool { return slices.Contains(m.Capabilities, capability) }

// Secret reports whether configValues field name is a secret.
func (m *Manifest) Secret(name string) bool {
	_, ok := slices.BinarySearch(m.secrets, name)
	return ok
}

// Fields are the names configValues may hold, sorted.
func (m *Manifest) Fields() []string { return slices.Clone(m.fields) }

// Defaults returns values with the schema's defaults filled in for
// fields that are absent.
func (m *Manifest) Defaults(values map[string]any) map[string]any {
	out := make(map[string]any, len(values))
	for k, v := range values {
		out[k] = v
	}
	for name, p := range m.schema.Properties {
		if _, ok := out[name]; !ok && p.Default != nil {
			out[name] = *p.Default
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

// EventHookKeys are the integration keys offering the events hook, sorted.
func EventHookKeys() []string {
	var out []string
	for _, k := range Keys() {
		if manifests[k].Offers(CapabilityEventsHook) {
			out = append(out, k)
		}
	}
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

// parseManifest reads one manifest and compiles its schema (checked
// against the JSON Schema meta-schema by the compiler).
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
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(m.ConfigSchema))
	if err != nil {
		return nil, fmt.Errorf("configSchema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	url := "flagplane:integration/" + m.Key + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("configSchema: %w", err)
	}
	if m.schema, err = c.Compile(url); err != nil {
		return nil, fmt.Errorf("configSchema: %w", err)
	}
	if m.schema.Types == nil || m.schema.Types.String() != "[object]" || len(m.schema.Properties) == 0 {
		return nil, fmt.Errorf("configSchema must be an object schema with properties")
	}
	for name, p := range m.schema.Properties {
		m.fields = append(m.fields, name)
		if p.WriteOnly {
			m.secrets = append(m.secrets, name)
		}
	}
	sort.Strings(m.fields)
	sort.Strings(m.secrets)
	return &m, nil
}

// printer renders the schema library's messages.
var printer = message.NewPrinter(language.English)

// Validate checks configValues against the manifest's schema; the 400
// names every field that is missing, unknown or wrong, as
// configValues.<field>, and never echoes a value (it may be a secret).
func (m *Manifest) Validate(values map[string]any) error {
	if values == nil {
		return fault.New(fault.Invalid, "field \"configValues\" is required: an object with the fields of the %s integration (%s)", m.Key, strings.Join(m.fields, ", "))
	}
	// Through JSON, so the validator sees plain JSON values whatever the caller built.
	raw, err := json.Marshal(values)
	if err != nil {
		return fault.New(fault.Invalid, "field \"configValues\" is not a JSON object")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fault.New(fault.Invalid, "field \"configValues\" is not a JSON object")
	}
	err = m.schema.Validate(inst)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return fmt.Errorf("validate configValues of %s: %w", m.Key, err)
	}
	var problems []string
	m.describe(ve, &problems)
	sort.Strings(problems)
	problems = slices.Compact(problems)
	return fault.New(fault.Invalid, "configValues of the %s integration: %s", m.Key, strings.Join(problems, "; "))
}

// describe collects the leaf errors of a validation error as sentences
// naming the field.
func (m *Manifest) describe(ve *jsonschema.ValidationError, out *[]string) {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			m.describe(c, out)
		}
		return
	}
	at := "configValues"
	for _, p := range ve.InstanceLocation {
		at += "." + p
	}
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		for _, f := range k.Missing {
			*out = append(*out, fmt.Sprintf("field %q is required", at+"."+f))
		}
		return
	case *kind.AdditionalProperties:
		for _, f := range k.Properties {
			*out = append(*out, fmt.Sprintf("field %q is not a field of the %s integration (its fields: %s)", at+"."+f, m.Key, strings.Join(m.fields, ", ")))
		}
		return
	}
	if len(ve.InstanceLocation) == 1 && m.Secret(ve.InstanceLocation[0]) {
		// The library's message may quote the value: a secret is never echoed.
		*out = append(*out, fmt.Sprintf("field %q is not a valid %s", at, m.title(ve.InstanceLocation[0])))
		return
	}
	*out = append(*out, fmt.Sprintf("field %q: %s", at, ve.ErrorKind.LocalizedString(printer)))
}

func (m *Manifest) title(field string) string {
	if p, ok := m.schema.Properties[field]; ok && p.Title != "" {
		return p.Title
	}
	return field
}
