package endpoints

import (
	"net/http"
	"slices"
	"strings"

	"github.com/flagplane/flagplane/shared/aiconfig"
	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/reps"
)

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

type aiVariationRep struct {
	*aiconfig.Variation
	Links api.Links `json:"_links"`
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

// sortAIConfigs orders by key (default), name, createdAt or updatedAt; "-" descends.
func sortAIConfigs(all []*aiconfig.Full, raw string) error {
	desc := strings.HasPrefix(raw, "-")
	var cmp func(a, b *aiconfig.Full) int
	switch strings.TrimPrefix(raw, "-") {
	case "", "key":
		cmp = func(a, b *aiconfig.Full) int { return strings.Compare(a.Key, b.Key) }
	case "name":
		cmp = func(a, b *aiconfig.Full) int { return strings.Compare(a.Name, b.Name) }
	case "createdAt":
		cmp = func(a, b *aiconfig.Full) int { return int(a.CreatedAt - b.CreatedAt) }
	case "updatedAt":
		cmp = func(a, b *aiconfig.Full) int { return int(a.UpdatedAt - b.UpdatedAt) }
	default:
		return fault.New(fault.Invalid, "sort %q is not supported: use key, name, createdAt or updatedAt, with - to descend", raw)
	}
	slices.SortStableFunc(all, func(a, b *aiconfig.Full) int {
		if desc {
			return cmp(b, a)
		}
		return cmp(a, b)
	})
	return nil
}

func aiConfigHandlers(s app.Services) map[string]api.Handler {
	return map[string]api.Handler{
		"getAIConfigs": func(w http.ResponseWriter, r *http.Request) error {
			q := r.URL.Query()
			offset, limit, err := api.OffsetParams(q, aiConfigsDefaultLimit, aiConfigsMaxLimit)
			if err != nil {
				return err
			}
			if q.Get("filter") != "" {
				return fault.New(fault.Invalid, "filter is not supported on AI Configs")
			}
			projectKey := r.PathValue("projectKey")
			all, err := s.AIConfigs.ListConfigs(r.Context(), projectKey)
			if err != nil {
				return err
			}
			if err := sortAIConfigs(all, q.Get("sort")); err != nil {
				return err
			}
			total := int64(len(all))
			page := all[min(offset, total):min(offset+limit, total)]
			items := make([]aiConfigRep, len(page))
			for i, f := range page {
				items[i] = newAIConfigRep(r, projectKey, f)
			}
			api.WriteJSON(w, http.StatusOK, map[string]any{"items": items, "totalCount": total,
				"_links": api.OffsetLinks("/api/v2/projects/"+projectKey+"/ai-configs", q, offset, limit, total)})
			return nil
		},
		"postAIConfig": func(w http.ResponseWriter, r *http.Request) error {
			var in aiconfig.ConfigInput
			if err := api.Decode(w, r, &in); err != nil {
				return err
			}
			projectKey := r.PathValue("projectKey")
			f, err := s.AIConfigs.CreateConfig(r.Context(), projectKey, in)
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusCreated, newAIConfigRep(r, projectKey, f))
			return nil
		},
		"getAIConfig": func(w http.ResponseWriter, r *http.Request) error {
			projectKey := r.PathValue("projectKey")
			f, err := s.AIConfigs.GetConfig(r.Context(), projectKey, r.PathValue("configKey"))
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusOK, newAIConfigRep(r, projectKey, f))
			return nil
		},
		"patchAIConfig": func(w http.ResponseWriter, r *http.Request) error {
			var p aiconfig.ConfigPatch
			if err := api.Decode(w, r, &p); err != nil {
				return err
			}
			projectKey := r.PathValue("projectKey")
			f, err := s.AIConfigs.PatchConfig(r.Context(), projectKey, r.PathValue("configKey"), p)
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusOK, newAIConfigRep(r, projectKey, f))
			return nil
		},
		"deleteAIConfig": func(w http.ResponseWriter, r *http.Request) error {
			if err := s.AIConfigs.DeleteConfig(r.Context(), r.PathValue("projectKey"), r.PathValue("configKey")); err != nil {
				return err
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		},
		"postAIConfigVariation": func(w http.ResponseWriter, r *http.Request) error {
			var in aiconfig.VariationInput
			if err := api.Decode(w, r, &in); err != nil {
				return err
			}
			projectKey, configKey := r.PathValue("projectKey"), r.PathValue("configKey")
			v, err := s.AIConfigs.CreateVariation(r.Context(), projectKey, configKey, in)
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusCreated, newAIVariationRep(projectKey, configKey, v))
			return nil
		},
		"getAIConfigVariation": func(w http.ResponseWriter, r *http.Request) error {
			projectKey, configKey := r.PathValue("projectKey"), r.PathValue("configKey")
			all, err := s.AIConfigs.GetVariation(r.Context(), projectKey, configKey, r.PathValue("variationKey"))
			if err != nil {
				return err
			}
			items := make([]aiVariationRep, len(all))
			for i, v := range all {
				items[i] = newAIVariationRep(projectKey, configKey, v)
			}
			api.WriteJSON(w, http.StatusOK, map[string]any{"items": items, "totalCount": len(items)})
			return nil
		},
		"patchAIConfigVariation": func(w http.ResponseWriter, r *http.Request) error {
			var p aiconfig.VariationPatch
			if err := api.Decode(w, r, &p); err != nil {
				return err
			}
			projectKey, configKey := r.PathValue("projectKey"), r.PathValue("configKey")
			v, err := s.AIConfigs.PatchVariation(r.Context(), projectKey, configKey, r.PathValue("variationKey"), p)
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusOK, newAIVariationRep(projectKey, configKey, v))
			return nil
		},
		"deleteAIConfigVariation": func(w http.ResponseWriter, r *http.Request) error {
			if err := s.AIConfigs.DeleteVariation(r.Context(), r.PathValue("projectKey"), r.PathValue("configKey"), r.PathValue("variationKey")); err != nil {
				return err
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		},
		"listModelConfigs": func(w http.ResponseWriter, r *http.Request) error {
			projectKey := r.PathValue("projectKey")
			all, err := s.AIConfigs.ListModels(r.Context(), projectKey)
			if err != nil {
				return err
			}
			out := make([]aiModelRep, len(all))
			for i, m := range all {
				out[i] = newAIModelRep(r, projectKey, m)
			}
			api.WriteJSON(w, http.StatusOK, out)
			return nil
		},
		"postModelConfig": func(w http.ResponseWriter, r *http.Request) error {
			var in aiconfig.ModelConfigInput
			if err := api.Decode(w, r, &in); err != nil {
				return err
			}
			projectKey := r.PathValue("projectKey")
			m, err := s.AIConfigs.CreateModel(r.Context(), projectKey, in)
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusOK, newAIModelRep(r, projectKey, m))
			return nil
		},
		"getModelConfig": func(w http.ResponseWriter, r *http.Request) error {
			projectKey := r.PathValue("projectKey")
			m, err := s.AIConfigs.GetModel(r.Context(), projectKey, r.PathValue("modelConfigKey"))
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusOK, newAIModelRep(r, projectKey, m))
			return nil
		},
		"deleteModelConfig": func(w http.ResponseWriter, r *http.Request) error {
			if err := s.AIConfigs.DeleteModel(r.Context(), r.PathValue("projectKey"), r.PathValue("modelConfigKey")); err != nil {
				return err
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		},
	}
}
