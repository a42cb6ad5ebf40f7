package insightapi

import (
	"context"

	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/coderefs"
	"github.com/flagplane/flagplane/shared/coderefs/coderefsapi"
	"github.com/flagplane/flagplane/shared/insight"
)

// codeRefsOf is what insights read of code references: the code-refs
// group's repositories and the references their default branches hold.
func codeRefsOf(a *app.App) insight.CodeRefs { return codeRefs{coderefsapi.Service(a)} }

type codeRefs struct{ s *coderefs.Service }

func repositoryOf(r *coderefs.Repository) insight.Repository {
	return insight.Repository{ID: r.ID, Key: r.Name, Type: r.Type, URL: r.SourceLink, MainBranch: r.DefaultBranch, Version: r.Version}
}

func (c codeRefs) Repositories(ctx context.Context) ([]insight.Repository, error) {
	list, err := c.s.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]insight.Repository, 0, len(list))
	for _, r := range list {
		out = append(out, repositoryOf(r))
	}
	return out, nil
}

func (c codeRefs) Repository(ctx context.Context, key string) (insight.Repository, error) {
	r, err := c.s.Get(ctx, key)
	if err != nil {
		return insight.Repository{}, err
	}
	return repositoryOf(r), nil
}

func (c codeRefs) ReferencedFlags(ctx context.Context, projectKey string) (map[string]bool, error) {
	counts, err := c.s.FlagReferences(ctx, projectKey)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(counts))
	for k, n := range counts {
		out[k] = n > 0
	}
	return out, nil
}
