package projectapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/example"
)

// examples are the group's successful calls, which the tests make on a
// world holding one of every built resource.
func examples() example.Set {
	return example.Set{
		Calls: map[string]example.Example{
			"deleteProject": func(w *example.World) example.Call {
				return example.Call{Path: example.ProjectPath(throwawayProject(w))}
			},
			"getOpenapiSpec": func(*example.World) example.Call { return example.Call{Path: example.API + "/openapi.json"} },
			"getProject": func(w *example.World) example.Call {
				return example.Call{Path: example.ProjectPath(w.Project)}
			},
			"getProjects": func(*example.World) example.Call { return example.Call{Path: example.API + "/projects"} },
			"patchProject": func(w *example.World) example.Call {
				return example.Patch(example.ProjectPath(w.Project), example.Replace("/name", "Renamed"))
			},
			"postProject": func(w *example.World) example.Call {
				return example.Post(example.API+"/projects", map[string]any{"key": w.Unique("proj"), "name": "New"})
			},
		},
		Queries: map[string][]string{
			"getProject":  {"?expand=environments"},
			"getProjects": {"?expand=environments"},
		},
	}
}

// throwawayProject is a new project without environments, for a delete.
func throwawayProject(w *example.World) string {
	key := w.Unique("doomed")
	w.Must(http.StatusCreated, http.MethodPost, example.API+"/projects", map[string]any{"key": key, "name": "Doomed", "environments": []any{}})
	return key
}
