// Package webhookapi serves the webhooks group over HTTP: the account's
// webhooks, with their latest delivery attempts on the single read.
package webhookapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/reps"
	"github.com/flagplane/flagplane/shared/webhook"
)

// maxDeliveriesShown bounds the attempts a webhook read shows.
const maxDeliveriesShown = 20

// New is the webhooks group over a.
func New(a *app.App) app.Group {
	h := handlers{hooks: a.Services.Webhooks}
	return app.Group{
		Name:     "webhooks",
		Examples: examples(),
		Handlers: map[string]api.Handler{
			"getAllWebhooks": h.getAllWebhooks,
			"postWebhook":    h.postWebhook,
			"getWebhook":     h.getWebhook,
			"patchWebhook":   h.patchWebhook,
			"deleteWebhook":  h.deleteWebhook,
		},
		Needs: map[string]api.Needs{
			"patchWebhook": api.PatchNeeds("a webhook", webhook.PatchActions),
		},
		Answers: map[string]api.Answer{
			"getAllWebhooks": {Status: http.StatusOK, Rep: webhooksRep{}},
			// The reference answers a webhook create with 200, not 201.
			"postWebhook":   {Status: http.StatusOK, Rep: webhookRep{}},
			"getWebhook":    {Status: http.StatusOK, Rep: webhookRep{}},
			"patchWebhook":  {Status: http.StatusOK, Rep: webhookRep{}},
			"deleteWebhook": {Status: http.StatusNoContent},
		},
	}
}

// webhookRep is a webhook as the API shows it. Deliveries (the latest
// attempts, newest first) appear on the single read.
type webhookRep struct {
	Links      api.Links          `json:"_links"`
	ID         string             `json:"_id"`
	Name       string             `json:"name"`
	URL        string             `json:"url"`
	Secret     string             `json:"secret,omitempty"`
	Sign       bool               `json:"sign"`
	On         bool               `json:"on"`
	Statements []policy.Statement `json:"statements"`
	Tags       []string           `json:"tags"`
	Access     policy.Access      `json:"_access"`
	Deliveries []webhook.Attempt  `json:"_deliveries,omitempty"`
}

func newWebhookRep(r *http.Request, h *webhook.Webhook) webhookRep {
	rep := webhookRep{
		Links: api.Links{"self": api.JSONLink(webhook.Href(h.ID)), "parent": api.JSONLink("/api/v2/webhooks")},
		ID:    h.ID, Name: h.Name, URL: h.URL, Secret: h.Secret, Sign: h.Sign, On: h.On, Statements: h.Statements, Tags: h.Tags,
		Access: reps.Access(r, policy.NewResource("webhook", h.ID), webhook.Actions),
	}
	if rep.Statements == nil {
		rep.Statements = []policy.Statement{}
	}
	return rep
}

type webhooksRep struct {
	Links api.Links    `json:"_links"`
	Items []webhookRep `json:"items"`
}

// handlers serve the group's operations.
type handlers struct {
	hooks *webhook.Service
}

func (h handlers) getAllWebhooks(w http.ResponseWriter, r *http.Request) error {
	all, err := h.hooks.List(r.Context())
	if err != nil {
		return err
	}
	out := webhooksRep{Links: api.Self("/api/v2/webhooks"), Items: []webhookRep{}}
	for _, hook := range all {
		out.Items = append(out.Items, newWebhookRep(r, hook))
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) postWebhook(w http.ResponseWriter, r *http.Request) error {
	var in webhook.Input
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	hook, err := h.hooks.Create(r.Context(), in)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newWebhookRep(r, hook))
	return nil
}

func (h handlers) getWebhook(w http.ResponseWriter, r *http.Request) error {
	hook, err := h.hooks.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	rep := newWebhookRep(r, hook)
	if rep.Deliveries, err = h.hooks.Attempts(r.Context(), hook.ID, maxDeliveriesShown); err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, rep)
	return nil
}

func (h handlers) patchWebhook(w http.ResponseWriter, r *http.Request) error {
	p, err := api.ReadJSONPatch(w, r, "a webhook")
	if err != nil {
		return err
	}
	hook, err := h.hooks.Patch(r.Context(), r.PathValue("id"), p)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newWebhookRep(r, hook))
	return nil
}

func (h handlers) deleteWebhook(w http.ResponseWriter, r *http.Request) error {
	if err := h.hooks.Delete(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
