package endpoints

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/reps"
	"github.com/flagplane/flagplane/shared/webhook"
)

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

// MaxDeliveriesShown bounds the attempts a webhook read shows.
const MaxDeliveriesShown = 20

func webhookHandlers(s app.Services) map[string]api.Handler {
	hooks := s.Webhooks
	return map[string]api.Handler{
		"getAllWebhooks": func(w http.ResponseWriter, r *http.Request) error {
			all, err := hooks.List(r.Context())
			if err != nil {
				return err
			}
			out := webhooksRep{Links: api.Self("/api/v2/webhooks"), Items: []webhookRep{}}
			for _, h := range all {
				out.Items = append(out.Items, newWebhookRep(r, h))
			}
			api.WriteJSON(w, http.StatusOK, out)
			return nil
		},
		// The reference answers a webhook create with 200, not 201.
		"postWebhook": func(w http.ResponseWriter, r *http.Request) error {
			var in webhook.Input
			if err := api.Decode(w, r, &in); err != nil {
				return err
			}
			h, err := hooks.Create(r.Context(), in)
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusOK, newWebhookRep(r, h))
			return nil
		},
		"getWebhook": func(w http.ResponseWriter, r *http.Request) error {
			h, err := hooks.Get(r.Context(), r.PathValue("id"))
			if err != nil {
				return err
			}
			rep := newWebhookRep(r, h)
			if rep.Deliveries, err = hooks.Attempts(r.Context(), h.ID, MaxDeliveriesShown); err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusOK, rep)
			return nil
		},
		"patchWebhook": func(w http.ResponseWriter, r *http.Request) error {
			p, err := api.ReadJSONPatch(w, r, "a webhook")
			if err != nil {
				return err
			}
			h, err := hooks.Patch(r.Context(), r.PathValue("id"), p)
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusOK, newWebhookRep(r, h))
			return nil
		},
		"deleteWebhook": func(w http.ResponseWriter, r *http.Request) error {
			if err := hooks.Delete(r.Context(), r.PathValue("id")); err != nil {
				return err
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		},
	}
}
