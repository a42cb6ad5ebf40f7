package endpoints

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

func releasePolicyHandlers(s app.Services) map[string]api.Handler {
	rp := s.ReleasePolicies
	return map[string]api.Handler{
		// flagplane keeps no implicit default policy, so excludeDefault
		// (checked to be a boolean) changes nothing.
		"GetReleasePolicies": func(w http.ResponseWriter, r *http.Request) error {
			if v := r.URL.Query().Get("excludeDefault"); v != "" {
				if _, err := strconv.ParseBool(v); err != nil {
					return fault.New(fault.Invalid, "query parameter \"excludeDefault\" must be true or false, not %q", v)
				}
			}
			project := r.PathValue("projectKey")
			list, err := rp.List(r.Context(), project)
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusOK, releasePoliciesRep{Items: releasePolicyReps(r, project, list), TotalCount: len(list)})
			return nil
		},
		"PostReleasePolicy": func(w http.ResponseWriter, r *http.Request) error {
			var in releasepolicy.Input
			if err := api.Decode(w, r, &in); err != nil {
				return err
			}
			project := r.PathValue("projectKey")
			p, err := rp.Create(r.Context(), project, in)
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusCreated, newReleasePolicyRep(r, project, p))
			return nil
		},
		"PostReleasePoliciesOrder": func(w http.ResponseWriter, r *http.Request) error {
			var keys []string
			if err := api.Decode(w, r, &keys); err != nil {
				return err
			}
			project := r.PathValue("projectKey")
			list, err := rp.Order(r.Context(), project, keys)
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusOK, releasePolicyReps(r, project, list))
			return nil
		},
		"GetReleasePolicy": func(w http.ResponseWriter, r *http.Request) error {
			project := r.PathValue("projectKey")
			p, err := rp.Get(r.Context(), project, r.PathValue("policyKey"))
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusOK, newReleasePolicyRep(r, project, p))
			return nil
		},
		"PutReleasePolicy": func(w http.ResponseWriter, r *http.Request) error {
			var in releasepolicy.Input
			if err := api.Decode(w, r, &in); err != nil {
				return err
			}
			project := r.PathValue("projectKey")
			p, err := rp.Replace(r.Context(), project, r.PathValue("policyKey"), in)
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusOK, newReleasePolicyRep(r, project, p))
			return nil
		},
		"DeleteReleasePolicy": func(w http.ResponseWriter, r *http.Request) error {
			if err := rp.Delete(r.Context(), r.PathValue("projectKey"), r.PathValue("policyKey")); err != nil {
				return err
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		},
	}
}
