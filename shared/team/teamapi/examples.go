package teamapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/example"
)

// examples are the group's successful calls, which the tests make on a
// world holding one of every built resource.
func examples() example.Set {
	return example.Set{
		Calls: map[string]example.Example{
			"deleteTeam": func(w *example.World) example.Call {
				key := w.Unique("doomed")
				w.Must(http.StatusCreated, http.MethodPost, example.API+"/teams", map[string]any{"key": key, "name": "Doomed"})
				return example.Call{Path: example.API + "/teams/" + key}
			},
			"getTeam": func(w *example.World) example.Call {
				return example.Call{Path: example.API + "/teams/" + w.TeamKey}
			},
			"getTeamMaintainers": func(w *example.World) example.Call {
				return example.Call{Path: example.API + "/teams/" + w.TeamKey + "/maintainers"}
			},
			"getTeamRoles": func(w *example.World) example.Call {
				return example.Call{Path: example.API + "/teams/" + w.TeamKey + "/roles"}
			},
			"getTeams": func(*example.World) example.Call { return example.Call{Path: example.API + "/teams"} },
			"patchTeam": func(w *example.World) example.Call {
				return example.Patch(example.API+"/teams/"+w.TeamKey, example.Replace("/name", "Operations"))
			},
			"postTeam": func(w *example.World) example.Call {
				return example.Post(example.API+"/teams", map[string]any{"key": w.Unique("team"), "name": "New"})
			},
		},
	}
}
