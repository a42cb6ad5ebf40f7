// Package releasepolicyapi serves the release-policies group over HTTP
// (beta): a project's ranked release policies.
package releasepolicyapi

import (
	"net/http"
	"strconv"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/releasepolicy"
	"github.com/flagplane/flagplane/shared/reps"
)

// New is the release-policies group over a.
func New(a *app.App) app.Group {
	h := handlers{policies: a.Services.ReleasePolicies}
	return app.Group{
		Name:     "release-policies",
		Examples: examples(),
		Handlers: map[string]api.Handler{
			"GetReleasePolicies":       h.getReleasePolicies,
			"PostReleasePolicy":        h.postReleasePolicy,
			"PostReleasePoliciesOrder": h.postReleasePoliciesOrder,
			"GetReleasePolicy":         h.getReleasePolicy,
			"PutReleasePolicy":         h.putReleasePolicy,
			"DeleteReleasePolicy":      h.deleteReleasePolicy,
		},
		Answers: map[string]api.Answer{
			"GetReleasePolicies":       {Status: http.StatusOK, Rep: releasePoliciesRep{}},
			"PostReleasePolicy":        {Status: http.StatusCreated, Rep: releasePolicyRep{}},
			"PostReleasePoliciesOrder": {Status: http.StatusOK, Rep: []releasePolicyRep{}},
			"GetReleasePolicy":         {Status: http.StatusOK, Rep: releasePolicyRep{}},
			"PutReleasePolicy":         {Status: http.StatusOK, Rep: releasePolicyRep{}},
			"DeleteReleasePolicy":      {Status: http.StatusNoContent},
		},
	}
}

// releasePolicyRep is a release policy as the reference's ReleasePolicy.
type releasePolicyRep struct {
	*releasepolicy.Policy
	Access policy.Access `json:"_access"`
}

type releasePoliciesRep struct {
	Items      []releasePolicyRep `json:"items"`
	TotalCount int                `json:"totalCount"`
}

func newReleasePolicyRep(r *http.Request, projectKey string, p *releasepolicy.Policy) releasePolicyRep {
	res := policy.NewResource("proj", projectKey).Child("release-policy", p.Key)
	return releasePolicyRep{Policy: p, Access: reps.Access(r, res, releasepolicy.Actions)}
}

func releasePolicyReps(r *http.Request, projectKey string, list []*releasepolicy.Policy) []releasePolicyRep {
	out := make([]releasePolicyRep, 0, len(list))
	for _, p := range list {
		out = append(out, newReleasePolicyRep(r, projectKey, p))
	}
	return out
}

// handlers serve the group's operations.
type handlers struct {
	policies *releasepolicy.Service
}

// getReleasePolicies lists a project's policies by rank. flagplane keeps
// no implicit default policy, so excludeDefault (checked to be a boolean)
// changes nothing.
func (h handlers) getReleasePolicies(w http.ResponseWriter, r *http.Request) error {
	if v := r.URL.Query().Get("excludeDefault"); v != "" {
		if _, err := strconv.ParseBool(v); err != nil {
			return fault.New(fault.Invalid, "query parameter \"excludeDefault\" must be true or false, not %q", v)
		}
	}
	project := r.PathValue("projectKey")
	list, err := h.policies.List(r.Context(), project)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, releasePoliciesRep{Items: releasePolicyReps(r, project, list), TotalCount: len(list)})
	return nil
}

func (h handlers) postReleasePolicy(w http.ResponseWriter, r *http.Request) error {
	var in releasepolicy.Input
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	project := r.PathValue("projectKey")
	p, err := h.policies.Create(r.Context(), project, in)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusCreated, newReleasePolicyRep(r, project, p))
	return nil
}

func (h handlers) postReleasePoliciesOrder(w http.ResponseWriter, r *http.Request) error {
	var keys []string
	if err := api.Decode(w, r, &keys); err != nil {
		return err
	}
	project := r.PathValue("projectKey")
	list, err := h.policies.Order(r.Context(), project, keys)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, releasePolicyReps(r, project, list))
	return nil
}

func (h handlers) getReleasePolicy(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("projectKey")
	p, err := h.policies.Get(r.Context(), project, r.PathValue("policyKey"))
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newReleasePolicyRep(r, project, p))
	return nil
}

func (h handlers) putReleasePolicy(w http.ResponseWriter, r *http.Request) error {
	var in releasepolicy.Input
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	project := r.PathValue("projectKey")
	p, err := h.policies.Replace(r.Context(), project, r.PathValue("policyKey"), in)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newReleasePolicyRep(r, project, p))
	return nil
}

func (h handlers) deleteReleasePolicy(w http.ResponseWriter, r *http.Request) error {
	if err := h.policies.Delete(r.Context(), r.PathValue("projectKey"), r.PathValue("policyKey")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
