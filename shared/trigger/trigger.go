// Package trigger holds adaptive triggers (spec 2.14, 4.14): a task of
// flag semantic-patch instructions, kept per environment, that an alert
// source fires with the trigger's secret token. Firing runs the
// instructions through the flag service's audited semantic patch, once
// per alert event.
package trigger

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/resource"
	"github.com/flagplane/flagplane/shared/semanticpatch"
	"github.com/flagplane/flagplane/shared/store"
)

// ResourceKindFlag is the one resource kind a trigger acts on.
const ResourceKindFlag = "flag"

// EventTTL is how long a fired alert event id is remembered: a repeat
// within it does not run the instructions again.
const EventTTL = 7 * 24 * time.Hour

// Task is what a trigger does when fired.
type Task struct {
	Instructions []semanticpatch.Instruction `json:"instructions"`
}

// Source says which alert fires the trigger.
type Source struct {
	Type    string `json:"type"`
	AlertID *int64 `json:"alertId,omitempty"`
}

// Firing is the outcome of the latest firing.
type Firing struct {
	EventID string `json:"eventId"`
	At      int64  `json:"at"`
	Status  string `json:"status"` // "applied" or "failed"
	Error   string `json:"error,omitempty"`
	Code    string `json:"code,omitempty"`
}

// Trigger is one adaptive trigger as stored. TokenHash is the SHA-256 of
// the firing token, which only the create answer shows.
type Trigger struct {
	ID             string  `json:"id"`
	ProjectKey     string  `json:"projectKey"`
	EnvironmentKey string  `json:"environmentKey"`
	Name           string  `json:"name"`
	ResourceKind   string  `json:"resourceKind"`
	ResourceKey    string  `json:"resourceKey"`
	Enabled        bool    `json:"enabled"`
	CreatedAt      int64   `json:"createdAt"`
	UpdatedAt      int64   `json:"updatedAt"`
	Task           Task    `json:"task"`
	TriggerSource  Source  `json:"triggerSource"`
	TokenHash      string  `json:"tokenHash,omitempty"`
	LastFiring     *Firing `json:"lastFiring,omitempty"`
	Version        int64   `json:"-"`
}

// Input is the body of a create request.
type Input struct {
	Name          string  `json:"name"`
	ResourceKind  string  `json:"resourceKind"`
	ResourceKey   string  `json:"resourceKey"`
	Enabled       *bool   `json:"enabled"`
	Task          *Task   `json:"task"`
	TriggerSource *Source `json:"triggerSource"`
}

// Actions are the actions `_access` reports on a trigger.
var Actions = []string{"updateAdaptiveTrigger", "deleteAdaptiveTrigger"}

var patchable = map[string]string{
	"name":          "updateAdaptiveTrigger",
	"enabled":       "updateAdaptiveTrigger",
	"task":          "updateAdaptiveTrigger",
	"triggerSource": "updateAdaptiveTrigger",
}

// PatchActions returns the actions a JSON patch of a trigger performs.
func PatchActions(p patch.Patch) ([]string, error) { return kind.PatchActions(p) }

// Href is a trigger's API path.
func Href(projectKey, envKey, id string) string {
	return fmt.Sprintf("/api/v2/projects/%s/environments/%s/adaptive-triggers/%s", projectKey, envKey, id)
}

// CollectionHref is the API path of an environment's triggers.
func CollectionHref(projectKey, envKey string) string {
	return fmt.Sprintf("/api/v2/projects/%s/environments/%s/adaptive-triggers", projectKey, envKey)
}

// FireHref is the path an alert source posts to.
func FireHref(id string) string { return "/api/v2/adaptive-triggers/" + id + "/fire" }

func specifier(t *Trigger) string {
	return fmt.Sprintf("proj/%s:env/%s:adaptive-trigger/%s", t.ProjectKey, t.EnvironmentKey, t.ID)
}

// kind describes adaptive triggers to the resource kit; reads and audit
// entries show them without their token hash.
var kind = resource.Kind[Trigger]{
	Audit: "adaptiveTrigger", Noun: "adaptive trigger", Created: "createAdaptiveTrigger", Deleted: "deleteAdaptiveTrigger",
	Patchable: patchable, Called: "an adaptive trigger",
	Item: (*Trigger).item, Decode: decode,
	Version: func(t *Trigger) int64 { return t.Version },
	Name:    func(t *Trigger) string { return t.Name },
	Shown:   func(t *Trigger) any { return t.shown() },
}

// idRef names the trigger with id, for a read; an id that is no UUID names none.
func idRef(id string) resource.Ref {
	_, err := uuid.Parse(id)
	return resource.Ref{Key: store.AdaptiveTriggerKey(id), What: fmt.Sprintf("adaptive trigger %q", id), Malformed: err != nil}
}

// ref names t, for a change.
func ref(t *Trigger) resource.Ref {
	r := idRef(t.ID)
	r.Resource, r.Href = specifier(t), Href(t.ProjectKey, t.EnvironmentKey, t.ID)
	return r
}

func hashToken(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

func newToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return "trg-" + hex.EncodeToString(b[:])
}

// Flags is what the service needs of the flag service.
type Flags interface {
	Load(ctx context.Context, projectKey, flagKey string) (*flag.Flag, error)
	Others(ctx context.Context, projectKey string) (flag.Others, error)
	SemanticPatchWith(ctx context.Context, projectKey, flagKey string, sp semanticpatch.Patch, extra ...store.Write) (*flag.Detail, error)
}

// Environments checks that an environment exists.
type Environments interface {
	Get(ctx context.Context, projectKey, envKey string) (*environment.Environment, error)
}

// Service manages adaptive triggers.
type Service struct {
	table    store.Table
	log      *audit.Log
	triggers resource.Kit[Trigger]
	flags    Flags
	envs     Environments
	now      func() time.Time
}

// NewService returns the trigger service.
func NewService(table store.Table, log *audit.Log, flags Flags, envs Environments, now func() time.Time) *Service {
	return &Service{table: table, log: log, triggers: resource.New(&kind, table, log), flags: flags, envs: envs, now: now}
}

// Validate checks a trigger's fields and that its instructions apply to
// the target flag in the trigger's environment now; a bad instruction is
// a 400 naming its index.
func (s *Service) Validate(ctx context.Context, t *Trigger) error {
	if t.Name == "" {
		return fault.New(fault.Invalid, "field \"name\" is required")
	}
	if len(t.Name) > 256 {
		return fault.New(fault.Invalid, "field \"name\" must be at most 256 characters")
	}
	if t.ResourceKind != ResourceKindFlag {
		return fault.New(fault.Invalid, "field \"resourceKind\" must be %q", ResourceKindFlag)
	}
	if t.ResourceKey == "" {
		return fault.New(fault.Invalid, "field \"resourceKey\" is required")
	}
	if t.TriggerSource.Type == "" {
		return fault.New(fault.Invalid, "field \"triggerSource.type\" is required")
	}
	if len(t.Task.Instructions) == 0 {
		return fault.New(fault.Invalid, "field \"task.instructions\" must hold at least one instruction")
	}
	if len(t.Task.Instructions) > semanticpatch.MaxInstructions {
		return fault.New(fault.Invalid, "field \"task.instructions\" holds more than %d instructions", semanticpatch.MaxInstructions)
	}
	for i, in := range t.Task.Instructions {
		if in.Kind == "" {
			return fault.New(fault.Invalid, "field \"task.instructions[%d].kind\" is required", i)
		}
	}
	f, err := s.flags.Load(ctx, t.ProjectKey, t.ResourceKey)
	if fault.Is(err, fault.NotFound) {
		return fault.New(fault.Invalid, "field \"resourceKey\": flag %q not found in project %q", t.ResourceKey, t.ProjectKey)
	}
	if err != nil {
		return err
	}
	var others flag.Others
	if flag.NeedsOthers(t.Task.Instructions) {
		if others, err = s.flags.Others(ctx, t.ProjectKey); err != nil {
			return err
		}
	}
	if err := flag.Validate(f, t.EnvironmentKey, t.Task.Instructions, s.now(), others); err != nil {
		return fault.Wrap(err, fault.Invalid, "field \"task.instructions\": %s", fault.MessageOf(err))
	}
	return nil
}

func (t *Trigger) item() (store.Item, error) {
	data, err := json.Marshal(t)
	k := store.AdaptiveTriggerKey(t.ID)
	gpk, gsk := store.AdaptiveTriggerIndexKeys(t.ProjectKey, t.EnvironmentKey, t.ID)
	return store.Item{PK: k.PK, SK: k.SK, GSI1PK: gpk, GSI1SK: gsk, Data: data}, err
}

// put writes t at its version under c, for a firing, which the flag's
// change commits.
func (t *Trigger) put(c store.Cond) (store.Write, error) {
	it, err := t.item()
	if err != nil {
		return store.Write{}, fmt.Errorf("encode adaptive trigger %q: %w", t.ID, err)
	}
	it.Version = t.Version
	return store.Put(it, c), nil
}

// shown is the trigger as audit entries and reads show it: no token hash.
func (t Trigger) shown() Trigger {
	t.TokenHash = ""
	return t
}

func (s *Service) env(ctx context.Context, projectKey, envKey string) error {
	_, err := s.envs.Get(ctx, projectKey, envKey)
	return err
}

// Create stores a new trigger and returns it with its firing token, which
// no later answer shows.
func (s *Service) Create(ctx context.Context, projectKey, envKey string, in Input) (*Trigger, string, error) {
	if err := s.env(ctx, projectKey, envKey); err != nil {
		return nil, "", err
	}
	if in.Task == nil {
		return nil, "", fault.New(fault.Invalid, "field \"task\" is required")
	}
	if in.TriggerSource == nil {
		return nil, "", fault.New(fault.Invalid, "field \"triggerSource\" is required")
	}
	now := s.now().UnixMilli()
	tok := newToken()
	t := &Trigger{ID: uuid.NewString(), ProjectKey: projectKey, EnvironmentKey: envKey, Name: in.Name,
		ResourceKind: in.ResourceKind, ResourceKey: in.ResourceKey, Enabled: in.Enabled == nil || *in.Enabled,
		CreatedAt: now, UpdatedAt: now, Task: *in.Task, TriggerSource: *in.TriggerSource, TokenHash: hashToken(tok)}
	if t.ResourceKind == "" {
		t.ResourceKind = ResourceKindFlag
	}
	if err := s.Validate(ctx, t); err != nil {
		return nil, "", err
	}
	if _, err := s.triggers.Create(ctx, ref(t), t, resource.Change{}); err != nil {
		return nil, "", err
	}
	shown := t.shown()
	return &shown, tok, nil
}

// Get returns one trigger of an environment.
func (s *Service) Get(ctx context.Context, projectKey, envKey, id string) (*Trigger, error) {
	t, err := s.load(ctx, projectKey, envKey, id)
	if err != nil {
		return nil, err
	}
	shown := t.shown()
	return &shown, nil
}

func (s *Service) load(ctx context.Context, projectKey, envKey, id string) (*Trigger, error) {
	t, err := s.loadID(ctx, id)
	if err != nil {
		return nil, err
	}
	if t.ProjectKey != projectKey || t.EnvironmentKey != envKey {
		return nil, fault.New(fault.NotFound, "adaptive trigger %q not found in environment %q of project %q", id, envKey, projectKey)
	}
	return t, nil
}

func (s *Service) loadID(ctx context.Context, id string) (*Trigger, error) {
	return s.triggers.Get(ctx, idRef(id))
}

func decode(it store.Item) (*Trigger, error) {
	var t Trigger
	if err := json.Unmarshal(it.Data, &t); err != nil {
		return nil, fmt.Errorf("decode adaptive trigger %s: %w", it.PK, err)
	}
	t.Version = it.Version
	return &t, nil
}

// List returns an environment's triggers, ordered by id.
func (s *Service) List(ctx context.Context, projectKey, envKey string) ([]*Trigger, error) {
	if err := s.env(ctx, projectKey, envKey); err != nil {
		return nil, err
	}
	gpk, _ := store.AdaptiveTriggerIndexKeys(projectKey, envKey, "")
	all, err := record.All(ctx, s.table, store.Query{Index: store.IndexGSI1, PK: gpk}, "adaptive triggers", decode)
	for i, t := range all {
		shown := t.shown()
		all[i] = &shown
	}
	return all, err
}

// Patch applies a JSON patch to name, enabled, task or triggerSource;
// changed instructions are validated against the flag again.
func (s *Service) Patch(ctx context.Context, projectKey, envKey, id string, p patch.Patch) (*Trigger, error) {
	if _, err := PatchActions(p); err != nil {
		return nil, err
	}
	old, err := s.load(ctx, projectKey, envKey, id)
	if err != nil {
		return nil, err
	}
	var next Trigger
	if err := p.ApplyTo(old.shown(), &next); err != nil {
		return nil, err
	}
	next.ID, next.ProjectKey, next.EnvironmentKey = old.ID, old.ProjectKey, old.EnvironmentKey
	next.ResourceKind, next.ResourceKey, next.CreatedAt = old.ResourceKind, old.ResourceKey, old.CreatedAt
	next.TokenHash, next.LastFiring = old.TokenHash, old.LastFiring
	if err := s.Validate(ctx, &next); err != nil {
		return nil, err
	}
	actions := kind.Changed(old, &next)
	if len(actions) == 0 {
		shown := old.shown()
		return &shown, nil
	}
	next.UpdatedAt = s.now().UnixMilli()
	t, err := s.triggers.Update(ctx, ref(old), old, &next, resource.Change{Actions: actions, Comment: p.Comment, Delta: p.Raw})
	if err != nil {
		return nil, err
	}
	shown := t.shown()
	return &shown, nil
}

// Delete removes a trigger.
func (s *Service) Delete(ctx context.Context, projectKey, envKey, id string) error {
	t, err := s.load(ctx, projectKey, envKey, id)
	if err != nil {
		return err
	}
	return s.triggers.Remove(ctx, ref(t), t, resource.Change{})
}

// Authenticate returns the trigger whose firing token tok is; any
// mismatch (unknown id, wrong token) is the same 401.
func (s *Service) Authenticate(ctx context.Context, id, tok string) (*Trigger, error) {
	unauthorized := fault.New(fault.Unauthorized, "the trigger token is missing or does not match trigger %q", id)
	if tok == "" {
		return nil, unauthorized
	}
	t, err := s.loadID(ctx, id)
	if fault.Is(err, fault.NotFound) {
		return nil, unauthorized
	}
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare([]byte(hashToken(tok)), []byte(t.TokenHash)) != 1 {
		return nil, unauthorized
	}
	return t, nil
}
