// Package aiconfigapi serves the ai-configs group over HTTP (beta): a
// project's AI Configs, their variations, and the model configs they use.
package aiconfigapi

import (
	"cmp"
	"net/http"
	"strings"

	"github.com/flagplane/flagplane/shared/aiconfig"
	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/listing"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/reps"
)

// New is the ai-configs group over a.
func New(a *app.App) app.Group {
	h := handlers{configs: a.Services.AIConfigs}
	return app.Group{
		Name:     "ai-configs",
		Examples: examples(),
		Handlers: map[string]api.Handler{
			"getAIConfigs":            h.getAIConfigs,
			"postAIConfig":            h.postAIConfig,
			"getAIConfig":             h.getAIConfig,
			"patchAIConfig":           h.patchAIConfig,
			"deleteAIConfig":          h.deleteAIConfig,
			"postAIConfigVariation":   h.postAIConfigVariation,
			"getAIConfigVariation":    h.getAIConfigVariation,
			"patchAIConfigVariation":  h.patchAIConfigVariation,
			"deleteAIConfigVariation": h.deleteAIConfigVariation,
			"listModelConfigs":        h.listModelConfigs,
			"postModelConfig":         h.postModelConfig,
			"getModelConfig":          h.getModelConfig,
			"deleteModelConfig":       h.deleteModelConfig,
		},
		Answers: map[string]api.Answer{
			"getAIConfigs":            {Status: http.StatusOK, Rep: aiConfigsRep{}},
			"postAIConfig":            {Status: http.StatusCreated, Rep: aiConfigRep{}},
			"getAIConfig":             {Status: http.StatusOK, Rep: aiConfigRep{}},
			"patchAIConfig":           {Status: http.StatusOK, Rep: aiConfigRep{}},
			"deleteAIConfig":          {Status: http.StatusNoContent},
			"postAIConfigVariation":   {Status: http.StatusCreated, Rep: aiVariationRep{}},
			"getAIConfigVariation":    {Status: http.StatusOK, Rep: aiVariationsRep{}},
			"patchAIConfigVariation":  {Status: http.StatusOK, Rep: aiVariationRep{}},
			"deleteAIConfigVariation": {Status: http.StatusNoContent},
			"listModelConfigs":        {Status: http.StatusOK, Rep: []aiModelRep{}},
			"postModelConfig":         {Status: http.StatusOK, Rep: aiModelRep{}},
			"getModelConfig":          {Status: http.StatusOK, Rep: aiModelRep{}},
			"deleteModelConfig":       {Status: http.StatusNoContent},
		},
	}
}

// AI Config pages (the reference's list defaults).
const (
	aiConfigsDefaultLimit = 20
	aiConfigsMaxLimit     = 100
)

type aiConfigRep struct {
	*aiconfig.Config
	Variations []aiVariationRep `json:"variations"`
	Links      api.Links        `json:"_links"`
	Access     policy.Access    `json:"_access"`
}

type aiConfigsRep struct {
	Links      api.Links     `json:"_links"`
	Items      []aiConfigRep `json:"items"`
	TotalCount int64         `json:"totalCount"`
}

type aiVariationRep struct {
	*aiconfig.Variation
	Links api.Links `json:"_links"`
}

// aiVariationsRep is the versions of a variation.
type aiVariationsRep struct {
	Items      []aiVariationRep `json:"items"`
	TotalCount int              `json:"totalCount"`
}

type aiModelRep struct {
	*aiconfig.ModelConfig
	Access policy.Access `json:"_access"`
}

func aiConfigResource(projectKey, configKey string) policy.Resource {
	return policy.NewResource("proj", projectKey).Child("aiconfig", configKey)
}

func newAIConfigRep(r *http.Request, projectKey string, f *aiconfig.Full) aiConfigRep {
	vars := make([]aiVariationRep, len(f.Variations))
	for i, v := range f.Variations {
		vars[i] = newAIVariationRep(projectKey, f.Key, v)
	}
	return aiConfigRep{Config: f.Config, Variations: vars, Links: api.Links{
		"self":   api.JSONLink(aiconfig.Href(projectKey, f.Key)),
		"parent": api.JSONLink("/api/v2/projects/" + projectKey + "/ai-configs"),
	}, Access: reps.Access(r, aiConfigResource(projectKey, f.Key), aiconfig.Actions)}
}

func newAIVariationRep(projectKey, configKey string, v *aiconfig.Variation) aiVariationRep {
	return aiVariationRep{Variation: v, Links: api.Links{"parent": api.JSONLink(aiconfig.Href(projectKey, configKey))}}
}

func newAIModelRep(r *http.Request, projectKey string, m *aiconfig.ModelConfig) aiModelRep {
	return aiModelRep{ModelConfig: m, Access: reps.Access(r, policy.NewResource("proj", projectKey).Child("ai-model-config", m.Key), aiconfig.ModelActions)}
}

// sortAIConfigs orders by key (default), name, createdAt or updatedAt,
// each descending after "-", later fields breaking ties.
func sortAIConfigs(all []*aiconfig.Full, raw string) error {
	order, err := listing.ParseSort(raw, "key", "name", "createdAt", "updatedAt")
	if err != nil {
		return err
	}
	if len(order) == 0 {
		order = []listing.SortKey{{Field: "key"}}
	}
	listing.Sort(all, order, map[string]func(a, b *aiconfig.Full) int{
		"key":       func(a, b *aiconfig.Full) int { return strings.Compare(a.Key, b.Key) },
		"name":      func(a, b *aiconfig.Full) int { return strings.Compare(a.Name, b.Name) },
		"createdAt": func(a, b *aiconfig.Full) int { return cmp.Compare(a.CreatedAt, b.CreatedAt) },
		"updatedAt": func(a, b *aiconfig.Full) int { return cmp.Compare(a.UpdatedAt, b.UpdatedAt) },
	})
	return nil
}

// handlers serve the group's operations.
type handlers struct {
	configs *aiconfig.Service
}

func (h handlers) getAIConfigs(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	offset, limit, err := api.OffsetParams(q, aiConfigsDefaultLimit, aiConfigsMaxLimit)
	if err != nil {
		return err
	}
	if q.Get("filter") != "" {
		return fault.New(fault.Invalid, "filter is not supported on AI Configs")
	}
	projectKey := r.PathValue("projectKey")
	all, err := h.configs.ListConfigs(r.Context(), projectKey)
	if err != nil {
		return err
	}
	if err := sortAIConfigs(all, q.Get("sort")); err != nil {
		return err
	}
	total := int64(len(all))
	out := aiConfigsRep{Items: []aiConfigRep{}, TotalCount: total, Links: api.OffsetLinks("/api/v2/projects/"+projectKey+"/ai-configs", q, offset, limit, total)}
	for _, f := range listing.Window(all, offset, limit) {
		out.Items = append(out.Items, newAIConfigRep(r, projectKey, f))
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) postAIConfig(w http.ResponseWriter, r *http.Request) error {
	var in aiconfig.ConfigInput
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	projectKey := r.PathValue("projectKey")
	f, err := h.configs.CreateConfig(r.Context(), projectKey, in)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusCreated, newAIConfigRep(r, projectKey, f))
	return nil
}

func (h handlers) getAIConfig(w http.ResponseWriter, r *http.Request) error {
	projectKey := r.PathValue("projectKey")
	f, err := h.configs.GetConfig(r.Context(), projectKey, r.PathValue("configKey"))
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newAIConfigRep(r, projectKey, f))
	return nil
}

func (h handlers) patchAIConfig(w http.ResponseWriter, r *http.Request) error {
	var p aiconfig.ConfigPatch
	if err := api.Decode(w, r, &p); err != nil {
		return err
	}
	projectKey := r.PathValue("projectKey")
	f, err := h.configs.PatchConfig(r.Context(), projectKey, r.PathValue("configKey"), p)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newAIConfigRep(r, projectKey, f))
	return nil
}

func (h handlers) deleteAIConfig(w http.ResponseWriter, r *http.Request) error {
	if err := h.configs.DeleteConfig(r.Context(), r.PathValue("projectKey"), r.PathValue("configKey")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h handlers) postAIConfigVariation(w http.ResponseWriter, r *http.Request) error {
	var in aiconfig.VariationInput
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	projectKey, configKey := r.PathValue("projectKey"), r.PathValue("configKey")
	v, err := h.configs.CreateVariation(r.Context(), projectKey, configKey, in)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusCreated, newAIVariationRep(projectKey, configKey, v))
	return nil
}

func (h handlers) getAIConfigVariation(w http.ResponseWriter, r *http.Request) error {
	projectKey, configKey := r.PathValue("projectKey"), r.PathValue("configKey")
	all, err := h.configs.GetVariation(r.Context(), projectKey, configKey, r.PathValue("variationKey"))
	if err != nil {
		return err
	}
	items := make([]aiVariationRep, len(all))
	for i, v := range all {
		items[i] = newAIVariationRep(projectKey, configKey, v)
	}
	api.WriteJSON(w, http.StatusOK, aiVariationsRep{Items: items, TotalCount: len(items)})
	return nil
}

func (h handlers) patchAIConfigVariation(w http.ResponseWriter, r *http.Request) error {
	var p aiconfig.VariationPatch
	if err := api.Decode(w, r, &p); err != nil {
		return err
	}
	projectKey, configKey := r.PathValue("projectKey"), r.PathValue("configKey")
	v, err := h.configs.PatchVariation(r.Context(), projectKey, configKey, r.PathValue("variationKey"), p)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newAIVariationRep(projectKey, configKey, v))
	return nil
}

func (h handlers) deleteAIConfigVariation(w http.ResponseWriter, r *http.Request) error {
	if err := h.configs.DeleteVariation(r.Context(), r.PathValue("projectKey"), r.PathValue("configKey"), r.PathValue("variationKey")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h handlers) listModelConfigs(w http.ResponseWriter, r *http.Request) error {
	projectKey := r.PathValue("projectKey")
	all, err := h.configs.ListModels(r.Context(), projectKey)
	if err != nil {
		return err
	}
	out := make([]aiModelRep, len(all))
	for i, m := range all {
		out[i] = newAIModelRep(r, projectKey, m)
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) postModelConfig(w http.ResponseWriter, r *http.Request) error {
	var in aiconfig.ModelConfigInput
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	projectKey := r.PathValue("projectKey")
	m, err := h.configs.CreateModel(r.Context(), projectKey, in)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newAIModelRep(r, projectKey, m))
	return nil
}

func (h handlers) getModelConfig(w http.ResponseWriter, r *http.Request) error {
	projectKey := r.PathValue("projectKey")
	m, err := h.configs.GetModel(r.Context(), projectKey, r.PathValue("modelConfigKey"))
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newAIModelRep(r, projectKey, m))
	return nil
}

func (h handlers) deleteModelConfig(w http.ResponseWriter, r *http.Request) error {
	if err := h.configs.DeleteModel(r.Context(), r.PathValue("projectKey"), r.PathValue("modelConfigKey")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
