// Package projectapi serves the projects group over HTTP: projects, with
// their environments on a create, an update or an expanded read. The
// group's function also answers the health check and the OpenAPI
// document, which need no token and no function of their own.
package projectapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/health"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/openapi/openapiapi"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/reps"
)

// New is the projects group over a.
func New(a *app.App) app.Group {
	s := a.Services
	h := handlers{projects: s.Projects, envs: s.Environments, approvals: s.Environments.ApprovalsEnabled()}
	return app.Group{
		Name:     "projects",
		Examples: examples(),
		Handlers: map[string]api.Handler{
			"getProjects":   h.getProjects,
			"postProject":   h.postProject,
			"getProject":    h.getProject,
			"patchProject":  h.patchProject,
			"deleteProject": h.deleteProject,
			// The health check reads the table itself: it answers for the store, not for a service.
			health.OperationID: health.Handler(a.Table),
			// The OpenAPI document is the committed bytes: it rides with the health check.
			openapiapi.OperationID: openapiapi.Handler(),
		},
		Needs: map[string]api.Needs{
			"patchProject": api.PatchNeeds("a project", patch.ChangingActions(project.PatchActions)),
		},
		Answers: map[string]api.Answer{
			"getProjects":          {Status: http.StatusOK, Rep: projectsRep{}},
			"postProject":          {Status: http.StatusCreated, Rep: projectChangeRep{}},
			"getProject":           {Status: http.StatusOK, Rep: reps.Project{}},
			"patchProject":         {Status: http.StatusOK, Rep: projectChangeRep{}},
			"deleteProject":        {Status: http.StatusNoContent},
			health.OperationID:     {Status: http.StatusOK, Rep: health.Status{}},
			openapiapi.OperationID: openapiapi.Answer,
		},
	}
}

// projectChangeRep is the answer of a create or an update (the reference's
// ProjectRep): the project with every environment, as an array.
type projectChangeRep struct {
	reps.Project
	Environments []reps.Environment `json:"environments"`
}

func newProjectChangeRep(r *http.Request, p *project.Project, envs []*environment.Environment, approvals bool) projectChangeRep {
	return projectChangeRep{Project: reps.NewProject(r, p), Environments: reps.NewEnvironments(r, envs, approvals)}
}

type projectsRep struct {
	Links      api.Links      `json:"_links"`
	TotalCount int64          `json:"totalCount"`
	Items      []reps.Project `json:"items"`
}

// handlers serve the group's operations; approvals says whether
// environments show their approval settings.
type handlers struct {
	projects  *project.Service
	envs      *environment.Service
	approvals bool
}

// allEnvironments are the environments of project key the caller may see.
func (h handlers) allEnvironments(r *http.Request, key string) ([]*environment.Environment, error) {
	res, err := h.envs.List(r.Context(), key, environment.ListQuery{Limit: 1 << 31, Visible: reps.EnvironmentVisible(r)})
	return res.Items, err
}

// withEnvironments is the project of a read with expand=environments: its
// environments as a collection object (the reference's Project).
func (h handlers) withEnvironments(r *http.Request, p *project.Project) (reps.Project, error) {
	rep := reps.NewProject(r, p)
	envs, err := h.allEnvironments(r, p.Key)
	if err != nil {
		return rep, err
	}
	rep.Environments = &reps.Environments{Links: api.Self(project.Href(p.Key) + "/environments"), TotalCount: int64(len(envs)),
		Items: reps.NewEnvironments(r, envs, h.approvals)}
	return rep, nil
}

// rep is p as a read shows it, with its environments when expand asks.
func (h handlers) rep(r *http.Request, p *project.Project, expand map[string]bool) (reps.Project, error) {
	if expand["environments"] {
		return h.withEnvironments(r, p)
	}
	return reps.NewProject(r, p), nil
}

func (h handlers) getProjects(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	offset, limit, err := api.OffsetParams(q, 20, api.MaxPage)
	if err != nil {
		return err
	}
	expand, err := api.Expand(q, "environments")
	if err != nil {
		return err
	}
	res, err := h.projects.List(r.Context(), project.ListQuery{Filter: q.Get("filter"), Sort: q.Get("sort"), Offset: offset, Limit: limit,
		Visible: func(p *project.Project) bool {
			return api.MayView(r, policy.NewResource("proj", p.Key), identity.ViewAction)
		}})
	if err != nil {
		return err
	}
	out := projectsRep{TotalCount: res.TotalCount, Items: make([]reps.Project, 0, len(res.Items)),
		Links: api.OffsetLinks("/api/v2/projects", q, offset, limit, res.TotalCount)}
	for _, p := range res.Items {
		rep, err := h.rep(r, p, expand)
		if err != nil {
			return err
		}
		out.Items = append(out.Items, rep)
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) postProject(w http.ResponseWriter, r *http.Request) error {
	var in project.Input
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	p, envs, err := h.projects.Create(r.Context(), in)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusCreated, newProjectChangeRep(r, p, envs, h.approvals))
	return nil
}

func (h handlers) getProject(w http.ResponseWriter, r *http.Request) error {
	expand, err := api.Expand(r.URL.Query(), "environments")
	if err != nil {
		return err
	}
	p, err := h.projects.Get(r.Context(), r.PathValue("projectKey"))
	if err != nil {
		return err
	}
	rep, err := h.rep(r, p, expand)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, rep)
	return nil
}

func (h handlers) patchProject(w http.ResponseWriter, r *http.Request) error {
	p, err := api.ReadJSONPatch(w, r, "a project")
	if err != nil {
		return err
	}
	proj, err := h.projects.Patch(r.Context(), r.PathValue("projectKey"), p)
	if err != nil {
		return err
	}
	envs, err := h.allEnvironments(r, proj.Key)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newProjectChangeRep(r, proj, envs, h.approvals))
	return nil
}

func (h handlers) deleteProject(w http.ResponseWriter, r *http.Request) error {
	if err := h.projects.Delete(r.Context(), r.PathValue("projectKey")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
