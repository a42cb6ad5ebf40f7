package flagapi

import (
	"encoding/json"
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/expiring"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/semanticpatch"
)

// The expiring targets of flags, in the flags group: a flag's in one
// environment, and a user's across the flags of a project.

// expiringListRep is ExpiringUserTargetGetResponse.
type expiringListRep struct {
	Items []*expiring.Target `json:"items"`
	Links api.Links          `json:"_links"`
}

// expiringPatchRep is ExpiringUserTargetPatchResponse. A patch applies
// every instruction or none, so a success has no failed instructions.
type expiringPatchRep struct {
	Items                  []*expiring.Target `json:"items"`
	Links                  api.Links          `json:"_links"`
	TotalInstructions      int                `json:"totalInstructions"`
	SuccessfulInstructions int                `json:"successfulInstructions"`
	FailedInstructions     int                `json:"failedInstructions"`
	Errors                 []any              `json:"errors"`
}

func userExpiringHref(r *http.Request) string {
	return "/api/v2/users/" + r.PathValue("projectKey") + "/" + r.PathValue("userKey") + "/expiring-user-targets/" + r.PathValue("environmentKey")
}

func flagExpiringHref(r *http.Request) string {
	return flag.Href(r.PathValue("projectKey"), r.PathValue("featureFlagKey")) + "/expiring-user-targets/" + r.PathValue("environmentKey")
}

// parseExpiringPatch reads an expiring-targets body: a semantic patch of
// expiring-target instructions only; anything else is a 400. Since these
// operations take nothing but a semantic patch, a body with "instructions"
// is one whatever its Content-Type says (LaunchDarkly's Go client sends
// plain application/json).
func parseExpiringPatch(r *http.Request, body []byte) (semanticpatch.Patch, error) {
	if !api.IsSemanticPatch(r) && !semanticpatch.HasInstructions(body) {
		return semanticpatch.Patch{}, fault.New(fault.Invalid, "expiring targets are changed by semantic patch only: send an object with \"instructions\" (Content-Type %q)", "application/json; domain-model="+api.SemanticPatchModel)
	}
	sp, err := semanticpatch.Parse(body)
	if err != nil {
		return sp, err
	}
	return sp, expiring.CheckInstructions(sp)
}

// expiringForUserNeeds is what a per-user expiring-targets patch needs:
// updateExpiringTargets on every flag its instructions name, in the path's
// environment. The body is read leniently, so a caller with no right on
// any flag is refused (403) before the body is judged (400).
func expiringForUserNeeds(r *http.Request, body []byte) ([]api.Need, error) {
	var probe struct {
		Instructions []struct {
			FlagKey string `json:"flagKey"`
		} `json:"instructions"`
	}
	_ = json.Unmarshal(body, &probe)
	var out []api.Need
	seen := map[string]bool{}
	for _, in := range probe.Instructions {
		if in.FlagKey != "" && !seen[in.FlagKey] {
			seen[in.FlagKey] = true
			res := api.OperationResource(r).WithKey("flag", in.FlagKey)
			out = append(out, api.Need{On: &res})
		}
	}
	if len(out) == 0 {
		out = []api.Need{{}}
	}
	return out, nil
}

func (h handlers) getExpiringFlagsForUser(w http.ResponseWriter, r *http.Request) error {
	items, err := h.expiring.ForUser(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"), r.PathValue("userKey"))
	return writeExpiring(w, userExpiringHref(r), items, err)
}

func (h handlers) getExpiringUserTargets(w http.ResponseWriter, r *http.Request) error {
	items, err := h.expiring.ForFlag(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"), r.PathValue("featureFlagKey"))
	return writeExpiring(w, flagExpiringHref(r), items, err)
}

func (h handlers) patchExpiringFlagsForUser(w http.ResponseWriter, r *http.Request) error {
	return patchExpiring(w, r, userExpiringHref(r), func(sp semanticpatch.Patch) ([]*expiring.Target, error) {
		return h.expiring.PatchForUser(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"), r.PathValue("userKey"), sp)
	})
}

func (h handlers) patchExpiringUserTargets(w http.ResponseWriter, r *http.Request) error {
	return patchExpiring(w, r, flagExpiringHref(r), func(sp semanticpatch.Patch) ([]*expiring.Target, error) {
		return h.expiring.PatchForFlag(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"), r.PathValue("featureFlagKey"), sp)
	})
}

// writeExpiring answers a list of expiring targets, or err.
func writeExpiring(w http.ResponseWriter, href string, items []*expiring.Target, err error) error {
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, expiringListRep{Items: items, Links: api.Links{"self": api.JSONLink(href)}})
	return nil
}

// patchExpiring reads an expiring-targets patch, runs it and answers the
// targets it leaves.
func patchExpiring(w http.ResponseWriter, r *http.Request, href string, run func(semanticpatch.Patch) ([]*expiring.Target, error)) error {
	body, err := api.ReadBody(w, r)
	if err != nil {
		return err
	}
	sp, err := parseExpiringPatch(r, body)
	if err != nil {
		return err
	}
	items, err := run(sp)
	if err != nil {
		return err
	}
	n := len(sp.Instructions)
	api.WriteJSON(w, http.StatusOK, expiringPatchRep{Items: items, Links: api.Links{"self": api.JSONLink(href)},
		TotalInstructions: n, SuccessfulInstructions: n, Errors: []any{}})
	return nil
}
