package insight

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/store"
)

// Mapping says that a code-reference repository's code belongs to a project.
type Mapping struct {
	RepositoryKey string `json:"repositoryKey"`
	ProjectKey    string `json:"projectKey"`
}

// MaxMappings is the most mappings one associate request takes.
const MaxMappings = 50

// RepoProjectResource is the resource specifier of one mapping.
func RepoProjectResource(repoKey, projectKey string) string {
	return "proj/" + projectKey + ":insight-repository/" + repoKey
}

func (s *Service) repository(ctx context.Context, key string) (Repository, error) {
	if s.codeRefs == nil {
		return Repository{}, fault.New(fault.NotFound, "repository %q not found: no code-reference repositories exist", key)
	}
	return s.codeRefs.Repository(ctx, key)
}

// Repositories returns every code-reference repository.
func (s *Service) Repositories(ctx context.Context) ([]Repository, error) {
	if s.codeRefs == nil {
		return []Repository{}, nil
	}
	return s.codeRefs.Repositories(ctx)
}

// Associate records each mapping (a repository and a project that both
// exist). Mappings already recorded are kept as they are; each new one is
// its own audited commit, so a retry after a failure part-way only adds
// what is missing.
func (s *Service) Associate(ctx context.Context, mappings []Mapping) ([]Mapping, error) {
	if len(mappings) == 0 {
		return nil, fault.New(fault.Invalid, "field \"mappings\" is required and must hold at least one mapping")
	}
	if len(mappings) > MaxMappings {
		return nil, fault.New(fault.Invalid, "field \"mappings\" may hold at most %d mappings, got %d", MaxMappings, len(mappings))
	}
	for i, m := range mappings {
		if err := environment.ValidKey(fmt.Sprintf("mappings[%d].projectKey", i), m.ProjectKey); err != nil {
			return nil, err
		}
		if m.RepositoryKey == "" || strings.ContainsAny(m.RepositoryKey, "#/:") || len(m.RepositoryKey) > 200 {
			return nil, fault.New(fault.Invalid, "field \"mappings[%d].repositoryKey\" must be a repository name (1 to 200 characters, no '#', '/' or ':')", i)
		}
	}
	repos := map[string]Repository{}
	projects := map[string]bool{}
	for i, m := range mappings {
		if _, ok := repos[m.RepositoryKey]; !ok {
			r, err := s.repository(ctx, m.RepositoryKey)
			if fault.Is(err, fault.NotFound) {
				return nil, fault.New(fault.NotFound, "mappings[%d]: repository %q not found", i, m.RepositoryKey)
			}
			if err != nil {
				return nil, err
			}
			repos[m.RepositoryKey] = r
		}
		if projects[m.ProjectKey] {
			continue
		}
		if _, err := s.projects.Get(ctx, m.ProjectKey); err != nil {
			if fault.Is(err, fault.NotFound) {
				return nil, fault.New(fault.NotFound, "mappings[%d]: project %q not found", i, m.ProjectKey)
			}
			return nil, err
		}
		projects[m.ProjectKey] = true
	}
	out := make([]Mapping, 0, len(mappings))
	seen := map[Mapping]bool{}
	for _, m := range mappings {
		// The repository's own key, whatever case the request used.
		m.RepositoryKey = repos[m.RepositoryKey].Key
		if seen[m] {
			continue
		}
		seen[m] = true
		out = append(out, m)
		k := store.InsightRepoProjectKey(m.RepositoryKey, m.ProjectKey)
		if _, err := s.table.Get(ctx, k); err == nil {
			continue
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("load mapping of repository %q to project %q: %w", m.RepositoryKey, m.ProjectKey, err)
		}
		guard, err := s.projects.Guard(ctx, m.ProjectKey)
		if err != nil {
			return nil, err
		}
		data, _ := json.Marshal(m)
		gpk, gsk := store.InsightRepoProjectIndexKeys(m.RepositoryKey, m.ProjectKey)
		_, err = s.log.Commit(ctx, audit.Change{
			Writes: []store.Write{store.Put(store.Item{PK: k.PK, SK: k.SK, GSI1PK: gpk, GSI1SK: gsk, Version: 1, Data: data}, store.IfNotExists()), guard},
			Kind:   "insight-repository", Resource: RepoProjectResource(m.RepositoryKey, m.ProjectKey),
			Actions: []string{"createInsightRepositoryProject"}, Name: m.RepositoryKey,
			Href: "/api/v2/engineering-insights/repositories", TitleVerb: "associated with project " + m.ProjectKey + " the repository",
			Current: m,
			// Lost to an identical request: the mapping exists, which is what was asked.
			Conflict: "mapping being written concurrently",
		})
		if err != nil && !fault.Is(err, fault.OptimisticLock) {
			return nil, err
		}
	}
	return out, nil
}

// DeleteMapping removes the mapping of a repository to a project.
func (s *Service) DeleteMapping(ctx context.Context, repoKey, projectKey string) error {
	k := store.InsightRepoProjectKey(repoKey, projectKey)
	it, err := s.table.Get(ctx, k)
	if errors.Is(err, store.ErrNotFound) {
		return fault.Wrap(err, fault.NotFound, "repository %q is not associated with project %q", repoKey, projectKey)
	}
	if err != nil {
		return fmt.Errorf("load mapping of repository %q to project %q: %w", repoKey, projectKey, err)
	}
	m := Mapping{RepositoryKey: repoKey, ProjectKey: projectKey}
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{store.Delete(k, store.IfVersion(it.Version))},
		Kind:   "insight-repository", Resource: RepoProjectResource(repoKey, projectKey),
		Actions: []string{"deleteInsightRepositoryProject"}, Name: repoKey,
		Href: "/api/v2/engineering-insights/repositories", TitleVerb: "removed from project " + projectKey + " the repository",
		Previous: m,
		Conflict: fmt.Sprintf("the mapping of repository %q to project %q changed; try again", repoKey, projectKey),
	})
	return err
}

// Mappings returns every repository's projects, by repository key.
func (s *Service) Mappings(ctx context.Context) (map[string][]string, error) {
	list, err := record.All(ctx, s.table, store.Query{Index: store.IndexGSI1, PK: store.InsightReposIndexPK}, "repository mappings",
		func(it store.Item) (Mapping, error) {
			var m Mapping
			err := json.Unmarshal(it.Data, &m)
			return m, err
		})
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, m := range list {
		out[m.RepositoryKey] = append(out[m.RepositoryKey], m.ProjectKey)
	}
	return out, nil
}
