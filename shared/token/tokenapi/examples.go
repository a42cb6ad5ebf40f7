package tokenapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/example"
)

// examples are the group's successful calls, which the tests make on a
// world holding one of every built resource.
func examples() example.Set {
	return example.Set{
		Calls: map[string]example.Example{
			"deleteToken": func(w *example.World) example.Call {
				id := example.Str(w.Must(http.StatusCreated, http.MethodPost, example.API+"/tokens", map[string]any{"name": w.Unique("doomed"), "role": "reader"}), "_id")
				return example.Call{Path: example.API + "/tokens/" + id}
			},
			"getToken": func(w *example.World) example.Call {
				return example.Call{Path: example.API + "/tokens/" + w.UsedTokenID}
			},
			"getTokens": func(*example.World) example.Call { return example.Call{Path: example.API + "/tokens"} },
			"patchToken": func(w *example.World) example.Call {
				return example.Patch(example.API+"/tokens/"+w.TokenID, example.Replace("/name", "renamed"))
			},
			"postToken": func(w *example.World) example.Call {
				return example.Post(example.API+"/tokens", map[string]any{"name": w.Unique("token"), "role": "reader"})
			},
			"resetToken": func(w *example.World) example.Call {
				return example.Post(example.API+"/tokens/"+w.TokenID+"/reset", nil)
			},
		},
		// The spec's part 2 types these as strings of Unix ms; a dated LD-API-Version answers integers.
		SpecTypes: map[string]map[string]string{"Token": {"creationDate": "string", "lastModified": "string", "lastUsed": "string", "expiry": "string"}},
		Dated:     map[string][]string{"Token": {"creationDate", "lastModified", "lastUsed", "expiry"}},
	}
}
