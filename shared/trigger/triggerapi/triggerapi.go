// Package triggerapi serves the adaptive-triggers group over HTTP: an
// environment's adaptive triggers, and their firing by an alert source
// with the trigger's token.
package triggerapi

import (
	"encoding/json"
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/reps"
	"github.com/flagplane/flagplane/shared/semanticpatch"
	"github.com/flagplane/flagplane/shared/trigger"
)

// New is the adaptive-triggers group over a.
func New(a *app.App) app.Group {
	h := handlers{triggers: a.Services.Triggers}
	return app.Group{
		Name: "adaptive-triggers",
		Handlers: map[string]api.Handler{
			"getAdaptiveTriggers":     h.getAdaptiveTriggers,
			"postAdaptiveTrigger":     h.postAdaptiveTrigger,
			"getAdaptiveTrigger":      h.getAdaptiveTrigger,
			"patchAdaptiveTrigger":    h.patchAdaptiveTrigger,
			"deleteAdaptiveTrigger":   h.deleteAdaptiveTrigger,
			"postAdaptiveTriggerFire": h.postAdaptiveTriggerFire,
		},
		Needs: map[string]api.Needs{
			"postAdaptiveTrigger":  createNeeds,
			"patchAdaptiveTrigger": h.patchNeeds,
		},
		Answers: map[string]api.Answer{
			"getAdaptiveTriggers":     {Status: http.StatusOK, Rep: adaptiveTriggersRep{}},
			"postAdaptiveTrigger":     {Status: http.StatusCreated, Rep: adaptiveTriggerRep{}},
			"getAdaptiveTrigger":      {Status: http.StatusOK, Rep: adaptiveTriggerRep{}},
			"patchAdaptiveTrigger":    {Status: http.StatusOK, Rep: adaptiveTriggerRep{}},
			"deleteAdaptiveTrigger":   {Status: http.StatusNoContent},
			"postAdaptiveTriggerFire": {Status: http.StatusOK, Rep: fireRep{}},
		},
	}
}

// handlers serve the group's operations.
type handlers struct {
	triggers *trigger.Service
}

// adaptiveTriggerRep is an adaptive trigger as the API shows it (spec
// 2.14; createdAt and updatedAt are integers, Unix ms). The firing token
// appears only in the create answer.
type adaptiveTriggerRep struct {
	Links         api.Links       `json:"_links"`
	ID            string          `json:"id"`
	Name          string          `json:"name"`
	ResourceKind  string          `json:"resourceKind"`
	ResourceKey   string          `json:"resourceKey"`
	Enabled       bool            `json:"enabled"`
	CreatedAt     int64           `json:"createdAt"`
	UpdatedAt     int64           `json:"updatedAt"`
	Task          trigger.Task    `json:"task"`
	TriggerSource trigger.Source  `json:"triggerSource"`
	LastFiring    *trigger.Firing `json:"_lastFiring,omitempty"`
	TriggerToken  string          `json:"triggerToken,omitempty"`
	FireURL       string          `json:"_fireUrl"`
	Access        policy.Access   `json:"_access"`
}

func triggerResource(t *trigger.Trigger) policy.Resource {
	return policy.NewResource("proj", t.ProjectKey).Child("env", t.EnvironmentKey).Child("adaptive-trigger", t.ID)
}

func newAdaptiveTriggerRep(r *http.Request, t *trigger.Trigger) adaptiveTriggerRep {
	rep := adaptiveTriggerRep{
		Links: api.Links{
			"self":   api.JSONLink(trigger.Href(t.ProjectKey, t.EnvironmentKey, t.ID)),
			"parent": api.JSONLink(trigger.CollectionHref(t.ProjectKey, t.EnvironmentKey)),
		},
		ID: t.ID, Name: t.Name, ResourceKind: t.ResourceKind, ResourceKey: t.ResourceKey, Enabled: t.Enabled,
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, Task: t.Task, TriggerSource: t.TriggerSource,
		LastFiring: t.LastFiring, FireURL: trigger.FireHref(t.ID),
		Access: reps.Access(r, triggerResource(t), trigger.Actions),
	}
	if rep.Task.Instructions == nil {
		rep.Task.Instructions = []semanticpatch.Instruction{}
	}
	return rep
}

type adaptiveTriggersRep struct {
	Links      api.Links            `json:"_links"`
	TotalCount int                  `json:"totalCount"`
	Items      []adaptiveTriggerRep `json:"items"`
}

// fireRep answers a firing.
type fireRep struct {
	TriggerID string `json:"triggerId"`
	EventID   string `json:"eventId"`
	Status    string `json:"status"`
}

// triggerEventHeader carries the alert event's id when the body does not.
const triggerEventHeader = "X-Trigger-Event-Id"

func (h handlers) getAdaptiveTriggers(w http.ResponseWriter, r *http.Request) error {
	pk, ek := r.PathValue("projectKey"), r.PathValue("environmentKey")
	all, err := h.triggers.List(r.Context(), pk, ek)
	if err != nil {
		return err
	}
	out := adaptiveTriggersRep{Links: api.Self(trigger.CollectionHref(pk, ek)), TotalCount: len(all), Items: []adaptiveTriggerRep{}}
	for _, t := range all {
		out.Items = append(out.Items, newAdaptiveTriggerRep(r, t))
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) postAdaptiveTrigger(w http.ResponseWriter, r *http.Request) error {
	var in trigger.Input
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	t, tok, err := h.triggers.Create(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"), in)
	if err != nil {
		return err
	}
	rep := newAdaptiveTriggerRep(r, t)
	rep.TriggerToken = tok
	api.WriteJSON(w, http.StatusCreated, rep)
	return nil
}

func (h handlers) getAdaptiveTrigger(w http.ResponseWriter, r *http.Request) error {
	t, err := h.triggers.Get(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"), r.PathValue("triggerID"))
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newAdaptiveTriggerRep(r, t))
	return nil
}

func (h handlers) patchAdaptiveTrigger(w http.ResponseWriter, r *http.Request) error {
	p, err := api.ReadJSONPatch(w, r, "an adaptive trigger")
	if err != nil {
		return err
	}
	t, err := h.triggers.Patch(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"), r.PathValue("triggerID"), p)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newAdaptiveTriggerRep(r, t))
	return nil
}

func (h handlers) deleteAdaptiveTrigger(w http.ResponseWriter, r *http.Request) error {
	if err := h.triggers.Delete(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"), r.PathValue("triggerID")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// The alert source authenticates with the trigger's token; the
// event id (body "eventId" or the X-Trigger-Event-Id header) makes
// a repeated delivery run once.
func (h handlers) postAdaptiveTriggerFire(w http.ResponseWriter, r *http.Request) error {
	body, err := api.ReadBody(w, r)
	if err != nil {
		return err
	}
	t, err := h.triggers.Authenticate(r.Context(), r.PathValue("triggerID"), api.SDKCredential(r))
	if err != nil {
		return err
	}
	var in struct {
		EventID string `json:"eventId"`
	}
	if len(body) > 0 {
		if err := json.Unmarshal(body, &in); err != nil {
			return fault.New(fault.Invalid, "the body must be a JSON object, optionally with a string field \"eventId\"")
		}
	}
	if in.EventID == "" {
		in.EventID = r.Header.Get(triggerEventHeader)
	}
	f, err := h.triggers.Fire(r.Context(), t, in.EventID)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, fireRep{TriggerID: t.ID, EventID: f.EventID, Status: f.Status})
	return nil
}

// flagNeedsOf are the rights the instructions use on flag fk of
// environment ek: environment-scoped actions in ek, the flag's own
// settings in every environment (env/*), as patchFeatureFlag needs them.
func flagNeedsOf(pk, ek, fk string, ins []semanticpatch.Instruction) ([]api.Need, error) {
	list, err := flag.InstructionEnvActions(ek, ins)
	if err != nil {
		return nil, fault.Wrap(err, fault.Invalid, "field \"task.instructions\": %s", fault.MessageOf(err))
	}
	out := make([]api.Need, 0, len(list))
	for _, ea := range list {
		env := ea.Env
		if env == "" {
			env = "*"
		}
		res := policy.NewResource("proj", pk).Child("env", env).Child("flag", fk)
		out = append(out, api.Need{Action: ea.Action, On: &res})
	}
	return out, nil
}

// createNeeds: createAdaptiveTrigger on the trigger, and
// the rights the instructions use on the target flag in the trigger's
// environment, so a trigger never does what its creator could not.
func createNeeds(r *http.Request, body []byte) ([]api.Need, error) {
	var in trigger.Input
	if json.Unmarshal(body, &in) != nil || in.Task == nil || in.ResourceKey == "" {
		return []api.Need{{}}, nil // the handler names what is wrong
	}
	if len(in.Task.Instructions) == 0 {
		return []api.Need{{}}, nil
	}
	flagNeeds, err := flagNeedsOf(r.PathValue("projectKey"), r.PathValue("environmentKey"), in.ResourceKey, in.Task.Instructions)
	if err != nil {
		return nil, err
	}
	return append([]api.Need{{}}, flagNeeds...), nil
}

// patchNeeds: updateAdaptiveTrigger on the trigger, and
// the rights of the instructions it will hold after the patch on its flag,
// checked whatever the patch changes (enabling a trigger is running its
// instructions later).
func (h handlers) patchNeeds(r *http.Request, body []byte) ([]api.Need, error) {
	p, err := api.JSONPatch(r, body, "an adaptive trigger")
	if err != nil {
		return nil, err
	}
	if _, err := trigger.PatchActions(p); err != nil {
		return nil, err
	}
	pk, ek := r.PathValue("projectKey"), r.PathValue("environmentKey")
	t, err := h.triggers.Get(r.Context(), pk, ek, r.PathValue("triggerID"))
	if fault.Is(err, fault.NotFound) {
		return []api.Need{{}}, nil
	}
	if err != nil {
		return nil, err
	}
	var next trigger.Trigger
	if err := p.ApplyTo(t, &next); err != nil {
		return nil, err
	}
	if len(next.Task.Instructions) == 0 {
		return []api.Need{{}}, nil
	}
	flagNeeds, err := flagNeedsOf(pk, ek, t.ResourceKey, next.Task.Instructions)
	if err != nil {
		return nil, err
	}
	return append([]api.Need{{}}, flagNeeds...), nil
}
