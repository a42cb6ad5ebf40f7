package reps

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/policy"
)

// Environment is an environment as the API shows it: in the environments
// group, in a project's expanded environments, in an approval request's and
// an insight group's.
type Environment struct {
	Links                    api.Links                               `json:"_links"`
	ID                       string                                  `json:"_id"`
	Key                      string                                  `json:"key"`
	Name                     string                                  `json:"name"`
	APIKey                   string                                  `json:"apiKey"`
	MobileKey                string                                  `json:"mobileKey"`
	Color                    string                                  `json:"color"`
	DefaultTTL               int                                     `json:"defaultTtl"`
	SecureMode               bool                                    `json:"secureMode"`
	DefaultTrackEvents       bool                                    `json:"defaultTrackEvents"`
	RequireComments          bool                                    `json:"requireComments"`
	ConfirmChanges           bool                                    `json:"confirmChanges"`
	Tags                     []string                                `json:"tags"`
	ApprovalSettings         *environment.ApprovalSettings           `json:"approvalSettings,omitzero"`
	ResourceApprovalSettings map[string]environment.ApprovalSettings `json:"resourceApprovalSettings,omitzero"`
	Critical                 bool                                    `json:"critical"`
	Access                   policy.Access                           `json:"_access"`
}

// NewEnvironment shows e to the request's caller, with its approval
// settings when approvals are enabled.
func NewEnvironment(r *http.Request, e *environment.Environment, approvals bool) Environment {
	// The project's stored tags as the router's check has them (loaded, once
	// per request, only for callers whose statements select by tag).
	env := api.StoredTags(r, policy.NewResource("proj", e.ProjectKey)).Child("env", e.Key, e.Tags...)
	rep := Environment{
		Access: AccessOn(r, On{env, environment.Actions}, On{env.Child("segment", "*"), []string{environment.CreateSegment}}),
		Links:  api.Self(e.Href()), ID: e.ID, Key: e.Key, Name: e.Name, APIKey: e.APIKey, MobileKey: e.MobileKey,
		Color: e.Color, DefaultTTL: e.DefaultTTL, SecureMode: e.SecureMode, DefaultTrackEvents: e.DefaultTrackEvents,
		RequireComments: e.RequireComments, ConfirmChanges: e.ConfirmChanges, Tags: e.Tags, Critical: e.Critical,
	}
	if rep.Tags == nil {
		rep.Tags = []string{} // the reference requires the array
	}
	if approvals {
		a := e.ApprovalSettings
		rep.ApprovalSettings = &a
		rep.ResourceApprovalSettings = e.ResourceApprovalSettings
		if rep.ResourceApprovalSettings == nil {
			rep.ResourceApprovalSettings = map[string]environment.ApprovalSettings{}
		}
	}
	return rep
}

// NewEnvironments shows each of envs (see NewEnvironment), as an array
// that is never null.
func NewEnvironments(r *http.Request, envs []*environment.Environment, approvals bool) []Environment {
	out := make([]Environment, 0, len(envs))
	for _, e := range envs {
		out = append(out, NewEnvironment(r, e, approvals))
	}
	return out
}

// EnvironmentVisible keeps the environments whose GET the caller of r may make.
func EnvironmentVisible(r *http.Request) func(*environment.Environment) bool {
	return func(e *environment.Environment) bool {
		return api.MayView(r, policy.NewResource("proj", e.ProjectKey).Child("env", e.Key), identity.ViewAction)
	}
}

// Environments is a collection of environments: a project's page of them,
// and a project's expanded environments.
type Environments struct {
	Links      api.Links     `json:"_links"`
	TotalCount int64         `json:"totalCount"`
	Items      []Environment `json:"items"`
}
