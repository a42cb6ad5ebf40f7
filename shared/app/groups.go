package app

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/webhook"
)

// A Group is one resource group of the catalog, built over the wired app
// by its package's New: the package holds the group's handlers, needs,
// representations and tests. Whoever runs groups names them: each
// function's main its own, the local server and the test server the
// explicit list of package allgroups. A Lambda function links only the
// groups its main names.
type Group struct {
	// Name is the catalog group the handlers serve.
	Name string
	// Handlers are the group's built operations, by operation id.
	Handlers map[string]api.Handler
	// Needs, optional, are the rights that follow from a request's body or
	// stored state rather than from the catalog alone (see api.Needs).
	Needs map[string]api.Needs
	// Answers are the built operations' success answers, by operation id,
	// from which the OpenAPI document describes them.
	Answers map[string]api.Answer
	// Jobs, optional, runs in the local server's background until ctx ends:
	// the timers that stand in for the group's scheduled functions in AWS.
	Jobs func(ctx context.Context, logger *slog.Logger)
	// Consumers, optional, read the outbox beside webhooks: the delivery
	// worker (the webhook-delivery function in AWS, whose main names the
	// group; the in-process queue locally) hands each of them every
	// committed entry, with the queue's retries and dead letters.
	Consumers []webhook.Consumer
}

// NewGroup builds a group over the wired app; each group package exports
// one, named New.
type NewGroup func(a *App) Group

// Groups returns the app's groups, built once, in the order given to New.
// A group the catalog does not have, given twice, or with no handlers is a
// programming error and panics at start.
func (a *App) Groups() []Group {
	a.groupsOnce.Do(func() {
		seen := map[string]bool{}
		for _, build := range a.newGroups {
			g := build(a)
			if _, err := catalog.Group(g.Name); err != nil {
				panic(fmt.Sprintf("app: %v", err))
			}
			if len(g.Handlers) == 0 {
				panic(fmt.Sprintf("app: group %q has no handlers", g.Name))
			}
			if seen[g.Name] {
				panic(fmt.Sprintf("app: group %q given twice", g.Name))
			}
			seen[g.Name] = true
			a.groups = append(a.groups, g)
		}
	})
	return a.groups
}

// RunJobs runs every group's background jobs until ctx ends, and returns
// when they all have.
func (a *App) RunJobs(ctx context.Context, logger *slog.Logger) {
	var wg sync.WaitGroup
	for _, g := range a.Groups() {
		if g.Jobs == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.Jobs(ctx, logger)
		}()
	}
	wg.Wait()
}
