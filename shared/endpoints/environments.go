package endpoints

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/reps"
)

func environmentHandlers(s app.Services) map[string]api.Handler {
	envs := s.Environments
	approvals := envs.ApprovalsEnabled()
	return map[string]api.Handler{
		"getEnvironmentsByProject": func(w http.ResponseWriter, r *http.Request) error {
			q := r.URL.Query()
			offset, limit, err := api.OffsetParams(q, 20, api.MaxPage)
			if err != nil {
				return err
			}
			pk := r.PathValue("projectKey")
			res, err := envs.List(r.Context(), pk, environment.ListQuery{Filter: q.Get("filter"), Sort: q.Get("sort"), Offset: offset, Limit: limit,
				Visible: reps.EnvironmentVisible(r)})
			if err != nil {
				return err
			}
			out := reps.Environments{TotalCount: res.TotalCount, Items: make([]reps.Environment, 0, len(res.Items)),
				Links: api.OffsetLinks("/api/v2/projects/"+pk+"/environments", q, offset, limit, res.TotalCount)}
			for _, e := range res.Items {
				out.Items = append(out.Items, reps.NewEnvironment(r, e, approvals))
			}
			api.WriteJSON(w, http.StatusOK, out)
			return nil
		},
		"postEnvironment": func(w http.ResponseWriter, r *http.Request) error {
			var in environment.Input
			if err := api.Decode(w, r, &in); err != nil {
				return err
			}
			e, err := envs.Create(r.Context(), r.PathValue("projectKey"), in)
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusCreated, reps.NewEnvironment(r, e, approvals))
			return nil
		},
		"getEnvironment": func(w http.ResponseWriter, r *http.Request) error {
			e, err := envs.Get(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"))
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusOK, reps.NewEnvironment(r, e, approvals))
			return nil
		},
		"patchEnvironment": func(w http.ResponseWriter, r *http.Request) error {
			p, err := api.ReadJSONPatch(w, r, "an environment")
			if err != nil {
				return err
			}
			e, err := envs.Patch(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"), p)
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusOK, reps.NewEnvironment(r, e, approvals))
			return nil
		},
		"resetEnvironmentSDKKey":    resetKey(envs, environment.SDKKey, approvals),
		"resetEnvironmentMobileKey": resetKey(envs, environment.MobileKey, approvals),
		"deleteEnvironment": func(w http.ResponseWriter, r *http.Request) error {
			if err := envs.Delete(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey")); err != nil {
				return err
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		},
	}
}

// resetKey replaces one key. The reference's expiry parameter (keep the
// old SDK key working for a while) needs an SDK-serving side, which
// flagplane does not have, so it is refused rather than ignored.
func resetKey(envs *environment.Service, kind environment.KeyKind, approvals bool) api.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		if r.URL.Query().Has("expiry") {
			return fault.New(fault.Invalid, "query parameter \"expiry\" is not supported: flagplane serves no SDKs, so an old key cannot keep working; the old key is replaced at once")
		}
		e, err := envs.ResetKey(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"), kind)
		if err != nil {
			return err
		}
		api.WriteJSON(w, http.StatusOK, reps.NewEnvironment(r, e, approvals))
		return nil
	}
}
