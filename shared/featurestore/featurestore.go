// Package featurestore keeps external persistent stores (Redis, DynamoDB)
// filled with an environment's flag data, in the layouts LaunchDarkly's
// server-side SDKs read in daemon mode: the delivery configurations
// (capability featureStore) and the big segment store integrations
// (capability bigSegmentStore). Configurations are stored in the table and
// changed through the audited commit; the stores are written by Sync,
// which the outbox consumer runs for every change of flag data, through
// the Store interface (packages redisstore and dynamostore).
package featurestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/sdkdata"
	"github.com/flagplane/flagplane/shared/store"
)

// The two capabilities a configuration serves.
const (
	FeatureStore    = "featureStore"
	BigSegmentStore = "bigSegmentStore"
)

// Limits of one configuration.
const (
	maxName = 256
	maxTags = 50
	maxTag  = 64
	// MaxPerEnvironment bounds the configurations of one capability in
	// one environment: each is written on every flag change.
	MaxPerEnvironment = 20
)

// Config is one delivery configuration or big segment store integration.
type Config struct {
	ID             string         `json:"_id"`
	Capability     string         `json:"capability"`
	IntegrationKey string         `json:"integrationKey"`
	ProjectKey     string         `json:"projectKey"`
	EnvironmentKey string         `json:"environmentKey"`
	Name           string         `json:"name"`
	Config         map[string]any `json:"config"`
	On             bool           `json:"on"`
	Tags           []string       `json:"tags"`
	Version        int            `json:"version"`
	CreationDate   int64          `json:"creationDate"`
}

// Masked is the configuration as reads, audit entries and logs show it:
// secret config values replaced by Mask.
func (c Config) Masked() Config {
	c.Config = masked(c.IntegrationKey, c.Config)
	c.Tags = append([]string{}, c.Tags...)
	return c
}

// Settings are the decoded config.
func (c *Config) Settings() Settings { return SettingsOf(c.Config) }

// Href is the configuration's API path.
func (c *Config) Href() string {
	base := "/api/v2/integration-capabilities/featureStore/"
	if c.Capability == BigSegmentStore {
		base = "/api/v2/integration-capabilities/big-segment-store/"
	}
	return base + c.ProjectKey + "/" + c.EnvironmentKey + "/" + c.IntegrationKey + "/" + c.ID
}

// Resource is the configuration's resource specifier.
func (c *Config) Resource() string {
	return "proj/" + c.ProjectKey + ":env/" + c.EnvironmentKey + ":integration/" + c.IntegrationKey + "/" + c.ID
}

// Actions are those an `_access` object reports on a configuration.
var Actions = []string{"updateName", "updateOn", "updateTags", "updateConfiguration", "deleteIntegration"}

// patchable maps the fields a JSON patch may touch to their actions.
var patchable = map[string]string{"name": "updateName", "on": "updateOn", "tags": "updateTags", "config": "updateConfiguration"}

// PatchActions returns the actions a JSON patch of a configuration performs.
func PatchActions(p patch.Patch) ([]string, error) {
	return p.Actions(patchable, "a store integration configuration")
}

// Input is a create's body.
type Input struct {
	Name   *string        `json:"name"`
	Config map[string]any `json:"config"`
	On     *bool          `json:"on"`
	Tags   []string       `json:"tags"`
}

// Opener connects to the store a configuration names.
type Opener func(ctx context.Context, integrationKey string, s Settings) (Store, error)

// HostCheck refuses, with a 400 naming field, a host that outbound
// connections may not reach: the SSRF guard, also applied when dialing.
type HostCheck func(ctx context.Context, field, host string) error

// FlagSource gives the flag data SDKs read: sdkdata.Service.
type FlagSource interface {
	Flags(ctx context.Context, ref sdkdata.EnvRef) (*sdkdata.Snapshot, error)
}

// Service manages configurations and syncs their stores.
type Service struct {
	table  store.Table
	log    *audit.Log
	envs   *environment.Service
	flags  FlagSource
	open   Opener
	check  HostCheck
	logger *slog.Logger
	now    func() time.Time
}

// NewService returns the service; open connects to stores, check vets
// the hosts configurations name when they are created or changed.
func NewService(table store.Table, log *audit.Log, envs *environment.Service, flags FlagSource, open Opener, check HostCheck, logger *slog.Logger, now func() time.Time) *Service {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Service{table: table, log: log, envs: envs, flags: flags, open: open, check: check, logger: logger, now: now}
}

// checkHost vets the host a normalized config connects to (a Redis host,
// a DynamoDB endpoint override) when it differs from the stored one's;
// AWS's own DynamoDB endpoints are not the user's choice.
func (s *Service) checkHost(ctx context.Context, integrationKey string, config, stored map[string]any) error {
	field, host := destination(integrationKey, config)
	if host == "" {
		return nil
	}
	if _, was := destination(integrationKey, stored); was == host {
		return nil
	}
	return s.check(ctx, "config."+field, host)
}

func checkCapability(c string) {
	if c != FeatureStore && c != BigSegmentStore {
		panic("featurestore: unknown capability " + c)
	}
}

func checkName(name string) error {
	if strings.TrimSpace(name) == "" {
		return fault.New(fault.Invalid, "field \"name\" may not be empty")
	}
	if len(name) > maxName {
		return fault.New(fault.Invalid, "field \"name\" is longer than %d characters", maxName)
	}
	return nil
}

func checkTags(tags []string) error {
	if len(tags) > maxTags {
		return fault.New(fault.Invalid, "field \"tags\" holds more than %d tags", maxTags)
	}
	for _, t := range tags {
		if strings.TrimSpace(t) == "" || len(t) > maxTag {
			return fault.New(fault.Invalid, "field \"tags\": tag %q must be 1 to %d characters", t, maxTag)
		}
	}
	return nil
}

// Create stores a new configuration of the capability for an environment.
// The outbox consumer writes the full data set when it is on.
func (s *Service) Create(ctx context.Context, capability, projectKey, envKey, integrationKey string, in Input) (*Config, error) {
	checkCapability(capability)
	if err := checkStore(integrationKey); err != nil {
		return nil, err
	}
	if in.Config == nil {
		return nil, fault.New(fault.Invalid, "field \"config\" is required: the %s connection settings", integrationKey)
	}
	if _, err := s.envs.Get(ctx, projectKey, envKey); err != nil {
		return nil, err
	}
	config, err := normalize(integrationKey, in.Config)
	if err != nil {
		return nil, err
	}
	if err := s.checkHost(ctx, integrationKey, config, nil); err != nil {
		return nil, err
	}
	c := &Config{ID: uuid.NewString(), Capability: capability, IntegrationKey: integrationKey, ProjectKey: projectKey,
		EnvironmentKey: envKey, Config: config, Tags: in.Tags, Version: 1, CreationDate: s.now().UnixMilli()}
	c.Name = integrationKey + " " + projectKey + "/" + envKey
	if in.Name != nil {
		c.Name = *in.Name
	}
	if in.On != nil {
		c.On = *in.On // the reference's default is off
	}
	if c.Tags == nil {
		c.Tags = []string{}
	}
	if err := checkName(c.Name); err != nil {
		return nil, err
	}
	if err := checkTags(c.Tags); err != nil {
		return nil, err
	}
	existing, err := s.List(ctx, capability, projectKey, envKey)
	if err != nil {
		return nil, err
	}
	if len(existing) >= MaxPerEnvironment {
		return nil, fault.New(fault.Invalid, "environment %s/%s already has %d %s configurations, the most it may have", projectKey, envKey, len(existing), capability)
	}
	item, err := encode(c)
	if err != nil {
		return nil, err
	}
	m := c.Masked()
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{store.Put(item, store.IfNotExists())},
		Kind:   "integration", Resource: c.Resource(), Actions: []string{"createIntegration"}, Name: c.Name, Href: c.Href(),
		TitleVerb: "created the " + label(capability), Current: &m,
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

func label(capability string) string {
	if capability == BigSegmentStore {
		return "big segment store integration"
	}
	return "delivery configuration"
}

func encode(c *Config) (store.Item, error) {
	data, err := json.Marshal(c)
	if err != nil {
		return store.Item{}, fmt.Errorf("encode configuration %s: %w", c.ID, err)
	}
	k := store.FeatureStoreKey(c.ID)
	return store.Item{PK: k.PK, SK: k.SK, GSI1PK: store.FeatureStoresIndexPK,
		GSI1SK:  store.FeatureStoreIndexSK(c.Capability, c.ProjectKey, c.EnvironmentKey, c.ID),
		Version: int64(c.Version), Data: data}, nil
}

func decode(it store.Item) (*Config, error) {
	var c Config
	if err := json.Unmarshal(it.Data, &c); err != nil {
		return nil, fmt.Errorf("decode configuration %s: %w", it.PK, err)
	}
	return &c, nil
}

// Get returns one configuration; the path's capability, environment and
// store must be the configuration's, else it is not found.
func (s *Service) Get(ctx context.Context, capability, projectKey, envKey, integrationKey, id string) (*Config, error) {
	checkCapability(capability)
	c, found, err := s.load(ctx, id)
	if err != nil {
		return nil, err
	}
	if !found || c.Capability != capability || c.ProjectKey != projectKey || c.EnvironmentKey != envKey || c.IntegrationKey != integrationKey {
		return nil, fault.New(fault.NotFound, "%s %q not found in %s/%s for %s", label(capability), id, projectKey, envKey, integrationKey)
	}
	return c, nil
}

// load reads configuration id, of any capability and place; found is
// false when there is none (or id is not one's).
func (s *Service) load(ctx context.Context, id string) (c *Config, found bool, err error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, false, nil
	}
	it, err := s.table.Get(ctx, store.FeatureStoreKey(id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("load configuration %s: %w", id, err)
	}
	c, err = decode(it)
	if err != nil {
		return nil, false, err
	}
	return c, true, nil
}

// List returns the capability's configurations, of one environment when
// projectKey is set, in environment then id order.
func (s *Service) List(ctx context.Context, capability, projectKey, envKey string) ([]*Config, error) {
	checkCapability(capability)
	q := store.Query{Index: store.IndexGSI1, PK: store.FeatureStoresIndexPK, SKPrefix: store.FeatureStoreIndexPrefix(capability, projectKey, envKey)}
	return record.All(ctx, s.table, q, "store integration configurations", decode)
}

// Patch applies a JSON patch to the masked configuration; secrets the
// patch leaves masked are kept.
func (s *Service) Patch(ctx context.Context, capability, projectKey, envKey, integrationKey, id string, p patch.Patch) (*Config, error) {
	if _, err := PatchActions(p); err != nil {
		return nil, err
	}
	old, err := s.Get(ctx, capability, projectKey, envKey, integrationKey, id)
	if err != nil {
		return nil, err
	}
	view := old.Masked()
	var next Config
	if err := p.ApplyTo(&view, &next); err != nil {
		return nil, err
	}
	if next.Config == nil {
		return nil, fault.New(fault.Invalid, "field \"config\" may not be removed")
	}
	keepSecrets(integrationKey, next.Config, old.Config)
	if next.Config, err = normalize(integrationKey, next.Config); err != nil {
		return nil, err
	}
	if err := s.checkHost(ctx, integrationKey, next.Config, old.Config); err != nil {
		return nil, err
	}
	next.ID, next.Capability, next.IntegrationKey, next.ProjectKey, next.EnvironmentKey = old.ID, old.Capability, old.IntegrationKey, old.ProjectKey, old.EnvironmentKey
	next.CreationDate, next.Version = old.CreationDate, old.Version
	if next.Tags == nil {
		next.Tags = []string{}
	}
	if err := checkName(next.Name); err != nil {
		return nil, err
	}
	if err := checkTags(next.Tags); err != nil {
		return nil, err
	}
	changed := patch.ChangedFields(old, &next, patchable)
	if len(changed) == 0 {
		return old, nil
	}
	next.Version = old.Version + 1
	item, err := encode(&next)
	if err != nil {
		return nil, err
	}
	prev, cur := old.Masked(), next.Masked()
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{store.Put(item, store.IfVersion(int64(old.Version)))},
		Kind:   "integration", Resource: next.Resource(), Actions: changed, Name: next.Name, Href: next.Href(),
		TitleVerb: "updated the " + label(capability), Comment: p.Comment, Previous: &prev, Current: &cur,
		Delta:    maskDelta(integrationKey, p),
		Conflict: fmt.Sprintf("%s %q was changed by another request; read it again and retry", label(capability), id),
	})
	if err != nil {
		return nil, err
	}
	return &next, nil
}

// maskDelta is the patch as the audit entry keeps it: values written to
// secret config fields (or to the whole config) masked.
func maskDelta(integrationKey string, p patch.Patch) json.RawMessage {
	ops := make([]patch.Op, len(p.Ops))
	touched := false
	for i, op := range p.Ops {
		segs := patch.Segments(op.Path)
		switch {
		case segs[0] == "config" && len(segs) == 1 && op.Value != nil:
			var cfg map[string]any
			if json.Unmarshal(op.Value, &cfg) == nil {
				op.Value, _ = json.Marshal(masked(integrationKey, cfg))
			} else {
				op.Value = json.RawMessage(`"` + Mask + `"`)
			}
			touched = true
		case segs[0] == "config" && len(segs) > 1 && isSecret(integrationKey, segs[1]) && op.Value != nil:
			op.Value = json.RawMessage(`"` + Mask + `"`)
			touched = true
		}
		ops[i] = op
	}
	if !touched {
		return p.Raw
	}
	out, err := json.Marshal(ops)
	if err != nil {
		return nil
	}
	return out
}

// Delete removes a configuration with its status. The store keeps what
// was written: SDKs reading it go on serving the last data set.
func (s *Service) Delete(ctx context.Context, capability, projectKey, envKey, integrationKey, id string) error {
	old, err := s.Get(ctx, capability, projectKey, envKey, integrationKey, id)
	if err != nil {
		return err
	}
	m := old.Masked()
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{
			store.Delete(store.FeatureStoreKey(id), store.IfVersion(int64(old.Version))),
			store.Delete(store.FeatureStoreStatusKey(id), store.Cond{}),
		},
		Kind: "integration", Resource: old.Resource(), Actions: []string{"deleteIntegration"}, Name: old.Name, Href: old.Href(),
		TitleVerb: "deleted the " + label(capability), Previous: &m,
		Conflict: fmt.Sprintf("%s %q was changed by another request; read it again and retry", label(capability), id),
	})
	return err
}

// feedsOn returns the delivery configurations (feature stores) that are
// on, of one project (and one environment when envKey is set), by id.
// Big segment stores are not among them: flag data does not feed them.
func (s *Service) feedsOn(ctx context.Context, projectKey, envKey string) ([]*Config, error) {
	list, err := s.List(ctx, FeatureStore, projectKey, envKey)
	if err != nil {
		return nil, err
	}
	out := slices.DeleteFunc(list, func(c *Config) bool { return !c.On })
	slices.SortFunc(out, func(a, b *Config) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}
