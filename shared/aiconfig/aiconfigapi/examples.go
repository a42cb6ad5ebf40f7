package aiconfigapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/example"
)

// examples are the group's successful calls, which the tests make on a
// world holding one of every built resource.
func examples() example.Set {
	return example.Set{
		Calls: map[string]example.Example{
			"deleteAIConfig": func(w *example.World) example.Call {
				key := w.Unique("ai")
				w.Must(http.StatusCreated, http.MethodPost, example.AIConfigsPath(w.Project), map[string]any{"key": key, "name": "Doomed"})
				return example.Call{Path: example.AIConfigPath(w.Project, key)}
			},
			"deleteAIConfigVariation": func(w *example.World) example.Call {
				key := w.Unique("v")
				w.Must(http.StatusCreated, http.MethodPost, example.AIConfigPath(w.Project, "world")+"/variations", map[string]any{"key": key, "name": "Doomed"})
				return example.Call{Path: example.AIVariationPath(w.Project, "world", key)}
			},
			"deleteModelConfig": func(w *example.World) example.Call {
				key := w.Unique("model")
				w.Must(http.StatusOK, http.MethodPost, example.AIModelsPath(w.Project), map[string]any{"key": key, "name": "Doomed", "id": "doomed-1"})
				return example.Call{Path: example.AIModelsPath(w.Project) + "/" + key}
			},
			"getAIConfig": func(w *example.World) example.Call {
				return example.Call{Path: example.AIConfigPath(w.Project, "world")}
			},
			"getAIConfigVariation": func(w *example.World) example.Call {
				return example.Call{Path: example.AIVariationPath(w.Project, "world", "v")}
			},
			"getAIConfigs": func(w *example.World) example.Call {
				return example.Call{Path: example.AIConfigsPath(w.Project)}
			},
			"getModelConfig": func(w *example.World) example.Call {
				return example.Call{Path: example.AIModelsPath(w.Project) + "/world"}
			},
			"listModelConfigs": func(w *example.World) example.Call {
				return example.Call{Path: example.AIModelsPath(w.Project)}
			},
			"patchAIConfig": func(w *example.World) example.Call {
				return example.Call{Path: example.AIConfigPath(w.Project, "world"), Body: map[string]any{"description": "patched"}}
			},
			"patchAIConfigVariation": func(w *example.World) example.Call {
				return example.Call{Path: example.AIVariationPath(w.Project, "world", "v"), Body: map[string]any{"comment": "again", "modelConfigVersion": 1}}
			},
			"postAIConfig": func(w *example.World) example.Call {
				return example.Post(example.AIConfigsPath(w.Project), map[string]any{"key": w.Unique("ai"), "name": "New", "defaultVariation": map[string]any{"key": "d", "name": "D"}})
			},
			"postAIConfigVariation": func(w *example.World) example.Call {
				return example.Post(example.AIConfigPath(w.Project, "world")+"/variations", map[string]any{"key": w.Unique("v"), "name": "New", "modelConfigKey": "world"})
			},
			"postModelConfig": func(w *example.World) example.Call {
				return example.Post(example.AIModelsPath(w.Project), map[string]any{"key": w.Unique("model"), "name": "New", "id": "new-1"})
			},
		},
	}
}
