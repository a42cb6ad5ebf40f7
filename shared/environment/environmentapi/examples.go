package environmentapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/example"
)

// examples are the group's successful calls, which the tests make on a
// world holding one of every built resource.
func examples() example.Set {
	return example.Set{
		Calls: map[string]example.Example{
			"deleteEnvironment": func(w *example.World) example.Call {
				return example.Call{Path: example.EnvPath(w.Project, throwawayEnvironment(w))}
			},
			"getEnvironment": func(w *example.World) example.Call {
				return example.Call{Path: example.EnvPath(w.Project, "production")}
			},
			"getEnvironmentsByProject": func(w *example.World) example.Call {
				return example.Call{Path: example.EnvsPath(w.Project)}
			},
			"patchEnvironment": func(w *example.World) example.Call {
				return example.Patch(example.EnvPath(w.Project, "test"), example.Replace("/name", "Testing"))
			},
			"postEnvironment": func(w *example.World) example.Call {
				return example.Post(example.EnvsPath(w.Project), map[string]any{"key": w.Unique("env"), "name": "New", "color": "336699"})
			},
			"resetEnvironmentMobileKey": func(w *example.World) example.Call {
				return example.Post(example.EnvPath(w.Project, throwawayEnvironment(w))+"/mobileKey", nil)
			},
			"resetEnvironmentSDKKey": func(w *example.World) example.Call {
				return example.Post(example.EnvPath(w.Project, throwawayEnvironment(w))+"/apiKey", nil)
			},
		},
	}
}

// throwawayEnvironment is a new environment of the world's project.
func throwawayEnvironment(w *example.World) string {
	key := w.Unique("doomed")
	w.Must(http.StatusCreated, http.MethodPost, example.EnvsPath(w.Project), map[string]any{"key": key, "name": key, "color": "336699"})
	return key
}
