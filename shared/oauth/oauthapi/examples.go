package oauthapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/example"
)

// examples are the group's successful calls, which the tests make on a
// world holding one of every built resource.
func examples() example.Set {
	return example.Set{
		Calls: map[string]example.Example{
			"deleteOAuthClient": func(w *example.World) example.Call {
				id := example.Str(w.Must(http.StatusCreated, http.MethodPost, example.API+"/oauth/clients", map[string]any{"name": "doomed", "redirectUri": "https://app.example.com/cb"}), "_clientId")
				return example.Call{Path: example.API + "/oauth/clients/" + id}
			},
			"getOAuthClientById": func(w *example.World) example.Call {
				return example.Call{Path: example.API + "/oauth/clients/" + w.ClientID}
			},
			"getOAuthClients": func(*example.World) example.Call { return example.Call{Path: example.API + "/oauth/clients"} },
			"patchOAuthClient": func(w *example.World) example.Call {
				return example.Patch(example.API+"/oauth/clients/"+w.ClientID, example.Replace("/name", "renamed"))
			},
			"createOAuth2Client": func(w *example.World) example.Call {
				return example.Post(example.API+"/oauth/clients", map[string]any{"name": w.Unique("client"), "redirectUri": "https://app.example.com/cb"})
			},
		},
		// The spec's part 2 types these as strings of Unix ms; a dated LD-API-Version answers integers.
		SpecTypes: map[string]map[string]string{"Client": {"_creationDate": "string"}},
		Dated:     map[string][]string{"Client": {"_creationDate"}},
	}
}
