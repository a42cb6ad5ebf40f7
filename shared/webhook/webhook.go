// Package webhook holds webhooks: where changes are delivered, which
// changes (policy statements over the audit entry's accesses), and how
// deliveries are signed, retried and recorded.
package webhook

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
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
)

// Webhook is one webhook as stored. The secret is kept as is: signing
// needs it (DynamoDB encrypts it at rest); responses mask it after creation.
type Webhook struct {
	ID           string             `json:"_id"`
	Name         string             `json:"name"`
	URL          string             `json:"url"`
	Secret       string             `json:"secret"`
	Sign         bool               `json:"sign"`
	On           bool               `json:"on"`
	Statements   []policy.Statement `json:"statements"`
	Tags         []string           `json:"tags"`
	CreationDate int64              `json:"_creationDate"`
	Version      int64              `json:"-"`
}

// Input is the body of a create request.
type Input struct {
	URL        *string            `json:"url"`
	Sign       *bool              `json:"sign"`
	On         *bool              `json:"on"`
	Name       string             `json:"name"`
	Secret     string             `json:"secret"`
	Statements []policy.Statement `json:"statements"`
	Tags       []string           `json:"tags"`
}

// Actions are the actions `_access` reports on a webhook.
var Actions = []string{"updateName", "updateUrl", "updateOn", "updateSign", "updateSecret", "updateStatements", "updateTags", "deleteWebhook"}

var patchable = map[string]string{
	"name":       "updateName",
	"url":        "updateUrl",
	"on":         "updateOn",
	"sign":       "updateSign",
	"secret":     "updateSecret",
	"statements": "updateStatements",
	"tags":       "updateTags",
}

// PatchActions returns the actions a JSON patch of a webhook performs.
func PatchActions(p patch.Patch) ([]string, error) { return kind.PatchActions(p) }

// Href is a webhook's API path.
func Href(id string) string { return "/api/v2/webhooks/" + id }

// newSecret returns a strong signing secret: 32 random bytes, hex.
func newSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Service manages webhooks.
type Service struct {
	hooks resource.Kit[Webhook]
	guard Guard
	now   func() time.Time
}

// NewService returns the webhook service; guard decides which hosts webhooks may reach.
func NewService(table store.Table, log *audit.Log, guard Guard, now func() time.Time) *Service {
	return &Service{hooks: resource.New(&kind, table, log), guard: guard, now: now}
}

// Guard is the guard the service was wired with: other outbound URLs
// (a flag import's source) pass the same SSRF check as webhooks.
func (s *Service) Guard() Guard { return s.guard }

func (s *Service) validate(ctx context.Context, h *Webhook) error {
	u, err := CheckURL(h.URL)
	if err != nil {
		return err
	}
	if err := s.guard.Check(ctx, "url", u); err != nil {
		return err
	}
	if len(h.Name) > 256 {
		return fault.New(fault.Invalid, "field \"name\" must be at most 256 characters")
	}
	if h.Sign && h.Secret == "" {
		h.Secret = newSecret()
	}
	if len(h.Secret) > 256 {
		return fault.New(fault.Invalid, "field \"secret\" must be at most 256 characters")
	}
	if err := environment.ValidTags("tags", h.Tags); err != nil {
		return err
	}
	if len(h.Statements) > 0 {
		if err := policy.Validate(h.Statements); err != nil {
			return fault.Wrap(err, fault.Invalid, "field \"statements\": %s", fault.MessageOf(err))
		}
	}
	return nil
}

func (h *Webhook) item() (store.Item, error) {
	data, err := json.Marshal(h)
	gpk, gsk := store.WebhookIndexKeys(h.ID)
	return store.Item{GSI1PK: gpk, GSI1SK: gsk, Data: data}, err
}

// kind describes webhooks to the resource kit; audit entries show them masked.
var kind = resource.Kind[Webhook]{
	Audit: "webhook", Noun: "webhook", Created: "createWebhook", Deleted: "deleteWebhook",
	Patchable: patchable, Called: "a webhook",
	Item: (*Webhook).item, Decode: decode,
	Version: func(h *Webhook) int64 { return h.Version },
	Name:    func(h *Webhook) string { return h.Name },
	Shown:   func(h *Webhook) any { return h.masked() },
}

// ref names the webhook with id; an id that is no UUID names none.
func ref(id string) resource.Ref {
	_, err := uuid.Parse(id)
	return resource.Ref{Key: store.WebhookKey(id), What: fmt.Sprintf("webhook %q", id), Resource: "webhook/" + id, Href: Href(id),
		Malformed: err != nil}
}

// masked is the webhook as audit entries and later reads show it.
func (h Webhook) masked() Webhook {
	if h.Secret != "" {
		h.Secret = "********"
	}
	return h
}

// Create stores a new webhook; the answer is the only one holding the secret.
func (s *Service) Create(ctx context.Context, in Input) (*Webhook, error) {
	for name, missing := range map[string]bool{"url": in.URL == nil, "sign": in.Sign == nil, "on": in.On == nil} {
		if missing {
			return nil, fault.New(fault.Invalid, "field %q is required", name)
		}
	}
	h := &Webhook{ID: uuid.NewString(), Name: in.Name, URL: *in.URL, Secret: in.Secret, Sign: *in.Sign, On: *in.On,
		Statements: in.Statements, Tags: in.Tags, CreationDate: s.now().UnixMilli()}
	if h.Tags == nil {
		h.Tags = []string{}
	}
	if err := s.validate(ctx, h); err != nil {
		return nil, err
	}
	return s.hooks.Create(ctx, ref(h.ID), h, resource.Change{})
}

// Get returns one webhook, secret masked.
func (s *Service) Get(ctx context.Context, id string) (*Webhook, error) {
	h, err := s.load(ctx, id)
	if err != nil {
		return nil, err
	}
	m := h.masked()
	return &m, nil
}

func (s *Service) load(ctx context.Context, id string) (*Webhook, error) {
	return s.hooks.Get(ctx, ref(id))
}

func decode(it store.Item) (*Webhook, error) {
	var h Webhook
	if err := json.Unmarshal(it.Data, &h); err != nil {
		return nil, fmt.Errorf("decode webhook %s: %w", it.PK, err)
	}
	h.Version = it.Version
	return &h, nil
}

// all returns every webhook with its secret, for delivery.
func (s *Service) all(ctx context.Context) ([]*Webhook, error) {
	return record.All(ctx, s.hooks.Table, store.Query{Index: store.IndexGSI1, PK: store.WebhooksIndexPK}, "webhooks", decode)
}

// List returns every webhook, secrets masked.
func (s *Service) List(ctx context.Context) ([]*Webhook, error) {
	hooks, err := s.all(ctx)
	for i, h := range hooks {
		m := h.masked()
		hooks[i] = &m
	}
	return hooks, err
}

// Patch applies a JSON patch; a new URL is checked again.
func (s *Service) Patch(ctx context.Context, id string, p patch.Patch) (*Webhook, error) {
	if _, err := PatchActions(p); err != nil {
		return nil, err
	}
	old, err := s.load(ctx, id)
	if err != nil {
		return nil, err
	}
	var next Webhook
	// The patch sees the masked secret; an untouched secret is kept.
	if err := p.ApplyTo(old.masked(), &next); err != nil {
		return nil, err
	}
	if next.Secret == old.masked().Secret {
		next.Secret = old.Secret
	}
	next.ID, next.CreationDate = old.ID, old.CreationDate
	if next.Tags == nil {
		next.Tags = []string{}
	}
	if err := s.validate(ctx, &next); err != nil {
		return nil, err
	}
	actions := kind.Changed(old, &next)
	if len(actions) == 0 {
		m := old.masked()
		return &m, nil
	}
	h, err := s.hooks.Update(ctx, ref(id), old, &next, resource.Change{Actions: actions, Comment: p.Comment, Delta: p.Raw})
	if err != nil {
		return nil, err
	}
	m := h.masked()
	return &m, nil
}

// Delete removes a webhook; deliveries still queued for it are dropped.
func (s *Service) Delete(ctx context.Context, id string) error {
	return s.hooks.Delete(ctx, ref(id), resource.Change{})
}
