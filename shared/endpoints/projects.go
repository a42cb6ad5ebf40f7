package endpoints

import (
	"net/http"
	"strings"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/reps"
)

// withEnvironments is the project of a read with expand=environments: its
// environments as a collection object (the reference's Project).
func withEnvironments(r *http.Request, rep reps.Project, envs []*environment.Environment, approvals bool) reps.Project {
	c := reps.Environments{Links: api.Self(project.Href(rep.Key) + "/environments"), TotalCount: int64(len(envs)),
		Items: reps.NewEnvironments(r, envs, approvals)}
	rep.Environments = &c
	return rep
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

// expandEnvironments reads expand=environments; any other value is refused.
func expandEnvironments(r *http.Request) (bool, error) {
	raw := r.URL.Query().Get("expand")
	if raw == "" {
		return false, nil
	}
	for _, v := range strings.Split(raw, ",") {
		if strings.TrimSpace(v) != "environments" {
			return false, fault.New(fault.Invalid, "expand %q is not supported; the option is environments", v)
		}
	}
	return true, nil
}

func projectHandlers(s app.Services) map[string]api.Handler {
	projects := s.Projects
	approvals := s.Environments.ApprovalsEnabled()
	allEnvironments := func(r *http.Request, key string) ([]*environment.Environment, error) {
		res, err := s.Environments.List(r.Context(), key, environment.ListQuery{Limit: 1 << 31, Visible: reps.EnvironmentVisible(r)})
		return res.Items, err
	}
	return map[string]api.Handler{
		"getProjects": func(w http.ResponseWriter, r *http.Request) error {
			q := r.URL.Query()
			offset, limit, err := api.OffsetParams(q, 20, api.MaxPage)
			if err != nil {
				return err
			}
			expand, err := expandEnvironments(r)
			if err != nil {
				return err
			}
			res, err := projects.List(r.Context(), project.ListQuery{Filter: q.Get("filter"), Sort: q.Get("sort"), Offset: offset, Limit: limit,
				Visible: func(p *project.Project) bool {
					return api.MayView(r, policy.NewResource("proj", p.Key), identity.ViewAction)
				}})
			if err != nil {
				return err
			}
			out := projectsRep{TotalCount: res.TotalCount, Items: make([]reps.Project, 0, len(res.Items)),
				Links: api.OffsetLinks("/api/v2/projects", q, offset, limit, res.TotalCount)}
			for _, p := range res.Items {
				rep := reps.NewProject(r, p)
				if expand {
					envs, err := allEnvironments(r, p.Key)
					if err != nil {
						return err
					}
					rep = withEnvironments(r, rep, envs, approvals)
				}
				out.Items = append(out.Items, rep)
			}
			api.WriteJSON(w, http.StatusOK, out)
			return nil
		},
		"postProject": func(w http.ResponseWriter, r *http.Request) error {
			var in project.Input
			if err := api.Decode(w, r, &in); err != nil {
				return err
			}
			p, envs, err := projects.Create(r.Context(), in)
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusCreated, newProjectChangeRep(r, p, envs, approvals))
			return nil
		},
		"getProject": func(w http.ResponseWriter, r *http.Request) error {
			expand, err := expandEnvironments(r)
			if err != nil {
				return err
			}
			key := r.PathValue("projectKey")
			p, err := projects.Get(r.Context(), key)
			if err != nil {
				return err
			}
			rep := reps.NewProject(r, p)
			if expand {
				envs, err := allEnvironments(r, key)
				if err != nil {
					return err
				}
				rep = withEnvironments(r, rep, envs, approvals)
			}
			api.WriteJSON(w, http.StatusOK, rep)
			return nil
		},
		"patchProject": func(w http.ResponseWriter, r *http.Request) error {
			p, err := api.ReadJSONPatch(w, r, "a project")
			if err != nil {
				return err
			}
			proj, err := projects.Patch(r.Context(), r.PathValue("projectKey"), p)
			if err != nil {
				return err
			}
			envs, err := allEnvironments(r, proj.Key)
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusOK, newProjectChangeRep(r, proj, envs, approvals))
			return nil
		},
		"deleteProject": func(w http.ResponseWriter, r *http.Request) error {
			if err := projects.Delete(r.Context(), r.PathValue("projectKey")); err != nil {
				return err
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		},
	}
}
