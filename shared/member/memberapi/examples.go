package memberapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/example"
)

// examples are the group's successful calls, which the tests make on a
// world holding one of every built resource.
func examples() example.Set {
	return example.Set{
		Calls: map[string]example.Example{
			"deleteMember": func(w *example.World) example.Call {
				m := w.Must(http.StatusCreated, http.MethodPost, example.API+"/members", []map[string]any{{"email": w.Unique("doomed") + "@example.com"}})
				return example.Call{Path: example.API + "/members/" + example.Str(m["items"].([]any)[0].(map[string]any), "_id")}
			},
			"getMember": func(w *example.World) example.Call {
				return example.Call{Path: example.API + "/members/" + w.MemberID}
			},
			"getMembers": func(*example.World) example.Call { return example.Call{Path: example.API + "/members"} },
			"patchMember": func(w *example.World) example.Call {
				return example.Patch(example.API+"/members/"+w.MemberID, example.Replace("/firstName", "Ray"))
			},
			"postMembers": func(w *example.World) example.Call {
				return example.Post(example.API+"/members", []map[string]any{{"email": w.Unique("new") + "@example.com", "role": "reader"}})
			},
		},
	}
}
