package contextapi

import (
	"github.com/flagplane/flagplane/shared/example"
	"github.com/flagplane/flagplane/shared/sdkcontext"
)

// examples are the group's successful calls, which the tests make on a
// world holding one of every built resource.
func examples() example.Set {
	return example.Set{
		Calls: map[string]example.Example{
			"deleteContextInstances": func(w *example.World) example.Call {
				return example.Call{Path: example.EnvPath(w.Project, "production") + "/context-instances/" + w.SeenContext(w.Unique("gone"), "world")}
			},
			"evaluateContextInstance": func(w *example.World) example.Call {
				return example.Post(example.EnvPath(w.Project, "production")+"/flags/evaluate", map[string]any{"kind": "user", "key": w.User})
			},
			"getContextAttributeNames": func(w *example.World) example.Call {
				return example.Call{Path: example.EnvPath(w.Project, "production") + "/context-attributes"}
			},
			"getContextAttributeValues": func(w *example.World) example.Call {
				return example.Call{Path: example.EnvPath(w.Project, "production") + "/context-attributes/email"}
			},
			"getContextInstances": func(w *example.World) example.Call {
				return example.Call{Path: example.EnvPath(w.Project, "production") + "/context-instances/" + sdkcontext.InstanceID(w.User)}
			},
			"getContextKindsByProjectKey": func(w *example.World) example.Call {
				return example.Call{Path: example.ProjectPath(w.Project) + "/context-kinds"}
			},
			"getContexts": func(w *example.World) example.Call {
				return example.Call{Path: example.EnvPath(w.Project, "production") + "/contexts/user/" + w.User}
			},
			"putContextKind": func(w *example.World) example.Call {
				return example.Call{Path: example.ProjectPath(w.Project) + "/context-kinds/" + w.Unique("kind"), Body: map[string]any{"name": "Kind", "description": "d"}}
			},
			"searchContextInstances": func(w *example.World) example.Call {
				return example.Post(example.EnvPath(w.Project, "production")+"/context-instances/search", map[string]any{"limit": 5})
			},
			"searchContexts": func(w *example.World) example.Call {
				return example.Post(example.EnvPath(w.Project, "production")+"/contexts/search", map[string]any{"filter": "applicationId:world"})
			},
		},
	}
}
