// Package insight computes engineering insights from what flagplane
// records: deployments (sent by deploy pipelines), flag events (the audit
// log's flag changes with the evaluation counters SDK events keep), insight
// groups and their scores, and the projects code-reference repositories
// belong to. Nothing here is a constant answer: every figure is read from
// the table when asked.
package insight

import (
	"context"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/member"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/resource"
	"github.com/flagplane/flagplane/shared/store"
)

// Repository is a code-reference repository as insights show it.
type Repository struct {
	ID         string
	Key        string
	Type       string
	URL        string
	MainBranch string
	Version    int64
}

// CodeRefs is what insights read of code references: the repositories,
// and which flags of a project some repository's default branch references.
// The code-refs group provides it; without it (nil) there are no
// repositories and the code-reference part of flag health is left out.
type CodeRefs interface {
	// Repositories returns every repository, by key.
	Repositories(ctx context.Context) ([]Repository, error)
	// Repository returns one repository; a missing one is a fault.NotFound.
	Repository(ctx context.Context, key string) (Repository, error)
	// ReferencedFlags returns the keys of the project's flags that some
	// repository's default branch references.
	ReferencedFlags(ctx context.Context, projectKey string) (map[string]bool, error)
}

// Service records deployments and computes insights.
type Service struct {
	table       store.Table
	log         *audit.Log
	projects    *project.Service
	envs        *environment.Service
	flags       *flag.Service
	members     *member.Service
	codeRefs    CodeRefs
	groups      resource.Kit[Group]
	deployments resource.Kit[Deployment]
	now         func() time.Time
}

// NewService works over table, auditing every change through log.
func NewService(table store.Table, log *audit.Log, projects *project.Service, envs *environment.Service,
	flags *flag.Service, members *member.Service, codeRefs CodeRefs, now func() time.Time) *Service {
	return &Service{table: table, log: log, projects: projects, envs: envs, flags: flags, members: members,
		codeRefs: codeRefs, groups: resource.New(&groupKind, table, log),
		deployments: resource.New(&deploymentKind, table, log), now: now}
}
