package flagapi

import (
	"net/http"
	"time"

	"github.com/flagplane/flagplane/shared/example"
)

// examples are the group's successful calls, which the tests make on a
// world holding one of every built resource.
func examples() example.Set {
	return example.Set{
		Calls: map[string]example.Example{
			"deleteFeatureFlag": func(w *example.World) example.Call {
				key := w.Unique("flag")
				w.Must(http.StatusCreated, http.MethodPost, example.FlagsPath(w.Project), map[string]any{"key": key, "name": "Doomed"})
				return example.Call{Path: example.FlagPath(w.Project, key)}
			},
			"getExpiringFlagsForUser": func(w *example.World) example.Call {
				return example.Call{Path: example.UserExpiringPath(w.Project, w.User, "production")}
			},
			"getExpiringUserTargets": func(w *example.World) example.Call {
				return example.Call{Path: example.FlagExpiringPath(w.Project, w.Flag, "production")}
			},
			"getFeatureFlag": func(w *example.World) example.Call {
				return example.Call{Path: example.FlagPath(w.Project, w.Flag)}
			},
			"getFeatureFlags": func(w *example.World) example.Call {
				return example.Call{Path: example.FlagsPath(w.Project)}
			},
			"patchExpiringFlagsForUser": func(w *example.World) example.Call {
				return example.Semantic(example.UserExpiringPath(w.Project, w.User, "production"), example.Instr("updateExpireUserTargetDate",
					"flagKey", w.Flag, "variationId", w.Variations[1], "value", time.Now().Add(72*time.Hour).UnixMilli()))
			},
			"patchExpiringUserTargets": func(w *example.World) example.Call {
				return example.Semantic(example.FlagExpiringPath(w.Project, w.Flag, "production"), example.Instr("updateExpireUserTargetDate",
					"userKey", w.User, "variationId", w.Variations[1], "value", time.Now().Add(48*time.Hour).UnixMilli()))
			},
			"patchFeatureFlag": func(w *example.World) example.Call {
				return example.Patch(example.FlagPath(w.Project, w.Flag), example.Replace("/description", "patched"))
			},
			"postFeatureFlag": func(w *example.World) example.Call {
				return example.Post(example.FlagsPath(w.Project), map[string]any{"key": w.Unique("flag"), "name": "New"})
			},
		},
		Queries: map[string][]string{
			"getFeatureFlag":  {"?env=production"},
			"getFeatureFlags": {"?summary=0", "?env=production", "?expand=access"},
		},
	}
}
