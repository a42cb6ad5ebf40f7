// Package flagimportapi serves the flag-imports group over HTTP: flag
// import configurations (spec 2.18, 4.18) and the trigger that runs one.
package flagimportapi

import (
	"context"
	"net/http"
	"time"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/flagimport"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/jsondoc"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/project"
)

// New is the flag-imports group over a.
func New(a *app.App) app.Group {
	s := flagimport.NewService(flagimport.Deps{
		Table: a.Table, Log: a.Services.Audit, Projects: a.Services.Projects, Flags: a.Services.Flags,
		Segments: a.Services.Segments,
		Member: func(ctx context.Context, id string) error {
			_, err := a.Services.Members.Get(ctx, id)
			return err
		},
		Guard: a.Services.Webhooks.Guard(), StatusOf: api.Status, Logger: a.Logger, Now: a.Now,
	})
	h := handlers{s: s, now: a.Now}
	return app.Group{
		Name: "flag-imports",
		Handlers: map[string]api.Handler{
			"getFlagImportConfigurations":   h.getFlagImportConfigurations,
			"createFlagImportConfiguration": h.createFlagImportConfiguration,
			"getFlagImportConfiguration":    h.getFlagImportConfiguration,
			"patchFlagImportConfiguration":  h.patchFlagImportConfiguration,
			"deleteFlagImportConfiguration": h.deleteFlagImportConfiguration,
			"triggerFlagImportJob":          h.triggerFlagImportJob,
		},
		Needs: map[string]api.Needs{
			"triggerFlagImportJob":         triggerNeeds,
			"patchFlagImportConfiguration": patchNeeds,
		},
		Answers:  answers,
		Examples: examples(),
	}
}

// answers are the group's success answers, for the OpenAPI document.
var answers = map[string]api.Answer{
	"getFlagImportConfigurations":   {Status: http.StatusOK, Rep: collectionRep{}},
	"createFlagImportConfiguration": {Status: http.StatusOK, Rep: configRep{}},
	"getFlagImportConfiguration":    {Status: http.StatusOK, Rep: configRep{}},
	"patchFlagImportConfiguration":  {Status: http.StatusOK, Rep: configRep{}},
	"deleteFlagImportConfiguration": {Status: http.StatusNoContent},
	"triggerFlagImportJob":          {Status: http.StatusCreated},
}

// configRep is a configuration as the reference's FlagImportIntegration.
type configRep struct {
	Links          api.Links         `json:"_links"`
	ID             string            `json:"_id"`
	IntegrationKey string            `json:"integrationKey"`
	ProjectKey     string            `json:"projectKey"`
	Config         flagimport.Config `json:"config"`
	Tags           []string          `json:"tags"`
	Name           string            `json:"name"`
	Version        int64             `json:"version"`
	Access         policy.Access     `json:"_access"`
	Status         statusRep         `json:"_status"`
}

// statusRep is `_status`: lastImport and lastError are Unix ms as JSON
// strings (spec 2.18), absent before the first import or error.
type statusRep struct {
	Status     string                `json:"status"`
	LastImport jsondoc.MillisString  `json:"lastImport,omitempty"`
	LastError  jsondoc.MillisString  `json:"lastError,omitempty"`
	Errors     []flagimport.RunError `json:"errors"`
}

func newConfigRep(r *http.Request, c *flagimport.Configuration, run *flagimport.Run, now time.Time) configRep {
	m := c.Masked()
	v := run.View(now, c.ID)
	p, _ := identity.From(r.Context())
	res := resourceOf(c)
	return configRep{
		Links: api.Links{
			"self":    api.JSONLink(flagimport.Href(c.ProjectKey, c.IntegrationKey, c.ID)),
			"parent":  api.JSONLink(flagimport.CollectionHref),
			"project": api.JSONLink(project.Href(c.ProjectKey)),
		},
		ID: m.ID, IntegrationKey: m.IntegrationKey, ProjectKey: m.ProjectKey, Config: m.Config, Tags: m.Tags, Name: m.Name,
		Version: m.Version, Access: p.Access(api.StoredTags(r, res), flagimport.Actions),
		Status: statusRep{Status: v.Status, LastImport: jsondoc.MillisString(v.LastImport), LastError: jsondoc.MillisString(v.LastError), Errors: v.Errors},
	}
}

// resourceOf is the configuration's own resource, which its GET names.
func resourceOf(c *flagimport.Configuration) policy.Resource {
	return policy.NewResource("proj", c.ProjectKey).Child("integration", c.IntegrationKey+"/"+c.ID)
}

type collectionRep struct {
	Links api.Links   `json:"_links"`
	Items []configRep `json:"items"`
}

// importActions are the flag rights a run uses, in every environment of
// the project: the caller triggering an import must hold them, since the
// flags' audit entries name the caller.
var importActions = []string{"createFlag", "updateName", "updateDescription", "updateTags", "updateTemporary", "updateMaintainer",
	"updateFlagVariations", "updateFlagDefaultVariations", "updateOn", "updateTargets", "updateRules", "updateFallthrough", "updateOffVariation"}

// triggerNeeds: a run needs the import right, and the flag rights it uses
// in every environment of the project.
func triggerNeeds(r *http.Request, _ []byte) ([]api.Need, error) {
	flags := policy.NewResource("proj", r.PathValue("projectKey")).Child("env", "*").Child("flag", "*")
	out := []api.Need{{Action: "triggerFlagImport"}}
	for _, a := range importActions {
		out = append(out, api.Need{Action: a, On: &flags})
	}
	return out, nil
}

// patchNeeds refuses a patch of paths a configuration does not have
// before any right is checked; the rest is updateIntegration.
func patchNeeds(r *http.Request, body []byte) ([]api.Need, error) {
	p, err := api.JSONPatch(r, body, "a flag import configuration")
	if err != nil {
		return nil, err
	}
	if _, err := flagimport.PatchActions(p); err != nil {
		return nil, err
	}
	return []api.Need{{Action: "updateIntegration"}}, nil
}

// handlers serve the group's operations on the flag import service.
type handlers struct {
	s   *flagimport.Service
	now func() time.Time // the app's clock: a run's status is read at it
}

// pathKeys are a configuration's keys in the path: project, integration
// and id.
func pathKeys(r *http.Request) (string, string, string) {
	return r.PathValue("projectKey"), r.PathValue("integrationKey"), r.PathValue("integrationId")
}

// getFlagImportConfigurations lists the configurations the caller may read.
func (h handlers) getFlagImportConfigurations(w http.ResponseWriter, r *http.Request) error {
	all, err := h.s.List(r.Context())
	if err != nil {
		return err
	}
	out := collectionRep{Links: api.Links{"self": api.JSONLink(flagimport.CollectionHref), "parent": api.JSONLink("/api/v2")},
		Items: []configRep{}}
	for _, e := range all {
		if !api.MayView(r, resourceOf(e.Config), identity.ViewAction) {
			continue
		}
		out.Items = append(out.Items, newConfigRep(r, e.Config, e.Run, h.now()))
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

// createFlagImportConfiguration answers 200, as the reference does.
func (h handlers) createFlagImportConfiguration(w http.ResponseWriter, r *http.Request) error {
	var in flagimport.Input
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	c, err := h.s.Create(r.Context(), r.PathValue("projectKey"), r.PathValue("integrationKey"), in)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newConfigRep(r, c, nil, h.now()))
	return nil
}

func (h handlers) getFlagImportConfiguration(w http.ResponseWriter, r *http.Request) error {
	p, k, id := pathKeys(r)
	c, run, err := h.s.Get(r.Context(), p, k, id)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newConfigRep(r, c, run, h.now()))
	return nil
}

func (h handlers) patchFlagImportConfiguration(w http.ResponseWriter, r *http.Request) error {
	pt, err := api.ReadJSONPatch(w, r, "a flag import configuration")
	if err != nil {
		return err
	}
	p, k, id := pathKeys(r)
	c, run, err := h.s.Patch(r.Context(), p, k, id, pt)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newConfigRep(r, c, run, h.now()))
	return nil
}

func (h handlers) deleteFlagImportConfiguration(w http.ResponseWriter, r *http.Request) error {
	p, k, id := pathKeys(r)
	if err := h.s.Delete(r.Context(), p, k, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// triggerFlagImportJob answers 201 without a body, as the reference does.
// The run is over by then: a read of the configuration shows its _status.
func (h handlers) triggerFlagImportJob(w http.ResponseWriter, r *http.Request) error {
	p, k, id := pathKeys(r)
	if _, _, err := h.s.Trigger(r.Context(), p, k, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusCreated)
	return nil
}
