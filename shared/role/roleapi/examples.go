package roleapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/example"
)

// examples are the group's successful calls, which the tests make on a
// world holding one of every built resource.
func examples() example.Set {
	return example.Set{
		Calls: map[string]example.Example{
			"deleteCustomRole": func(w *example.World) example.Call {
				key := w.Unique("doomed")
				w.Must(http.StatusCreated, http.MethodPost, example.API+"/roles", map[string]any{"key": key, "name": "Doomed", "policy": []map[string]any{
					{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"viewProject"}}}})
				return example.Call{Path: example.API + "/roles/" + key}
			},
			"getCustomRole": func(w *example.World) example.Call {
				return example.Call{Path: example.API + "/roles/" + w.RoleKey}
			},
			"getCustomRoles": func(*example.World) example.Call { return example.Call{Path: example.API + "/roles"} },
			"patchCustomRole": func(w *example.World) example.Call {
				return example.Patch(example.API+"/roles/"+w.RoleKey, example.Replace("/name", "Viewer"))
			},
			"postCustomRole": func(w *example.World) example.Call {
				return example.Post(example.API+"/roles", map[string]any{"key": w.Unique("role"), "name": "New", "policy": []map[string]any{
					{"effect": "allow", "resources": []string{"proj/*"}, "actions": []string{"viewProject"}}}})
			},
		},
	}
}
