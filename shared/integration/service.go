package integration

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/resource"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/webhook"
)

// Limits of one configuration.
const (
	MaxNameLength = 256
	// MaxPerKey bounds the configurations of one integration key: every
	// audit entry is checked against each enabled one.
	MaxPerKey = 100
)

// Service manages integration configurations and runs their event hooks.
type Service struct {
	table   store.Table
	configs resource.Kit[Config]
	guard   webhook.Guard
	client  *http.Client
	logger  *slog.Logger
	// render is the audit entry as the API shows it (the generic webhook's payload).
	render func(audit.Entry) ([]byte, error)
	now    func() time.Time
}

// NewService returns the service; guard decides which hosts configurations
// may send to (the webhooks' SSRF guard), render turns an audit entry into
// the API's JSON for the generic webhook.
func NewService(table store.Table, log *audit.Log, guard webhook.Guard, render func(audit.Entry) ([]byte, error), logger *slog.Logger, now func() time.Time) *Service {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Service{table: table, configs: resource.New(&kind, table, log), guard: guard, client: guard.Client(webhook.Timeout), render: render, logger: logger, now: now}
}

// validate checks a configuration against its manifest and the rules
// every configuration shares; c holds the real secrets.
func (s *Service) validate(ctx context.Context, m *Manifest, c *Config) error {
	switch {
	case c.Name == "":
		return fault.New(fault.Invalid, "field \"name\" is required")
	case len(c.Name) > MaxNameLength:
		return fault.New(fault.Invalid, "field \"name\" must be at most %d characters", MaxNameLength)
	}
	if err := environment.ValidTags("tags", c.Tags); err != nil {
		return err
	}
	if err := m.Validate(c.ConfigValues); err != nil {
		return err
	}
	if c.CapabilityConfig != nil && c.CapabilityConfig.AuditLogEventsHook != nil {
		if !m.Offers(CapabilityEventsHook) {
			return fault.New(fault.Invalid, "field \"capabilityConfig.auditLogEventsHook\": the %s integration does not offer the %s capability", m.Key, CapabilityEventsHook)
		}
		if err := policy.Validate(c.CapabilityConfig.AuditLogEventsHook.Statements); err != nil {
			return fault.Wrap(err, fault.Invalid, "field \"capabilityConfig.auditLogEventsHook.statements\": %s", fault.MessageOf(err))
		}
	}
	if c.CapabilityConfig != nil && len(c.CapabilityConfig.Approvals) > 0 {
		return fault.New(fault.Invalid, "field \"capabilityConfig.approvals\": the %s integration does not offer the approvals capability (it offers %s)", m.Key, strings.Join(m.Capabilities, ", "))
	}
	if r, ok := renderers[m.Key]; ok {
		u, err := r.endpoint(m.Defaults(c.ConfigValues))
		if err != nil {
			return err
		}
		// A user-chosen host is checked now, as a webhook's URL is, and again when each delivery dials.
		if r.urlField != "" {
			if err := s.guard.Check(ctx, "configValues."+r.urlField, u); err != nil {
				return err
			}
		}
	}
	return nil
}

// Create stores a new configuration of integration key. A manifest with a
// two-step setup makes it a pending draft unless its endpoint answers the
// verification challenge now. The answer masks the secrets.
func (s *Service) Create(ctx context.Context, key string, in Input, maintainerID string) (*Config, error) {
	m, err := Lookup(key)
	if err != nil {
		return nil, err
	}
	if in.Name == nil {
		return nil, fault.New(fault.Invalid, "field \"name\" is required")
	}
	c := &Config{
		ID: uuid.NewString(), IntegrationKey: key, Name: *in.Name, CreatedAt: s.now().UnixMilli(), Tags: in.Tags,
		Enabled: in.Enabled == nil || *in.Enabled, ConfigValues: in.ConfigValues, CapabilityConfig: in.CapabilityConfig,
		MaintainerID: maintainerID,
	}
	if c.Tags == nil {
		c.Tags = []string{}
	}
	if err := s.validate(ctx, m, c); err != nil {
		return nil, err
	}
	// Stored with the manifest's defaults, so reads show what is in effect.
	c.ConfigValues = m.Defaults(c.ConfigValues)
	existing, err := s.list(ctx, key)
	if err != nil {
		return nil, err
	}
	if len(existing) >= MaxPerKey {
		return nil, fault.New(fault.Invalid, "the %s integration already has %d configurations, the most allowed", key, MaxPerKey)
	}
	if m.Setup == SetupVerifyEndpoint {
		if err := s.verify(ctx, m, c); err != nil {
			c.Pending, c.SetupError = true, setupError(err)
		}
	}
	var verb string // the kit's "created the integration configuration"
	if c.Pending {
		verb = "started the setup of the integration configuration"
	}
	if _, err := s.configs.Create(ctx, ref(c.ID, c), c, resource.Change{TitleVerb: verb}); err != nil {
		return nil, err
	}
	masked := c.Masked(m)
	return &masked, nil
}

// Get returns one configuration, secrets masked.
func (s *Service) Get(ctx context.Context, id string) (*Config, error) {
	c, m, err := s.load(ctx, id)
	if err != nil {
		return nil, err
	}
	masked := c.Masked(m)
	return &masked, nil
}

// Stored returns one configuration's integration key and tags, for
// authorization: what policies name it by.
func (s *Service) Stored(ctx context.Context, id string) (key string, tags []string, err error) {
	c, _, err := s.load(ctx, id)
	if err != nil {
		return "", nil, err
	}
	return c.IntegrationKey, c.Tags, nil
}

func (s *Service) load(ctx context.Context, id string) (*Config, *Manifest, error) {
	c, err := s.configs.Get(ctx, ref(id, nil))
	if err != nil {
		return nil, nil, err
	}
	m, err := Lookup(c.IntegrationKey)
	if err != nil {
		return nil, nil, fmt.Errorf("integration configuration %q: its manifest %q is gone: %w", id, c.IntegrationKey, err)
	}
	return c, m, nil
}

// list returns every configuration of a key with its secrets, pending drafts included.
func (s *Service) list(ctx context.Context, key string) ([]*Config, error) {
	q := store.Query{Index: store.IndexGSI1, PK: store.IntegrationConfigsIndexPK, SKPrefix: store.IntegrationConfigsIndexPrefix(key)}
	return record.All(ctx, s.table, q, fmt.Sprintf("configurations of integration %q", key), decode)
}

// all returns every configuration of every key with its secrets, by key
// then creation: one Query, which the event hooks run per audit entry.
func (s *Service) all(ctx context.Context) ([]*Config, error) {
	q := store.Query{Index: store.IndexGSI1, PK: store.IntegrationConfigsIndexPK}
	return record.All(ctx, s.table, q, "integration configurations", decode)
}

// List returns the configurations of an integration key, oldest first,
// secrets masked; pending drafts only when includePending.
func (s *Service) List(ctx context.Context, key string, includePending bool) ([]Config, error) {
	m, err := Lookup(key)
	if err != nil {
		return nil, err
	}
	all, err := s.list(ctx, key)
	if err != nil {
		return nil, err
	}
	out := make([]Config, 0, len(all))
	for _, c := range all {
		if c.Pending && !includePending {
			continue
		}
		out = append(out, c.Masked(m))
	}
	return out, nil
}

// Patch applies a JSON patch to the masked configuration: a secret left as
// the mask keeps its stored value, a new one replaces it. The result is
// validated against the manifest again; a pending draft is verified again,
// so any patch retries its setup.
func (s *Service) Patch(ctx context.Context, id string, p patch.Patch) (*Config, error) {
	if _, err := PatchActions(p); err != nil {
		return nil, err
	}
	old, m, err := s.load(ctx, id)
	if err != nil {
		return nil, err
	}
	before := old.Masked(m)
	var next Config
	if err := p.ApplyTo(before, &next); err != nil {
		return nil, err
	}
	for k, v := range next.ConfigValues {
		if v == Mask && m.Secret(k) {
			if prev, ok := old.ConfigValues[k]; ok {
				next.ConfigValues[k] = prev
			}
		}
	}
	// Read-only fields stay as stored whatever the document said.
	next.ID, next.IntegrationKey, next.CreatedAt, next.MaintainerID = old.ID, old.IntegrationKey, old.CreatedAt, old.MaintainerID
	next.Pending, next.SetupError = old.Pending, old.SetupError
	if next.Tags == nil {
		next.Tags = []string{}
	}
	if err := s.validate(ctx, m, &next); err != nil {
		return nil, err
	}
	var verb string // the kit's "updated the integration configuration"
	switch {
	case old.Pending:
		if err := s.verify(ctx, m, &next); err != nil {
			next.SetupError = setupError(err)
		} else {
			next.Pending, next.SetupError = false, ""
			verb = "finished the setup of the integration configuration"
		}
	case m.Setup == SetupVerifyEndpoint && !reflect.DeepEqual(old.ConfigValues, next.ConfigValues):
		// An active configuration keeps sending only to an endpoint that proved it holds the secret.
		if err := s.verify(ctx, m, &next); err != nil {
			return nil, fault.New(fault.Invalid, "configValues of the %s integration: the new endpoint did not answer the verification challenge (%s); nothing was changed", m.Key, setupError(err))
		}
	}
	after := next.Masked(m)
	actions := kind.Changed(old, &next)
	if len(actions) == 0 && next.Pending == old.Pending {
		before.SetupError = next.SetupError // what this try found, though nothing is written
		return &before, nil
	}
	if next.Pending != old.Pending {
		actions = append(actions, "finalizeIntegration")
	}
	delta, err := maskedDelta(p, m)
	if err != nil {
		return nil, err
	}
	if _, err := s.configs.Update(ctx, ref(id, old), old, &next, resource.Change{Actions: actions, TitleVerb: verb, Comment: p.Comment, Delta: delta}); err != nil {
		return nil, err
	}
	return &after, nil
}

// Delete removes a configuration; deliveries still queued for it send nothing.
func (s *Service) Delete(ctx context.Context, id string) error {
	c, _, err := s.load(ctx, id)
	if err != nil {
		return err
	}
	return s.configs.Remove(ctx, ref(id, c), c, resource.Change{})
}

// setupError is a failed verification as reads show it: its own errors
// name the endpoint's host only, so they are shown as they are.
func setupError(err error) string {
	var f *fault.Error
	if errors.As(err, &f) {
		return f.Message
	}
	return err.Error()
}
