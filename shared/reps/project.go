package reps

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/project"
)

// Project is a project as the API shows it: in the projects group and in
// an approval request's expanded project.
type Project struct {
	Links                         api.Links                      `json:"_links"`
	ID                            string                         `json:"_id"`
	Key                           string                         `json:"key"`
	Name                          string                         `json:"name"`
	Tags                          []string                       `json:"tags"`
	IncludeInSnippetByDefault     bool                           `json:"includeInSnippetByDefault"`
	DefaultClientSideAvailability project.ClientSideAvailability `json:"defaultClientSideAvailability"`
	DefaultReleasePipelineKey     string                         `json:"defaultReleasePipelineKey,omitempty"`
	Environments                  *Environments                  `json:"environments,omitempty"`
	Access                        policy.Access                  `json:"_access"`
}

// NewProject shows p to the request's caller, without its environments.
func NewProject(r *http.Request, p *project.Project) Project {
	proj := policy.NewResource("proj", p.Key, p.Tags...)
	envs := proj.Child("env", "*")
	return Project{
		Access: AccessOn(r, On{proj, project.Actions}, On{envs, []string{project.CreateEnvironment}},
			On{envs.Child("flag", "*"), []string{project.CreateFlag}}),
		Links: api.Links{
			"self":         api.JSONLink(project.Href(p.Key)),
			"environments": api.JSONLink(project.Href(p.Key) + "/environments"),
		},
		ID: p.ID, Key: p.Key, Name: p.Name, Tags: p.Tags, IncludeInSnippetByDefault: p.IncludeInSnippetByDefault,
		DefaultClientSideAvailability: p.DefaultClientSideAvailability, DefaultReleasePipelineKey: p.DefaultReleasePipelineKey,
	}
}
