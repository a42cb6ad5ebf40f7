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
				w.Must(http.StatusCreated, http.MethodPost, aiConfigsPath(w.Project), map[string]any{"key": key, "name": "Doomed"})
				return example.Call{Path: aiConfigPath(w.Project, key)}
			},
			"deleteAIConfigVariation": func(w *example.World) example.Call {
				key := w.Unique("v")
				w.Must(http.StatusCreated, http.MethodPost, aiConfigPath(w.Project, "world")+"/variations", map[string]any{"key": key, "name": "Doomed"})
				return example.Call{Path: aiVariationPath(w.Project, "world", key)}
			},
			"deleteModelConfig": func(w *example.World) example.Call {
				key := w.Unique("model")
				w.Must(http.StatusOK, http.MethodPost, aiModelsPath(w.Project), map[string]any{"key": key, "name": "Doomed", "id": "doomed-1"})
				return example.Call{Path: aiModelsPath(w.Project) + "/" + key}
			},
			"getAIConfig": func(w *example.World) example.Call {
				return example.Call{Path: aiConfigPath(w.Project, "world")}
			},
			"getAIConfigVariation": func(w *example.World) example.Call {
				return example.Call{Path: aiVariationPath(w.Project, "world", "v")}
			},
			"getAIConfigs": func(w *example.World) example.Call {
				return example.Call{Path: aiConfigsPath(w.Project)}
			},
			"getModelConfig": func(w *example.World) example.Call {
				return example.Call{Path: aiModelsPath(w.Project) + "/world"}
			},
			"listModelConfigs": func(w *example.World) example.Call {
				return example.Call{Path: aiModelsPath(w.Project)}
			},
			"patchAIConfig": func(w *example.World) example.Call {
				return example.Call{Path: aiConfigPath(w.Project, "world"), Body: map[string]any{"description": "patched"}}
			},
			"patchAIConfigVariation": func(w *example.World) example.Call {
				return example.Call{Path: aiVariationPath(w.Project, "world", "v"), Body: map[string]any{"comment": "again", "modelConfigVersion": 1}}
			},
			"postAIConfig": func(w *example.World) example.Call {
				return example.Post(aiConfigsPath(w.Project), map[string]any{"key": w.Unique("ai"), "name": "New", "defaultVariation": map[string]any{"key": "d", "name": "D"}})
			},
			"postAIConfigVariation": func(w *example.World) example.Call {
				return example.Post(aiConfigPath(w.Project, "world")+"/variations", map[string]any{"key": w.Unique("v"), "name": "New", "modelConfigKey": "world"})
			},
			"postModelConfig": func(w *example.World) example.Call {
				return example.Post(aiModelsPath(w.Project), map[string]any{"key": w.Unique("model"), "name": "New", "id": "new-1"})
			},
		},
	}
}

func aiConfigsPath(p string) string { return example.ProjectPath(p) + "/ai-configs" }

func aiConfigPath(p, c string) string { return aiConfigsPath(p) + "/" + c }

func aiModelsPath(p string) string { return aiConfigsPath(p) + "/model-configs" }

func aiVariationPath(p, c, v string) string { return aiConfigPath(p, c) + "/variations/" + v }
