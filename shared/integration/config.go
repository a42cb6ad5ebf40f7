package integration

import (
	"encoding/json"
	"fmt"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/resource"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/google/uuid"
)

// Mask replaces a secret value in every read, audit entry and payload.
const Mask = "********"

// Config is one integration configuration as stored. Secret configValues
// are kept as sent (delivery needs them; DynamoDB encrypts them at rest)
// and masked everywhere they are shown after creation.
type Config struct {
	ID               string            `json:"_id"`
	IntegrationKey   string            `json:"_integrationKey"`
	Name             string            `json:"name"`
	CreatedAt        int64             `json:"_createdAt"`
	Tags             []string          `json:"tags"`
	Enabled          bool              `json:"enabled"`
	ConfigValues     map[string]any    `json:"configValues"`
	CapabilityConfig *CapabilityConfig `json:"capabilityConfig,omitempty"`
	MaintainerID     string            `json:"_maintainerId,omitempty"`
	// Pending marks a two-step setup draft: listed only on request, and
	// sent nothing, until its setup is finalized.
	Pending bool `json:"_pending,omitempty"`
	// SetupError is why a draft's endpoint failed its last verification
	// (hosts only, never a URL or a secret).
	SetupError string `json:"_setupError,omitempty"`
	Version    int64  `json:"-"`
}

// CapabilityConfig configures what the integration's capabilities do.
type CapabilityConfig struct {
	// AuditLogEventsHook selects the audit log entries sent; no
	// statements sends every entry, as for webhooks.
	AuditLogEventsHook *EventsHook `json:"auditLogEventsHook,omitempty"`
	// Approvals is the reference's other capability, which no shipped
	// integration offers: kept only to refuse it by name.
	Approvals json.RawMessage `json:"approvals,omitempty"`
}

// UnmarshalJSON takes the capability configuration as an object (the
// reference's request) or as the JSON-encoded string answers carry (spec
// 2.9), so what a read shows can be sent back as it is.
func (c *CapabilityConfig) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return fault.New(fault.Invalid, "field \"capabilityConfig\" must be an object or a JSON-encoded object")
		}
		b = []byte(s)
	}
	type plain CapabilityConfig // without this method
	if err := json.Unmarshal(b, (*plain)(c)); err != nil {
		return fault.New(fault.Invalid, "field \"capabilityConfig\" must be an object with auditLogEventsHook.statements, a list of policy statements: %s", err.Error())
	}
	return nil
}

// EventsHook is the events hook capability's configuration.
type EventsHook struct {
	Statements []policy.Statement `json:"statements"`
}

// Input is the body of a create request.
type Input struct {
	Name             *string           `json:"name"`
	ConfigValues     map[string]any    `json:"configValues"`
	Enabled          *bool             `json:"enabled"`
	Tags             []string          `json:"tags"`
	CapabilityConfig *CapabilityConfig `json:"capabilityConfig"`
}

// Actions are the actions `_access` reports on a configuration.
var Actions = []string{"updateName", "updateOn", "updateTags", "updateConfiguration", "updateStatements", "deleteIntegration"}

// patchable maps the fields a JSON patch may change to their actions.
var patchable = map[string]string{
	"name":             "updateName",
	"enabled":          "updateOn",
	"tags":             "updateTags",
	"configValues":     "updateConfiguration",
	"capabilityConfig": "updateStatements",
}

// PatchActions returns the actions a JSON patch of a configuration performs.
func PatchActions(p patch.Patch) ([]string, error) { return kind.PatchActions(p) }

// Href is a configuration's API path; ListHref the list of its key.
func Href(id string) string { return "/api/v2/integration-configurations/" + id }

// ListHref is the API path of the configurations of an integration key.
func ListHref(integrationKey string) string {
	return "/api/v2/integration-configurations/keys/" + integrationKey
}

// Resource is the configuration as policies name it: the integration key,
// with the configuration's tags (shared/policy/builtin.go).
func Resource(integrationKey string, tags []string) policy.Resource {
	return policy.NewResource("integration", integrationKey, tags...)
}

func (c *Config) specifier() string { return "integration/" + c.IntegrationKey }

// Masked is the configuration as reads, audit entries and webhook
// payloads show it: every secret field of the manifest that holds a value
// is replaced by Mask.
func (c Config) Masked(m *Manifest) Config {
	values := make(map[string]any, len(c.ConfigValues))
	for k, v := range c.ConfigValues {
		if m.Secret(k) && v != nil && v != "" {
			v = Mask
		}
		values[k] = v
	}
	c.ConfigValues = values
	return c
}

// statements are the events hook's statements, nil when it has none.
func (c *Config) statements() []policy.Statement {
	if c.CapabilityConfig == nil || c.CapabilityConfig.AuditLogEventsHook == nil {
		return nil
	}
	return c.CapabilityConfig.AuditLogEventsHook.Statements
}

func (c *Config) item() (store.Item, error) {
	data, err := json.Marshal(c)
	gsk := store.IntegrationConfigIndexSK(c.IntegrationKey, c.CreatedAt, c.ID)
	return store.Item{GSI1PK: store.IntegrationConfigsIndexPK, GSI1SK: gsk, Data: data}, err
}

// kind describes configurations to the resource kit; audit entries show
// them masked.
var kind = resource.Kind[Config]{
	Audit: "integration", Noun: "integration configuration", Created: "createIntegration", Deleted: "deleteIntegration",
	Patchable: patchable, Called: "an integration configuration",
	Item: (*Config).item, Decode: decode,
	Version: func(c *Config) int64 { return c.Version },
	Name:    func(c *Config) string { return c.Name },
	Shown:   shown,
}

// shown is c masked by its manifest; with the manifest gone (never for a
// configuration read through load), its values are left out.
func shown(c *Config) any {
	m, err := Lookup(c.IntegrationKey)
	if err != nil {
		bare := *c
		bare.ConfigValues = nil
		return bare
	}
	return c.Masked(m)
}

// ref names the configuration with id, of integration c (nil for a read);
// an id that is no UUID names none.
func ref(id string, c *Config) resource.Ref {
	_, err := uuid.Parse(id)
	r := resource.Ref{Key: store.IntegrationConfigKey(id), What: fmt.Sprintf("integration configuration %q", id), Href: Href(id), Malformed: err != nil}
	if c != nil {
		r.Resource = c.specifier()
	}
	return r
}

func decode(it store.Item) (*Config, error) {
	var c Config
	if err := json.Unmarshal(it.Data, &c); err != nil {
		return nil, fmt.Errorf("decode integration configuration %s: %w", it.PK, err)
	}
	c.Version = it.Version
	return &c, nil
}

// maskedDelta is the patch as sent, with every value written under a
// secret field (or under configValues as a whole) masked: the audit
// entry's delta must not carry the secret either.
func maskedDelta(p patch.Patch, m *Manifest) (json.RawMessage, error) {
	ops := make([]patch.Op, len(p.Ops))
	for i, op := range p.Ops {
		parts := patch.Segments(op.Path)
		if parts[0] == "configValues" && op.Value != nil {
			switch {
			case len(parts) == 1:
				var values map[string]any
				if json.Unmarshal(op.Value, &values) == nil {
					op.Value, _ = json.Marshal(Config{ConfigValues: values}.Masked(m).ConfigValues)
				} else {
					op.Value = json.RawMessage(`"` + Mask + `"`)
				}
			case m.Secret(parts[1]):
				op.Value = json.RawMessage(`"` + Mask + `"`)
			}
		}
		ops[i] = op
	}
	return json.Marshal(ops)
}
