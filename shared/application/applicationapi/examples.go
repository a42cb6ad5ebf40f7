package applicationapi

import (
	"github.com/flagplane/flagplane/shared/example"
)

// examples are the group's successful calls, which the tests make on a
// world holding one of every built resource.
func examples() example.Set {
	return example.Set{
		Calls: map[string]example.Example{
			"deleteApplication": func(w *example.World) example.Call {
				key := w.Unique("app")
				w.SeenContext(w.Unique("u"), key)
				return example.Call{Path: example.API + "/applications/" + key, Headers: example.BetaHeader}
			},
			"deleteApplicationVersion": func(w *example.World) example.Call {
				key := w.Unique("app")
				w.SeenContext(w.Unique("u"), key)
				return example.Call{Path: example.API + "/applications/" + key + "/versions/1.0", Headers: example.BetaHeader}
			},
			"getApplication": func(*example.World) example.Call {
				return example.Call{Path: example.API + "/applications/world?expand=flags", Headers: example.BetaHeader}
			},
			"getApplicationVersions": func(*example.World) example.Call {
				return example.Call{Path: example.API + "/applications/world/versions", Headers: example.BetaHeader}
			},
			"getApplications": func(*example.World) example.Call {
				return example.Call{Path: example.API + "/applications?expand=flags", Headers: example.BetaHeader}
			},
			"patchApplication": func(*example.World) example.Call {
				return example.Call{Path: example.API + "/applications/world", Body: []example.Op{example.Replace("/description", "the world")}, Headers: example.BetaHeader}
			},
			"patchApplicationVersion": func(*example.World) example.Call {
				return example.Call{Path: example.API + "/applications/world/versions/1.0", Body: []example.Op{example.Replace("/name", "One")}, Headers: example.BetaHeader}
			},
		},
	}
}
