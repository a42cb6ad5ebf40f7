// Package destination holds warehouse destinations: where an environment's
// SDK events are exported (Snowflake, BigQuery, ClickHouse, Redshift,
// Databricks), the RSA key pairs a warehouse user signs in with (private
// keys sealed at rest), the setup scripts that create the warehouse's
// objects and load from the stage, and the export job that moves the
// events ingest spooled into the stage as NDJSON batches. No HTTP or AWS
// code lives here: the stage is an interface (a folder here, S3 in s3stage).
package destination

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/store"
)

// EnvKeySecret names the environment variable holding the key-encryption
// secret private keys are sealed with.
const EnvKeySecret = "FLAGPLANE_DESTINATION_KEY_SECRET"

// MaxPerEnvironment bounds the destinations of one environment.
const MaxPerEnvironment = 20

// MaxNameLength bounds a destination's name.
const MaxNameLength = 256

// Destination is one warehouse destination as stored.
type Destination struct {
	ID           string `json:"_id"`
	ProjectKey   string `json:"projectKey"`
	EnvKey       string `json:"environmentKey"`
	EnvID        string `json:"environmentId"`
	Name         string `json:"name"`
	Kind         string `json:"kind"`
	Config       Config `json:"config"`
	On           bool   `json:"on"`
	CreatedAt    int64  `json:"createdAt"`
	MaintainerID string `json:"maintainerId,omitempty"`
	// CompletedArtifacts are filled by complete-setup.
	CompletedArtifacts *Artifacts `json:"completedArtifacts,omitempty"`
	Version            int64      `json:"-"`
}

// Artifacts are what a completed setup leaves: the script as it was run
// (rebuilt from the stored names; never a password) and the stage.
type Artifacts struct {
	SQLSetupScript string `json:"sqlSetupScript"`
	S3BucketName   string `json:"s3BucketName"`
}

// Input is the body of a create.
type Input struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Config is an object or, as the reference carries it, a JSON-encoded string of one.
	Config json.RawMessage `json:"config"`
	On     *bool           `json:"on"`
}

// Actions are the actions `_access` reports on a destination.
var Actions = []string{"updateName", "updateConfiguration", "updateOn", "deleteDestination"}

var patchable = map[string]string{"name": "updateName", "config": "updateConfiguration", "on": "updateOn"}

// PatchActions returns the actions a JSON patch of a destination performs.
func PatchActions(p patch.Patch) ([]string, error) { return p.Actions(patchable, "a destination") }

// Href is a destination's API path.
func Href(projectKey, envKey, id string) string {
	return "/api/v2/destinations/" + projectKey + "/" + envKey + "/" + id
}

// ListHref is the path of every destination.
const ListHref = "/api/v2/destinations"

// Resource is a destination's resource specifier.
func Resource(projectKey, envKey, id string) string {
	return "proj/" + projectKey + ":env/" + envKey + ":destination/" + id
}

// Service manages destinations, their key pairs and setups.
type Service struct {
	table  store.Table
	log    *audit.Log
	envs   *environment.Service
	sealer *Sealer
	stage  StageInfo
	now    func() time.Time
}

// NewService works over table; sealer (nil: key pairs cannot be made)
// seals private keys, and stage says where exports land, for scripts.
func NewService(table store.Table, log *audit.Log, envs *environment.Service, sealer *Sealer, stage StageInfo, now func() time.Time) *Service {
	return &Service{table: table, log: log, envs: envs, sealer: sealer, stage: stage, now: now}
}

func envParent(projectKey, envKey string) *audit.Parent {
	return &audit.Parent{Name: envKey, Resource: "proj/" + projectKey + ":env/" + envKey,
		Href: "/api/v2/projects/" + projectKey + "/environments/" + envKey}
}

func decode(it store.Item) (*Destination, error) {
	var d Destination
	if err := json.Unmarshal(it.Data, &d); err != nil {
		return nil, fmt.Errorf("decode destination %s: %w", it.SK, err)
	}
	d.Version = it.Version
	if d.Config == nil {
		d.Config = Config{}
	}
	return &d, nil
}

func (d *Destination) put(c store.Cond) (store.Write, error) {
	data, err := json.Marshal(d)
	if err != nil {
		return store.Write{}, fmt.Errorf("encode destination %q: %w", d.ID, err)
	}
	k := store.DestinationKey(d.ProjectKey, d.EnvKey, d.ID)
	gpk, gsk := store.DestinationIndexKeys(d.ProjectKey, d.EnvKey, d.ID)
	return store.Put(store.Item{PK: k.PK, SK: k.SK, GSI1PK: gpk, GSI1SK: gsk, Version: d.Version, Data: data}, c), nil
}

// Get returns one destination; a missing environment or destination is a 404.
func (s *Service) Get(ctx context.Context, projectKey, envKey, id string) (*Destination, error) {
	if _, err := s.envs.Get(ctx, projectKey, envKey); err != nil {
		return nil, err
	}
	return s.load(ctx, projectKey, envKey, id)
}

func (s *Service) load(ctx context.Context, projectKey, envKey, id string) (*Destination, error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, fault.New(fault.NotFound, "destination %s not found in environment %q of project %q", quote(id), envKey, projectKey)
	}
	return record.Load(ctx, s.table, store.DestinationKey(projectKey, envKey, id),
		fmt.Sprintf("destination %q in environment %q of project %q", id, envKey, projectKey), decode)
}

// List returns every destination of the account, by project, environment and id.
func (s *Service) List(ctx context.Context) ([]*Destination, error) {
	return record.All(ctx, s.table, store.Query{Index: store.IndexGSI1, PK: store.DestinationsIndexPK}, "destinations", decode)
}

func (s *Service) ofEnv(ctx context.Context, projectKey, envKey string) ([]*Destination, error) {
	return record.All(ctx, s.table, store.Query{PK: store.ProjectPartition(projectKey), SKPrefix: store.DestinationEnvPrefix(envKey)},
		fmt.Sprintf("destinations of environment %q", envKey), decode)
}

// parseConfig reads a config sent as an object or a JSON-encoded string.
func parseConfig(field string, raw json.RawMessage) (Config, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return Config{}, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fault.New(fault.Invalid, "field %q is not a valid JSON string", field)
		}
		raw = []byte(s)
		if strings.TrimSpace(s) == "" {
			return Config{}, nil
		}
	}
	var c Config
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&c); err != nil || c == nil {
		return nil, fault.New(fault.Invalid, "field %q must be a JSON object (or a string holding one)", field)
	}
	return c, nil
}

// validate checks a destination about to be stored; for snowflake-v2 the
// public key must be one flagplane generated, for this environment or
// account-wide, and is kept in its bare form.
func (s *Service) validate(ctx context.Context, d *Destination) error {
	if err := CheckKind("field \"kind\"", d.Kind); err != nil {
		return err
	}
	if len(d.Name) > MaxNameLength {
		return fault.New(fault.Invalid, "field \"name\" must be at most %d characters", MaxNameLength)
	}
	if err := checkConfig(d.Kind, d.Config, "config.", true); err != nil {
		return err
	}
	if d.Kind == KindSnowflake {
		der, err := ParsePublicKey("config.publicKey", d.Config.Str("publicKey", ""))
		if err != nil {
			return err
		}
		k, err := s.keyPair(ctx, "config.publicKey", der)
		if err != nil {
			return err
		}
		if k.ProjectKey != "" && (k.ProjectKey != d.ProjectKey || k.EnvKey != d.EnvKey) {
			return fault.New(fault.Invalid, "field \"config.publicKey\" belongs to a key pair generated for environment %q of project %q", k.EnvKey, k.ProjectKey)
		}
		d.Config["publicKey"] = k.PublicKey
	}
	return nil
}

// marker returns the write that keeps the environment's export marker in
// step with its destinations (all, as read) after this change (next nil
// for a delete), conditional on the marker as read: concurrent changes in
// one environment cannot leave it stale; one of them gets a 409.
func (s *Service) marker(ctx context.Context, env *environment.Environment, all []*Destination, next *Destination, drop string) (store.Write, error) {
	active := []string{}
	for _, d := range all {
		if d.ID == drop || next != nil && d.ID == next.ID {
			continue
		}
		if d.On {
			active = append(active, d.ID)
		}
	}
	if next != nil && next.On {
		active = append(active, next.ID)
	}
	slices.Sort(active)
	k := store.DataExportEnvKey(env.ID)
	cond, version := store.IfNotExists(), int64(0)
	it, err := s.table.Get(ctx, k)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return store.Write{}, fmt.Errorf("read export marker of environment %q: %w", env.Key, err)
	default:
		cond, version = store.IfVersion(it.Version), it.Version
	}
	data, err := json.Marshal(ingest.ExportEnv{ProjectKey: env.ProjectKey, EnvKey: env.Key, EnvID: env.ID, Active: active})
	if err != nil {
		return store.Write{}, fmt.Errorf("encode export marker: %w", err)
	}
	return store.Put(store.Item{PK: k.PK, SK: k.SK, Version: version + 1, Data: data}, cond), nil
}

// Create adds a destination to an environment.
func (s *Service) Create(ctx context.Context, projectKey, envKey string, in Input) (*Destination, error) {
	cfg, err := parseConfig("config", in.Config)
	if err != nil {
		return nil, err
	}
	env, err := s.envs.Get(ctx, projectKey, envKey)
	if err != nil {
		return nil, err
	}
	p, _ := identity.From(ctx)
	d := &Destination{ID: uuid.NewString(), ProjectKey: projectKey, EnvKey: envKey, EnvID: env.ID, Name: in.Name, Kind: in.Kind,
		Config: cfg, On: in.On != nil && *in.On, CreatedAt: s.now().UnixMilli(), MaintainerID: p.MemberID, Version: 1}
	if in.Kind == "" {
		return nil, fault.New(fault.Invalid, "field \"kind\" is required: one of %s", strings.Join(Kinds, ", "))
	}
	if err := s.validate(ctx, d); err != nil {
		return nil, err
	}
	return d, s.commitNew(ctx, env, d, nil, "created the destination")
}

// commitNew stores a new destination, with extra writes, in one audited commit.
func (s *Service) commitNew(ctx context.Context, env *environment.Environment, d *Destination, extra []store.Write, verb string) error {
	existing, err := s.ofEnv(ctx, env.ProjectKey, env.Key)
	if err != nil {
		return err
	}
	if len(existing) >= MaxPerEnvironment {
		return fault.New(fault.Invalid, "environment %q of project %q already has %d destinations, the most it may hold", env.Key, env.ProjectKey, MaxPerEnvironment)
	}
	put, err := d.put(store.IfNotExists())
	if err != nil {
		return err
	}
	mark, err := s.marker(ctx, env, existing, d, "")
	if err != nil {
		return err
	}
	writes := append([]store.Write{put, mark, store.Check(store.EnvironmentKey(env.ProjectKey, env.Key), store.IfExists())}, extra...)
	_, err = s.log.Commit(ctx, audit.Change{Kind: "destination", Writes: writes, Resource: Resource(d.ProjectKey, d.EnvKey, d.ID), Actions: []string{"createDestination"},
		Name: displayName(d), Href: Href(d.ProjectKey, d.EnvKey, d.ID), TitleVerb: verb, Parent: envParent(d.ProjectKey, d.EnvKey), Current: d,
		Conflict: fmt.Sprintf("the destinations of environment %q were changed by another request; try again", d.EnvKey)})
	return err
}

func displayName(d *Destination) string {
	if d.Name != "" {
		return d.Name
	}
	return d.Kind + " destination"
}

// patchView is what a JSON patch of a destination sees: config as an object.
type patchView struct {
	Name   string          `json:"name"`
	Kind   string          `json:"kind"`
	Config json.RawMessage `json:"config"`
	On     bool            `json:"on"`
}

// Patch applies a JSON patch to name, config (as an object, or replaced
// whole by a JSON-encoded string) and on.
func (s *Service) Patch(ctx context.Context, projectKey, envKey, id string, p patch.Patch) (*Destination, error) {
	if _, err := PatchActions(p); err != nil {
		return nil, err
	}
	env, err := s.envs.Get(ctx, projectKey, envKey)
	if err != nil {
		return nil, err
	}
	old, err := s.load(ctx, projectKey, envKey, id)
	if err != nil {
		return nil, err
	}
	cfg, err := json.Marshal(old.Config)
	if err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	var view patchView
	if err := p.ApplyTo(patchView{Name: old.Name, Kind: old.Kind, Config: cfg, On: old.On}, &view); err != nil {
		return nil, err
	}
	next := *old
	next.Name, next.On = view.Name, view.On
	if next.Config, err = parseConfig("config", view.Config); err != nil {
		return nil, err
	}
	if err := s.validate(ctx, &next); err != nil {
		return nil, err
	}
	actions := patch.ChangedFields(old, &next, patchable)
	if len(actions) == 0 {
		return old, nil
	}
	next.Version = old.Version + 1
	put, err := next.put(store.IfVersion(old.Version))
	if err != nil {
		return nil, err
	}
	all, err := s.ofEnv(ctx, projectKey, envKey)
	if err != nil {
		return nil, err
	}
	mark, err := s.marker(ctx, env, all, &next, "")
	if err != nil {
		return nil, err
	}
	_, err = s.log.Commit(ctx, audit.Change{Kind: "destination", Writes: []store.Write{put, mark}, Resource: Resource(projectKey, envKey, id),
		Actions: actions, Name: displayName(&next), Href: Href(projectKey, envKey, id), TitleVerb: "updated the destination",
		Parent: envParent(projectKey, envKey), Previous: old, Current: &next, Comment: p.Comment, Delta: p.Raw,
		Conflict: fmt.Sprintf("destination %q was changed by another request; read it again and retry", id)})
	if err != nil {
		return nil, err
	}
	return &next, nil
}

// Delete removes a destination. Events spooled while it was on are still
// exported; none are spooled for it afterwards.
func (s *Service) Delete(ctx context.Context, projectKey, envKey, id string) error {
	env, err := s.envs.Get(ctx, projectKey, envKey)
	if err != nil {
		return err
	}
	old, err := s.load(ctx, projectKey, envKey, id)
	if err != nil {
		return err
	}
	all, err := s.ofEnv(ctx, projectKey, envKey)
	if err != nil {
		return err
	}
	mark, err := s.marker(ctx, env, all, nil, id)
	if err != nil {
		return err
	}
	_, err = s.log.Commit(ctx, audit.Change{Kind: "destination",
		Writes:   []store.Write{store.Delete(store.DestinationKey(projectKey, envKey, id), store.IfVersion(old.Version)), mark},
		Resource: Resource(projectKey, envKey, id), Actions: []string{"deleteDestination"}, Name: displayName(old), Href: Href(projectKey, envKey, id),
		TitleVerb: "deleted the destination", Parent: envParent(projectKey, envKey), Previous: old,
		Conflict: fmt.Sprintf("destination %q was changed by another request; try again", id)})
	return err
}
