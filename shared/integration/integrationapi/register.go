// Package integrationapi serves the integrations group over HTTP
// (integration configurations, spec 2.9 and 4.8) and runs the
// configurations' event hooks as an outbox consumer.
package integrationapi

import (
	"encoding/json"
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/integration"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/reps"
	"github.com/flagplane/flagplane/shared/webhook"
)

// Consumer is the outbox consumer that hands audit log entries to the
// configurations' event hooks: the integrations group's, which the
// webhook-delivery function runs without linking the group's handlers.
func Consumer(a *app.App) webhook.Consumer { return service(a).Consumer() }

func service(a *app.App) *integration.Service {
	return integration.NewService(a.Table, a.Services.Audit, a.WebhookGuard(), reps.EntryPayload, a.Logger, a.Now)
}

// New is the integrations group over a: the handlers and the event-hook
// consumer share one service (and its HTTP client).
func New(a *app.App) app.Group {
	s := service(a)
	h, n := handlers{svc: s}, needs{svc: s}
	return app.Group{
		Name: "integrations",
		Handlers: map[string]api.Handler{
			"getAllIntegrationConfigurations": h.getAllIntegrationConfigurations,
			"createIntegrationConfiguration":  h.createIntegrationConfiguration,
			"getIntegrationConfiguration":     h.getIntegrationConfiguration,
			"updateIntegrationConfiguration":  h.updateIntegrationConfiguration,
			"deleteIntegrationConfiguration":  h.deleteIntegrationConfiguration,
		},
		Needs: map[string]api.Needs{
			"getAllIntegrationConfigurations": byKey,
			"createIntegrationConfiguration":  byKey,
			"getIntegrationConfiguration":     n.byID,
			"deleteIntegrationConfiguration":  n.byID,
			"updateIntegrationConfiguration":  n.updateIntegrationConfiguration,
		},
		Answers:   answers,
		Examples:  examples(),
		Consumers: []webhook.Consumer{s.Consumer()},
	}
}

// answers are the group's success answers, for the OpenAPI document.
var answers = map[string]api.Answer{
	"getAllIntegrationConfigurations": {Status: http.StatusOK, Rep: configsRep{}},
	"createIntegrationConfiguration":  {Status: http.StatusCreated, Rep: configRep{}},
	"getIntegrationConfiguration":     {Status: http.StatusOK, Rep: configRep{}},
	"updateIntegrationConfiguration":  {Status: http.StatusOK, Rep: configRep{}},
	"deleteIntegrationConfiguration":  {Status: http.StatusNoContent},
}

// configRep is a configuration as the reference's IntegrationConfigurationsRep,
// with capabilityConfig carried as a JSON-encoded string (spec 2.9).
type configRep struct {
	Links            api.Links      `json:"_links"`
	ID               string         `json:"_id"`
	Name             string         `json:"name"`
	CreatedAt        int64          `json:"_createdAt"`
	IntegrationKey   string         `json:"_integrationKey"`
	Tags             []string       `json:"tags"`
	Enabled          bool           `json:"enabled"`
	Access           policy.Access  `json:"_access"`
	ConfigValues     map[string]any `json:"configValues"`
	CapabilityConfig string         `json:"capabilityConfig"`
	MaintainerID     string         `json:"_maintainerId,omitempty"`
	// Pending and SetupError are flagplane's own: a two-step setup draft
	// not yet finalized, and why its endpoint's last verification failed.
	Pending    bool   `json:"_pending,omitempty"`
	SetupError string `json:"_setupError,omitempty"`
}

func newConfigRep(r *http.Request, c *integration.Config) configRep {
	capability := []byte("{}")
	if c.CapabilityConfig != nil {
		capability, _ = json.Marshal(c.CapabilityConfig)
	}
	p, _ := identity.From(r.Context())
	return configRep{
		Links: api.Links{"self": api.JSONLink(integration.Href(c.ID)), "parent": api.JSONLink(integration.ListHref(c.IntegrationKey))},
		ID:    c.ID, Name: c.Name, CreatedAt: c.CreatedAt, IntegrationKey: c.IntegrationKey, Tags: c.Tags, Enabled: c.Enabled,
		Access:       p.Access(integration.Resource(c.IntegrationKey, c.Tags), integration.Actions),
		ConfigValues: c.ConfigValues, CapabilityConfig: string(capability), MaintainerID: c.MaintainerID, Pending: c.Pending, SetupError: c.SetupError,
	}
}

type configsRep struct {
	Links api.Links   `json:"_links"`
	Items []configRep `json:"items"`
}

// handlers serve the group's operations on the integration service.
type handlers struct {
	svc *integration.Service
}

// getAllIntegrationConfigurations lists one integration's
// configurations, drafts of a two-step setup only when asked.
func (h handlers) getAllIntegrationConfigurations(w http.ResponseWriter, r *http.Request) error {
	includePending, err := api.BoolParam(r.URL.Query(), "includePending", false)
	if err != nil {
		return err
	}
	key := r.PathValue("integrationKey")
	list, err := h.svc.List(r.Context(), key, includePending)
	if err != nil {
		return err
	}
	out := configsRep{Links: api.Self(integration.ListHref(key)), Items: make([]configRep, 0, len(list))}
	for i := range list {
		out.Items = append(out.Items, newConfigRep(r, &list[i]))
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

// createIntegrationConfiguration makes the caller the maintainer.
func (h handlers) createIntegrationConfiguration(w http.ResponseWriter, r *http.Request) error {
	var in integration.Input
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	p, _ := identity.From(r.Context())
	c, err := h.svc.Create(r.Context(), r.PathValue("integrationKey"), in, p.MemberID)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusCreated, newConfigRep(r, c))
	return nil
}

func (h handlers) getIntegrationConfiguration(w http.ResponseWriter, r *http.Request) error {
	c, err := h.svc.Get(r.Context(), r.PathValue("integrationConfigurationId"))
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newConfigRep(r, c))
	return nil
}

func (h handlers) updateIntegrationConfiguration(w http.ResponseWriter, r *http.Request) error {
	p, err := api.ReadJSONPatch(w, r, "an integration configuration")
	if err != nil {
		return err
	}
	c, err := h.svc.Patch(r.Context(), r.PathValue("integrationConfigurationId"), p)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newConfigRep(r, c))
	return nil
}

func (h handlers) deleteIntegrationConfiguration(w http.ResponseWriter, r *http.Request) error {
	if err := h.svc.Delete(r.Context(), r.PathValue("integrationConfigurationId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// needs name the resource policies see, integration/<integrationKey>
// with the configuration's tags (shared/policy/builtin.go), rather than
// the catalog's two-part name: a configuration read by id is checked
// against its stored key and tags, a create against the path's key and
// the body's tags, and a patch needs the action of each field it changes.
type needs struct {
	svc *integration.Service
}

// byKey is the path's integration with the body's tags (none for a list).
func byKey(r *http.Request, body []byte) ([]api.Need, error) {
	var created struct {
		Tags []string `json:"tags"`
	}
	_ = json.Unmarshal(body, &created) // a body that does not decode is the handler's 400
	res := integration.Resource(r.PathValue("integrationKey"), created.Tags)
	return []api.Need{{On: &res}}, nil
}

// stored is the resource of the configuration the path names, by its
// stored key and tags.
func (n needs) stored(r *http.Request) policy.Resource {
	key, tags, err := n.svc.Stored(r.Context(), r.PathValue("integrationConfigurationId"))
	if err != nil {
		// Unknown (the handler answers 404 to whoever may look) or unreadable: no key to be granted by.
		return integration.Resource("*", nil)
	}
	return integration.Resource(key, tags)
}

func (n needs) byID(r *http.Request, _ []byte) ([]api.Need, error) {
	res := n.stored(r)
	return []api.Need{{On: &res}}, nil
}

func (n needs) updateIntegrationConfiguration(r *http.Request, body []byte) ([]api.Need, error) {
	p, err := api.JSONPatch(r, body, "an integration configuration")
	if err != nil {
		return nil, err
	}
	actions, err := integration.PatchActions(p)
	if err != nil {
		return nil, err
	}
	res := n.stored(r)
	out := make([]api.Need, len(actions))
	for i, action := range actions {
		out[i] = api.Need{Action: action, On: &res}
	}
	return out, nil
}
