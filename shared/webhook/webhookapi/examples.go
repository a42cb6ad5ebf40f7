package webhookapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/example"
)

// examples are the group's successful calls, which the tests make on a
// world holding one of every built resource.
func examples() example.Set {
	return example.Set{
		Calls: map[string]example.Example{
			"deleteWebhook": func(w *example.World) example.Call {
				id := example.Str(w.Must(http.StatusOK, http.MethodPost, example.API+"/webhooks", map[string]any{"url": "http://127.0.0.1:9/doomed", "sign": false, "on": false}), "_id")
				return example.Call{Path: example.API + "/webhooks/" + id}
			},
			"getAllWebhooks": func(*example.World) example.Call { return example.Call{Path: example.API + "/webhooks"} },
			"getWebhook": func(w *example.World) example.Call {
				return example.Call{Path: example.API + "/webhooks/" + w.WebhookID}
			},
			"patchWebhook": func(w *example.World) example.Call {
				return example.Patch(example.API+"/webhooks/"+w.WebhookID, example.Replace("/name", "renamed"))
			},
			"postWebhook": func(w *example.World) example.Call {
				return example.Post(example.API+"/webhooks", map[string]any{"url": "http://127.0.0.1:9/" + w.Unique("hook"), "sign": false, "on": false})
			},
		},
	}
}
