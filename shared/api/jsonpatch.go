package api

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/patch"
)

// JSONPatch parses body as a JSON patch (RFC 6902) for a resource that
// takes no semantic patch. A semantic-patch Content-Type is refused rather
// than ignored, so a client does not believe its instructions were applied;
// what names the resource in that refusal ("a destination").
func JSONPatch(r *http.Request, body []byte, what string) (patch.Patch, error) {
	if IsSemanticPatch(r) {
		return patch.Patch{}, fault.New(fault.Invalid, "%s takes a JSON patch (RFC 6902), not a semantic patch: drop the domain-model parameter from Content-Type", what)
	}
	return patch.Parse(body)
}

// ReadJSONPatch reads the request body (bounded, as ReadBody) and parses it
// with JSONPatch.
func ReadJSONPatch(w http.ResponseWriter, r *http.Request, what string) (patch.Patch, error) {
	body, err := ReadBody(w, r)
	if err != nil {
		return patch.Patch{}, err
	}
	return JSONPatch(r, body, what)
}

// PatchNeeds are the needs of a JSON-patch update: the actions its paths
// take (actions reads them from the patch), each on the operation's resource
// as the path names it. what names the resource, as in JSONPatch.
func PatchNeeds(what string, actions func(patch.Patch) ([]string, error)) Needs {
	return func(r *http.Request, body []byte) ([]Need, error) {
		p, err := JSONPatch(r, body, what)
		if err != nil {
			return nil, err
		}
		list, err := actions(p)
		if err != nil {
			return nil, err
		}
		return ActionNeeds(list...), nil
	}
}

// ActionNeeds are needs of actions on the operation's resource as the path names it.
func ActionNeeds(actions ...string) []Need {
	out := make([]Need, len(actions))
	for i, a := range actions {
		out[i] = Need{Action: a}
	}
	return out
}
