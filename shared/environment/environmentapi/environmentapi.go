// Package environmentapi serves the environments group over HTTP: a
// project's environments, their settings and their SDK and mobile keys.
package environmentapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/reps"
)

// New is the environments group over a.
func New(a *app.App) app.Group {
	envs := a.Services.Environments
	h := handlers{envs: envs, approvals: envs.ApprovalsEnabled()}
	return app.Group{
		Name:     "environments",
		Examples: examples(),
		Handlers: map[string]api.Handler{
			"getEnvironmentsByProject":  h.getEnvironmentsByProject,
			"postEnvironment":           h.postEnvironment,
			"getEnvironment":            h.getEnvironment,
			"patchEnvironment":          h.patchEnvironment,
			"deleteEnvironment":         h.deleteEnvironment,
			"resetEnvironmentSDKKey":    h.resetEnvironmentSDKKey,
			"resetEnvironmentMobileKey": h.resetEnvironmentMobileKey,
		},
		Needs: map[string]api.Needs{
			"patchEnvironment": api.PatchNeeds("an environment", patch.ChangingActions(environment.PatchActions)),
		},
		Answers: map[string]api.Answer{
			"getEnvironmentsByProject":  {Status: http.StatusOK, Rep: reps.Environments{}},
			"postEnvironment":           {Status: http.StatusCreated, Rep: reps.Environment{}},
			"getEnvironment":            {Status: http.StatusOK, Rep: reps.Environment{}},
			"patchEnvironment":          {Status: http.StatusOK, Rep: reps.Environment{}},
			"deleteEnvironment":         {Status: http.StatusNoContent},
			"resetEnvironmentSDKKey":    {Status: http.StatusOK, Rep: reps.Environment{}},
			"resetEnvironmentMobileKey": {Status: http.StatusOK, Rep: reps.Environment{}},
		},
	}
}

// handlers serve the group's operations; approvals says whether
// environments show their approval settings.
type handlers struct {
	envs      *environment.Service
	approvals bool
}

func (h handlers) getEnvironmentsByProject(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	offset, limit, err := api.OffsetParams(q, 20, api.MaxPage)
	if err != nil {
		return err
	}
	pk := r.PathValue("projectKey")
	res, err := h.envs.List(r.Context(), pk, environment.ListQuery{Filter: q.Get("filter"), Sort: q.Get("sort"), Offset: offset, Limit: limit,
		Visible: reps.EnvironmentVisible(r)})
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, reps.Environments{TotalCount: res.TotalCount, Items: reps.NewEnvironments(r, res.Items, h.approvals),
		Links: api.OffsetLinks("/api/v2/projects/"+pk+"/environments", q, offset, limit, res.TotalCount)})
	return nil
}

func (h handlers) postEnvironment(w http.ResponseWriter, r *http.Request) error {
	var in environment.Input
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	e, err := h.envs.Create(r.Context(), r.PathValue("projectKey"), in)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusCreated, reps.NewEnvironment(r, e, h.approvals))
	return nil
}

func (h handlers) getEnvironment(w http.ResponseWriter, r *http.Request) error {
	e, err := h.envs.Shared(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"))
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, reps.NewEnvironment(r, e, h.approvals))
	return nil
}

func (h handlers) patchEnvironment(w http.ResponseWriter, r *http.Request) error {
	p, err := api.ReadJSONPatch(w, r, "an environment")
	if err != nil {
		return err
	}
	e, err := h.envs.Patch(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"), p)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, reps.NewEnvironment(r, e, h.approvals))
	return nil
}

func (h handlers) deleteEnvironment(w http.ResponseWriter, r *http.Request) error {
	if err := h.envs.Delete(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h handlers) resetEnvironmentSDKKey(w http.ResponseWriter, r *http.Request) error {
	return h.resetKey(w, r, environment.SDKKey)
}

func (h handlers) resetEnvironmentMobileKey(w http.ResponseWriter, r *http.Request) error {
	return h.resetKey(w, r, environment.MobileKey)
}

// resetKey replaces one key. The reference's expiry parameter (keep the
// old SDK key working for a while) needs an SDK-serving side, which
// flagplane does not have, so it is refused rather than ignored.
func (h handlers) resetKey(w http.ResponseWriter, r *http.Request, kind environment.KeyKind) error {
	if r.URL.Query().Has("expiry") {
		return fault.New(fault.Invalid, "query parameter \"expiry\" is not supported: flagplane serves no SDKs, so an old key cannot keep working; the old key is replaced at once")
	}
	e, err := h.envs.ResetKey(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"), kind)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, reps.NewEnvironment(r, e, h.approvals))
	return nil
}
