package app

import (
	"context"
	"math"
	"strings"

	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/project"
)

// aiConfigProjects tells the AI Config service about projects and the approval
// settings of their environments.
type aiConfigProjects struct {
	projects *project.Service
	envs     *environment.Service
}

func (a aiConfigProjects) Check(ctx context.Context, projectKey string) error {
	_, err := a.projects.Get(ctx, projectKey)
	return err
}

// ReviewRequired finds an environment whose resource approval settings
// require review of AI Configs (LaunchDarkly's resource kind aiconfig).
func (a aiConfigProjects) ReviewRequired(ctx context.Context, projectKey string) (string, error) {
	res, err := a.envs.List(ctx, projectKey, environment.ListQuery{Limit: math.MaxInt32})
	if err != nil {
		return "", err
	}
	for _, e := range res.Items {
		for kind, settings := range e.ResourceApprovalSettings {
			if strings.EqualFold(kind, "aiconfig") && settings.Required {
				return e.Key, nil
			}
		}
	}
	return "", nil
}
